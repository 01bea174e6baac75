// The extension's settings and what the server is sent. The server validates every value
// and refuses (with a warning) what it does not expect; this module only decides which
// values go where. No `vscode` import: unit tests run it in plain node.

/** Settings the server reads (docs/server.md), in the server's own camelCase names. */
export const SERVER_KEYS = [
  'exportOn',
  'debounce',
  'device',
  'strict',
  'ir',
  'timeout',
  'memoryLimit',
  'sandbox',
  'artifactFolder',
  'inlayHints',
  'guardHints',
  'lowerOnSave',
  'jobs',
  'logLevel',
] as const;
export type ServerKey = (typeof SERVER_KEYS)[number];

/** Settings that restart the server when they change, rather than being sent to it. */
export const RESTART_KEYS = ['interpreter'] as const;

/** Read by vscode-languageclient itself (the `exportlens trace` output): neither sent nor a restart. */
export const TRACE_KEY = 'trace.server';

/** Reads `exportlens.<key>` as configured (undefined when neither set nor defaulted). */
export type ConfigGetter = (key: string) => unknown;

/**
 * The `exportlens` section as the server receives it: every key it reads, `null` where the
 * user left it to the project's pyproject.toml (so clearing a setting reaches the server
 * too), and `python`, the interpreter the workers run: the one the server itself runs from.
 */
export function serverSettings(get: ConfigGetter, python: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const value = get(key);
    out[key] = value === undefined ? null : value;
  }
  out.python = python;
  return out;
}

/** The `exportlens.interpreter` setting: a path, or '' for "not set"; anything else is refused. */
export function interpreterSetting(get: ConfigGetter): { value: string; problem?: string } {
  const raw = get('interpreter');
  if (raw === undefined || raw === null || raw === '') {
    return { value: '' };
  }
  if (typeof raw !== 'string' || raw.trim() === '') {
    return { value: '', problem: `exportlens.interpreter must be a path to a Python executable, got ${JSON.stringify(raw)}; ignoring it` };
  }
  return { value: raw.trim() };
}

/** One item of `workspace/configuration`: a section, read at a resource's scope (a workspace folder). */
export interface ConfigurationItem {
  section?: string | null;
  scopeUri?: string | null;
}

/**
 * The answer to `workspace/configuration`: the `exportlens` section as the server reads it,
 * read at each item's own scope (so a folder's settings reach the server for that folder),
 * and every other section as VS Code answers it, in the items' order.
 */
export async function answerConfiguration<Item extends ConfigurationItem>(
  items: Item[],
  ours: (scopeUri: string | undefined) => Record<string, unknown>,
  others: (items: Item[]) => Promise<unknown>,
): Promise<unknown> {
  const theirs = items.filter((i) => i.section !== 'exportlens');
  const answered = theirs.length ? await others(theirs) : [];
  if (!Array.isArray(answered)) {
    return answered; // an error: the server gets it as VS Code gave it
  }
  let next = 0;
  return items.map((i) => (i.section === 'exportlens' ? ours(i.scopeUri ?? undefined) : answered[next++]));
}
