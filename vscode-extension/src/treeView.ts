// The "Submodule Tree" view in the explorer: each submodule of the last module asked about,
// with its verdict; a click on a failing one opens its line.

import * as vscode from 'vscode';

import { Icon, Row, TreeAnswer, rows, summary } from './tree';

export const VIEW = 'exportlens.submodules';
const SHOWN = 'exportlens.submodulesShown'; // the view is listed once a tree was asked for

const ICONS: Record<Icon, vscode.ThemeIcon> = {
  exported: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  fails: new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground')),
  'not-called': new vscode.ThemeIcon('circle-slash'),
  finding: new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground')),
  stopped: new vscode.ThemeIcon('debug-pause'),
};

/** What the view was last asked to show: `args` runs it again (Refresh). */
export interface Asked {
  args: unknown[];
  name: string;
}

export class SubmoduleTreeView implements vscode.TreeDataProvider<Row>, vscode.Disposable {
  private roots: Row[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view = vscode.window.createTreeView(VIEW, { treeDataProvider: this, showCollapseAll: true });
  asked: Asked | undefined;

  getTreeItem(row: Row): vscode.TreeItem {
    const state = row.children.length
      ? row.expanded
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed
      : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(row.label, state);
    item.id = row.id;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = ICONS[row.icon];
    const range = row.problem?.range;
    if (row.problem && range) {
      const selection = new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
      item.command = { title: 'Open', command: 'vscode.open', arguments: [vscode.Uri.parse(row.problem.uri), { selection }] };
    }
    return item;
  }

  getChildren(row?: Row): Row[] {
    return row ? row.children : this.roots;
  }

  /**
   * The server's `exportlens.submoduleTree` command, however it was run (the CodeLens, the
   * palette, Refresh): the view shows it running, then its answer.
   */
  async run(args: unknown[], ask: () => Thenable<TreeAnswer | null | undefined>): Promise<TreeAnswer | null | undefined> {
    const first = args[0] as { target?: unknown } | undefined;
    const target = typeof first?.target === 'string' ? first.target : undefined;
    const asked = { args, name: target ? target.slice(target.lastIndexOf(':') + 1) : 'the module' };
    await this.running(asked);
    try {
      const answer = await ask();
      if (this.asked === asked) {
        this.show(answer); // not a tree asked for before the one shown now
      }
      return answer;
    } catch (e) {
      if (this.asked !== asked) {
        throw e;
      }
      this.roots = [];
      this.view.message = `no tree: ${e instanceof Error ? e.message : String(e)}`;
      this.changed.fire();
      throw e;
    }
  }

  /** A tree is being made for `asked`: the view shows that, and itself. */
  private async running(asked: Asked): Promise<void> {
    this.asked = asked;
    this.roots = [];
    this.view.message = `exporting each submodule of ${asked.name}…`;
    this.changed.fire();
    await vscode.commands.executeCommand('setContext', SHOWN, true);
    await vscode.commands.executeCommand(`${VIEW}.focus`);
  }

  show(answer: TreeAnswer | null | undefined): void {
    this.roots = answer ? rows(answer) : [];
    // null: not trusted, cancelled, or no module there (the server said why)
    this.view.message = answer ? summary(answer) : 'no tree: see “exportlens: Show Output”';
    this.changed.fire();
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
