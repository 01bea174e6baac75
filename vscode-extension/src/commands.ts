// The commands in the palette and the editor's context menu. Each one asks the server;
// none exports or reads a module itself.

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';

import { CHECK_WORKSPACE_REQUEST, CREATE_SPEC_COMMAND, EXPORT_MODULE_COMMAND, PROGRAM_REQUEST, SUBMODULE_TREE_COMMAND } from './methods';
import { ProgramDocuments } from './program';
import { Server } from './server';
import { SubmoduleTreeView } from './treeView';


interface ProgramAnswer {
  target: string;
  status: string;
  text: string;
}

interface CheckAnswer {
  modules: number;
  exported: number;
  failed: number;
  findings: number;
}

export function registerCommands(
  server: Server,
  programs: ProgramDocuments,
  trees: SubmoduleTreeView,
  output: vscode.LogOutputChannel,
): vscode.Disposable[] {
  const running = () => {
    if (!server.client?.isRunning()) {
      void vscode.window.showWarningMessage('exportlens: the server is not running; see “exportlens: Show Output”.');
      return undefined;
    }
    return server.client;
  };
  /** The active Python file and the cursor's line: the server finds the class around it. */
  const here = () => {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'python') {
      void vscode.window.showWarningMessage('exportlens: open a Python file and put the cursor inside an nn.Module class.');
      return undefined;
    }
    return { uri: editor.document.uri.toString(), line: editor.selection.active.line };
  };
  const withProgress = <T>(title: string, work: (token: vscode.CancellationToken) => Thenable<T>) =>
    vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (_, token) => work(token));

  return [
    vscode.commands.registerCommand('exportlens.exportThisModule', async () => {
      const client = running();
      const at = here();
      if (client && at) {
        await vscode.window.activeTextEditor?.document.save(); // export what the user sees
        await client.sendRequest(ExecuteCommandRequest.type, { command: EXPORT_MODULE_COMMAND, arguments: [{ ...at, save: true }] });
      }
    }),
    vscode.commands.registerCommand('exportlens.createExportSpec', async () => {
      const client = running();
      const at = here();
      if (client && at) {
        await client.sendRequest(ExecuteCommandRequest.type, { command: CREATE_SPEC_COMMAND, arguments: [at] });
      }
    }),
    vscode.commands.registerCommand('exportlens.showExportedProgram', async () => {
      const client = running();
      const at = here();
      if (!client || !at) {
        return;
      }
      const answer = await withProgress('exportlens: exporting', (token) => client.sendRequest<ProgramAnswer | null>(PROGRAM_REQUEST, at, token));
      if (answer) {
        await programs.show(answer.target, answer.text);
      }
    }),
    // the client's command for the server's: the middleware (server.ts) shows its answer in the view
    vscode.commands.registerCommand('exportlens.showSubmoduleTree', async () => {
      const client = running();
      const at = here();
      if (client && at) {
        await vscode.window.activeTextEditor?.document.save(); // the tree of what the user sees
        await vscode.commands.executeCommand(SUBMODULE_TREE_COMMAND, at);
      }
    }),
    vscode.commands.registerCommand('exportlens.refreshSubmoduleTree', async () => {
      if (running() && trees.asked) {
        await vscode.commands.executeCommand(SUBMODULE_TREE_COMMAND, ...trees.asked.args);
      }
    }),
    vscode.commands.registerCommand('exportlens.checkWorkspace', async () => {
      const client = running();
      if (!client) {
        return;
      }
      const answer = await withProgress('exportlens: checking the workspace', (token) =>
        client.sendRequest<CheckAnswer | null>(CHECK_WORKSPACE_REQUEST, {}, token),
      );
      if (answer) {
        const summary = `${answer.modules} modules: ${answer.exported} exported, ${answer.failed} failed, ${answer.findings} findings`;
        output.info(`workspace check: ${summary}`);
        await vscode.commands.executeCommand('workbench.actions.view.problems');
        void vscode.window.showInformationMessage(`exportlens: ${summary}`);
      }
    }),
    vscode.commands.registerCommand('exportlens.openArtifactFolder', async () => {
      const folder = artifactFolder();
      if (!folder) {
        void vscode.window.showWarningMessage('exportlens: open a folder first.');
      } else if (!fs.existsSync(folder.fsPath)) {
        void vscode.window.showInformationMessage(`exportlens: nothing exported yet; .pt2 files will go to ${folder.fsPath}`);
      } else {
        await vscode.commands.executeCommand('revealInExplorer', folder);
      }
    }),
    vscode.commands.registerCommand('exportlens.restartServer', () => server.restart('restart command', true)),
    vscode.commands.registerCommand('exportlens.showOutput', () => output.show()),
  ];
}

/** `artifactFolder` under the project of the active file (its nearest pyproject.toml), or of the first folder. */
function artifactFolder(): vscode.Uri | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    return undefined;
  }
  // the folder's own setting, where it has one
  const setting = vscode.workspace.getConfiguration('exportlens', folder.uri).get<string>('artifactFolder') || '.exportlens/artifacts';
  let root = folder.uri.fsPath;
  if (active?.scheme === 'file') {
    for (let dir = path.dirname(active.fsPath); dir.startsWith(folder.uri.fsPath); dir = path.dirname(dir)) {
      if (fs.existsSync(path.join(dir, 'pyproject.toml'))) {
        root = dir;
        break;
      }
      if (dir === path.dirname(dir)) {
        break;
      }
    }
  }
  return vscode.Uri.file(path.resolve(root, setting));
}
