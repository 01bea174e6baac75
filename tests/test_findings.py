"""Each kind of finding, from a real export, on the user's line and in the user's names."""

from __future__ import annotations

import re

from conftest import line_of, only

from exportlens.exporter.core.report import Kind, Status

TORCH_SYMBOL = re.compile(r"\b[su]\d+\b")


def test_data_dependent_branch_names_the_variable(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."router.py:Router"]
        inputs = { x = { shape = "f32[n, 4]", fill = "ones" } }
    """,
    )
    project.write(
        "router.py",
        """
        import torch
        from torch import nn

        class Router(nn.Module):
            def forward(self, x):
                count = (x > 0).sum().item()
                if count > 3:
                    return x * 2
                return x
    """,
    )
    report = project.module("Router")
    assert report.status is Status.FAILED
    f = only(report.findings, "EL101")
    assert f.kind is Kind.DATA_DEPENDENT_GUARD
    assert (f.path, f.line) == ("router.py", line_of(project, "router.py", "if count > 3"))
    assert "`count > 3`" in f.message and not TORCH_SYMBOL.search(f.message)
    # the columns cover the condition itself
    text = project.read("router.py").splitlines()[f.line - 1]
    assert text[f.column - 1 : f.end_column - 1] == "count > 3"
    # the remedies that keep both sides first (the torch.cond is the one to try first: the owner's proof
    # on probes chooses; without the test, ``x * 2`` is not ``x`` on negated inputs: not offered); of
    # the checks, the branch the example inputs (all ones: count = 4n > 3) take
    assert [(fix.title, fix.preferred) for fix in f.fixes] == [
        ("Run both sides of `if count > 3:` with torch.cond", True),
        ("Assume `count > 3` here: insert torch._check(count > 3)", False),
        ("Assume `count <= 3` here: insert torch._check(count <= 3) (the example inputs do not)", False),
    ]


def test_range_violation_points_at_the_guard_line(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."pos.py:Pos"]
        inputs = { x = "f32[batch, seq, 8]" }
        dims = { seq = { min = 2, max = 1024 } }
    """,
    )
    project.write(
        "pos.py",
        """
        import torch
        from torch import nn

        class Pos(nn.Module):
            def __init__(self):
                super().__init__()
                self.table = nn.Parameter(torch.zeros(64, 8))

            def forward(self, x):
                n = x.shape[1]
                if n > 64:
                    raise ValueError("too long")
                return x + self.table[:n]
    """,
    )
    f = only(project.module("Pos").findings, "EL201")
    assert f.kind is Kind.CONSTRAINT_VIOLATION
    assert (f.path, f.line) == ("pos.py", line_of(project, "pos.py", "if n > 64"))
    assert f.message == "`seq` is declared as [2, 1024], but this line requires `seq <= 64`"
    assert f.related[0].path == "pyproject.toml"
    assert [fix.title for fix in f.fixes] == ["Set `seq` to Dim('seq', max=64)"]


def test_two_independent_dims_that_must_be_equal(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."fuse.py:Fuse"]
        inputs = { a = "f32[batch, n, 4]", b = "f32[batch, m, 4]" }
        dims = { n = { example = 5 }, m = { example = 5 } }
    """,
    )
    project.write(
        "fuse.py",
        """
        import torch
        from torch import nn

        class Fuse(nn.Module):
            def forward(self, a, b):
                return a * b
    """,
    )
    f = only(project.module("Fuse").findings, "EL202")
    assert f.line == line_of(project, "fuse.py", "return a * b")
    assert "`m` and `n`" in f.message or "`n` and `m`" in f.message
    assert len(f.fixes) == 1 and f.fixes[0].title in ("Declare `m = n`", "Declare `n = m`")


def test_specialization_names_the_line_that_pinned_the_dim(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."head.py:Head"]
        inputs = { x = "f32[batch, 10]" }
        dims = { batch = { example = 4 } }
    """,
    )
    project.write(
        "head.py",
        """
        from torch import nn

        class Head(nn.Module):
            def forward(self, x):
                y = x * 2
                return y.view(4, 10)
    """,
    )
    f = only(project.module("Head").findings, "EL204")
    line = line_of(project, "head.py", "y.view(4, 10)")
    assert f.kind is Kind.SPECIALIZATION and f.line == line
    assert f.message == f"`batch` was declared dynamic but was specialized to 4 by line {line}: `return y.view(4, 10)`"
    assert [(fix.title, fix.preferred) for fix in f.fixes] == [
        ("Write `x.shape[0]` for the `4` this line hard-codes", True),
        ("Make `batch` static: size 4", False),
    ]


