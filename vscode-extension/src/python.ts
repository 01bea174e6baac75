// Which Python runs the server (and so the workers and their torch), and whether it has
// what exportlens needs. No `vscode` import: the Python extension is reached through the
// small `PythonEnvironments` interface, so tests can hand in a fake.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export type InterpreterSource = 'exportlens.interpreter' | 'Python extension' | 'the workspace\'s .venv' | 'PATH';

export interface Interpreter {
  path: string;
  source: InterpreterSource;
}

/** The part of the Python extension's API we use (npm @vscode/python-extension). */
export interface PythonEnvironments {
  /** The executable of the environment selected for `resource`, if it resolves to one. */
  activeExecutable(resource?: { fsPath: string }): Promise<string | undefined>;
}

export const FALLBACK_PYTHON = 'python3';

/**
 * The setting wins; then the environment selected in the Python extension (when it is
 * installed); then a `.venv` in the workspace folder (where the install button makes one
 * for an externally managed Python; the caller refuses it in Restricted Mode); then
 * `python3` on PATH. `${workspaceFolder}`, `${userHome}` and a leading `~` are expanded in
 * the setting, as VS Code's own Python settings do.
 */
export async function resolveInterpreter(
  setting: string,
  environments: PythonEnvironments | undefined,
  workspaceFolder: string | undefined,
  resource?: { fsPath: string },
  exists: (file: string) => boolean = fs.existsSync,
): Promise<Interpreter> {
  if (setting) {
    return { path: expand(setting, workspaceFolder), source: 'exportlens.interpreter' };
  }
  if (environments) {
    try {
      const selected = await environments.activeExecutable(resource);
      if (selected) {
        return { path: selected, source: 'Python extension' };
      }
    } catch {
      // an extension that fails to answer is no reason not to start: fall back to PATH
    }
  }
  const local = workspaceFolder && venvPython(path.join(workspaceFolder, '.venv'));
  if (local && exists(local)) {
    return { path: local, source: "the workspace's .venv" };
  }
  return { path: FALLBACK_PYTHON, source: 'PATH' };
}

export function expand(value: string, workspaceFolder: string | undefined): string {
  let out = value.replace(/\$\{userHome\}/g, os.homedir());
  if (workspaceFolder) {
    out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  }
  if (out === '~' || out.startsWith('~/')) {
    out = path.join(os.homedir(), out.slice(1));
  }
  return out;
}

/**
 * Run with `python -c`: finds the packages without importing them (importing torch takes
 * seconds), and prints one JSON line.
 */
export const PROBE = [
  'import importlib.metadata as m, importlib.util as u, json, os, sys, sysconfig',
  'def v(n):',
  '    if u.find_spec(n) is None: return None',
  '    try: return m.version(n)',
  '    except Exception: return "?"',
  // PEP 668: the distribution's Python (Debian's /usr/bin/python3) refuses pip; a venv made from it does not
  'managed = sys.prefix == sys.base_prefix and os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))',
  'print(json.dumps({"executable": sys.executable, "python": sys.version.split()[0], "exportlens": v("exportlens"), "torch": v("torch"), "managed": managed}))',
].join('\n');

export interface Probe {
  executable: string;
  python: string;
  exportlens: string | null;
  torch: string | null;
  /** An externally managed interpreter (PEP 668): pip refuses to install into it. */
  managed?: boolean;
}

/** The probe's output, or undefined when it is not what the probe prints. */
export function parseProbe(stdout: string): Probe | undefined {
  const line = stdout.trim().split('\n').pop() ?? '';
  try {
    const p = JSON.parse(line);
    const optional = (x: unknown) => x === null || typeof x === 'string';
    const flag = p.managed === undefined || typeof p.managed === 'boolean';
    if (typeof p.executable === 'string' && typeof p.python === 'string' && optional(p.exportlens) && optional(p.torch) && flag) {
      return p as Probe;
    }
  } catch {
    // not JSON: reported by the caller as an interpreter that did not answer
  }
  return undefined;
}

