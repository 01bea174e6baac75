"""Every kind of fix, applied to the files as an editor would, then exported again."""

from __future__ import annotations

from conftest import only

from exportlens.exporter.core.report import Status

MODEL_RANGE = """
    import torch
    from torch import nn

    class Pos(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Parameter(torch.zeros(64, 8))

        def forward(self, x):
            if x.shape[1] > 64:
                raise ValueError("too long")
            return x + self.table[: x.shape[1]]
"""


def fix_and_recheck(project, target, code, title=None):
    before = project.module(target)
    finding = only(before.findings, code)
    fix = finding.fixes[0] if title is None else next(f for f in finding.fixes if f.title == title)
    project.apply(fix)
    return project.module(target)


def test_range_fix_edits_pyproject_keeping_its_comments(project):
    project.write(
        "pyproject.toml",
        """
        # the team's export contract
        [tool.exportlens.modules."pos.py:Pos"]
        inputs = { x = "f32[batch, seq, 8]" }  # channels-last
        dims = { batch = { max = 16 }, seq = { min = 2, max = 1024 } }
    """,
    )
    project.write("pos.py", MODEL_RANGE)
    after = fix_and_recheck(project, "Pos", "EL201")
    assert after.status is Status.EXPORTED
    assert project.read("pyproject.toml") == (
        "# the team's export contract\n"
        '[tool.exportlens.modules."pos.py:Pos"]\n'
        'inputs = { x = "f32[batch, seq, 8]" }  # channels-last\n'
        "dims = { batch = { max = 16 }, seq = { min = 2, max = 64 } }\n"
    )
    assert "seq ∈ [2, 64]" in map(str, after.summary.range_constraints)


def test_range_fix_adds_a_dims_table_when_there_is_none(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."pos.py:Pos"]
        inputs = { x = "f32[batch, seq, 8]" }
    """,
    )
    project.write("pos.py", MODEL_RANGE)
    after = fix_and_recheck(project, "Pos", "EL201")
    assert after.status is Status.EXPORTED
    assert "dims = {seq = {max = 64}}" in project.read("pyproject.toml")


def test_equality_fix_renames_the_dim_in_shapes(project):
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
        from torch import nn

        class Fuse(nn.Module):
            def forward(self, a, b):
                return a * b
    """,
    )
    after = fix_and_recheck(project, "Fuse", "EL202")
    assert after.status is Status.EXPORTED, after.findings
    text = project.read("pyproject.toml")
    assert ('a = "f32[batch, n, 4]", b = "f32[batch, n, 4]"' in text) or (
        'a = "f32[batch, m, 4]", b = "f32[batch, m, 4]"' in text
    )


def test_specialization_fix_makes_the_dim_static(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."head.py:Head"]
        inputs = { x = "f32[batch, 10]" }
        dims = { batch = { min = 1, max = 64, example = 4 } }
    """,
    )
    project.write(
        "head.py",
        """
        from torch import nn

        class Head(nn.Module):
            def forward(self, x):
                return x.view(4, 10) * 2
    """,
    )
    after = fix_and_recheck(
        project, "Head", "EL204", title="Make `batch` static: size 4"
    )  # the second: the code fix is first
    assert after.status is Status.EXPORTED
    assert 'inputs = { x = "f32[4, 10]" }' in project.read("pyproject.toml")
    assert "dims" not in project.read("pyproject.toml")
    assert after.summary.signature == "(x: f32[4, 10]) -> f32[4, 10]"


def test_relation_fix_derives_one_dim_from_the_other(project):
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
    after = fix_and_recheck(project, "Shift", "EL203")
    assert after.status is Status.EXPORTED, after.findings
    assert 'y = "f32[n + 1]"' in project.read("pyproject.toml")
    assert after.summary.signature == "(x: f32[n], y: f32[n + 1]) -> f32[n]"


def test_sympy_solved_bound_fix(project):
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
                return self.conv(x).relu()
    """,
    )
    after = fix_and_recheck(project, "Conv", "EL201")
    assert after.status is Status.EXPORTED
    assert "seq = { min = 4, max = 64, example = 10 }" in project.read("pyproject.toml")


def test_torch_check_fix_inserts_a_line_before_the_branch(project):
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
        from torch import nn

        class Router(nn.Module):
            def forward(self, x):
                count = (x > 0).sum().item()
                if count > 3:
                    return x * 2
                return x
    """,
    )
    after = fix_and_recheck(project, "Router", "EL101", "Assume `count > 3` here: insert torch._check(count > 3)")
    assert after.status is Status.EXPORTED, after.findings
    assert project.read("router.py") == (
        "import torch\n"
        "from torch import nn\n\n"
        "class Router(nn.Module):\n"
        "    def forward(self, x):\n"
        "        count = (x > 0).sum().item()\n"
        "        torch._check(count > 3)\n"
        "        if count > 3:\n"
        "            return x * 2\n"
        "        return x\n"
    )


def test_in_code_dynamic_shapes_get_their_bounds_fixed_in_code(project):
    project.write(
        "pos.py",
        """
        import torch
        from torch import nn
        from torch.export import Dim

        class Pos(nn.Module):
            def __init__(self):
                super().__init__()
                self.table = nn.Parameter(torch.zeros(64, 8))

            @staticmethod
            def example_inputs():
                return (torch.randn(2, 10, 8),)

            @staticmethod
            def dynamic_shapes():
                return {"x": {1: Dim("seq", min=2, max=512)}}

            def forward(self, x):
                if x.shape[1] > 64:
                    raise ValueError("too long")
                return x + self.table[: x.shape[1]]
    """,
    )
    after = fix_and_recheck(project, "Pos", "EL201")
    assert after.status is Status.EXPORTED
    assert 'return {"x": {1: Dim("seq", min=2, max=64)}}' in project.read("pos.py")
