"""The language server: thin handlers over the session, the index and the exports.

Hover, CodeLens, inlay hints and code actions answer from the index and cached
reports only; exports run in worker processes and land asynchronously.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..exporter.spec import PYPROJECT
from . import settings as settings_mod
from .exports import Exports
from .features import actions, diagnostics, hover, inlay, lenses
from .index import ModuleIndex
from .indexer import Indexer
from .positions import Lines
from .progress import Progress
from .session import Session

log = logging.getLogger(__name__)

TRUST_NOTIFICATION = "exportlens/setTrusted"  # {"trusted": true}: the client granted workspace trust
STATUS_REQUEST = "exportlens/status"  # the server's own state, for tests, benchmarks and bug reports
RESCAN_DELAY = 0.15  # seconds: typing rescans a file once it pauses


def _path(uri: str) -> Path | None:
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs else None


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """A field of a custom notification's params, whatever shape pygls gave them."""
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


class ExportLensServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("exportlens", __version__)
        self.session = Session()
        self.exports = Exports(self.session, self.open_texts, self._landed, self.say)
        self.indexers: list[Indexer] = []
        self._rescans: dict[Path, asyncio.Task] = {}
        self.event_loop: asyncio.AbstractEventLoop | None = None  # for results from other threads

    # -- helpers the features share --------------------------------------------------

    def say(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        log.info(message)
        try:
            self.window_log_message(types.LogMessageParams(kind, f"exportlens: {message}"))
        except Exception:  # noqa: BLE001 - the transport may already be closed at shutdown
            pass

    @property
    def utf16(self) -> bool:
        return self.workspace.position_encoding != types.PositionEncodingKind.Utf32

    def open_texts(self) -> Mapping[Path, str]:
        out = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            path = _path(uri)
            if path is not None:
                out[path] = doc.source
        return out

    def text_of(self, path: Path) -> str:
        doc = self.workspace.text_documents.get(path.as_uri())
        if doc is not None:
            return doc.source
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def version_of(self, path: Path) -> int | None:
        doc = self.workspace.text_documents.get(path.as_uri())
        return doc.version if doc is not None else None

    def has_spec(self, root: Path, targets: list[str]) -> dict[str, bool]:
        overrides = self.open_texts()
        out = {}
        for t in targets:
            m = self.session.index.by_target(root, t)
            out[t] = m is not None and self.session.spec_of(root, m, overrides)[0] is not None
        return out

    def rescan(self, path: Path) -> None:
        if path.suffix == ".py":
            self.session.index.scan(path, self.open_texts())

    def publish(self, path: Path) -> None:
        text = self.text_of(path)
        found = diagnostics.diagnostics(self.session, path, text, self.open_texts(), self.utf16)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(path.as_uri(), found, self.version_of(path)))

    def publish_project(self, root: Path) -> None:
        """Diagnostics for every open file of a project, and its pyproject.toml."""
        for path in self.open_texts():
            if path.suffix == ".py" and self.session.root_of(path) == root:
                self.publish(path)
        if (root / PYPROJECT).is_file() or (root / PYPROJECT) in self.open_texts():
            self.publish(root / PYPROJECT)

    def refresh(self) -> None:
        caps = self.client_capabilities.workspace
        if caps and caps.code_lens and caps.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)
        if caps and caps.inlay_hint and caps.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)

    def _landed(self, root: Path, targets: list[str]) -> None:
        self.publish_project(root)
        self.refresh()

    # -- settings and trust ------------------------------------------------------------

    def apply_settings(self, raw: Any) -> None:
        before = self.session.settings
        self.session.settings, problems = settings_mod.resolve(raw, before)
        for p in problems:
            self.say(p, types.MessageType.Warning)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"exportlens: {p}"))
        if self.session.settings != before:
            self.say(f"settings: {self.session.settings}")
            if before.inlay_hints != self.session.settings.inlay_hints:
                self.refresh()
            if self.exports.pool is not None:
                self.exports.start_pool()  # restarts the workers when python or jobs changed

    async def pull_settings(self) -> None:
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        try:
            # shielded: a cancelled wait on a client request breaks pygls 2.1 (see NOTES)
            values = await asyncio.shield(self.workspace_configuration_async(types.ConfigurationParams([types.ConfigurationItem(section="exportlens")])))
        except Exception as e:  # noqa: BLE001
            self.say(f"could not read the client's settings: {e}")
            return
        if values and isinstance(values[0], dict):
            self.apply_settings(values[0])

    def set_trusted(self, trusted: bool) -> None:
        if trusted == self.session.trusted:
            return
        self.session.trusted = trusted
        self.say("workspace trusted: exports enabled" if trusted else "workspace not trusted: static features only")
        if not trusted:
            self.exports.close()
        else:
            self.exports.start_pool()
            for path in self.open_texts():
                if path.suffix == ".py" and self.session.settings.export_on != "manual":
                    self.exports.file_changed(path, "trust granted")
        self.refresh()


