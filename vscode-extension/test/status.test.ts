import assert from 'node:assert/strict';
import { test } from 'node:test';

import { listedProblems, statusView } from '../src/status';

const counts = (running: number, exported: number, failed: number, problems: number, exporting: string[] = []) => ({ running, exporting, exported, failed, problems });

test('the status bar says what the server is doing', () => {
  assert.equal(statusView({ kind: 'starting' }).text, '$(sync~spin) exportlens');
  assert.equal(statusView({ kind: 'running' }).text, '$(eye) exportlens');
  assert.equal(statusView({ kind: 'running', counts: counts(2, 1, 0, 0) }).text, '$(sync~spin) exportlens: exporting 2');
  assert.equal(statusView({ kind: 'running', counts: counts(0, 4, 0, 0) }).text, 'exportlens: ✓ 4 exported');
  assert.equal(statusView({ kind: 'running', counts: counts(0, 1, 2, 2) }).text, 'exportlens: ✗ 2 problems');
  assert.equal(statusView({ kind: 'running', counts: counts(0, 0, 1, 1) }).text, 'exportlens: ✗ 1 problem');
  assert.equal(statusView({ kind: 'running', counts: counts(0, 0, 0, 0) }).text, '$(eye) exportlens');
});

test('the problems counted are those the Problems panel lists: not hints, not another source', () => {
  const listed = listedProblems([
    { source: 'exportlens', severity: 0 },
    { source: 'exportlens', severity: 2 },
    { source: 'exportlens', severity: 3 },
    { source: 'Pylance', severity: 0 },
  ]);
  assert.equal(listed, 2);
  // the panel's count wins over the server's count of findings (3 here)
  assert.equal(statusView({ kind: 'running', counts: counts(0, 0, 1, 3) }, listed).text, 'exportlens: ✗ 2 problems');
  assert.equal(statusView({ kind: 'running', counts: counts(0, 1, 0, 0) }, 1).text, 'exportlens: ✗ 1 problem');
});

test('failures and a stopped server are shown as warnings, with the reason in the tooltip', () => {
  assert.equal(statusView({ kind: 'running', counts: counts(0, 1, 2, 3) }).warning, true);
  assert.equal(statusView({ kind: 'running', counts: counts(0, 4, 0, 0) }).warning, false);
  const stopped = statusView({ kind: 'stopped', reason: 'torch is not installed for /v/bin/python' });
  assert.equal(stopped.warning, true);
  assert.match(stopped.tooltip, /torch is not installed for \/v\/bin\/python/);
});

test('Restricted Mode says that no code runs', () => {
  const view = statusView({ kind: 'restricted' });
  assert.equal(view.text, '$(shield) exportlens: restricted');
  assert.match(view.tooltip, /No workspace code runs/);
});

test('an edited file says that the verdict shown is its saved text\'s, until the next export', () => {
  const view = statusView({ kind: 'running', counts: counts(0, 0, 1, 1) }, 1, 'router.py');
  assert.equal(view.text, 'exportlens: ✗ 1 problem · edited');
  assert.match(view.tooltip, /router\.py is edited since the last export: what is shown is its saved text's verdict; saving exports it again$/);
  assert.equal(statusView({ kind: 'running', counts: counts(0, 3, 0, 0) }, 0, 'router.py').text, 'exportlens: ✓ 3 exported · edited');
  // exporting, idle or not running: nothing was said of the saved text to qualify
  assert.equal(statusView({ kind: 'running', counts: counts(1, 0, 0, 0) }, 0, 'router.py').text, '$(sync~spin) exportlens: exporting 1');
  assert.equal(statusView({ kind: 'running' }, 0, 'router.py').text, '$(eye) exportlens');
});

test('an export running names its module: a cold first one waits for torch to import', () => {
  const one = statusView({ kind: 'running', counts: counts(1, 0, 0, 0, ['models/router.py:TokenRouter']) });
  assert.equal(one.text, '$(sync~spin) exportlens: exporting TokenRouter');
  assert.equal(one.tooltip, 'exportlens: exporting models/router.py:TokenRouter (the first export of a session imports torch first)');
  const three = statusView({ kind: 'running', counts: counts(3, 0, 0, 0, ['a.py:A', 'b.py:B', 'c.py:C[small]']) });
  assert.equal(three.text, '$(sync~spin) exportlens: exporting A +2');
  assert.match(three.tooltip, /^exportlens: exporting a\.py:A, b\.py:B, c\.py:C\[small\] /);
  // a server that names none (older): the count, as before
  assert.equal(statusView({ kind: 'running', counts: { running: 2, exported: 0, failed: 0, problems: 0 } }).text, '$(sync~spin) exportlens: exporting 2');
});
