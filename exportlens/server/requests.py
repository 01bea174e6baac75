"""CodeLens, hover, inlay hints and code actions: answered from the index and cached reports, never by exporting."""

from __future__ import annotations

from lsprotocol import types

from .features import actions, diagnostics, hover, inlay, lenses
from .methods import EXPORT_KIND
from .positions import Lines
from .server import ExportLensServer, path_of


def code_lens(ls: ExportLensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    path = path_of(params.text_document.uri)
    entry = ls.session.index.get(path) if path else None
    if entry is None:
        return []
    return lenses.code_lenses(ls.session, path, ls.has_spec(entry.root, [m.target for m in entry.modules]))


def on_hover(ls: ExportLensServer, params: types.HoverParams) -> types.Hover | None:
    path = path_of(params.text_document.uri)
    if path is None or path.suffix != ".py":
        return None
    root = ls.session.root_of(path)
    line = params.position.line + 1
    module = ls.session.index.module_at(path, line)
    if module is not None and module.name_span.line == line:
        spec, _ = ls.session.spec_of(root, module, ls.open_texts())
        text = hover.module_hover(ls.session, root, module, spec.describe() if spec else None)
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text))
    rel = diagnostics.relative(root, path)
    found = hover.shapes_at(ls.session, root, rel, line)
    if found is None:
        return None
    code = Lines(ls.text_of(path)).line(line - 1)
    return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, hover.line_hover(found[0], code)))


def inlay_hint(ls: ExportLensServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    path = path_of(params.text_document.uri)
    if path is None or not ls.session.settings.inlay_hints:
        return []
    root = ls.session.root_of(path)
    r = params.range
    return inlay.inlay_hints(
        ls.session, root, diagnostics.relative(root, path), Lines(ls.text_of(path)), r.start.line + 1, r.end.line + 1, ls.utf16
    )


def code_action(ls: ExportLensServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    path = path_of(params.text_document.uri)
    if path is None:
        return []
    overrides = ls.open_texts()
    out = actions.quick_fixes(ls.session, path, params, overrides, ls.text_of, ls.version_of, ls.utf16)
    module = ls.session.index.module_at(path, params.range.start.line + 1) if path.suffix == ".py" else None
    if module is not None:
        root = ls.session.root_of(path)
        has = ls.has_spec(root, [module.target])[module.target]
        out += actions.module_actions(ls.session, path, module, has, lambda: ls.spec_edit(root, path, module))
    return out


def register(server: ExportLensServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_LENS)(code_lens)
    server.feature(types.TEXT_DOCUMENT_HOVER)(on_hover)
    server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))(inlay_hint)
    kinds = [types.CodeActionKind.QuickFix, EXPORT_KIND]
    server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=kinds))(code_action)
