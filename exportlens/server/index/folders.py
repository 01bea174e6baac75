"""Workspace folders. Each has its own background scan. A folder added later (a
multi-root workspace, ``workspace/didChangeWorkspaceFolders``) is scanned then; a folder
removed takes its scan, exports, results and diagnostics with it."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lsprotocol import types

from ..server import ExportLensServer
from ..snapshots import path_of
from .module_index import FileEntry

log = logging.getLogger(__name__)


def start(ls: ExportLensServer) -> None:
    """Scan the folders the client opened with."""
    if not ls.session.folders:
        ls.indexed.set()
    for folder in ls.session.folders:
        _scan(ls, folder)


def did_change(ls: ExportLensServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    for folder in params.event.removed or []:
        path = path_of(folder.uri)
        if path is not None and path in ls.session.folders:
            remove(ls, path)
    for folder in params.event.added or []:
        path = path_of(folder.uri)
        if path is not None and path not in ls.session.folders:
            ls.session.folders.append(path)
            ls.say(f"serving {path} too")
            _scan(ls, path)
    if params.event.added or params.event.removed:
        asyncio.get_running_loop().create_task(ls.pull_settings())  # a folder's own settings


def remove(ls: ExportLensServer, folder: Path) -> None:
    """Forget a folder: stop its scan and exports; what it published goes."""
    ls.session.folders.remove(folder)
    indexer = ls.indexers.pop(folder, None)
    if indexer is not None:
        indexer.stop()
    _scanned(ls, folder)

    def under(path: Path) -> bool:
        return path == folder or folder in path.parents

    for key in [k for k in ls.session.running if under(k.root)]:
        ls.exports.cancel(key.root, [key.target])
    ls.exports.drop(under)
    ls.lowerings.drop(under)
    ls.rescans.cancel(under)
    ls.session.drop(under)
    ls.session.index.remove(folder)
    ls.unpublish(under)
    ls.notify_exports()
    ls.refresh()
    ls.say(f"no longer serving {folder}")


def _scan(ls: ExportLensServer, folder: Path) -> None:
    ls.indexing.add(folder)
    ls.indexed.clear()

    def found(path: Path, entry: FileEntry) -> None:
        if folder in ls.indexers:  # not removed meanwhile
            ls.session.index.put(path, entry, only_if_absent=True)

    ls.indexers[folder] = ls.indexer_factory(folder, found, lambda n: _done(ls, folder, n))
    ls.publish_project(folder)


def _done(ls: ExportLensServer, folder: Path, files: int) -> None:
    """Called from the scan's thread when it finishes."""

    def done() -> None:
        if folder not in ls.indexers:
            return  # removed meanwhile
        _scanned(ls, folder)
        modules = sum(len(e.modules) for p, e in list(ls.session.index.files.items()) if folder in p.parents)
        ls.say(f"indexed {folder}: {modules} modules in {files} files")
        ls.publish_project(folder)  # spec errors of modules the editor has not opened
        ls.refresh()

    try:
        ls.session.warm_specs(folder)  # here, off the event loop: what the first diagnostics need
    except Exception:  # a spec that cannot be read is said when a file's diagnostics are made
        log.debug("planning %s's specs ahead failed", folder, exc_info=True)
    loop = ls.event_loop
    assert loop is not None  # set at initialize, before any folder is scanned
    loop.call_soon_threadsafe(done)


def _scanned(ls: ExportLensServer, folder: Path) -> None:
    ls.indexing.discard(folder)
    if not ls.indexing:
        ls.indexed.set()


def register(server: ExportLensServer) -> None:
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(did_change)
