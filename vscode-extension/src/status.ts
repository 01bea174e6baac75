// What the status bar item says in each state of the server. No `vscode` import.

/** The server's `exportlens/exports` notification. */
export interface ExportCounts {
  running: number;
  exported: number;
  failed: number;
  problems: number;
}

export type ServerState =
  | { kind: 'starting' }
  | { kind: 'restricted' }
  | { kind: 'stopped'; reason: string }
  | { kind: 'running'; counts?: ExportCounts };

export interface StatusView {
  text: string;
  tooltip: string;
  warning: boolean; // shown with the warning background
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function statusView(state: ServerState): StatusView {
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
      const c = state.counts;
      if (c && c.running > 0) {
        return { text: `$(sync~spin) exporting ${c.running}`, tooltip: `exportlens: exporting ${plural(c.running, 'module')}`, warning: false };
      }
      if (c && c.failed > 0) {
        return {
          text: `✗ ${plural(c.problems, 'problem')}`,
          tooltip: `exportlens: ${plural(c.failed, 'module')} failed to export, ${c.exported} exported`,
          warning: true,
        };
      }
      if (c && c.exported > 0) {
        return { text: `✓ ${c.exported} exported`, tooltip: `exportlens: every module exported so far exports`, warning: false };
      }
      return { text: '$(eye) exportlens', tooltip: 'exportlens: idle; modules export when you open or save them', warning: false };
    }
  }
}
