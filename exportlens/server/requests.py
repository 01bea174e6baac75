"""CodeLens, hover, inlay hints and code actions: answered from the index and cached
reports, never by exporting. Each handler takes one snapshot of the documents and
hands it to its feature."""

from __future__ import annotations

from lsprotocol import types

from .features import actions, hover, inlay, lenses, spec_nav
from .methods import EXPORT_KIND
from .server import ExportLensServer


def code_lens(ls: ExportLensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    found = ls.document(params.text_document.uri)
    if found is None:
        return []
    doc, docs = found
    return lenses.code_lenses(ls.session, doc, docs.texts)


def on_hover(ls: ExportLensServer, params: types.HoverParams) -> types.Hover | None:
    found = ls.document(params.text_document.uri)
    if found is None:
        return None
    doc, docs = found
    if doc.path.suffix == ".toml":
        text = spec_nav.hover(ls.session, doc, docs.texts, params.position)
    else:
        text = hover.hover(ls.session, doc, docs.texts, params.position.line + 1)
    return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text)) if text else None


def inlay_hint(ls: ExportLensServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    found = ls.document(params.text_document.uri)
    if found is None:
        return []
    doc, _ = found
    return inlay.inlay_hints(ls.session, doc, params.range.start.line + 1, params.range.end.line + 1)


def code_action(ls: ExportLensServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    found = ls.document(params.text_document.uri)
    if found is None:
        return []
    doc, docs = found
    out = actions.quick_fixes(ls.session, doc, docs, params.context.diagnostics)
    module = ls.session.index.module_at(doc.path, params.range.start.line + 1) if doc.path.suffix == ".py" else None
    if module is None:
        return out
    has_spec = ls.session.has_spec(ls.session.root_of(doc.path), [module.target], docs.texts)[module.target]
    try:
        return out + actions.module_actions(ls.session, doc, docs, module, has_spec)
    except Exception as e:
        ls.say(f"cannot scaffold a spec for {module.target}: {e}")
        return out


def register(server: ExportLensServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_LENS)(code_lens)
    server.feature(types.TEXT_DOCUMENT_HOVER)(on_hover)
    server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))(inlay_hint)
    kinds = [types.CodeActionKind.QuickFix, EXPORT_KIND]
    server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=kinds))(code_action)
