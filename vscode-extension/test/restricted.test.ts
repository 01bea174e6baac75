// Restricted Mode runs nothing the workspace ships: not its interpreter, whichever way it
// is reached, and not through a command the install button types.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { Probe, insideAny, installOffer, restrictedInterpreter } from '../src/python';

/** A workspace that ships `.venv/bin/python{,3}`, and a python3 outside it; real files. */
function layout(t: { after(fn: () => void): void }): { ws: string; outside: string } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'exportlens-restricted-')));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const ws = path.join(root, 'ws');
  const outside = path.join(root, 'outside', 'bin');
  for (const file of [path.join(ws, '.venv/bin/python'), path.join(ws, '.venv/bin/python3'), path.join(outside, 'python3')]) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '#!/bin/sh\ntouch "$0.ran"\n', { mode: 0o755 });
  }
  return { ws, outside };
}

/** The words of a command as the shell reads them (shellQuote's quoting undone). */
function words(command: string): string[] {
  return (command.match(/(?:'[^']*'|\\'|[^\s'\\])+/g) ?? []).map((w) => w.replace(/'([^']*)'/g, '$1').replace(/\\'/g, "'"));
}

test("Restricted Mode runs no python the workspace ships, not even the one first on PATH", (t) => {
  const { ws, outside } = layout(t);
  const venv = { path: path.join(ws, '.venv/bin/python'), source: "the workspace's .venv" } as const;
  // `code .` from a shell with the workspace's .venv activated puts it first on PATH, and `.` too
  const PATH = [path.join(ws, '.venv/bin'), '.', '', outside].join(path.delimiter);
  assert.deepEqual(restrictedInterpreter(venv, [ws], PATH).interpreter, { path: path.join(outside, 'python3'), source: 'PATH' });
  // a bare name from the user's setting is looked up the same way
  const bare = { path: 'python3', source: 'exportlens.interpreter' } as const;
  assert.equal(restrictedInterpreter(bare, [ws], PATH).interpreter?.path, path.join(outside, 'python3'));
  // no python3 outside the workspace: nothing runs, and the user is told why
  const none = restrictedInterpreter(venv, [ws], path.join(ws, '.venv/bin'));
  assert.equal(none.interpreter, undefined);
  assert.match(none.refused ?? '', /trust the workspace/);
});

test('a python outside the workspace that links into it is inside it', (t) => {
  const { ws, outside } = layout(t);
  const link = path.join(path.dirname(outside), 'link');
  fs.mkdirSync(link);
  fs.symlinkSync(path.join(ws, '.venv/bin/python3'), path.join(link, 'python3'));
  assert.equal(insideAny(path.join(link, 'python3'), [ws]), true);
  assert.equal(restrictedInterpreter({ path: 'python3', source: 'PATH' }, [ws], link).interpreter, undefined);
});

test('in Restricted Mode the install button types no path inside the workspace, and runs outside it', (t) => {
  const { ws, outside } = layout(t);
  const python = path.join(outside, 'python3');
  const wheel = '/ext/bundled/exportlens-0.1.0-py3-none-any.whl';
  for (const managed of [false, true]) {
    const probe: Probe = { executable: python, python: '3.12.3', exportlens: null, torch: '2.13.0', managed };
    const base = { interpreter: { path: python, source: 'PATH' as const }, probe, lacking: ['exportlens'], wheel, folders: [ws], extensionPath: '/ext' };
    const offer = installOffer({ ...base, trusted: false });
    for (const word of words(offer.command ?? '')) {
      assert.equal(insideAny(word, [ws]) || word.startsWith(ws), false, `${offer.command} names ${word}`);
    }
    if (offer.command) {
      // `python -m pip` imports from the folder it starts in: a workspace `pip/` would run
      assert.equal(offer.cwd, '/ext');
      assert.equal(words(offer.command)[0], python);
    } else {
      assert.match(offer.why, /trust the workspace/);
    }
    // trusted, the managed Python still gets its .venv in the workspace
    const trusted = installOffer({ ...base, trusted: true });
    assert.equal(trusted.command?.includes(path.join(ws, '.venv')), managed);
  }
});
