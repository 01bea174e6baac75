// Wires VS Code's events to the server: nothing else lives here.

import { PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';

import { registerCommands } from './commands';
import { ProgramDocuments, SCHEME } from './program';
import { PythonEnvironments, insideAny } from './python';
import { Server } from './server';
import { RESTART_KEYS, SERVER_KEYS } from './settings';
import { ServerState, listedProblems, statusView } from './status';
import { SubmoduleTreeView } from './treeView';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('exportlens', { log: true });
  const trace = vscode.window.createOutputChannel('exportlens trace');
  const item = vscode.window.createStatusBarItem('exportlens.status', vscode.StatusBarAlignment.Left, 50);
  item.name = 'exportlens';
  item.command = 'exportlens.showOutput';
  let last: ServerState = { kind: 'starting' };
  const setState = (state: ServerState) => {
    last = state;
    const listed = listedProblems(vscode.languages.getDiagnostics().flatMap(([, found]) => found));
    const doc = vscode.window.activeTextEditor?.document;
    const edited = doc?.isDirty && ['python', 'toml'].includes(doc.languageId) ? doc.fileName.split(/[\\/]/).pop() : undefined;
    const view = statusView(state, listed, edited);
    item.text = view.text;
    item.tooltip = view.tooltip;
    item.backgroundColor = view.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    item.show();
  };

  const environments = await pythonEnvironments(output);
  const trees = new SubmoduleTreeView();
  const server = new Server({ context, output, trace, environments: environments?.api, setState, trees });
  const programs = new ProgramDocuments();
  context.subscriptions.push(
    output,
    trace,
    item,
    server,
    programs,
    trees,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, programs),
    ...registerCommands(server, programs, trees, output),
    vscode.languages.onDidChangeDiagnostics(() => setState(last)), // the Problems panel's count changed
    // "· edited" follows the active file's unsaved edits; onDidChangeTextDocument also fires on save
    vscode.workspace.onDidChangeTextDocument((e) => e.document === vscode.window.activeTextEditor?.document && setState(last)),
    vscode.window.onDidChangeActiveTextEditor(() => setState(last)),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      output.info('workspace trusted: exports enabled');
      server.grantTrust();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // exportlens.trace.server is the language client's own: neither a restart nor sent
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(`exportlens.${k}`))) {
        void server.restart('exportlens.interpreter changed');
      }
      if (SERVER_KEYS.some((k) => e.affectsConfiguration(`exportlens.${k}`))) {
        server.sendSettings();
      }
    }),
  );
  if (environments) {
    context.subscriptions.push(environments.onDidChange(() => void server.restart('the selected Python environment changed')));
  }
  await server.restart('activation', true);
}

export function deactivate(): Thenable<void> | undefined {
  return undefined; // the Server is in context.subscriptions: disposing it stops the client
}

/** The Python extension's environments, when it is installed; exportlens works without it. */
async function pythonEnvironments(output: vscode.LogOutputChannel): Promise<{ api: PythonEnvironments; onDidChange: vscode.Event<unknown> } | undefined> {
  if (!vscode.extensions.getExtension('ms-python.python')) {
    output.info('the Python extension is not installed: using exportlens.interpreter, else python3 on PATH');
    return undefined;
  }
  try {
    const api = await PythonExtension.api();
    const envs = api.environments;
    return {
      api: {
        activeExecutable: async (resource) => {
          const selected = envs.getActiveEnvironmentPath(resource as vscode.Uri | undefined);
          const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
          if (!vscode.workspace.isTrusted && insideAny(selected.path, folders)) {
            return selected.path; // resolving may run it (for its version); the server refuses it unrun
          }
          const env = await envs.resolveEnvironment(selected);
          return env?.executable.uri?.fsPath;
        },
      },
      onDidChange: envs.onDidChangeActiveEnvironmentPath,
    };
  } catch (e) {
    output.warn(`the Python extension did not answer (${e}): using exportlens.interpreter, else python3 on PATH`);
    return undefined;
  }
}
