"""Export specs: the shape grammar, pyproject tables and every spec error, on the spec's own line."""

from __future__ import annotations

import pytest
from conftest import line_of, only

from exportlens.exporter.core.report import Kind, Status
from exportlens.exporter.spec.loading import DimSpec, TensorInput
from exportlens.exporter.spec.module_spec import choose_examples
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.spec.shapes import Derived, ShapeError, parse_shape

NET = """
    from torch import nn

    class Net(nn.Module):
        def forward(self, x, mask=None, *, scale=1.0):
            return x * scale
"""


def test_shape_grammar():
    s = parse_shape("f32[batch, 2*seq, 3, ?, seq + 1]")
    assert s.dtype == "f32"
    assert s.sizes[0] == "batch" and s.sizes[2] == 3 and s.sizes[3] == "?"
    assert s.sizes[1] == Derived("seq", 2, 0, "2*seq") and s.sizes[4] == Derived("seq", 1, 1, "seq + 1")
    assert s.names == ("batch", "seq")
    assert parse_shape("bool[]").sizes == ()


@pytest.mark.parametrize(
    ("text", "unknown_dtype"),
    [
        ("f33[1]", True),
        ("f32[1,,2]", False),
        ("f32[batch*seq]", False),
        ("f32[-2]", False),
        ("f32[seq**2]", False),
        ("tensor", False),
    ],
)
def test_malformed_shapes(text, unknown_dtype):
    with pytest.raises(ShapeError) as e:
        parse_shape(text)
    assert e.value.unknown_dtype is unknown_dtype


def test_example_sizes_avoid_0_1_and_collisions():
    dims = choose_examples(
        {"batch": DimSpec("batch", min=0), "seq": DimSpec("seq", min=1, max=40)},
        {2, 3},
        [Derived("seq", 1, 1, "seq + 1")],
    )
    sizes = [dims["batch"].example, dims["seq"].example, dims["seq"].example + 1]
    assert len(set(sizes) | {2, 3}) == 5 and min(sizes) >= 2
    kept = choose_examples({"n": DimSpec("n", example=2), "m": DimSpec("m", example=2)}, set(), [])
    assert kept["n"].example == kept["m"].example == 2  # the user chose: kept


def spec_errors(project, table: str):
    project.write("pyproject.toml", '[tool.exportlens.modules."net.py:Net"]\n' + table)
    project.write("net.py", NET)
    plan = make_plan([project.root])
    (planned,) = plan.modules
    return planned, plan


