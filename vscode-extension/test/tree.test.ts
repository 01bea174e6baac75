import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AnswerNode, TreeAnswer, rows, summary } from '../src/tree';

const URI = 'file:///w/models/net.py';
const range = { start: { line: 17, character: 11 }, end: { line: 17, character: 25 } };
const bad = { code: 'EL101', message: '`mask.sum() > 0` is a tensor', uri: URI, range };
const node = (path: string, cls: string, verdict: AnswerNode['verdict'], extra: Partial<AnswerNode> = {}): AnswerNode => ({
  path,
  cls,
  verdict,
  inputs: '(x: f32[batch, seq, 16])',
  same_as: '',
  seconds: 0.1,
  problem: verdict === 'fails' ? bad : null,
  ...extra,
});

// Net -> encoder (Stack) -> blocks.N (Block) -> attn; the ModuleList `blocks` has no node
const answer: TreeAnswer = {
  target: 'models/net.py:Net',
  nodes: [
    node('', 'Net', 'fails'),
    node('encoder', 'Stack', 'fails'),
    node('encoder.blocks.0', 'Block', 'exported'),
    node('encoder.blocks.0.attn', 'Attention', 'exported'),
    node('encoder.blocks.1', 'Block', 'fails'),
    node('encoder.blocks.1.attn', 'MaskedAttention', 'fails'),
    node('encoder.blocks.2', 'Block', 'exported', { same_as: 'encoder.blocks.0' }),
    node('encoder.unused', 'Linear', 'not-called', { inputs: '' }),
    node('head', 'Linear', 'exported'),
  ],
  to_fix: ['encoder.blocks.1.attn'],
  findings: [],
  carried: ['batch', 'seq'],
  stopped: '',
  seconds: 4.7,
};

test('the tree nests each submodule under its parent, named from it', () => {
  const [net] = rows(answer);
  assert.equal(net.label, 'Net');
  assert.equal(net.description, '');
  assert.deepEqual(net.children.map((r) => r.label), ['encoder', 'head']);
  const [encoder] = net.children;
  assert.deepEqual(encoder.children.map((r) => r.label), ['blocks.0', 'blocks.1', 'blocks.2', 'unused']);
  assert.deepEqual(encoder.children[1].children.map((r) => [r.label, r.icon]), [['attn', 'fails']]);
});

test('the block to fix is open, described by its class, and a click opens its line', () => {
  const [net] = rows(answer);
  const [encoder, head] = net.children;
  const block = encoder.children[1];
  const attn = block.children[0];
  assert.equal(net.expanded && encoder.expanded && block.expanded && attn.expanded, true);
  assert.equal(encoder.children[0].expanded || encoder.children[2].expanded || head.expanded, false);
  assert.equal(attn.description, 'MaskedAttention · fix this first');
  assert.match(attn.tooltip, /EL101: `mask.sum\(\) > 0` is a tensor/);
  assert.deepEqual(attn.problem, bad);
  assert.equal(head.problem, undefined);
  assert.equal(encoder.children[2].description, 'Block · as encoder.blocks.0');
  assert.equal(encoder.children[3].icon, 'not-called');
});

test('the summary counts the submodules, not the module', () => {
  assert.equal(summary(answer), '8 submodules: 4 export, 4 fail, 1 not called · 4.7 s');
});

test('a module that gives no tree shows what stopped it, and where the recording run stopped', () => {
  const none: TreeAnswer = { ...answer, nodes: [], to_fix: [], findings: [{ ...bad, code: 'EL502', message: 'the module called sys.exit(3)' }] };
  const [finding] = rows(none);
  assert.deepEqual([finding.label, finding.icon, finding.description], ['EL502', 'finding', 'the module called sys.exit(3)']);
  assert.equal(summary(none), 'models/net.py:Net: no tree (1 problem)');
  const stopped = rows({ ...answer, stopped: 'forward raised RuntimeError at net.py:18' });
  assert.equal(stopped[stopped.length - 1].icon, 'stopped');
});
