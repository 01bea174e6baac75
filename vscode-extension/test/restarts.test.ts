import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RestartQueue, RestartRequest, unchanged } from '../src/restarts';

test('requests made before the queued restart begins join it: one restart, every reason', async () => {
  const runs: RestartRequest[] = [];
  let release: () => void = () => undefined;
  const queue = new RestartQueue(async (r) => {
    runs.push({ ...r, reasons: [...r.reasons] });
    if (runs.length === 1) {
      await new Promise<void>((resolve) => (release = resolve));
    }
  });
  const first = queue.request('activation', true);
  await Promise.resolve(); // the first has begun: later requests queue one more
  const later = [
    queue.request('exportlens.interpreter changed'),
    queue.request('the selected Python environment changed'),
    queue.request('the selected Python environment changed'),
  ];
  release();
  await Promise.all([first, ...later]);
  assert.deepEqual(runs, [
    { reasons: ['activation'], force: true },
    { reasons: ['exportlens.interpreter changed', 'the selected Python environment changed'], force: false },
  ]);
});

test('a forced request forces the restart it joins', async () => {
  const runs: RestartRequest[] = [];
  const queue = new RestartQueue(async (r) => void runs.push(r));
  await Promise.all([queue.request('the selected Python environment changed'), queue.request('restart command', true)]);
  assert.deepEqual(runs, [{ reasons: ['the selected Python environment changed', 'restart command'], force: true }]);
});

test('a restart that fails does not stop the next one', async () => {
  let calls = 0;
  const queue = new RestartQueue(async () => {
    calls += 1;
    if (calls === 1) {
      throw new Error('no such interpreter');
    }
  });
  await assert.rejects(queue.request('activation'));
  await queue.request('exportlens.interpreter changed');
  assert.equal(calls, 2);
});

test('nothing to restart when the same interpreter still serves', () => {
  assert.equal(unchanged('/v/bin/python', '/v/bin/python', true), true);
  assert.equal(unchanged('/v/bin/python', '/w/bin/python', true), false);
  assert.equal(unchanged('/v/bin/python', '/v/bin/python', false), false); // stopped: start it again
  assert.equal(unchanged(undefined, 'python3', false), false);
});