@pytest.mark.parametrize(
    ("table", "code", "needle", "message"),
    [
        (
            'inputs = { x = "f32[2]", y = "f32[2]" }\n',
            "EL001",
            "y = ",
            "input 'y' is not a parameter of forward(x, mask, scale)",
        ),
        ('inputs = { mask = "f32[2]" }\n', "EL001", "inputs", "missing input 'x' required by forward(x, mask, scale)"),
        ('inputs = { x = "f31[2]" }\n', "EL002", "x = ", "input 'x': unknown dtype 'f31'"),
        ('inputs = { x = "f32[2,, 3]" }\n', "EL003", "x = ", "input 'x': empty size in 'f32[2,, 3]'"),
        (
            'inputs = { x = "f32[b]" }\ndims = { b = 4 }\n',
            "EL004",
            "b = 4",
            "dim 'b' must be a table like { min = 2, max = 64 }",
        ),
        (
            'inputs = { x = "f32[b]" }\ndims = { b = { min = 9, max = 3 } }\n',
            "EL004",
            "b = {",
            "dim 'b': min (9) is above max (3)",
        ),
        (
            'inputs = { x = "f32[b]" }\ndims = { c = { max = 3 } }\n',
            "EL004",
            "c = {",
            "dim 'c' is not used by any input shape",
        ),
        (
            'inputs = { x = "f32[b]" }\ndims = { b = { mx = 3 } }\n',
            "EL004",
            "b = {",
            "dim 'b': unknown key(s) mx (known: min, max, example)",
        ),
        (
            'inputs = { x = "f32[b]" }\ndims = { b = { min = 2, example = 1 } }\n',
            "EL004",
            "b = {",
            "dim 'b': example 1 is outside [2, ∞]",
        ),
        (
            'inputs = { x = "f32[n - 6]" }\ndims = { n = { min = 2 } }\n',
            "EL004",
            "n = {",
            "dim 'n': `n - 6` would be negative at its min (2); its min must be at least 6",
        ),
        (
            'inputs = { x = { shape = "f32[3]", fill = "twos" } }\n',
            "EL005",
            "x = ",
            "input 'x': fill 'twos' is not one of randn, rand, ones, zeros, arange",
        ),
        (
            'inputs = { x = "f32[3]" }\ndevice = "tpu"\n',
            "EL005",
            'device = "tpu"',
            "device 'tpu' is not one of cpu, cuda, cuda:N, mps, meta",
        ),
        (
            'inputs = { x = "f32[3]" }\ndevice = "cuda:99999999999999999999"\n',
            "EL005",
            "device = ",
            "device 'cuda:99999999999999999999' is not one of cpu, cuda, cuda:N, mps, meta (N at most 1023)",
        ),
        (
            'inputs = { x = "f32[3]" }\nmemory_limit = "99999999999999999999999GiB"\n',
            "EL005",
            "memory_limit = ",
            "memory_limit '99999999999999999999999GiB' is not a size like 8GiB, at least 256MiB and at most 16TiB",
        ),
        (
            'inputs = { x = "f32[3]" }\nshapes = 1\n',
            "EL005",
            "shapes",
            "unknown key 'shapes' in the spec for net.py:Net",
        ),
    ],
)
def test_spec_errors_are_located_on_the_spec_line(project, table, code, needle, message):
    planned, _ = spec_errors(project, table)
    assert planned.spec is None
    f = only(planned.findings, code)
    assert f.kind is Kind.SPEC_ERROR
    assert (f.path, f.line) == ("pyproject.toml", line_of(project, "pyproject.toml", needle))
    assert f.message.startswith(message)


def test_spec_error_columns_cover_the_key(project):
    planned, _ = spec_errors(project, 'inputs = { x = "f32[2]", extra = "f32[2]" }\n')
    f = only(planned.findings, "EL001")
    line = project.read("pyproject.toml").splitlines()[f.line - 1]
    assert line[f.column - 1 : f.end_column - 1] == "extra"


def test_a_key_written_twice_is_el006_on_the_line_that_writes_it_again(project):
    project.write(
        "pyproject.toml",
        '[tool.exportlens]\ndevice = "cpu"\n\n'
        '[tool.exportlens.modules."net.py:Net"]\ninputs = { x = "f32[3]" }\n  inputs = 3\n',
    )
    project.write("net.py", NET)
    f = only(make_plan([project.root]).findings, "EL006")
    assert (f.path, f.line, f.column) == ("pyproject.toml", 6, 3)
    assert f.message == 'pyproject.toml does not parse: Key "inputs" already exists at line 6 col 3'


def test_broken_pyproject_is_a_finding_not_a_crash(project):
    project.write("pyproject.toml", "[tool.exportlens\nx = 1\n")
    project.write("net.py", NET)
    plan = make_plan([project.root])
    f = only(plan.findings, "EL006")
    assert f.path == "pyproject.toml" and f.line == 1