def test_relation_between_dims(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."shift.py:Shift"]
        inputs = { x = "f32[n]", y = "f32[m]" }
        dims = { n = { example = 5 }, m = { example = 6 } }
    """,
    )
    project.write(
        "shift.py",
        """
        from torch import nn

        class Shift(nn.Module):
            def forward(self, x, y):
                return x + y[1:]
    """,
    )
    f = only(project.module("Shift").findings, "EL203")
    assert f.line == line_of(project, "shift.py", "y[1:]")
    assert "`m`" in f.message and "m = n + 1" in f.message
    assert [fix.title for fix in f.fixes] == ["Declare `m = n + 1`"]


def test_guard_torch_cannot_fix_is_solved_with_sympy(project):
    # a kernel-3 conv leaves seq - 2 positions, and torch guards seq - 2 != 1; it suggests no fix
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."conv.py:Conv"]
        inputs = { x = "f32[2, 4, seq]" }
        dims = { seq = { min = 3, max = 64, example = 10 } }
    """,
    )
    project.write(
        "conv.py",
        """
        from torch import nn

        class Conv(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(4, 4, 3)

            def forward(self, x):
                y = self.conv(x)
                return y.relu()
    """,
    )
    f = only(project.module("Conv").findings, "EL201")
    assert f.line == line_of(project, "conv.py", "y = self.conv(x)")
    assert f.message == "`seq` is declared as [3, 64], but this line requires `seq - 2 != 1`, i.e. `seq >= 4`"
    assert [fix.title for fix in f.fixes] == ["Set `seq` to Dim('seq', min=4)"]


def test_unsupported_operation(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."np.py:UsesNumpy"]
        inputs = { x = "f32[3, 4]" }
    """,
    )
    project.write(
        "np.py",
        """
        import torch
        from torch import nn

        class UsesNumpy(nn.Module):
            def forward(self, x):
                y = x + 1
                return torch.from_numpy(y.numpy() * 2)
    """,
    )
    f = only(project.module("UsesNumpy").findings, "EL301")
    assert f.kind is Kind.UNSUPPORTED
    assert f.line == line_of(project, "np.py", "y.numpy()")


def test_output_type_export_cannot_flatten_is_on_the_return(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."net.py:Net"]
        inputs = { x = "f32[batch, 4]" }
    """,
    )
    project.write(
        "net.py",
        """
        import torch


        class Scores:
            def __init__(self, logits):
                self.logits = logits


        class Net(torch.nn.Module):
            def forward(self, x):
                y = x * 2
                return Scores(y)
    """,
    )
    f = only(project.module("Net").findings, "EL304")
    assert f.kind is Kind.UNSUPPORTED
    assert f.line == line_of(project, "net.py", "return Scores(y)")
    assert f.message.startswith("forward returns `Scores` (net.Scores), which torch.export cannot flatten into tensors")
    assert "register_pytree_node" in f.message and "https://" not in f.message


def test_custom_op_without_fake_kernel(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."op.py:UsesOp"]
        inputs = { x = "f32[batch, 4]" }
    """,
    )
    project.write(
        "op.py",
        """
        import torch
        from torch import nn

        @torch.library.custom_op("exportlens_test::scale", mutates_args=())
        def scale(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        class UsesOp(nn.Module):
            def forward(self, x):
                return scale(x) + 1
    """,
    )
    report = project.module("UsesOp")
    f = only(report.findings, "EL302")
    assert f.kind is Kind.UNSUPPORTED
    assert f.line == line_of(project, "op.py", "return scale(x)")
    assert "register_fake" in f.message


def test_import_error_points_at_the_failing_import(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."broken.py:Broken"]
        inputs = { x = "f32[3]" }
    """,
    )
    project.write(
        "broken.py",
        """
        import torch
        from torch import nn
        import not_a_real_package_xyz

        class Broken(nn.Module):
            def forward(self, x):
                return x
    """,
    )
    f = only(project.module("Broken").findings, "EL402")
    assert f.kind is Kind.IMPORT_ERROR and f.line == 3
    assert "not_a_real_package_xyz" in f.message


