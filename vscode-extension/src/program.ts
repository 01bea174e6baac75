// "Show exported program": a read-only document holding what `exportlens show` prints.

import * as vscode from 'vscode';

export const SCHEME = 'exportlens-program';

export class ProgramDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** Opens (or refreshes) the document for `target` ("models/net.py:Net"). */
  async show(target: string, text: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${target.replace(':', ' ')} (exported program)` });
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
  }

  dispose(): void {
    this.changed.dispose();
  }
}
