import assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { test } from 'node:test';

import {
  PROBE,
  PythonEnvironments,
  expand,
  insideAny,
  installCommand,
  missing,
  parseProbe,
  resolveInterpreter,
  serverArgs,
  tooOld,
  venvCommand,
  venvPython,
} from '../src/python';

const selected = (path: string | undefined): PythonEnvironments => ({ activeExecutable: async () => path });

test('the exportlens.interpreter setting wins over the Python extension', async () => {
  const got = await resolveInterpreter('/opt/venv/bin/python', selected('/usr/bin/python3.12'), '/ws');
  assert.deepEqual(got, { path: '/opt/venv/bin/python', source: 'exportlens.interpreter' });
});

test("without the setting, the Python extension's selected environment", async () => {
  const got = await resolveInterpreter('', selected('/ws/.venv/bin/python'), '/ws');
  assert.deepEqual(got, { path: '/ws/.venv/bin/python', source: 'Python extension' });
});

test('without either, python3 on PATH', async () => {
  assert.deepEqual(await resolveInterpreter('', undefined, '/ws'), { path: 'python3', source: 'PATH' });
  assert.deepEqual(await resolveInterpreter('', selected(undefined), '/ws'), { path: 'python3', source: 'PATH' });
});

test('a Python extension that throws falls back to PATH', async () => {
  const broken: PythonEnvironments = {
    activeExecutable: async () => {
      throw new Error('not ready');
    },
  };
  assert.deepEqual(await resolveInterpreter('', broken, '/ws'), { path: 'python3', source: 'PATH' });
});

test('${workspaceFolder}, ${userHome} and ~ are expanded in the setting', () => {
  assert.equal(expand('${workspaceFolder}/.venv/bin/python', '/ws'), '/ws/.venv/bin/python');
  assert.equal(expand('~/envs/torch/bin/python', '/ws'), `${os.homedir()}/envs/torch/bin/python`);
  assert.equal(expand('${userHome}/py', undefined), `${os.homedir()}/py`);
  assert.equal(expand('~user/py', '/ws'), '~user/py'); // another user's home is not ours to guess
});

test('an interpreter inside the workspace is recognised (Restricted Mode does not run it)', () => {
  assert.equal(insideAny('/ws/.venv/bin/python', ['/ws']), true);
  assert.equal(insideAny('/ws-other/bin/python', ['/ws']), false);
  assert.equal(insideAny('/usr/bin/python3', ['/ws']), false);
  assert.equal(insideAny('python3', ['/ws']), false);
});

test('the probe answer names what is missing', () => {
  const probe = parseProbe('warning: noise\n{"executable": "/v/bin/python", "python": "3.11.7", "exportlens": null, "torch": "2.13.0"}\n');
  assert.ok(probe);
  assert.deepEqual(missing(probe), ['exportlens']);
  assert.deepEqual(missing({ ...probe, exportlens: '0.1.0', torch: null }), ['torch']);
  assert.deepEqual(missing({ ...probe, exportlens: '0.1.0' }), []);
  assert.equal(parseProbe('Traceback (most recent call last):'), undefined);
  assert.equal(parseProbe('{"executable": 3}'), undefined);
});

test('Python older than 3.10 is refused', () => {
  assert.equal(tooOld('3.9.18'), true);
  assert.equal(tooOld('3.10.0'), false);
  assert.equal(tooOld('3.13.1'), false);
});

test('the install button runs pip from the same interpreter, quoted for the shell', () => {
  const wheel = '/ext/bundled/exportlens-0.1.0-py3-none-any.whl';
  assert.equal(installCommand('/v/bin/python', ['exportlens', 'torch'], wheel), `/v/bin/python -m pip install ${wheel}`);
  assert.equal(installCommand('/v/bin/python', ['torch'], wheel), '/v/bin/python -m pip install torch');
  assert.equal(installCommand('/my envs/py', ['exportlens'], undefined), "'/my envs/py' -m pip install exportlens");
});

test('the server starts with -P where Python has it, so the folder it starts in is not on sys.path', () => {
  assert.deepEqual(serverArgs('3.10.13'), ['-m', 'exportlens.cli', 'serve']);
  assert.deepEqual(serverArgs('3.11.7'), ['-P', '-m', 'exportlens.cli', 'serve']);
  assert.deepEqual(serverArgs('3.13.0'), ['-P', '-m', 'exportlens.cli', 'serve']);
  assert.deepEqual(serverArgs('4.0'), ['-P', '-m', 'exportlens.cli', 'serve']);
});

test('the install button keeps a torch that is there: pip gets it pinned to its version', () => {
  const wheel = '/ext/bundled/exportlens-0.1.0-py3-none-any.whl';
  assert.equal(installCommand('/v/bin/python', ['exportlens'], wheel, '2.5.1'), `/v/bin/python -m pip install ${wheel} torch==2.5.1`);
  assert.equal(installCommand('/v/bin/python', ['exportlens', 'torch'], wheel, null), `/v/bin/python -m pip install ${wheel}`);
  assert.equal(installCommand('/v/bin/python', ['exportlens'], wheel, '?'), `/v/bin/python -m pip install ${wheel}`);
});

test("an externally managed Python gets a .venv in the workspace that sees the system's packages", () => {
  const wheel = '/ext/bundled/exportlens-0.1.0-py3-none-any.whl';
  assert.equal(
    venvCommand('/usr/bin/python3', '/ws/.venv', ['exportlens'], wheel, '2.13.0'),
    `/usr/bin/python3 -m venv --system-site-packages /ws/.venv && /ws/.venv/bin/python -m pip install ${wheel} torch==2.13.0`,
  );
  assert.equal(venvPython('C:\\ws\\.venv', 'win32').endsWith('python.exe'), true);
});

test("the workspace's .venv is found after the setting and the Python extension, before PATH", async () => {
  const there = (file: string) => file === '/ws/.venv/bin/python';
  assert.deepEqual(await resolveInterpreter('', undefined, '/ws', undefined, there), {
    path: '/ws/.venv/bin/python',
    source: "the workspace's .venv",
  });
  assert.deepEqual(await resolveInterpreter('', selected('/opt/py/bin/python'), '/ws', undefined, there), {
    path: '/opt/py/bin/python',
    source: 'Python extension',
  });
  assert.deepEqual(await resolveInterpreter('', undefined, '/ws', undefined, () => false), { path: 'python3', source: 'PATH' });
});

test('the probe tells an externally managed Python (PEP 668) from a virtual environment made from it', (t) => {
  const system = '/usr/bin/python3';
  const marker = execFileSync(system, ['-c', 'import sysconfig; print(sysconfig.get_path("stdlib"))'], { encoding: 'utf8' }).trim();
  if (!fs.existsSync(path.join(marker, 'EXTERNALLY-MANAGED'))) {
    t.skip('this machine has no externally managed Python');
    return;
  }
  const probe = (python: string) => parseProbe(execFileSync(python, ['-c', PROBE], { encoding: 'utf8' }));
  assert.equal(probe(system)?.managed, true);
  const venv = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'exportlens-venv-')), '.venv');
  execFileSync(system, ['-m', 'venv', '--without-pip', venv]);
  assert.equal(probe(venvPython(venv))?.managed, false);
  fs.rmSync(path.dirname(venv), { recursive: true, force: true });
});
