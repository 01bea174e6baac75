"""A real LSP client (pytest-lsp) driving `exportlens serve` over stdio, on a copy of the
bundled examples project: tests open, edit and save files the way an editor does."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, default_converter

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SERVER = [sys.executable, "-m", "exportlens.cli", "serve"]


def capabilities() -> types.ClientCapabilities:
    """VS Code's, plus what pytest-lsp's copy predates: inlay hints, refreshes, progress."""
    caps = client_capabilities("visual-studio-code")
    ws = caps.workspace
    ws.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    ws.code_lens = types.CodeLensWorkspaceClientCapabilities(refresh_support=True)
    caps.text_document.inlay_hint = types.InlayHintClientCapabilities(dynamic_registration=False)
    caps.window = types.WindowClientCapabilities(work_done_progress=True, show_message=None, show_document=None)
    return caps


class StaleEdit(Exception):
    """The editor refused a WorkspaceEdit made for another version of a document."""


class Editor:
    """The editor side: open documents with versions, edits applied as a user accepts them."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        self.encoding: str | None = None  # the position encoding the server chose
        self.log_start = len(client.log_messages)  # a shared server's earlier lines are another test's

    def uri(self, rel: str) -> str:
        return (self.root / rel).resolve().as_uri()

    def open(self, rel: str) -> str:
        uri = self.uri(rel)
        text = (self.root / rel).read_text()
        self.versions[uri], self.texts[uri] = 1, text
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri, "python" if rel.endswith(".py") else "toml", 1, text)
            )
        )
        return uri

    def change(self, rel: str, text: str) -> None:
        uri = self.uri(rel)
        self.versions[uri] += 1
        self.texts[uri] = text
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=self.versions[uri], uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text)],
            )
        )

    def save(self, rel: str, text: str | None = None) -> None:
        uri = self.uri(rel)
        if text is not None:
            self.change(rel, text)
        (self.root / rel).write_text(self.texts[uri])
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))

    async def edit_of(self, action: types.CodeAction) -> types.WorkspaceEdit:
        """A code action's edit as the editor gets it when the user picks the action: asked
        for (``codeAction/resolve``) where the server sent the action without it."""
        if action.edit is None and action.data is not None:
            action = await self.client.code_action_resolve_async(action)
        return action.edit

    def apply(self, edit: types.WorkspaceEdit) -> list[str]:
        """Apply a WorkspaceEdit to open buffers and save them; returns the files touched. As
        VS Code does, refuse all of it (StaleEdit) where an edit names a version of an open
        document other than the editor's (a version of None: the server asks for no check)."""
        for change in edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit):
                uri, version = change.text_document.uri, change.text_document.version
                if uri in self.versions and version is not None and version != self.versions[uri]:
                    raise StaleEdit(f"edit made for version {version} of {uri}, the editor has {self.versions[uri]}")
        touched = []
        for change in edit.document_changes or []:
            if isinstance(change, types.CreateFile):
                path = Path(change.uri.removeprefix("file://"))
                if not path.exists():
                    path.write_text("")
                continue
            uri = change.text_document.uri
            path = Path(uri.removeprefix("file://"))
            rel = path.relative_to(self.root.resolve()).as_posix()
            text = self.texts.get(uri, path.read_text())
            text = apply_text_edits(text, change.edits)
            if uri not in self.versions:
                path.write_text(text)
                self.open(rel)
            self.save(rel, text)
            touched.append(rel)
        return touched

    async def diagnostics(
        self, rel: str, until: Callable[[list[types.Diagnostic]], bool], timeout: float = 90
    ) -> list[types.Diagnostic]:
        """Wait for this file's published diagnostics to satisfy ``until``."""
        uri = self.uri(rel)

        async def wait() -> list[types.Diagnostic]:
            while True:
                current = list(self.client.diagnostics.get(uri, []))
                if uri in self.client.diagnostics and until(current):
                    return current
                await self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

        try:
            return await asyncio.wait_for(wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(
                f"diagnostics for {rel} never satisfied the test; last: {self.client.diagnostics.get(uri)}"
                f"\nserver log:\n{self.log_tail()}"
            ) from None

    def current(self, rel: str, diagnostic: types.Diagnostic) -> types.Diagnostic:
        """The diagnostic as the client shows it now (the same code and message, as last
        published): what an editor sends with a code action request, its fixes in its data."""
        now = self.client.diagnostics.get(self.uri(rel), [])
        return next((d for d in now if (d.code, d.message) == (diagnostic.code, diagnostic.message)), diagnostic)

    async def landed(self, most: float = 1.0) -> None:
        """Until an export or a proof landed (its log line, or the diagnostics it published), or
        ``most`` seconds: one that landed just before this was called is then not waited for."""
        logs, shown = len(self.client.log_messages), dict(self.client.diagnostics)
        end = asyncio.get_running_loop().time() + most
        while len(self.client.log_messages) == logs and self.client.diagnostics == shown:
            if asyncio.get_running_loop().time() > end:
                return
            await asyncio.sleep(0.05)

    async def logged(self, needle: str, timeout: float = 90, after: int | None = None) -> str:
        """The first log line holding ``needle`` (of this test's, or after line ``after``)."""

        async def wait() -> str:
            while True:
                for m in self.client.log_messages[self.log_start if after is None else after :]:
                    if needle in m.message:
                        return m.message
                await self.client.wait_for_notification(types.WINDOW_LOG_MESSAGE)

        try:
            return await asyncio.wait_for(wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"{needle!r} never logged\nserver log:\n{self.log_tail()}") from None

    def log_tail(self, lines: int = 40) -> str:
        """This test's last lines of the server's log: what a wait that gives up prints."""
        return "\n".join(m.message for m in self.client.log_messages[self.log_start :][-lines:])

    def line_of(self, rel: str, needle: str) -> int:
        """0-based line of the first line containing ``needle``."""
        for i, line in enumerate((self.root / rel).read_text().splitlines()):
            if needle in line:
                return i
        raise AssertionError(f"{needle!r} not in {rel}")

    async def configure(self, **settings: Any) -> None:
        """Change settings as VS Code does (didChangeConfiguration); the server applies them
        before it answers the next request."""
        self.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"exportlens": settings})
        )
        await self.status()

    async def status(self) -> dict[str, Any]:
        result = await self.client.protocol.send_request_async("exportlens/status", {})
        return (
            result._asdict() if hasattr(result, "_asdict") else dict(result)
        )  # pygls hands unknown results over as namedtuples


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(p: types.Position) -> int:  # ASCII test files: UTF-16 units are characters
        return starts[min(p.line, len(starts) - 1)] + p.character

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
    return root