/** Python older than this cannot run exportlens (its pyproject's requires-python). */
export const MIN_PYTHON: [number, number] = [3, 10];

export function tooOld(version: string): boolean {
  const [major, minor] = version.split('.').map(Number);
  return major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1]);
}

/**
 * The server's command line after the interpreter. `-P` (Python 3.11+) keeps the folder it
 * starts in off sys.path, so nothing there can stand in for a module the server imports;
 * 3.10 has no such flag, and the server starts in the extension's own folder, which holds no
 * Python files. Not `-I`: it also drops user site-packages and PYTHONPATH, where the probe may
 * have found exportlens.
 */
export function serverArgs(version: string): string[] {
  const [major, minor] = version.split('.').map(Number);
  const safePath = major > 3 || (major === 3 && minor >= 11);
  return [...(safePath ? ['-P'] : []), '-m', 'exportlens.cli', 'serve'];
}

/** What the interpreter lacks, in the words of the message the user sees; [] when nothing. */
export function missing(probe: Probe): string[] {
  const out: string[] = [];
  if (probe.exportlens === null) {
    out.push('exportlens');
  }
  if (probe.torch === null) {
    out.push('torch');
  }
  return out;
}

/**
 * The exact command the install button runs in a terminal. exportlens comes from the wheel
 * bundled in the extension (same version as the extension); pip brings torch with it where
 * there is none. A torch already there is pinned to its version, so pip keeps it or says
 * why it cannot, and never replaces it.
 */
export function installCommand(python: string, lacking: string[], wheel: string | undefined, torch?: string | null): string {
  const packages = lacking.includes('exportlens') ? [wheel ?? 'exportlens'] : lacking;
  const kept = torch && torch !== '?' && !lacking.includes('torch') ? [`torch==${torch}`] : [];
  return [python, '-m', 'pip', 'install', ...packages, ...kept].map(shellQuote).join(' ');
}

/** The python of a virtual environment in `folder`, as `python -m venv` lays it out. */
export function venvPython(folder: string, platform: string = process.platform): string {
  return platform === 'win32' ? path.join(folder, 'Scripts', 'python.exe') : path.join(folder, 'bin', 'python');
}

/**
 * For an externally managed interpreter (PEP 668), which pip refuses: a virtual environment
 * in `folder` made from it, seeing its packages (`--system-site-packages`: a torch installed
 * there is used, not downloaded again), with exportlens installed into it.
 */
export function venvCommand(python: string, folder: string, lacking: string[], wheel: string | undefined, torch?: string | null): string {
  const make = [python, '-m', 'venv', '--system-site-packages', folder].map(shellQuote).join(' ');
  return `${make} && ${installCommand(venvPython(folder), lacking, wheel, torch)}`;
}

export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * Whether `file` lies inside one of `folders` (absolute paths), as written or once links are
 * resolved: a link outside the workspace to a file in it, or a workspace opened through a
 * link, is still the workspace's file.
 */
export function insideAny(file: string, folders: string[], realpath: (p: string) => string = resolved): boolean {
  if (!path.isAbsolute(file)) {
    return false; // a bare name (python3) is looked up on PATH
  }
  const files = [file, realpath(file)];
  const roots = folders.flatMap((f) => [f, realpath(f)]);
  return files.some((f) =>
    roots.some((root) => {
      const rel = path.relative(root, f);
      return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
    }),
  );
}

function resolved(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file; // not there (yet): as written
  }
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The first `name` on `pathEnv` (a PATH) that lies outside `folders`. Where the OS would
 * take the first on PATH, which may be the workspace's own: a `.venv/bin` an activated
 * shell put first (`code .` from it), or `.` and empty entries, the current folder.
 */
export function findOnPath(name: string, pathEnv: string | undefined, folders: string[], isExecutable = executable): string | undefined {
  const names = process.platform === 'win32' && !path.extname(name) ? [`${name}.exe`, name] : [name];
  for (const dir of (pathEnv ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) {
      continue;
    }
    const found = names.map((n) => path.join(dir, n)).find((file) => isExecutable(file) && !insideAny(file, folders));
    if (found) {
      return found;
    }
  }
  return undefined;
}

