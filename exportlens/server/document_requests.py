"""A document's CodeLens, hover, inlay hints and code actions: answered from the index and cached
reports, never by exporting. Each handler takes one snapshot of the documents and
hands it to its feature."""

from __future__ import annotations

from typing import Any

from lsprotocol import converters, types

from ..exporter.core.targets import Target
from . import compat, trees
from .features import actions, guarded, hover, inlay, lenses, markup, spec_nav
from .methods import APPLY_FIX_COMMAND, EXPORT_KIND
from .server import ExportLensServer

_converter = converters.get_converter()


def code_lens(ls: ExportLensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    found = ls.document(params.text_document.uri)
    if found is None:
        return []
    doc, docs = found
    shown = trees.tree_lenses(ls.session, doc, docs) if trees.shows_trees(ls.client_capabilities) else []
    return lenses.code_lenses(ls.session, doc, docs) + shown


def on_hover(ls: ExportLensServer, params: types.HoverParams) -> types.Hover | None:
    found = ls.document(params.text_document.uri)
    if found is None:
        return None
    doc, docs = found
    if doc.path.suffix == ".toml":
        text = spec_nav.hover(ls.session, doc, docs, params.position)
    else:
        text = hover.hover(ls.session, doc, docs, params.position.line + 1)
    return types.Hover(markup.content(text, markup.hover_formats(ls.client_capabilities))) if text else None


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
    out = actions.quick_fixes(ls.session, doc, docs, list(params.context.diagnostics))
    module = ls.session.index.module_at(doc.path, params.range.start.line + 1) if doc.path.suffix == ".py" else None
    if module is not None:
        target = Target.of(module)
        has_spec = ls.session.has_spec(ls.session.root_of(doc.path), [target], docs)[target]
        try:
            out += actions.module_actions(ls.session, doc, docs, module, has_spec)
        except Exception as e:
            ls.say(f"cannot scaffold a spec for {module.target}: {e}")
    resolves = _resolves_edits(ls.client_capabilities)
    return [guarded.guard(a, docs, resolves, _converter.unstructure) for a in out]


def _resolves_edits(caps: types.ClientCapabilities) -> bool:
    action = caps.text_document.code_action if caps.text_document else None
    support = action.resolve_support if action else None
    return bool(action and action.data_support and support and "edit" in support.properties)


def resolve_code_action(ls: ExportLensServer, action: types.CodeAction) -> types.CodeAction:
    """The edit of an action whose files were not open when it was offered, if they have not
    changed since; else an empty edit, and the user is told why."""
    edit, refused = guarded.checked_edit(action.data, ls.snapshot(), _converter.structure)
    if refused is not None:
        ls.say(f"{action.title}: {refused}", types.MessageType.Warning)
        ls.show(refused)
    action.edit = edit or types.WorkspaceEdit(document_changes=[])
    return action


async def apply_fix(ls: ExportLensServer, args: Any) -> bool:
    """``exportlens.applyFix``: what ``resolve_code_action`` does, for a client that cannot resolve edits."""
    data = args[0] if isinstance(args, list) and args else args
    edit, refused = guarded.checked_edit(data, ls.snapshot(), _converter.structure)
    if refused is not None:
        ls.say(f"{APPLY_FIX_COMMAND}: {refused}", types.MessageType.Warning)
        ls.show(refused)
        return False
    assert edit is not None  # an edit where nothing was refused
    result = await compat.client_reply(ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit)))
    return bool(result and result.applied)


def register(server: ExportLensServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_LENS)(code_lens)
    server.feature(types.TEXT_DOCUMENT_HOVER)(on_hover)
    server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))(inlay_hint)
    kinds = [types.CodeActionKind.QuickFix, EXPORT_KIND]
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=kinds, resolve_provider=True)
    )(code_action)
    server.feature(types.CODE_ACTION_RESOLVE)(resolve_code_action)
    server.command(APPLY_FIX_COMMAND)(apply_fix)
