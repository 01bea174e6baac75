"""Only the user's names reach the user: every message, fix title and related text of every
finding, and every hover and inlay hint, for the whole corpus (tests/corpus) and the
examples, holds none of torch's symbols (``s77``, ``u0``, ``zuf0``), sources (``L['x']``),
node names (``on node 'le_11'``), infinities (``IntInfinity()``, ``int_oo``) or reprs
(``FakeTensor(``, ``Sym(``).

Hover and inlay texts are made by the server's own functions (features/hover.py,
features/inlay.py) from the reports of real exports, as the server makes them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from corpus_cases import check, copy_corpus, in_torch_words, shown

pytestmark = pytest.mark.slow  # the corpus and the examples, exported

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_no_torch_names_in_anything_shown_for_the_corpus_and_the_examples(tmp_path: Path):
    corpus = copy_corpus(tmp_path / "corpus")
    examples = Path(
        shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__", ".exportlens*"))
    )
    found = [
        line for root in (corpus, examples) for report in check(root).values() for line in in_torch_words(report, root)
    ]
    assert not found, "torch's names reach the user:\n" + "\n".join(found)


def test_a_value_read_from_data_is_named_by_its_line(tmp_path: Path):
    """``n = k.item()`` then ``torch._check(n <= x.shape[0])``: the line's hint is ``int``
    (torch's last value there is ``Sym(u0 <= 8)``, the check), the range is ``n``'s."""
    root = copy_corpus(tmp_path / "corpus")
    report = check(root, only="clean_checked_item.py:Case")["clean_checked_item.py:Case"]
    said = dict(shown(report, root))
    assert said["clean_checked_item.py:17 inlay"] == "int"
    assert "n ∈ [0, 8]" in said["clean_checked_item.py:Case hover"]
    assert said["clean_checked_item.py:20 hover"].startswith("```python\nf32[4]")


def test_sizes_read_from_data_are_named_by_their_variable(tmp_path: Path):
    root = copy_corpus(tmp_path / "corpus")
    masked = check(root, only="clean_masked_view.py:Case")["clean_masked_view.py:Case"]
    split = check(root, only="clean_split_sizes.py:Case")["clean_split_sizes.py:Case"]
    shapes = {ls.line: ls.shapes for ls in masked.summary.line_shapes}
    assert shapes[18][0] == "f32[picked.shape[0]]", shapes  # ``picked = x[mask]``
    assert (
        dict(shown(masked, root))["clean_masked_view.py:18 inlay"] == "f32[picked.shape[0]]"
    )  # not torch's checks there
    assert shapes[19] == ("f32[4, (picked.shape[0]//4)]",), shapes
    parts = {ls.line: ls.shapes for ls in split.summary.line_shapes}[18]
    assert "(f32[sizes.tolist()[0], 4], f32[sizes.tolist()[1], 4])" in parts, parts


def test_a_value_without_a_variable_is_named_as_written(tmp_path: Path):
    """``capacity = int((scores > 0.5).sum().item())``: the value is the read inside ``int()``,
    and what asks for it is the call as written (not torch's ``u0``)."""
    root = copy_corpus(tmp_path / "corpus")
    report = check(root, only="data_moe_capacity.py:Case")["data_moe_capacity.py:Case"]
    first, empty = report.findings[:2]
    assert first.message.startswith(
        "`int((scores > 0.5).sum().item())` asks for `capacity` as a Python int,"
        " but `(scores > 0.5).sum().item()` is only known"
    ), first.message
    # a comparison of sizes is a Python int's, not a tensor's truth
    assert empty.line == 28 and empty.message.startswith("`idx.numel() == 0` depends on the values"), empty.message


def test_a_bound_names_the_buffer_and_the_input_it_comes_from(tmp_path: Path):
    root = copy_corpus(tmp_path / "corpus")
    report = check(root, only="range_kv_cache_start.py:Case")["range_kv_cache_start.py:Case"]
    assert report.findings[0].message == (
        "`seq` is declared as [2, 4096], but this line requires `seq + 1 <= 512`, i.e. `seq <= 511` "
        "(`self.k_cache` has 512 rows; `start_pos` is 1)"
    )


TOP = """
import torch
from torch import nn

class Top(nn.Module):
    def forward(self, x, k):
        count = k.item()
        torch._check(count <= x.shape[0] // 2)
        return x[:count]
"""


def _exported(project, name: str):
    """The module of ``project`` exported as exportlens exports it, with its Context."""
    import torch

    from exportlens.exporter.core.sources import Sources
    from exportlens.exporter.runtime.context import Context
    from exportlens.exporter.runtime.run import prepare
    from exportlens.exporter.spec.plan import make_plan

    root = project.root.resolve()
    (planned,) = [p for p in make_plan([root]).modules if p.module.name == name]
    files = Sources.of(root)
    _, model, built = prepare(root, planned.module, planned.spec, "cpu", files)
    ctx = Context(root, planned.module, planned.spec, built, files, model=model)
    ep = torch.export.export(model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes)
    return ep, ctx


def test_the_programs_runtime_assertion_is_said_in_the_users_names(project):
    """What the exported program raises where its own check fails ("Runtime assertion failed
    for expression u0 <= 4 on node 'le_1'", the MoE's EL206) is read as the check over the
    value's name, with the line that made it."""
    import torch

    from exportlens.exporter.runtime.naming.summary import in_user_names

    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."top.py:Top"]
        inputs = { x = "f32[n, 4]", k = { value = 3, dtype = "i64" } }
        dims = { n = { min = 4, max = 64, example = 8 } }
        """,
    )
    project.write("top.py", TOP)
    ep, ctx = _exported(project, "Top")
    with pytest.raises(Exception) as raised:
        ep.module()(torch.randn(8, 4), torch.tensor(7))
    assert "on node '" in str(raised.value)
    said = in_user_names(ep, ctx)(str(raised.value).splitlines()[0])
    assert said == "its check `count <= n // 2` fails (from top.py:6)", (
        said
    )  # (torch puts the check on the value's line)


def test_a_size_no_variable_holds_is_named_by_the_call_that_made_it(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."hits.py:Hits"]
        inputs = { x = "f32[8]" }
        """,
    )
    project.write(
        "hits.py",
        """
        import torch
        from torch import nn

        class Hits(nn.Module):
            def forward(self, x):
                return torch.nonzero(x > 0).float() * 2
        """,
    )
    report = project.module("Hits")
    assert report.summary is not None, report.findings
    (shapes,) = [ls for ls in report.summary.line_shapes if ls.line == 6]
    assert shapes.shapes[-1] == "f32[torch.nonzero(x > 0).shape[0], 1]", shapes
    assert not in_torch_words(report, project.root)


def test_a_comparison_of_sizes_is_said_as_written_and_not_called_a_tensor(tmp_path: Path):
    root = copy_corpus(tmp_path / "corpus")
    report = check(root, only="data_numel_compare.py:Case")["data_numel_compare.py:Case"]
    first = report.findings[0]
    assert first.message.startswith(
        "`kept.numel() == x.numel()` depends on the values inside a tensor (`kept.shape[0]`"
    ), first.message
    assert "is a tensor" not in first.message