def test_construction_error_points_into_init(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."net.py:Net"]
        init = { width = -1 }
        inputs = { x = "f32[3, 4]" }
    """,
    )
    project.write(
        "net.py",
        """
        from torch import nn

        class Net(nn.Module):
            def __init__(self, width=4):
                super().__init__()
                if width < 0:
                    raise ValueError("width must be positive")
                self.fc = nn.Linear(4, width)

            def forward(self, x):
                return self.fc(x)
    """,
    )
    f = only(project.module("Net").findings, "EL403")
    assert f.line == line_of(project, "net.py", "raise ValueError")
    assert f.message == "Net(width=-1) failed: ValueError: width must be positive"


def test_forward_that_raises_on_the_example_inputs(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."net.py:Net"]
        inputs = { x = "f32[batch, 5]" }
    """,
    )
    project.write(
        "net.py",
        """
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x)
    """,
    )
    f = only(project.module("Net").findings, "EL405")
    assert f.line == line_of(project, "net.py", "return self.fc(x)")
    assert "batch" in f.message and not TORCH_SYMBOL.search(f.message)


def test_a_size_the_spec_left_to_torch_is_said_as_the_code_says_it(project):
    """An axis written `?` (torch decides) has no name in the spec: torch's own text calls it
    `s27`; the message says `x.shape[1]`, as the user's code would."""
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."fold.py:Fold"]
        inputs = { x = "f32[8, ?]" }
    """,
    )
    project.write(
        "fold.py",
        """
        import torch
        from torch import nn

        class Fold(nn.Module):
            def forward(self, x):
                return x.repeat(1, 2).view(3, -1, 5)
    """,
    )
    f = only(project.module("Fold").findings, "EL405")
    assert f.message.endswith("is invalid for input of size 16*x.shape[1]"), f.message
    assert not TORCH_SYMBOL.search(f.message)


def test_syntax_error_is_reported_and_other_files_still_checked(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."good.py:Good"]
        inputs = { x = "f32[3]" }
    """,
    )
    project.write(
        "good.py",
        """
        from torch import nn

        class Good(nn.Module):
            def forward(self, x):
                return x + 1
    """,
    )
    project.write(
        "bad.py",
        """
        from torch import nn

        class Bad(nn.Module):
            def forward(self, x)
                return x
    """,
    )
    report = project.check()
    f = only(report.all_findings, "EL401")
    assert (f.path, f.line) == ("bad.py", 4)
    assert [m.status for m in report.modules] == [Status.EXPORTED]
    assert report.exit_code == 1


def test_module_without_spec_is_listed_not_exported(project):
    project.write(
        "net.py",
        """
        import torch.nn as tnn

        class NoSpec(tnn.Module):
            def forward(self, x):
                return x
    """,
    )
    report = project.module("NoSpec")
    assert report.status is Status.SKIPPED
    f = only(report.findings, "EL007")
    assert f.severity.value == "info" and f.line == 3
    assert project.check().exit_code == 0


