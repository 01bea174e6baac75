"""*Create export spec*: the module's guesses exported in the workers until one runs
(workers/guess_trials.py), the table written into pyproject.toml, then shown: the editor
opens pyproject.toml with the new table selected (``window/showDocument``), so the
user reads what was guessed and what the check gave."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from ..exporter.core.targets import ModuleClass
from ..exporter.edit.scaffold import Candidate, candidates, with_tables
from ..exporter.spec.pyproject import MODULES, PYPROJECT, read
from ..exporter.workers.guess_trials import Proven, prove_guesses
from . import compat
from .features import actions
from .server import ExportLensServer


async def proven_table(ls: ExportLensServer, module: ModuleClass, root: Path, path: Path):
    """The table of the first guess that runs (exported now); where the workspace is not
    trusted, the first guess, unchecked."""
    docs = ls.snapshot()
    guesses: list[Candidate] = candidates(module, docs.get(path).text)
    if not ls.session.trusted:
        return guesses[0].table("not run: this workspace is not trusted")
    pyproject = root / PYPROJECT
    before = docs.get(pyproject).text if pyproject.is_file() or pyproject in docs else None
    pool = ls.exports.start_pool()
    texts = dict(docs.texts)
    texts.pop(pyproject, None)
    found: dict[str, Proven] = await asyncio.to_thread(
        prove_guesses, root, {module.target: guesses}, before, pool, texts
    )
    proven = found.get(module.target)
    ls.say(f"{module.target}: the spec guessed from the code {proven.verdict if proven else 'was not exported'}")
    return proven.candidate.table(proven.verdict) if proven else guesses[0].table()


async def show_table(ls: ExportLensServer, root: Path, target: str, text: str) -> None:
    """Open pyproject.toml (its ``text`` once the edit is applied) with ``target``'s table
    selected, where the client can."""
    window = ls.client_capabilities.window
    if not (window and window.show_document and window.show_document.support):
        return
    pyproject = root / PYPROJECT
    header = read(text).headers.get((*MODULES, target))
    if header is None:
        return
    lines, start = text.splitlines(), header.line - 1
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("[") or not lines[i].strip()), len(lines)
    )
    selection = types.Range(types.Position(start, 0), types.Position(end - 1, len(lines[end - 1])))
    params = types.ShowDocumentParams(pyproject.as_uri(), take_focus=True, selection=selection)
    await compat.client_reply(ls.window_show_document_async(params))


async def create_spec(ls: ExportLensServer, module: ModuleClass, root: Path, path: Path) -> bool:
    try:
        table = await proven_table(ls, module, root, path)
        docs = ls.snapshot()
        edit = actions.create_spec_edit(module, root, path, docs, table)
        pyproject = root / PYPROJECT
        after = with_tables(
            docs.get(pyproject).text if pyproject.is_file() or pyproject in docs else None, {module.target: table}
        )
    except Exception as e:
        ls.say(f"cannot scaffold a spec for {module.target}: {e}")
        return False
    params = types.ApplyWorkspaceEditParams(edit, label=f"Create export spec for {module.name}")
    result = await compat.client_reply(ls.workspace_apply_edit_async(params))
    if not (result and result.applied):
        return False
    await show_table(ls, root, module.target, after)
    return True
