import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { RESTART_KEYS, SERVER_KEYS, TRACE_KEY, answerConfiguration, interpreterSetting, serverSettings } from '../src/settings';

const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
const properties: Record<string, { default: unknown }> = manifest.contributes.configuration.properties;
const defaults = (key: string) => properties[`exportlens.${key}`]?.default;

test('every server setting is contributed, and nothing else but the interpreter and trace', () => {
  const contributed = Object.keys(properties).map((k) => k.replace(/^exportlens\./, ''));
  assert.deepEqual(contributed.sort(), [...SERVER_KEYS, ...RESTART_KEYS, TRACE_KEY].sort());
  for (const [key, p] of Object.entries(properties)) {
    assert.ok((p as { markdownDescription?: string }).markdownDescription, `${key} has no description`);
  }
});

test('the .exportlens folder (verdicts, index, artifacts) is hidden from the explorer by default', () => {
  // a default the user's own files.exclude overrides: VS Code merges object-valued defaults
  assert.deepEqual(manifest.contributes.configurationDefaults, { 'files.exclude': { '**/.exportlens': true } });
});

test('defaults reach the server as the server names them, unset project settings as null', () => {
  const sent = serverSettings(defaults, '/v/bin/python');
  assert.deepEqual(sent, {
    exportOn: 'save',
    debounce: 300,
    device: null,
    strict: null,
    ir: null,
    timeout: null,
    memoryLimit: null,
    sandbox: null,
    artifactFolder: '.exportlens/artifacts',
    inlayHints: true,
    guardHints: true,
    lowerOnSave: true,
    jobs: 2,
    logLevel: 'info',
    python: '/v/bin/python',
  });
});

test('values are passed as configured: the server refuses what it does not expect', () => {
  const sent = serverSettings((k) => ({ device: 'cuda:1', strict: 'no', timeout: 5 })[k] ?? defaults(k), 'python3');
  assert.equal(sent.device, 'cuda:1');
  assert.equal(sent.strict, 'no'); // never turned into a boolean here: the server says it is wrong
  assert.equal(sent.timeout, 5);
});

test('the interpreter setting is a path or nothing', () => {
  assert.deepEqual(interpreterSetting(() => ''), { value: '' });
  assert.deepEqual(interpreterSetting(() => undefined), { value: '' });
  assert.deepEqual(interpreterSetting(() => ' /v/bin/python '), { value: '/v/bin/python' });
  const refused = interpreterSetting(() => 3);
  assert.equal(refused.value, '');
  assert.match(refused.problem ?? '', /must be a path to a Python executable, got 3/);
});

test('the exportlens section is read at each item\'s scope, other sections as VS Code answers them', async () => {
  const asked: unknown[] = [];
  const answer = await answerConfiguration(
    [{ section: 'exportlens', scopeUri: 'file:///a' }, { section: 'python' }, { section: 'exportlens' }],
    (scope) => ({ scope: scope ?? 'window' }),
    async (items) => {
      asked.push(items);
      return ['python settings'];
    },
  );
  assert.deepEqual(answer, [{ scope: 'file:///a' }, 'python settings', { scope: 'window' }]);
  assert.deepEqual(asked, [[{ section: 'python' }]]);
  assert.deepEqual(await answerConfiguration([{ section: 'exportlens' }], () => ({}), async () => assert.fail('not asked')), [{}]);
});