server = ExportLensServer()


# -- lifecycle -------------------------------------------------------------------------


@server.feature(types.INITIALIZE)
def initialize(ls: ExportLensServer, params: types.InitializeParams) -> None:
    options = params.initialization_options or {}
    if isinstance(options, dict):
        ls.session.trusted = bool(options.get("trusted", True))
        ls.session.settings, problems = settings_mod.resolve(options)
        for p in problems:
            ls.say(p, types.MessageType.Warning)
    folders = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
    ls.session.folders = [p for p in (_path(u) for u in folders) if p is not None]


@server.feature(types.INITIALIZED)
def initialized(ls: ExportLensServer, params: types.InitializedParams) -> None:
    ls.event_loop = asyncio.get_running_loop()
    ls.say(f"{__version__} serving {', '.join(map(str, ls.session.folders)) or 'no folder'}; pid {os.getpid()}; "
           f"{'trusted' if ls.session.trusted else 'untrusted: static features only'}")
    if ls.session.trusted and ls.session.settings.export_on != "manual":
        ls.exports.start_pool()  # torch imports in the warm worker while the user reads
    asyncio.get_running_loop().create_task(ls.pull_settings())
    _watch_files(ls)
    for folder in ls.session.folders:
        ls.indexers.append(Indexer(ls.session.settings.python, folder, lambda p, e: ls.session.index.put(p, e, only_if_absent=True), lambda n, f=folder: _indexed(ls, f, n)))
        ls.publish_project(folder)


def _indexed(ls: ExportLensServer, folder: Path, files: int) -> None:
    def done() -> None:
        ls.say(f"indexed {folder}: {len(ls.session.index)} modules in {files} files")
        ls.publish_project(folder)  # spec errors of modules the editor has not opened
        ls.refresh()

    ls.event_loop.call_soon_threadsafe(done)


def _watch_files(ls: ExportLensServer) -> None:
    caps = ls.client_capabilities.workspace
    watched = caps.did_change_watched_files if caps else None
    if not (watched and watched.dynamic_registration):
        return
    watchers = [types.FileSystemWatcher(glob_pattern=g) for g in ("**/*.py", f"**/{PYPROJECT}")]
    registration = types.Registration(id="exportlens-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                      register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))
    ls.client_register_capability(types.RegistrationParams([registration]))


@server.feature(types.SHUTDOWN)
def shutdown(ls: ExportLensServer, params: None) -> None:
    # Cancel in-flight requests before pygls does: its own loop (2.1.1) iterates the
    # futures dict while a cancel callback removes from it, and the shutdown fails.
    for msg_id, future in list(ls.protocol._request_futures.items()):
        if msg_id != ls.protocol.msg_id and not future.done():
            future.cancel()
    ls.exports.close()
    for i in ls.indexers:
        i.stop()


@server.feature(TRUST_NOTIFICATION)
def on_trust(ls: ExportLensServer, params: Any) -> None:
    ls.set_trusted(bool(_get(params, "trusted", True)))


@server.feature(STATUS_REQUEST)
def status(ls: ExportLensServer, params: Any) -> dict[str, Any]:
    pool = ls.exports.pool
    return {
        "pid": os.getpid(),
        "torch_imported": "torch" in sys.modules,
        "trusted": ls.session.trusted,
        "modules_indexed": len(ls.session.index),
        "files_indexed": len(ls.session.index.files),
        "exports_started": ls.session.exports_started,
        "running": [t for _, t in ls.session.running],
        "worker_pid": pool.warm_pid if pool else None,
        "jobs": [{"target": t, "pid": p} for t, p in (pool.job_pids() if pool else {}).items()],
        "settings": {k: v for k, v in vars(ls.session.settings).items()},
    }


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: ExportLensServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get("exportlens"), dict):
        ls.apply_settings(settings["exportlens"])
    else:
        asyncio.get_running_loop().create_task(ls.pull_settings())


