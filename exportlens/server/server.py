"""The language server object: the session, the exports, and what the handlers share
(snapshots of the documents, publishing diagnostics, refreshes, settings and trust).
``app.build`` creates it and registers the handlers; nothing here runs at import."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..exporter.core.report import Status
from ..exporter.core.targets import Target
from ..exporter.find.declared import declaring
from ..exporter.spec.loading import PYPROJECT
from . import compat
from . import settings as settings_mod
from .exports import Exports, PoolFactory
from .features import diagnostics, pull
from .index.module_index import FileEntry
from .index.rescans import IN_PROCESS, Rescans
from .lowering import Lowerings
from .methods import EXPORTS_NOTIFICATION
from .outbox import Latest, Stated
from .outgoing import stated
from .positions import UTF16
from .progress import Progress
from .publisher import Publisher
from .reasons import Why
from .session import ModuleKey, Session
from .snapshots import DocumentSnapshot, WorkspaceSnapshot, path_of

log = logging.getLogger(__name__)

# the least severe message type each logLevel sends (MessageType: Error 1 < Warning 2 < Info 3 < Log 4)
_LOUDEST = {"error": types.MessageType.Error, "warning": types.MessageType.Warning, "info": types.MessageType.Log}


class Indexer(Protocol):
    """A background scan of one workspace folder (``indexer.Indexer``)."""

    def stop(self) -> None: ...


# (folder, on_file(path, entry), on_done(files)) -> a running scan; tests hand in their own
IndexerFactory = Callable[[Path, Callable[[Path, FileEntry], None], Callable[[int], None]], Indexer]


class ExportLensServer(LanguageServer):
    def __init__(self, pool_factory: PoolFactory, indexer_factory: IndexerFactory) -> None:
        super().__init__("exportlens", __version__)
        self.session = Session()
        self.exports = Exports(self.session, self.snapshot, self._landed, self.say, self._progress, pool_factory)
        self.lowerings = Lowerings(self.exports, self._landed, self.say)  # after each export, on its own
        self.indexer_factory = indexer_factory
        self.indexers: dict[Path, Indexer] = {}  # a background scan per workspace folder
        self.indexing: set[Path] = set()  # the folders whose scan has not finished
        self.rescans = Rescans(self.session.index, self.text_of, self._rescanned, self._buffers)
        self.event_loop: asyncio.AbstractEventLoop | None = None  # for results from other threads
        self.indexed = asyncio.Event()  # every workspace folder's first scan is done
        self.publisher = Publisher(
            self.snapshot, self._diagnostics, self.text_document_publish_diagnostics, diagnostics.as_seen
        )
        self._located: dict[ModuleKey, set[Path]] = {}  # module -> the files its findings were published in
        self._pull_refresh = False  # a workspace/diagnostic/refresh is on its way
        self._window_problems: list[str] = []  # what the window's settings were last said to get wrong
        self._shown_changed = False  # a CodeLens refresh and the status bar's counts are on their way
        self.saved: dict[Path, str] = {}  # an open file's text at its last save (its watched change is that save)

    def say(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        """A line in the client's log, as loud as the logLevel setting lets through."""
        log.info(message)
        if kind > _LOUDEST[self.session.settings.log_level]:
            return
        try:
            self.window_log_message(types.LogMessageParams(kind, f"exportlens: {message}"))
        except Exception:
            pass

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """A message the user sees (a notification in VS Code)."""
        self.window_show_message(types.ShowMessageParams(kind, f"exportlens: {message}"))

    def report_server_error(self, error: Exception, source: type[Exception]) -> None:
        """pygls's report of an exception in a handler. The traceback it left in the error's
        ``data`` (a notification's: pygls logs a request's itself) goes to our log (stderr);
        the user sees a line where no response carries the error."""
        data = getattr(error, "data", None)
        frames = data.get("traceback") if isinstance(data, dict) else None
        if isinstance(frames, list):
            log.error("%s\n%s", error, "".join(map(str, frames)))
        if source is not FeatureRequestError:
            self.show(f"internal error: {error} (the server's log has the details)", types.MessageType.Error)

    def stop_work(self) -> None:
        """No export or scan runs from now on: the workers and the indexers end."""
        self.lowerings.close()
        self.exports.close()
        for indexer in self.indexers.values():
            indexer.stop()

    def shutdown(self) -> None:
        """The end of serving (``exit``, or the end of the input): the work ends with it."""
        self.stop_work()
        super().shutdown()

    # -- documents ---------------------------------------------------------------------

    def snapshot(self) -> WorkspaceSnapshot:
        """The open documents now: text, version and the negotiated position encoding."""
        encoding = self.workspace.position_encoding or UTF16
        docs = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            path = path_of(uri)
            if path is not None:
                docs[path] = DocumentSnapshot.of_buffer(path, doc.source, doc.version, encoding)
        return WorkspaceSnapshot(docs, encoding)

    def document(self, uri: str) -> tuple[DocumentSnapshot, WorkspaceSnapshot] | None:
        """The document a request names, open or on disk, with every open one; None for a URI that is no file."""
        path = path_of(uri)
        if path is None:
            return None
        docs = self.snapshot()
        return docs.get(path), docs

    def text_of(self, path: Path) -> str:
        """A file's text as the user sees it: the editor's, else the disk's."""
        return self.snapshot().get(path).text

    def rescan(self, path: Path) -> None:
        """Index ``path``'s text now; a large one in the background (``rescans``), published when done.
        A pyproject.toml: the files its factory tables name, whose modules it declares."""
        if path.name == PYPROJECT:
            self._rescan_declared(path.parent)
            return
        if path.suffix != ".py":
            return
        text = self.text_of(path)
        if len(text) > IN_PROCESS:
            self.rescans.request(path)
        else:
            self.session.index.scan(path, self._buffers(path, text))
            self.forget_stale(self.session.root_of(path), [path])

    def _rescan_declared(self, root: Path) -> None:
        """The files that hold modules a factory table declares, after and before the change."""
        docs = self.snapshot()
        tables = self.session.project(root, docs).tables
        before = {p for p, m in self.session.index.under(root) if not m.bases}  # a declared module has no class bases
        for path in before | {root / rel for rel in declaring(tables)}:
            if path.is_file() or path in docs:
                self.session.index.remove(path)  # its text is unchanged: not answered from the last scan
                self.session.index.scan(path, self._buffers(path, docs.get(path).text))
        self.forget_stale(root)

    def forget_stale(self, root: Path, files: list[Path] | None = None) -> None:
        """Forget the results of modules (of ``files``, where given) exported with a spec that is
        no longer theirs: a table changed, turned invalid or removed, a variant or class gone.
        Their diagnostics go; the next export of the module, if any, brings new ones."""
        stale = self.session.stale(root, self.snapshot(), files)
        for key in stale:
            del self.session.results[key]
            self.say(f"{key}: its spec changed since it was exported: its findings are cleared")
        if stale:
            self._landed(root, [key.target for key in stale])

    def _buffers(self, path: Path, text: str) -> dict[Path, str]:
        """What a scan of ``path`` reads from the editor: its text, and its project's
        pyproject.toml where open (the modules its factory tables declare)."""
        spec = self.session.root_of(path) / PYPROJECT
        docs = self.snapshot().texts
        return {path: text, **({spec: docs[spec]} if spec in docs else {})}

    def _rescanned(self, path: Path) -> None:
        if path.name == PYPROJECT:
            self._rescan_declared(path.parent)
            self.publish_project(path.parent)
        elif path in self.snapshot():
            self.forget_stale(self.session.root_of(path), [path])
            self.publish(path)
        self.refresh()

    # -- what the client shows ---------------------------------------------------------

    @property
    def pulls(self) -> bool:
        """The client pulls diagnostics (``textDocument/diagnostic``): none are pushed to it."""
        return pull.pulls(self.client_capabilities)

    def clear(self, uri: str) -> None:
        """No diagnostics for ``uri`` any more."""
        if self.pulls:
            self._refresh_diagnostics()
        else:
            self.publisher.clear(uri)

    def _refresh_diagnostics(self) -> None:
        """Ask a pulling client to pull again (once for many changes in one turn of the loop)."""
        if self._pull_refresh:
            return
        self._pull_refresh = True

        def send() -> None:
            self._pull_refresh = False
            self.workspace_diagnostic_refresh(None)

        asyncio.get_running_loop().call_soon(send)

    def publish(self, *paths: Path) -> None:
        """Diagnostics for ``paths``, sent at the end of this turn of the loop where they changed (``publisher``)."""
        if not paths:
            return
        if self.pulls:
            self._refresh_diagnostics()
        else:
            self.publisher.mark(paths)

    def _diagnostics(self, doc: DocumentSnapshot, docs: WorkspaceSnapshot) -> list[types.Diagnostic]:
        return diagnostics.diagnostics(self.session, doc, docs)

    def publish_project(self, root: Path) -> None:
        """Diagnostics for every open file of a project, and its pyproject.toml; after a
        workspace check, also for every file the results put a problem in, open or not."""
        docs = self.snapshot()
        paths = {p for p in docs.documents if p.suffix == ".py" and self.session.root_of(p) == root}
        if root in self.session.checked:
            paths |= {
                p for p in self.publisher.closed_with_problems if self.session.root_of(p) == root
            }  # to clear them
            paths |= {
                root / f.path
                for (r, _), result in self.session.results.items()
                if r == root
                for f in result.findings
                if f.path.endswith(".py")
            }
        if (root / PYPROJECT).is_file() or (root / PYPROJECT) in docs:
            paths.add(root / PYPROJECT)
        self.publish(*paths)

    def publish_results(self, root: Path, targets: list[Target]) -> None:
        """Diagnostics for the files new results of ``targets`` can change: each module's own
        file, and every file its findings are in, now or before (open ones, pyproject.toml,
        and after a workspace check, closed ones too)."""
        docs = self.snapshot()
        paths: set[Path] = set()
        for target in targets:
            key = ModuleKey(root, target)
            result = self.session.result(key)
            now = {root / f.path for f in result.findings} if result is not None else set()
            now.add(root / target.path)
            paths |= now | self._located.get(key, set())
            self._located[key] = now
        checked = root in self.session.checked
        self.publish(*(p for p in paths if p in docs or checked or (p.name == PYPROJECT and p.is_file())))

    def unpublish(self, gone: Callable[[Path], bool]) -> None:
        """After a folder is removed: its closed files' problems go, its open files show what is left."""
        for path in [p for p in self.publisher.closed_with_problems if gone(p)]:
            self.publisher.closed_with_problems.discard(path)
            self.clear(path.as_uri())
        for key in [k for k in self._located if gone(k.root)]:
            del self._located[key]
        self.publish(*(p for p in self.snapshot().documents if gone(p)))

    def refresh(self) -> None:
        caps = self.client_capabilities.workspace
        if caps and caps.code_lens and caps.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)
        if caps and caps.inlay_hint and caps.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)

    def notify_exports(self) -> None:
        """What a status bar shows: exports running, and the latest verdicts."""
        reports = [r.report for r in self.session.results.values()]
        failed = [r for r in reports if r.status is Status.FAILED]
        counts = {
            "running": len(self.session.running),
            "exporting": sorted(str(key.target) for key in self.session.running),  # named while a cold one waits
            "exported": sum(r.status is Status.EXPORTED for r in reports),
            "failed": len(failed),
            "problems": sum(len(r.errors) or len(r.findings) for r in failed),
        }
        try:
            with stated(self, Latest(Stated.EXPORTS)):
                self.protocol.notify(EXPORTS_NOTIFICATION, counts)
        except Exception:
            pass

    def _landed(self, root: Path, targets: list[Target]) -> None:
        """Exports of ``targets`` started (none: a batch began) or landed: their diagnostics,
        then once per turn of the loop, the CodeLenses and the status bar's counts."""
        if not targets:
            self.lowerings.make_way()
        self.publish_results(root, targets)
        if self._shown_changed:
            return
        self._shown_changed = True

        def send() -> None:
            self._shown_changed = False
            self.refresh()
            self.notify_exports()

        asyncio.get_running_loop().call_soon(send)

    def _progress(self, root: Path, targets: list[Target]) -> Progress:
        token = f"exportlens-{self.session.next_number()}"
        return Progress(self, token, targets, lambda: self.exports.cancel(root, targets))

    # -- settings and trust ------------------------------------------------------------

    def apply_settings(self, raw: Any) -> None:
        before = self.session.settings
        self.session.settings, problems = settings_mod.resolve(raw, before)
        self._window_problems = problems
        for p in problems:
            self.say(p, types.MessageType.Warning)
            self.show(p)
        if self.session.settings != before:
            self.say(f"settings: {self.session.settings}")
            now = self.session.settings
            if (before.inlay_hints, before.guard_hints) != (now.inlay_hints, now.guard_hints):
                self.refresh()
            if self.exports.pool is not None:
                self.exports.start_pool()  # restarts the workers when python or jobs changed

    async def pull_settings(self) -> None:
        """The window's settings, and each workspace folder's own (those a folder may set)."""
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        folders = list(self.session.folders)
        items = [types.ConfigurationItem(section="exportlens")]
        items += [types.ConfigurationItem(scope_uri=f.as_uri(), section="exportlens") for f in folders]
        try:
            values = await compat.client_reply(self.workspace_configuration_async(types.ConfigurationParams(items)))
        except Exception as e:
            self.say(f"could not read the client's settings: {e}")
            return
        if values and isinstance(values[0], dict):
            self.apply_settings(values[0])
        self._apply_folder_settings(
            {f: v for f, v in zip(folders, values[1:] if values else []) if isinstance(v, dict)}
        )

    def _apply_folder_settings(self, raw: dict[Path, dict]) -> None:
        """Each folder's own settings (a problem the window's already has is said once)."""
        now, said = {}, set(self._window_problems)
        for folder, values in raw.items():
            folder_settings, problems = settings_mod.resolve(settings_mod.of_folder(values), self.session.settings)
            for p in set(problems) - said:
                said.add(p)
                self.say(f"{folder}: {p}", types.MessageType.Warning)
            if settings_mod.in_folder(self.session.settings, folder_settings) != self.session.settings:
                now[folder] = folder_settings
        if now != self.session.folder_settings:
            self.session.folder_settings = now
            for folder, s in now.items():
                self.say(f"settings of {folder}: {', '.join(f'{n}={getattr(s, n)!r}' for n in settings_mod.RESOURCE)}")

    def set_trusted(self, trusted: bool) -> None:
        if trusted == self.session.trusted:
            return
        self.session.trusted = trusted
        self.say("workspace trusted: exports enabled" if trusted else "workspace not trusted: static features only")
        if not trusted:
            self.lowerings.close()
            self.exports.close()
        else:
            self.exports.start_pool()
            for path in self.snapshot().documents:
                if path.suffix == ".py" and self.session.settings.export_on != "manual":
                    self.exports.file_changed(path, Why.TRUST)
        self.refresh()