/** What to say about an interpreter that lacks a package, and the command its button types. */
export interface InstallOffer {
  why: string;
  button?: string;
  command?: string;
  cwd?: string; // the terminal's folder
}

export interface OfferInput {
  interpreter: Interpreter; // the one probed
  probe: Probe;
  lacking: string[];
  wheel: string | undefined; // the exportlens wheel bundled in the extension
  folders: string[]; // the workspace folders; a .venv goes in the first
  trusted: boolean;
  extensionPath: string;
}

/**
 * What the install button offers: pip into the interpreter; or, where the system manages it
 * (PEP 668: pip refuses), a `.venv` in the workspace made from it, which the server then
 * finds on its own (resolveInterpreter); or, with no workspace folder, nothing. In
 * Restricted Mode no `.venv` is offered: `python -m venv` over one the workspace ships runs
 * its python (ensurepip) and the server would not run it anyway. The terminal starts in the
 * extension's folder: `python -m pip` imports from the folder it starts in.
 */
export function installOffer(o: OfferInput): InstallOffer {
  const trustFirst = 'trust the workspace first, or set exportlens.interpreter in your user settings to a Python with exportlens and torch';
  if (!o.trusted && insideAny(o.interpreter.path, o.folders)) {
    return { why: `; in Restricted Mode nothing in the workspace runs: ${trustFirst}` };
  }
  const cwd = o.extensionPath;
  if (!o.probe.managed) {
    return { why: '', button: 'Install in a terminal', command: installCommand(o.interpreter.path, o.lacking, o.wheel, o.probe.torch), cwd };
  }
  const managed = ', a Python the system manages (PEP 668: pip does not install into it)';
  const folder = o.folders[0];
  if (!o.trusted) {
    return { why: `${managed}; in Restricted Mode exportlens makes no .venv in the workspace: ${trustFirst}` };
  }
  if (!folder) {
    return { why: `${managed}; make a virtual environment and set exportlens.interpreter to its python` };
  }
  return {
    why: `${managed}; a virtual environment in .venv can have them, and keeps the system's torch where it has one`,
    button: 'Create .venv in a terminal',
    command: venvCommand(o.interpreter.path, path.join(folder, '.venv'), o.lacking, o.wheel, o.probe.torch),
    cwd,
  };
}

/**
 * Restricted Mode runs nothing the workspace ships: an interpreter inside a workspace folder
 * (its `.venv`, or the Python extension's choice of it) gives way to python3, and a bare name
 * is found on PATH here, past the workspace's entries, and run by its absolute path. With
 * none outside the workspace, nothing runs (`refused` says why).
 */
export function restrictedInterpreter(
  chosen: Interpreter,
  folders: string[],
  pathEnv: string | undefined,
  isExecutable = executable,
): { interpreter?: Interpreter; note?: string; refused?: string } {
  const inside = insideAny(chosen.path, folders);
  const wanted: Interpreter = inside ? { path: FALLBACK_PYTHON, source: 'PATH' } : chosen;
  const note = inside ? `Restricted Mode: not running ${chosen.path} (inside the workspace)` : undefined;
  if (path.isAbsolute(wanted.path) || wanted.path.includes('/') || wanted.path.includes(path.sep)) {
    return { interpreter: wanted, note }; // a relative path runs from the extension's folder
  }
  const found = findOnPath(wanted.path, pathEnv, folders, isExecutable);
  if (!found) {
    const refused = `Restricted Mode: no ${wanted.path} on PATH outside the workspace; trust the workspace, or set exportlens.interpreter in your user settings`;
    return { note, refused };
  }
  return { interpreter: { ...wanted, path: found }, note: `${note ? `${note}; ` : 'Restricted Mode: '}using ${found} from PATH` };
}