def test_strict_mode_places_findings_on_the_same_lines(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens]
        strict = true

        [tool.exportlens.modules."both.py:Router"]
        inputs = { x = { shape = "f32[n, 4]", fill = "ones" } }

        [tool.exportlens.modules."both.py:Pos"]
        inputs = { x = "f32[seq, 8]" }
        dims = { seq = { max = 1024 } }
    """,
    )
    project.write(
        "both.py",
        """
        import torch
        from torch import nn

        class Router(nn.Module):
            def forward(self, x):
                count = (x > 0).sum().item()
                if count > 3:
                    return x * 2
                return x

        class Pos(nn.Module):
            def forward(self, x):
                if x.shape[0] > 64:
                    raise ValueError("too long")
                return x + 1
    """,
    )
    report = project.check()
    dde = only(report.all_findings, "EL101")
    assert dde.line == line_of(project, "both.py", "if count > 3") and "`count > 3`" in dde.message
    assert [f.title for f in dde.fixes][-2] == "Assume `count > 3` here: insert torch._check(count > 3)"
    rng = only(report.all_findings, "EL201")
    assert rng.line == line_of(project, "both.py", "if x.shape[0] > 64")
    assert rng.message == "`seq` is declared as [0, 1024], but this line requires `seq <= 64`"


def test_in_code_inputs_that_do_not_fit_forward(project):
    project.write(
        "net.py",
        """
        import torch
        from torch import nn

        class Net(nn.Module):
            @staticmethod
            def example_inputs():
                return (torch.randn(2, 3), torch.randn(2, 3))

            def forward(self, x):
                return x
    """,
    )
    f = only(project.module("Net").findings, "EL001")
    assert f.kind is Kind.SPEC_ERROR
    assert (f.path, f.line) == ("net.py", line_of(project, "net.py", "def example_inputs"))
    assert f.message.startswith("example_inputs() do not fit forward(x): too many positional arguments")


def test_in_code_dynamic_shapes_that_do_not_fit_the_inputs(project):
    project.write(
        "net.py",
        """
        import torch
        from torch import nn
        from torch.export import Dim

        class Net(nn.Module):
            @staticmethod
            def example_inputs():
                return (torch.randn(2, 3),)

            dynamic_shapes = {"y": {0: Dim("batch")}}

            def forward(self, x):
                return x
    """,
    )
    f = only(project.module("Net").findings, "EL005")
    assert f.line == line_of(project, "net.py", "def example_inputs")
    assert f.message.startswith("torch.export rejects the spec: ")


def test_example_inputs_that_raise(project):
    project.write(
        "net.py",
        """
        import torch
        from torch import nn

        class Net(nn.Module):
            @staticmethod
            def example_inputs():
                return (torch.randn(2, 3).view(7),)

            def forward(self, x):
                return x
    """,
    )
    f = only(project.module("Net").findings, "EL404")
    assert f.line == line_of(project, "net.py", "view(7)")
    assert f.message.startswith("building example_inputs() failed: RuntimeError: shape '[7]' is invalid")


def test_an_import_a_library_wraps_names_the_error_it_was_raised_from(project):
    """transformers' lazy modules say only "Could not import module 'X'", raised from the import's
    real error: the finding names that one too."""
    project.write(
        "lazy.py",
        """
        class _Lazy:
            def __getattr__(self, name):
                try:
                    raise RuntimeError("the kernel registry is locked")
                except RuntimeError as e:
                    raise ModuleNotFoundError(f"Could not import module '{name}'.") from e


        library = _Lazy()
    """,
    )
    project.write(
        "net.py",
        """
        from torch import nn
        from lazy import library

        Block = library.Block

        class Net(nn.Module):
            def forward(self, x):
                return x
    """,
    )
    project.write("pyproject.toml", '[tool.exportlens.modules."net.py:Net"]\ninputs = { x = "f32[3]" }\n')
    f = only(project.module("Net").findings, "EL402")
    assert f.message == (
        "importing net failed: ModuleNotFoundError: Could not import module 'Block'."
        " (from RuntimeError: the kernel registry is locked)"
    ), f.message


def test_a_virtualenv_inside_the_project_is_imported_once_however_often_the_project_is_checked(project):
    """A package in the project's own .venv is installed, not the user's code: checking again
    in the same process re-imports only the user's files. (Imported again, this package would
    register its torch operator twice, and the import fail: what transformers then reported
    as "Could not import module 'BertModel'" when torchao sat in a .venv inside the project.)"""
    project.write(
        ".venv/lib/python3.11/site-packages/registers_an_op/__init__.py",
        """
        import torch

        LIBRARY = torch.library.Library("exportlens_test_venv", "DEF")
        LIBRARY.define("twice(Tensor x) -> Tensor")
    """,
    )
    project.write(
        "net.py",
        """
        import sys
        from pathlib import Path

        sys.path.insert(0, str(Path(__file__).parent / ".venv/lib/python3.11/site-packages"))

        import registers_an_op  # noqa: E402
        from torch import nn  # noqa: E402


        class Net(nn.Module):
            def forward(self, x):
                return x * 2
    """,
    )
    project.write("pyproject.toml", '[tool.exportlens.modules."net.py:Net"]\ninputs = { x = "f32[3]" }\n')
    for _ in range(2):
        (module,) = project.check().modules
        assert module.status.value == "exported", [str(f) for f in module.findings]
