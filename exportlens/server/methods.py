"""The names of exportlens's own LSP methods and commands: what clients call and receive."""

from __future__ import annotations

from lsprotocol import types

EXPORT_COMMAND = "exportlens.exportModule"  # {uri, target | line, save?}: export one module now
CREATE_SPEC_COMMAND = "exportlens.createSpec"  # {uri, target | line}: scaffold its spec in pyproject.toml
LOWER_COMMAND = "exportlens.lowerModule"  # {uri, target | line, to}: lower one module for one deployment target now
APPLY_FIX_COMMAND = "exportlens.applyFix"  # {edit, digests}: a code action's edit of files not open, if unchanged
EXPORT_KIND = types.CodeActionKind.Source + ".exportlens.export"  # a source action: it acts on the whole module

TRUST_NOTIFICATION = "exportlens/setTrusted"  # {"trusted": true}: the client granted workspace trust
STATUS_REQUEST = "exportlens/status"  # the server's own state, for tests, benchmarks and bug reports
# server -> client after each change: {running, exporting, exported, failed, problems}
EXPORTS_NOTIFICATION = "exportlens/exports"
CHECK_WORKSPACE_REQUEST = "exportlens/checkWorkspace"  # export every module with a spec; problems in every file
PROGRAM_REQUEST = "exportlens/program"  # {uri, target | line} -> {target, status, text}: the exported program as text
TREE_COMMAND = "exportlens.submoduleTree"  # {uri, target | line} -> each submodule's verdict (docs/server.md)