# -- documents -----------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ExportLensServer, params: types.DidOpenTextDocumentParams) -> None:
    path = _path(params.text_document.uri)
    if path is None:
        return
    ls.rescan(path)
    ls.publish(path)
    if path.suffix == ".py" and ls.session.settings.export_on != "manual":
        ls.exports.file_changed(path, "open")


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ExportLensServer, params: types.DidChangeTextDocumentParams) -> None:
    path = _path(params.text_document.uri)
    if path is None:
        return
    pending = ls._rescans.pop(path, None)
    if pending is not None:
        pending.cancel()
    ls._rescans[path] = asyncio.get_running_loop().create_task(_rescan_later(ls, path))
    if path.suffix == ".py" and ls.session.settings.export_on == "change":
        ls.exports.file_changed(path, "change")


async def _rescan_later(ls: ExportLensServer, path: Path) -> None:
    await asyncio.sleep(RESCAN_DELAY)
    ls._rescans.pop(path, None)
    ls.rescan(path)

    if path.name == PYPROJECT:
        ls.publish_project(path.parent)
    ls.refresh()


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: ExportLensServer, params: types.DidSaveTextDocumentParams) -> None:
    path = _path(params.text_document.uri)
    if path is None:
        return
    ls.rescan(path)
    if ls.session.settings.export_on != "manual":
        ls.exports.file_changed(path, "save")
    # static diagnostics after the export has started: they are quick, the export is not
    root = ls.session.root_of(path)
    asyncio.get_running_loop().call_soon(ls.publish_project, root)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ExportLensServer, params: types.DidCloseTextDocumentParams) -> None:
    path = _path(params.text_document.uri)
    if path is not None and path.name != PYPROJECT:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(params.text_document.uri, []))
        if path.exists():
            ls.rescan(path)  # back to the text on disk


# -- files on disk ---------------------------------------------------------------------

_PY_FILES = types.FileOperationRegistrationOptions(filters=[types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*.py"))])


def _deleted(ls: ExportLensServer, path: Path) -> None:
    root = ls.session.root_of(path)
    for p, entry in list(ls.session.index.files.items()):
        if p == path or path in p.parents:
            for m in entry.modules:
                ls.exports.cancel(root, [m.target])
                ls.session.forget(root, m.target)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(p.as_uri(), []))
    ls.session.index.remove(path)
    ls.publish_project(root)
    ls.refresh()


def _created(ls: ExportLensServer, path: Path) -> None:
    paths = [path] if path.is_file() else sorted(path.rglob("*.py")) if path.is_dir() else []
    for p in paths:
        ls.rescan(p)
    ls.refresh()


@server.feature(types.WORKSPACE_DID_CREATE_FILES, _PY_FILES)
def did_create(ls: ExportLensServer, params: types.CreateFilesParams) -> None:
    for f in params.files:
        if (p := _path(f.uri)) is not None:
            _created(ls, p)


@server.feature(types.WORKSPACE_DID_DELETE_FILES, _PY_FILES)
def did_delete(ls: ExportLensServer, params: types.DeleteFilesParams) -> None:
    for f in params.files:
        if (p := _path(f.uri)) is not None:
            _deleted(ls, p)


@server.feature(types.WORKSPACE_DID_RENAME_FILES, _PY_FILES)
def did_rename(ls: ExportLensServer, params: types.RenameFilesParams) -> None:
    for f in params.files:
        old, new = _path(f.old_uri), _path(f.new_uri)
        if old is not None:
            _deleted(ls, old)
        if new is not None:
            _created(ls, new)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched(ls: ExportLensServer, params: types.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        path = _path(change.uri)
        if path is None or path in ls.open_texts():
            continue  # the editor's buffer is the truth for an open file
        if change.type == types.FileChangeType.Deleted:
            _deleted(ls, path)
        elif path.name == PYPROJECT:
            ls.publish_project(path.parent)
        else:
            _created(ls, path)


# -- features ---------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
def code_lens(ls: ExportLensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    path = _path(params.text_document.uri)
    entry = ls.session.index.get(path) if path else None
    if entry is None:
        return []
    return lenses.code_lenses(ls.session, path, ls.has_spec(entry.root, [m.target for m in entry.modules]))


@server.feature(types.TEXT_DOCUMENT_HOVER)
def on_hover(ls: ExportLensServer, params: types.HoverParams) -> types.Hover | None:
    path = _path(params.text_document.uri)
    if path is None or path.suffix != ".py":
        return None
    root = ls.session.root_of(path)
    line = params.position.line + 1
    module = ls.session.index.module_at(path, line)
    if module is not None and module.name_span.line == line:
        spec, _ = ls.session.spec_of(root, module, ls.open_texts())
        text = hover.module_hover(ls.session, root, module, spec.describe() if spec else None)
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text))
    rel = diagnostics._rel(root, path)
    found = hover.shapes_at(ls.session, root, rel, line)
    if found is None:
        return None
    code = Lines(ls.text_of(path)).line(line - 1)
    return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, hover.line_hover(found[0], code)))


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
def inlay_hint(ls: ExportLensServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    path = _path(params.text_document.uri)
    if path is None or not ls.session.settings.inlay_hints:
        return []
    root = ls.session.root_of(path)
    r = params.range
    return inlay.inlay_hints(ls.session, root, diagnostics._rel(root, path), Lines(ls.text_of(path)), r.start.line + 1, r.end.line + 1, ls.utf16)


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, actions.EXPORT_KIND]))
def code_action(ls: ExportLensServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    path = _path(params.text_document.uri)
    if path is None:
        return []
    overrides = ls.open_texts()
    out = actions.quick_fixes(ls.session, path, params, overrides, ls.text_of, ls.version_of, ls.utf16)
    module = ls.session.index.module_at(path, params.range.start.line + 1) if path.suffix == ".py" else None
    if module is not None:
        root = ls.session.root_of(path)
        has = ls.has_spec(root, [module.target])[module.target]
        out += actions.module_actions(ls.session, path, module, has, lambda: _spec_edit(ls, root, path, module))
    return out


def _spec_edit(ls: ExportLensServer, root: Path, path: Path, module) -> types.WorkspaceEdit | None:
    try:
        return actions.create_spec_edit(module, root, path, ls.session.folders, ls.text_of, ls.version_of, set(ls.open_texts()), ls.utf16)
    except Exception as e:  # noqa: BLE001 - a pyproject.toml that does not parse gets no scaffold
        ls.say(f"cannot scaffold a spec for {module.target}: {e}")
        return None


# -- commands ----------------------------------------------------------------------------


def _command_args(args: Any) -> tuple[Path, str, bool] | None:
    arg = args[0] if isinstance(args, list) and args else args
    uri, target = _get(arg, "uri"), _get(arg, "target")
    path = _path(uri) if isinstance(uri, str) else None
    if path is None or not isinstance(target, str):
        return None
    return path, target, bool(_get(arg, "save", False))


def _cancel_with_request(ls: ExportLensServer) -> None:
    """Let $/cancelRequest reach this command's task. pygls 2.1.1 runs commands through a
    generator and cancels only the request's outer future, never the task doing the work."""
    request = ls.protocol._request_futures.get(ls.protocol.msg_id)
    task = asyncio.current_task()
    if request is not None and task is not None:
        request.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)


