// "Which submodule breaks": the server's answer (docs/server.md) as the rows of a tree view.
// No `vscode` import: treeView.ts turns these rows into TreeItems.

/** A 0-based LSP range, in the position encoding the client negotiated. */
export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

/** A failure on its line: `range` is null where its lines were edited since the tree ran. */
export interface Problem {
  code: string;
  message: string;
  uri: string;
  range: LspRange | null;
}

export type Verdict = 'exported' | 'fails' | 'not-called';

export interface AnswerNode {
  path: string; // "encoder.blocks.1.attn"; "" for the module itself
  cls: string;
  verdict: Verdict;
  inputs: string;
  same_as: string;
  seconds: number;
  problem: Problem | null;
}

export interface TreeAnswer {
  target: string; // "models/net.py:Net"
  nodes: AnswerNode[]; // parents before their children
  to_fix: string[]; // the smallest failing submodules, deepest first
  findings: Problem[]; // what kept the tree from being made
  carried: string[];
  stopped: string;
  seconds: number;
}

export type Icon = Verdict | 'finding' | 'stopped';

export interface Row {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  icon: Icon;
  children: Row[];
  expanded: boolean; // shown open: it is, or holds, a submodule to fix
  problem?: Problem; // a click opens its line
}

const SAID: Record<Verdict, string> = { exported: 'exports', fails: 'fails', 'not-called': 'not called' };

/** The rows of `answer`: the module with its submodules below it, opened down to each one to fix. */
export function rows(answer: TreeAnswer): Row[] {
  const className = answer.target.slice(answer.target.lastIndexOf(':') + 1);
  const out: Row[] = answer.findings.map((p, i) => ({
    id: `finding-${i}`,
    label: p.code,
    description: p.message,
    tooltip: p.message,
    icon: 'finding',
    children: [],
    expanded: false,
    problem: p,
  }));
  const stack: { path: string; row: Row }[] = [];
  for (const node of answer.nodes) {
    while (stack.length && !holds(stack[stack.length - 1].path, node.path)) {
      stack.pop();
    }
    const parent = stack[stack.length - 1];
    const row = rowOf(node, parent?.path, className, answer.to_fix);
    (parent ? parent.row.children : out).push(row);
    stack.push({ path: node.path, row });
  }
  if (answer.stopped) {
    const said = `the run that records each submodule's inputs stopped: ${answer.stopped}`;
    out.push({ id: 'stopped', label: 'run stopped', description: answer.stopped, tooltip: said, icon: 'stopped', children: [], expanded: false });
  }
  return out;
}

function holds(above: string, path: string): boolean {
  return above !== path && (above === '' || path.startsWith(`${above}.`));
}

function rowOf(node: AnswerNode, parent: string | undefined, className: string, toFix: string[]): Row {
  const label = node.path === '' ? className : parent ? node.path.slice(parent.length + 1) : node.path;
  const first = toFix.includes(node.path);
  // the module's own row is labelled with its class already
  const description = [node.path ? node.cls : '', node.same_as ? `as ${node.same_as}` : '', first ? 'fix this first' : ''].filter(Boolean).join(' · ');
  const heading = `${node.path || className} (${node.cls}) ${SAID[node.verdict]}`;
  const tooltip = [heading, node.inputs, node.problem ? `${node.problem.code}: ${node.problem.message}` : ''].filter(Boolean).join('\n');
  return {
    id: `node-${node.path}`,
    label,
    description,
    tooltip,
    icon: node.verdict,
    children: [],
    expanded: toFix.some((p) => p === node.path || holds(node.path, p)), // to the one to fix, and what it holds
    problem: node.problem ?? undefined,
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** One line over the tree: `24 submodules: 20 export, 4 fail, 1 not called · 4.7 s`. */
export function summary(answer: TreeAnswer): string {
  if (!answer.nodes.length) {
    return `${answer.target}: no tree (${plural(answer.findings.length, 'problem')})`;
  }
  const count = (v: Verdict) => answer.nodes.filter((n) => n.verdict === v).length;
  const n = answer.nodes.length - 1; // the module is not its own submodule
  return `${plural(n, 'submodule')}: ${count('exported')} export, ${count('fails')} fail, ${count('not-called')} not called · ${answer.seconds.toFixed(1)} s`;
}
