"""Which submodule breaks: the command that exports each submodule of a module in the
server's pool (``exportlens tree``'s job) and answers its tree, with progress and cancel;
and the CodeLens that offers it, to a client that shows trees, above a module that fails."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..exporter.core.options import Options
from ..exporter.core.report import Status
from ..exporter.core.targets import Target
from ..exporter.core.tree import SubmoduleTree
from ..exporter.spec.plan import Plan, Planned, no_spec_findings
from ..exporter.workers.pool import Cancelled
from ..exporter.workers.trees import tree_from, tree_job
from . import compat
from .commands import may_run, module_named, no_module
from .methods import TREE_COMMAND
from .progress import Progress
from .server import ExportLensServer
from .session import ModuleKey, Session
from .snapshots import DocumentSnapshot, WorkspaceSnapshot
from .tree_answer import tree_answer

# the client shows trees (the VS Code extension's view): it sends
# ``capabilities.experimental.exportlensSubmoduleTree = true``, and gets the CodeLens
CAPABILITY = "exportlensSubmoduleTree"
LENS_TITLE = "Which submodule breaks?"


async def submodule_tree(ls: ExportLensServer, args: Any = None) -> dict[str, Any] | None:
    """Export each submodule of the module ``{uri, target | line}`` names, now; the tree as
    ``tree_answer`` writes it, or None (not trusted, cancelled, no such module)."""
    parsed = await module_named(ls, args, TREE_COMMAND)
    if parsed is None or not may_run(ls, "see its submodule tree"):
        return None
    path, target, _ = parsed
    root = ls.session.root_of(path)
    module = ls.session.index.by_target(root, target)
    if module is None:
        ls.rescan(path)  # a file the scan has not reached yet
        module = ls.session.index.by_target(root, target)
    docs = ls.snapshot()
    plan = ls.session.plan(root, [module], docs) if module is not None else None
    planned = next((p for p in plan.modules if p.variant == target.variant), None) if plan else None
    if plan is None or planned is None:
        no_module(ls, TREE_COMMAND, args)
        return None
    if planned.spec is None:
        return tree_answer(SubmoduleTree(str(target), findings=no_spec_findings(planned)), root, docs, {})
    ran = await _run(ls, plan, planned, docs)
    if ran is None:
        return None
    tree, read = ran
    fails = len(tree.to_fix())
    ls.say(f"submodule tree of {target}: {len(tree.nodes)} node(s), {fails} smallest failing, {tree.seconds:.1f} s")
    return tree_answer(tree, root, ls.snapshot(), read)


async def _run(
    ls: ExportLensServer, plan: Plan, planned: Planned, docs: WorkspaceSnapshot
) -> tuple[SubmoduleTree, dict[Path, str]] | None:
    """The tree job, beside the module's own exports (it supersedes none); cancelled by the
    request's cancel or the progress's button, its process is killed."""
    root, s = plan.root, ls.session.settings_at(plan.root)
    text = docs.texts.get(root / planned.module.path)
    # as an export does: the editor's unsaved text only with exportOn = change
    sources = {planned.module.path: text} if s.export_on == "change" and text is not None else {}
    pool = ls.exports.start_pool()
    job = tree_job(plan, planned, Options(overrides=s.overrides), environment=pool.environment, sources=sources)
    future = pool.submit(job, supersede=False)
    token = f"exportlens-tree-{ls.session.next_number()}"
    progress = Progress(
        ls,
        token,
        [Target.of(planned.module, planned.variant)],
        lambda: pool.cancel_job(future),
        "exporting each submodule of {}",
    )
    ls.say(f"submodule tree of {planned.target}: exporting each submodule")
    try:
        await progress.create()
        progress.begin()
        got = await asyncio.wrap_future(future)
    except asyncio.CancelledError:  # $/cancelRequest: kill the job, not just the wait
        pool.cancel_job(future)
        ls.say(f"submodule tree of {planned.target}: cancelled")
        raise
    except Cancelled:  # the progress's cancel button
        ls.say(f"submodule tree of {planned.target}: cancelled")
        return None
    finally:
        progress.end()
    return tree_from(planned, got), {root / rel: t for rel, t in sources.items()}


def tree_lenses(session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot) -> list[types.CodeLens]:
    """ "Which submodule breaks?" above each module whose last export failed (only for a
    client that shows the tree: for any other, a module's lenses stay one per variant)."""
    entry = session.index.get(doc.path)
    if entry is None or not session.trusted:
        return []
    lenses = []
    for m in entry.modules:
        line = m.name_span.line - 1
        for target in session.variants(entry.root, m, docs):
            result = session.result(ModuleKey(entry.root, target))
            if result is None or result.report.status is not Status.FAILED:
                continue
            variant = target.variant
            command = types.Command(
                title=(f"[{variant}] " if variant else "") + LENS_TITLE,
                command=TREE_COMMAND,
                arguments=[{"uri": doc.uri, "target": str(target)}],
            )
            lenses.append(types.CodeLens(types.Range(types.Position(line, 0), types.Position(line, 0)), command))
    return lenses


def shows_trees(caps: types.ClientCapabilities) -> bool:
    return compat.field_of(caps.experimental, CAPABILITY, False) is True


def register(server: ExportLensServer) -> None:
    server.command(TREE_COMMAND)(submodule_tree)