def _client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    for method, handler in DEFAULT_CLIENT_FEATURES.items():
        if method not in (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.WORKSPACE_DIAGNOSTIC_REFRESH):
            client.feature(method)(handler)
    client.published = []  # every publish, in order: (uri, version, diagnostics)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append((params.uri, params.version, params.diagnostics))

    client.refreshes = 0

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    @client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def refresh(params: None) -> None:
        client.refreshes += 1

    client.pull_requests = 0  # workspace/diagnostic/refresh: a pulling client is asked to pull again

    @client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
    def pull_again(params: None) -> None:
        client.pull_requests += 1

    client.exports = []  # the status bar's counts, as the server sends them

    @client.feature("exportlens/exports")
    def exports(params: Any) -> None:
        client.exports.append(params)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        client.registrations = params.registrations

    return client


async def start(
    root: Path,
    *,
    server: list[str] = SERVER,
    encodings: list[str] | None = None,
    caps: types.ClientCapabilities | None = None,
    **options: Any,
) -> Editor:
    """A client on ``server`` with ``caps`` (None: VS Code's), offering the position ``encodings``
    (None: LSP's default, UTF-16)."""
    client = _client()
    await client.start_io(*server, cwd=str(root))
    caps = caps or capabilities()
    if encodings is not None:
        caps.general = types.GeneralClientCapabilities(position_encodings=encodings)
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=root.resolve().as_uri(),
            workspace_folders=[types.WorkspaceFolder(root.resolve().as_uri(), root.name)],
            initialization_options={"debounce": 50, **options},
        )
    )
    editor = Editor(client, root)
    editor.encoding = result.capabilities.position_encoding
    return editor


async def stop(editor: Editor) -> None:
    try:
        await asyncio.wait_for(editor.client.shutdown_session(), 20)
    finally:
        await editor.client.stop()


@pytest_asyncio.fixture(scope="session")
async def shared(tmp_path_factory: pytest.TempPathFactory):
    """One server for the tests that need no settings of their own (per xdist worker): its
    warm worker imports torch once. Each test gets a workspace folder of its own."""
    ed = await start(tmp_path_factory.mktemp("shared"))
    ed.settings = (await ed.status())["settings"]._asdict()
    yield ed
    await stop(ed)


@pytest_asyncio.fixture
async def editor(shared: Editor, workspace: Path):
    """The shared server with a fresh copy of the examples added as a workspace folder, and
    removed after the test (VS Code does this when a folder is added to a workspace)."""
    client = shared.client
    client.exports.clear()
    client.refreshes = 0
    ed = Editor(client, workspace)
    ed.encoding = shared.encoding
    folder = types.WorkspaceFolder(workspace.resolve().as_uri(), workspace.name)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent(added=[folder], removed=[]))
    )
    await ed.logged(f"indexed {workspace.resolve()}")
    yield ed
    if (await ed.status())[
        "settings"
    ]._asdict() != shared.settings:  # a test changed them: the next one starts as this one did
        await ed.configure(**shared.settings)
    for uri in list(ed.versions):
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent(added=[], removed=[folder]))
    )
    await ed.logged(f"no longer serving {workspace.resolve()}")