@pytest.mark.parametrize(
    ("pyproject", "needle", "message"),
    [
        ("tool = 5\n", "tool = 5", "`tool` must be a table, not a number"),
        ('[tool]\nexportlens = "x"\n', "exportlens =", "[tool.exportlens] must be a table, not a string"),
        ("[tool.exportlens]\nmodules = 3\n", "modules =", "[tool.exportlens.modules] must be a table"),
        (
            "[tool.exportlens]\ndevice = 'cpu'\n\ntimeout = inf\n",
            "timeout = inf",
            "timeout inf is not a number of seconds above 0 and at most",
        ),
        ("[tool.exportlens]\n\nstrict = 'no'\n", "strict =", "strict 'no' is not true or false"),
        (
            "[tool.exportlens]\nmemory_limit = '1B'\n",
            "memory_limit",
            "memory_limit '1B' is not a size like 8GiB, at least 256MiB",
        ),
        # values past any machine: refused where they are written, not an EL502 on the class later
        (
            "[tool.exportlens]\ndevice = 'cpu'\nmemory_limit = '99999999999999999999999GiB'\n",
            "memory_limit",
            "memory_limit '99999999999999999999999GiB' is not a size like 8GiB, at least 256MiB and at most 16TiB",
        ),
        (
            "[tool.exportlens]\n\nmemory_limit = 17592186044417\n",
            "memory_limit",
            "memory_limit 17592186044417 is not a size like 8GiB",
        ),
        (
            "[tool.exportlens]\ndevice = 'cuda:99999999999999999999'\n",
            "device =",
            "device 'cuda:99999999999999999999' is not one of cpu, cuda, cuda:N, mps, meta (N at most 1023)",
        ),
        (
            "[tool.exportlens]\ndevice = 'cuda:1024'\n",
            "device =",
            "device 'cuda:1024' is not one of cpu, cuda, cuda:N, mps, meta",
        ),
        (
            "[tool.exportlens]\n\ntargets = ['onnx', 'tflite']\n",
            "targets =",
            "targets ['onnx', 'tflite'] is not a list of aoti, onnx, executorch",
        ),
        (
            "[tool.exportlens]\ntargets = 'onnx'\n",
            "targets =",
            "targets 'onnx' is not a list of aoti, onnx, executorch",
        ),
        (
            "[tool.exportlens]\n\ntimeout = 99999999999999999999999\n",
            "timeout =",
            "timeout 99999999999999999999999 is not a number of seconds above 0 and at most 604800 (a week)",
        ),
    ],
)
def test_project_settings_of_the_wrong_kind_are_findings_on_their_own_line(project, pyproject, needle, message):
    project.write("pyproject.toml", pyproject)
    project.write("net.py", NET)
    f = only(make_plan([project.root]).findings, "EL005")
    assert (f.path, f.line) == ("pyproject.toml", line_of(project, "pyproject.toml", needle))
    assert f.message.startswith(message), f.message


def test_a_pyproject_that_is_not_utf8_is_a_finding_on_its_byte(project):
    (project.root / "pyproject.toml").write_bytes(b'[tool.exportlens]\ndevice = "caf\xe9"\n')
    project.write("net.py", NET)
    f = only(make_plan([project.root]).findings, "EL006")  # TOML is UTF-8: it does not parse
    assert (f.path, f.line, f.column) == ("pyproject.toml", 2, 14)  # the byte after `device = "caf`
    assert f.message == "file is not valid UTF-8: invalid continuation byte (byte 0xe9)"


def test_an_unclosed_shape_is_a_shape_error_not_a_string(project):
    planned, _ = spec_errors(project, 'inputs = { x = "f32[batch,,16" }\n')
    f = only(planned.findings, "EL003")
    assert (
        f.message == "input 'x': 'f32[batch,,16' is not a shape string like 'f32[batch, 3]'; the closing ] is missing"
    )


def test_spec_for_a_missing_module_is_reported(project):
    project.write("pyproject.toml", '[tool.exportlens.modules."net.py:Gone"]\ninputs = { x = "f32[2]" }\n')
    project.write("net.py", NET)
    f = only(make_plan([project.root]).findings, "EL005")
    assert f.line == 1 and "Gone" in f.message


def test_skipped_module_with_bad_spec_fails_the_check(project):
    spec_errors(project, 'inputs = { x = "f31[2]" }\n')
    report = project.check()
    assert report.modules[0].status is Status.SKIPPED
    assert report.exit_code == 1


