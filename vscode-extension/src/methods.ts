// The server's own LSP methods and commands (exportlens/server/methods.py): the one place
// the extension spells them. tests/test_extension.py checks each against the server's
// registrations, and that no other file spells one.

/** Commands run with `workspace/executeCommand`. */
export const EXPORT_MODULE_COMMAND = 'exportlens.exportModule';
export const CREATE_SPEC_COMMAND = 'exportlens.createSpec';
export const SUBMODULE_TREE_COMMAND = 'exportlens.submoduleTree';

/** Requests the extension sends. */
export const PROGRAM_REQUEST = 'exportlens/program';
export const CHECK_WORKSPACE_REQUEST = 'exportlens/checkWorkspace';

/** Notifications the extension sends. */
export const TRUST_NOTIFICATION = 'exportlens/setTrusted';

/** Notifications the extension listens to. */
export const EXPORTS_NOTIFICATION = 'exportlens/exports';