@server.command(actions.EXPORT_COMMAND)
async def export_module(ls: ExportLensServer, args: Any) -> dict[str, Any] | None:
    """Export one module now: from its CodeLens, a code action, or any client."""
    parsed = _command_args(args)
    if parsed is None:
        ls.say(f"{actions.EXPORT_COMMAND} needs {{uri, target}}, got {args!r}", types.MessageType.Error)
        return None
    path, target, save = parsed
    _cancel_with_request(ls)
    if not ls.session.trusted:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, "exportlens: this workspace is not trusted, so its code is not run. Trust it to export."))
        return None
    root = ls.session.root_of(path)
    if ls.session.index.by_target(root, target) is None:
        ls.rescan(path)
    artifacts = (root / ls.session.settings.artifact_folder) if save else None
    progress = Progress(ls, root, [target])
    await progress.create()
    try:
        reports = await ls.exports.export(root, [target], "command", artifacts=artifacts, progress=progress)
    except asyncio.CancelledError:  # $/cancelRequest: kill the job, not just the wait
        ls.exports.cancel(root, [target])
        raise
    report = reports.get(target)
    if report is None:
        return None
    if save and report.summary and report.summary.artifact:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, f"exportlens: saved {report.summary.artifact}"))
    elif save:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"exportlens: {target} did not export: {report.findings[0].message if report.findings else report.status.value}"))
    return {"target": target, "status": report.status.value, "artifact": report.summary.artifact if report.summary else None, "findings": len(report.findings)}


@server.command(actions.CREATE_SPEC_COMMAND)
async def create_spec(ls: ExportLensServer, args: Any) -> bool:
    parsed = _command_args(args)
    if parsed is None:
        return False
    path, target, _ = parsed
    root = ls.session.root_of(path)
    module = ls.session.index.by_target(root, target)
    edit = _spec_edit(ls, root, path, module) if module else None
    if edit is None:
        return False
    result = await asyncio.shield(ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit, label=f"Create export spec for {module.name}")))
    return bool(result and result.applied)


def main() -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    server.start_io()
