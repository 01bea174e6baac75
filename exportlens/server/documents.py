"""Documents and files: what the editor opens, types, saves, closes, creates and deletes."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ..exporter.core.sources import read_text
from ..exporter.core.targets import Target
from ..exporter.spec.loading import PYPROJECT
from .reasons import Why
from .server import ExportLensServer
from .session import ModuleKey
from .snapshots import path_of

RESCAN_DELAY = 0.15  # seconds: typing rescans a file once it pauses


def did_open(ls: ExportLensServer, params: types.DidOpenTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    if path is None:
        return
    ls.rescan(path)
    ls.publish(path)
    if path.suffix == ".py" and ls.session.settings.export_on != "manual":
        ls.exports.file_changed(path, Why.OPEN)


def did_change(ls: ExportLensServer, params: types.DidChangeTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    if path is None:
        return
    ls.rescans.request(path, RESCAN_DELAY)
    if path.suffix == ".py" and ls.session.settings.export_on == "change":
        ls.exports.file_changed(path, Why.CHANGE)


def did_save(ls: ExportLensServer, params: types.DidSaveTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    if path is None:
        return
    ls.rescan(path)
    ls.saved[path] = ls.text_of(path)
    if ls.session.settings.export_on != "manual":
        ls.exports.file_changed(path, Why.SAVE)
    # a saved pyproject.toml can change every file of its project; a Python file, itself and
    # the tables in pyproject.toml that name its classes (published at the end of this turn)
    root = ls.session.root_of(path)
    if path.name == PYPROJECT:
        ls.publish_project(root)
    else:
        ls.publish(path, *(p for p in [root / PYPROJECT] if p.is_file()))


def did_close(ls: ExportLensServer, params: types.DidCloseTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    if path is None:
        return
    ls.saved.pop(path, None)
    if path.name == PYPROJECT:  # its problems are shown while closed: those of the text on disk now
        ls.rescan(path)
        ls.publish_project(ls.session.root_of(path))
        return
    ls.clear(params.text_document.uri)
    if path.exists():
        ls.rescan(path)  # back to the text on disk


# -- files on disk ---------------------------------------------------------------------

_PY_FILES = types.FileOperationRegistrationOptions(
    filters=[types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*.py"))]
)


def _deleted(ls: ExportLensServer, path: Path) -> None:
    ls.exports.graph.forget()
    root = ls.session.root_of(path)
    for p, entry in list(ls.session.index.files.items()):
        if p == path or path in p.parents:
            for target in map(Target.of, entry.modules):
                ls.exports.cancel(root, [target])
                ls.session.forget(ModuleKey(root, target))
            ls.clear(p.as_uri())
    ls.session.index.remove(path)
    ls.publish_project(root)
    ls.refresh()


def _created(ls: ExportLensServer, path: Path) -> None:
    ls.exports.graph.forget()
    paths = [path] if path.is_file() else sorted(path.rglob("*.py")) if path.is_dir() else []
    for p in paths:
        ls.rescan(p)
    ls.refresh()


def did_create(ls: ExportLensServer, params: types.CreateFilesParams) -> None:
    for f in params.files:
        if (p := path_of(f.uri)) is not None:
            _created(ls, p)


def did_delete(ls: ExportLensServer, params: types.DeleteFilesParams) -> None:
    for f in params.files:
        if (p := path_of(f.uri)) is not None:
            _deleted(ls, p)


def did_rename(ls: ExportLensServer, params: types.RenameFilesParams) -> None:
    for f in params.files:
        old, new = path_of(f.old_uri), path_of(f.new_uri)
        if old is not None:
            _deleted(ls, old)
        if new is not None:
            _created(ls, new)


def did_change_watched(ls: ExportLensServer, params: types.DidChangeWatchedFilesParams) -> None:
    """A file changed outside the editor (git, another tool): as a save, it re-plans and
    re-exports every open module it affects; a file not open is indexed again first."""
    docs = ls.snapshot()
    for change in params.changes:
        path = path_of(change.uri)
        if path is None:
            continue
        if path not in docs:  # the editor's buffer is the truth for an open file
            if change.type == types.FileChangeType.Deleted:
                _deleted(ls, path)
            elif path.name == PYPROJECT:
                ls.rescan(path)  # the modules its factory tables declare
                ls.publish_project(path.parent)
            else:
                _created(ls, path)
        elif ls.saved.get(path) == read_text(path):
            continue  # the editor's own save, exported as such
        if (path.suffix == ".py" or path.name == PYPROJECT) and ls.session.settings.export_on != "manual":
            ls.exports.file_changed(path, Why.DISK)


def register(server: ExportLensServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    server.feature(types.WORKSPACE_DID_CREATE_FILES, _PY_FILES)(did_create)
    server.feature(types.WORKSPACE_DID_DELETE_FILES, _PY_FILES)(did_delete)
    server.feature(types.WORKSPACE_DID_RENAME_FILES, _PY_FILES)(did_rename)
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched)
