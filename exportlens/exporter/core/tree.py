"""Which submodule of a model breaks its export: one record per submodule, in the order
``named_modules()`` walks them (``exportlens tree``; standard library only)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .report import Finding


class Verdict(Enum):
    EXPORTED = "exported"
    FAILS = "fails"
    NOT_CALLED = "not-called"  # forward never called it on the example inputs: nothing to export it with


@dataclass(frozen=True)
class TreeNode:
    path: str  # "model.layers.0.self_attn"; "" for the module itself
    cls: str  # its class's qualified name: "LlamaAttention"
    verdict: Verdict
    finding: Finding | None = None  # the first finding of its export, where it fails
    inputs: str = ""  # what it was exported with: "(x: f32[batch, seq, 64], mask: b8[batch, seq])"
    same_as: str = ""  # the node of the same class and inputs whose export this verdict is (not exported twice)
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if (self.verdict is Verdict.FAILS) != (self.finding is not None):
            raise ValueError(f"{self.path or 'the module'}: a finding goes with a failure, and only with one")

    @property
    def depth(self) -> int:
        return self.path.count(".") + 1 if self.path else 0

    def holds(self, other: TreeNode) -> bool:
        """Whether ``other`` is below this node."""
        return other.path != self.path and (not self.path or other.path.startswith(self.path + "."))


@dataclass(frozen=True)
class SubmoduleTree:
    target: str  # "path.py:Class"
    nodes: tuple[TreeNode, ...] = ()  # parents before their children
    findings: tuple[Finding, ...] = ()  # what kept the tree from being made (no spec, a crash, a construction error)
    carried: tuple[str, ...] = ()  # the dims carried down to submodules' inputs ("batch", "seq"); () : none
    # where the eager run that records each submodule's inputs stopped ("forward raised ... at
    # net.py:22: ..."; on meta, any read of a value): what comes after it is not called
    stopped: str = ""
    seconds: float = 0.0

    def to_fix(self) -> tuple[TreeNode, ...]:
        """The smallest failing submodules: each fails while every submodule below it that
        was called exports. Deepest first, so the first one read is the one to fix."""
        failing = [n for n in self.nodes if n.verdict is Verdict.FAILS]
        smallest = [n for n in failing if not any(n.holds(m) for m in failing)]
        return tuple(sorted(smallest, key=lambda n: -n.depth))

    @property
    def exit_code(self) -> int:
        """1 where anything fails, as ``check`` exits on an error."""
        failed = any(n.verdict is Verdict.FAILS for n in self.nodes)
        return 1 if failed or any(f.severity.value == "error" for f in self.findings) else 0