def test_value_tables_build_the_described_tensors(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."emb.py:Emb"]
        inputs = { ids = { shape = "i64[batch, seq]", low = 0, high = 10 }, \
mask = { shape = "f32[batch, seq]", fill = "ones" }, steps = { value = [2, 3, 5], dtype = "i64" } }
    """,
    )
    project.write(
        "emb.py",
        """
        import torch
        from torch import nn

        class Emb(nn.Module):
            def __init__(self):
                super().__init__()
                self.e = nn.Embedding(10, 4)

            def forward(self, ids, mask, steps):
                return self.e(ids) * mask.unsqueeze(-1) * steps.sum()
    """,
    )
    report = project.module("Emb")
    assert report.status is Status.EXPORTED, report.findings
    assert report.summary.inputs == ("ids: i64[batch, seq]", "mask: f32[batch, seq]", "steps: i64[3]")
    spec = make_plan([project.root]).modules[0].spec
    assert isinstance(spec.inputs["ids"], TensorInput) and spec.inputs["ids"].high == 10


def test_a_root_used_only_through_derived_sizes_gets_the_min_they_need(project):
    """``n - 6`` cannot be negative: an undeclared min of ``n`` is 6, and every example size
    (``n - 6`` twice, ``2*n - 12``) is at least 2, so torch specializes none of them."""
    planned, _ = spec_errors(project, 'inputs = { x = "f32[n - 6]", mask = "f32[n - 6]", scale = "f32[2*n - 12]" }\n')
    assert not planned.findings
    n = planned.spec.dims["n"]
    assert n.min == 6 and n.example - 6 >= 2


def test_targets_are_read_from_the_project_and_the_modules_table(project):
    project.write(
        "pyproject.toml",
        '[tool.exportlens]\ntargets = ["onnx"]\n\n[tool.exportlens.modules."net.py:Net"]\n'
        'inputs = { x = "f32[3]" }\ntargets = ["aoti", "onnx", "aoti"]\n',
    )
    project.write("net.py", NET)
    plan = make_plan([project.root])
    assert not plan.findings
    assert plan.modules[0].spec.settings.targets == ("aoti", "onnx")  # each once, as written


# each would have sympy compute without end (10**10**10 has ten billion digits) or recurse past the stack
HUGE_SIZES = ("10**10**10*batch", "seq**seq", "+".join(["1"] * 20_000) + "+seq", "2**4096*seq", "seq" + "*1" * 40)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("size", HUGE_SIZES, ids=["power-tower", "self-power", "many-terms", "big-power", "many-ops"])
def test_a_derived_size_past_what_is_computed_is_el005_on_its_line_at_once(project, size):
    planned, _ = spec_errors(project, f'inputs = {{ x = "f32[{size}, 16]" }}\n')
    assert planned.spec is None
    f = only(planned.findings, "EL005")
    assert (f.path, f.line) == ("pyproject.toml", line_of(project, "pyproject.toml", "x = "))
    assert f.message.startswith("input 'x': size '")
    assert "exportlens computes a derived size of at most 64 characters" in f.message
    assert len(f.message) < 400  # the size is quoted, not the 40 kB


@pytest.mark.timeout(20)
def test_a_jaxtyping_axis_past_what_is_computed_is_el005_on_the_axis(project):
    project.write(
        "net.py",
        "from jaxtyping import Float\nfrom torch import Tensor, nn\n\n\nclass Net(nn.Module):\n"
        '    def forward(self, x: Float[Tensor, "batch 10**10**10*batch"]):\n        return x\n',
    )
    (planned,) = make_plan([project.root]).modules
    f = only(planned.findings, "EL005")
    axis = (project.root / "net.py").read_text().splitlines()[5].index("10**") + 1
    assert (f.path, f.line, f.column) == ("net.py", 6, axis)  # the axis, not the whole annotation
    assert f.message.startswith("`x`: axis `10**10**10*batch` is a derived size exportlens does not compute:")


def test_small_derived_sizes_still_read():
    assert parse_shape("f32[2**3*seq + 1]").sizes == (Derived("seq", 8, 1, "2**3*seq + 1"),)
    assert parse_shape("f32[seq - 1 - 1]").sizes == (Derived("seq", 1, -2, "seq - 1 - 1"),)
    with pytest.raises(ShapeError):
        parse_shape("f32[seq**2]")  # a power of the dim: not a derived size torch takes (EL003, as before)
