// What the status bar item says in each state of the server. No `vscode` import.

/** The server's `exportlens/exports` notification. */
export interface ExportCounts {
  running: number;
  exporting?: string[]; // the modules running (`path:Class`); absent from an older server
  exported: number;
  failed: number;
  problems: number;
}

export type ServerState =
  | { kind: 'starting' }
  | { kind: 'restricted' }
  | { kind: 'stopped'; reason: string }
  | { kind: 'running'; counts?: ExportCounts };

/** A diagnostic as the Problems panel reads it: `severity` is vscode.DiagnosticSeverity's number. */
export interface Shown {
  source?: string;
  severity: number;
}

const HINT = 3; // vscode.DiagnosticSeverity.Hint: drawn in the editor, never listed in the Problems panel

/**
 * The problems the Problems panel lists as exportlens's: errors, warnings and infos, not the
 * hints that repeat a spec line's finding on its class. The status bar says this number, not
 * the server's count of findings, so the two never disagree.
 */
export function listedProblems(diagnostics: Iterable<Shown>): number {
  let n = 0;
  for (const d of diagnostics) {
    if (d.source === 'exportlens' && d.severity !== HINT) {
      n++;
    }
  }
  return n;
}

export interface StatusView {
  text: string;
  tooltip: string;
  warning: boolean; // shown with the warning background
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * `problems`: what the Problems panel lists as exportlens's (`listedProblems`), where known.
 * `edited`: the active file's name where it has unsaved edits. We export on save, so a verdict
 * (and each squiggle, kept on the lines that replaced its own) is the saved text's until then.
 */
export function statusView(state: ServerState, problems?: number, edited?: string): StatusView {
  const view = serverView(state, problems);
  const verdict = view.text.startsWith('exportlens: '); // a ✓ or ✗: not exporting, idle or stopped
  if (!edited || !verdict) {
    return view;
  }
  const tooltip = `${view.tooltip}. ${edited} is edited since the last export: what is shown is its saved text's verdict; saving exports it again`;
  return { ...view, text: `${view.text} · edited`, tooltip };
}

/** What runs, by name: a cold first export can take 20 s, and a count says nothing of it. */
function exportingView(c: ExportCounts): StatusView {
  const names = c.exporting ?? [];
  if (names.length === 0) {
    return { text: `$(sync~spin) exportlens: exporting ${c.running}`, tooltip: `exportlens: exporting ${plural(c.running, 'module')}`, warning: false };
  }
  const first = names[0].slice(names[0].lastIndexOf(':') + 1); // the class (and its [variant])
  const more = names.length > 1 ? ` +${names.length - 1}` : '';
  return {
    text: `$(sync~spin) exportlens: exporting ${first}${more}`,
    tooltip: `exportlens: exporting ${names.join(', ')} (the first export of a session imports torch first)`,
    warning: false,
  };
}

function serverView(state: ServerState, problems?: number): StatusView {
  switch (state.kind) {
    case 'starting':
      return { text: '$(sync~spin) exportlens', tooltip: 'exportlens: starting the server', warning: false };
    case 'restricted':
      return {
        text: '$(shield) exportlens: restricted',
        tooltip: 'exportlens: Restricted Mode. No workspace code runs; trust the workspace to export its modules.',
        warning: false,
      };
    case 'stopped':
      return { text: '$(error) exportlens', tooltip: `exportlens is not running: ${state.reason}`, warning: true };
    case 'running': {
      // every text names exportlens: VS Code's own problem count sits beside it
      const c = state.counts;
      const listed = problems ?? c?.problems ?? 0;
      if (c && c.running > 0) {
        return exportingView(c);
      }
      if (listed > 0) {
        const failed = c ? `${plural(c.failed, 'module')} failed to export, ${c.exported} exported` : 'see the Problems panel';
        return { text: `exportlens: ✗ ${plural(listed, 'problem')}`, tooltip: `exportlens: ${plural(listed, 'problem')} in the Problems panel; ${failed}`, warning: true };
      }
      if (c && c.failed > 0) {
        return { text: `exportlens: ✗ ${c.failed} failed`, tooltip: `exportlens: ${plural(c.failed, 'module')} failed to export, ${c.exported} exported`, warning: true };
      }
      if (c && c.exported > 0) {
        return { text: `exportlens: ✓ ${c.exported} exported`, tooltip: `exportlens: every module exported so far exports`, warning: false };
      }
      return { text: '$(eye) exportlens', tooltip: 'exportlens: idle; modules export when you open or save them', warning: false };
    }
  }
}
