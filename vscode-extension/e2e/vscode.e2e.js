// Drives the installed .vsix in a real VS Code (code-server) through headless Chromium, as a
// user would: keyboard, mouse, the editor's own menus. Waits on page state, never on sleeps.
// Prints one JSON line per step ({"step": ..., ...}); tests/e2e/test_vscode.py asserts on them.
//
// env: E2E_URL (code-server URL with ?folder=), E2E_WORKSPACE (that folder), E2E_SHOTS (a
// folder for screenshots), E2E_MODE ("trusted": steps 1-5 and Check Workspace, "restricted":
// step 6 and granting trust, "missing": an interpreter without exportlens, "spec": findings on
// spec lines with pyproject.toml never opened)
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const WS = process.env.E2E_WORKSPACE;
const SHOTS = process.env.E2E_SHOTS;
const MODE = process.env.E2E_MODE || 'trusted';
const LONG = 120_000; // the first export includes starting the server, importing torch and warming up

let page;
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));
const shot = (name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
const text = (s) => s.replace(/\u00a0/g, ' ');

async function command(title) {
  await page.keyboard.press('Control+Shift+P');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(title);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().click();
}

async function openFile(rel) {
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(rel);
  // click the row itself: Enter could still pick a row of the list before it filtered
  await page.locator('.quick-input-list .monaco-list-row', { hasText: path.basename(rel) }).first().click();
  await page.locator('.editor-group-container.active .tab.active', { hasText: path.basename(rel) }).waitFor();
  await page.locator('.monaco-editor.focused .view-lines').waitFor();
}

async function goTo(line, column) {
  await page.keyboard.press('Control+G');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(`${line}:${column}`);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

const editor = () => page.locator('.editor-group-container.active .monaco-editor').first();
const squiggles = () => editor().locator('.squiggly-error, .squiggly-warning');
const lens = (hasText) => editor().locator('.codelens-decoration a', { hasText });

async function problems() {
  await page.keyboard.press('Control+Shift+M');
  await page.locator('.markers-panel').waitFor();
  return page.locator('.markers-panel .monaco-list-row');
}

async function waitForText(file, wanted, timeout) {
  // the editor marks a file saved before the write has always reached the disk (code-server under load)
  const deadline = Date.now() + timeout;
  while (!fs.readFileSync(file, 'utf8').includes(wanted)) {
    if (Date.now() > deadline) throw new Error(`${file} never held ${wanted}`);
    await page.waitForTimeout(100); // a poll of the disk, not a wait for the page
  }
}

async function waitForFile(file, timeout) {
  const deadline = Date.now() + timeout;
  while (!fs.existsSync(file) || fs.statSync(file).size === 0) {
    if (Date.now() > deadline) throw new Error(`${file} was never written`);
    await page.waitForTimeout(100); // a poll of the disk, not a wait for the page
  }
}

async function trusted() {
  // 1. the squiggle on router.py line 16, and its row in the Problems panel
  const opened = Date.now();
  await openFile('models/router.py');
  await squiggles().first().waitFor({ timeout: LONG });
  const toSquiggle = Date.now() - opened;
  const rows = await problems();
  await rows.filter({ hasText: 'EL101' }).first().waitFor();
  report('squiggle', { ms: toSquiggle, problems: (await rows.allInnerTexts()).map(text) });
  await shot('1-squiggle');

  // the lens above the failing class fills the Submodule Tree view: a row per submodule, each
  // with its verdict; a click on the failing one opens its line
  await lens('Which submodule breaks').first().click({ timeout: LONG });
  const tree = page.locator('.tree-explorer-viewlet-tree-view');
  const treeRows = tree.locator('.monaco-list-row');
  await treeRows.filter({ hasText: 'gate' }).first().waitFor({ timeout: LONG });
  const treeMessage = text(await tree.locator('.message').first().innerText());
  const treeListed = (await treeRows.allInnerTexts()).map(text);
  await shot('1b-submodule-tree');
  await treeRows.filter({ hasText: 'fix this first' }).first().click();
  const cursor = page.locator('.statusbar-item', { hasText: /Ln 16, Col/ });
  await cursor.first().waitFor();
  report('tree', { rows: treeListed, message: treeMessage, cursor: text(await cursor.first().innerText()) });

  // 2. the light-bulb quick fix from the editor's own menu, saved; the problem goes away
  await goTo(16, 12);
  await page.keyboard.press('Control+.');
  const menu = page.locator('.action-widget');
  await menu.waitFor();
  const items = menu.locator('.monaco-list-row');
  await items.first().waitFor();
  const offered = (await items.allInnerTexts()).map(text);
  report('menu', { offered });
  await shot('2-quickfix');
  // the row is chosen the way a user does with the keyboard: arrows from the focused one, then Enter
  // the fix that keeps the expert: both sides of the branch in torch.cond
  const wanted = offered.findIndex((o) => o.includes('with torch.cond'));
  if (wanted < 0) throw new Error(`no torch.cond fix in the light-bulb menu: ${JSON.stringify(offered)}`);
  const focused = await items.evaluateAll((rows) => rows.findIndex((r) => r.classList.contains('focused')));
  for (let i = Math.max(focused, 0); i < wanted; i++) await page.keyboard.press('ArrowDown');
  // VS Code saves a file a code action changed (files.refactoring.autoSave): the clock starts here
  const saved = Date.now();
  await page.keyboard.press('Enter');
  await editor().locator('.view-lines', { hasText: 'torch.cond(routed > 0' }).waitFor();
  await page.keyboard.press('Control+S');
  await page.locator('.tab.active.dirty').waitFor({ state: 'detached' });
  await squiggles().first().waitFor({ state: 'detached', timeout: LONG });
  await page.locator('.markers-panel .monaco-list-row', { hasText: 'EL101' }).first().waitFor({ state: 'detached' });
  const toClear = Date.now() - saved;
  await waitForText(path.join(WS, 'models/router.py'), 'torch.cond(', LONG);
  report('quickfix', { offered, ms: toClear, source: fs.readFileSync(path.join(WS, 'models/router.py'), 'utf8') });
  await shot('3-fixed');

  // 3. hover on the class name: the ranges in the user's Dim names
  await openFile('models/encoder.py');
  await lens('exported').first().waitFor({ timeout: LONG });
  await editor().locator('.view-lines span', { hasText: /^TinyEncoder$/ }).first().hover();
  const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'batch' });
  await hover.first().waitFor();
  report('hover', { text: text(await hover.first().innerText()) });
  await shot('4-hover');
  await page.keyboard.press('Escape');

  // 4. the CodeLens above TinyEncoder exports it and writes the .pt2
  const title = text(await lens(/export/).first().innerText());
  await lens(/export/).first().click();
  const artifact = path.join(WS, '.exportlens/artifacts/TinyEncoder.pt2');
  await waitForFile(artifact, LONG);
  const toast = page.locator('.notification-toast', { hasText: 'TinyEncoder.pt2' });
  await toast.first().waitFor({ timeout: LONG });
  report('codelens', { title, artifact, message: text(await toast.first().innerText()) });
  await shot('5-codelens');

  // 5. Show Exported Program, from the palette, with the cursor in forward
  await editor().click();
  await goTo(16, 9);
  await command('exportlens: Show Exported Program');
  const program = page.locator('.monaco-editor .view-lines', { hasText: 'signature:' });
  await program.first().waitFor({ timeout: LONG });
  const tab = text(await page.locator('.editor-group-container.active .tab.active').first().innerText());
  report('program', { tab, text: text(await program.first().innerText()) });
  await shot('6-program');

  // Check Workspace: the problems of files that are not open join the Problems panel
  await command('exportlens: Check Workspace');
  const summary = page.locator('.notification-toast', { hasText: 'modules:' });
  await summary.first().waitFor({ timeout: LONG });
  const listed = page.locator('.markers-panel .monaco-list-row');
  // each module's problem arrives with its own export: wait for all three, not the first
  for (const code of ['EL201', 'EL202', 'EL204']) await listed.filter({ hasText: code }).first().waitFor({ timeout: LONG });
  report('workspace', { message: text(await summary.first().innerText()), problems: (await listed.allInnerTexts()).map(text) });
  await shot('9-check-workspace');

  // a long export shows a notification whose Cancel kills it
  fs.writeFileSync(path.join(WS, 'models/slow.py'), SLOW);
  await openFile('models/slow.py');
  const running = page.locator('.notification-toast', { hasText: /exporting\s+Slow/ });
  await running.first().waitFor({ timeout: LONG });
  await shot('11-cancel');
  await running.first().locator('.monaco-button', { hasText: 'Cancel' }).click();
  await lens(/^▶ Export$/).first().waitFor({ timeout: LONG });
  report('cancel', { lens: text(await lens(/Export/).first().innerText()) });
}

const SLOW = `import time

import torch
from torch import nn


class Slow(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        time.sleep(600)  # far past anyone's patience, and past the 60 s timeout
        return x
`;

/** The Problems panel's rows, each marker with the file row above it: [{ file, text }]. */
async function listedMarkers() {
  const out = [];
  let file = '';
  for (const row of (await page.locator('.markers-panel .monaco-list-row').allInnerTexts()).map(text)) {
    if (/\[Ln \d+, Col \d+\]/.test(row)) out.push({ file, text: row.replace(/\s+/g, ' ') });
    else file = row.split('\n')[0].trim();
  }
  return out;
}

async function specLines() {
  // a module whose spec line carries the finding (EL206, after the run at the bounds): only the
  // Python file is opened; pyproject.toml's problem is listed, and the status bar counts as the panel
  await openFile('models/positions.py');
  await problems();
  const panel = page.locator('.markers-panel .monaco-list-row');
  await panel.filter({ hasText: 'EL206' }).first().waitFor({ timeout: LONG });
  const status = page.locator('.statusbar-item', { hasText: /exportlens: ✗/ });
  await status.first().waitFor({ timeout: LONG });
  // the class's name, where the user works, names the finding too (a hint there: not a row of the panel)
  await editor().locator('.view-lines span', { hasText: /^Positions$/ }).first().hover();
  const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'EL206' });
  await hover.first().waitFor({ timeout: LONG });
  const tabs = (await page.locator('.tabs-container .tab').allInnerTexts()).map(text);
  report('spec', {
    markers: await listedMarkers(),
    status: text(await status.first().innerText()),
    hover: text(await hover.first().innerText()),
    tabs,
  });
  await shot('12-spec-line-closed');
}

async function missingPackages() {
  // an interpreter without exportlens: said once, naming it, with the install command on a button
  const toast = page.locator('.notification-toast', { hasText: /not\s+installed\s+for/ });
  await toast.first().waitFor({ timeout: LONG });
  const buttons = (await toast.first().locator('.monaco-button').allInnerTexts()).map(text);
  const status = page.locator('.statusbar-item', { hasText: 'exportlens' });
  await status.first().hover();
  const tooltip = page.locator('.monaco-hover:not(.hidden), .workbench-hover', { hasText: 'not running' });
  await tooltip.first().waitFor();
  report('missing', { message: text(await toast.first().innerText()), buttons, tooltip: text(await tooltip.first().innerText()) });
  await shot('10-missing');
}

/** Command lines of the processes that carry E2E_MARK in their environment (code-server and all it started). */
function marked() {
  const mark = `${process.env.E2E_MARK_NAME}=${process.env.E2E_MARK}`;
  const out = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(mark)) {
        out.push(fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim());
      }
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

async function restricted() {
  // 6. Restricted Mode: the static CodeLens, no squiggles, and (checked by the test) no worker
  await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: LONG });
  await openFile('models/router.py');
  const routerLens = lens('Export');
  await routerLens.first().waitFor({ timeout: LONG });
  const status = page.locator('.statusbar-item', { hasText: 'exportlens: restricted' });
  await status.first().waitFor();
  await openFile('models/encoder.py');
  await lens('Export').first().waitFor({ timeout: LONG });
  await problems();
  const empty = await page.locator('.markers-panel', { hasText: 'No problems have been detected' }).count();
  const processes = marked(); // before trust is granted below
  report('restricted', {
    processes,
    lens: text(await lens('Export').first().innerText()),
    squiggles: await squiggles().count(),
    problemsEmpty: empty > 0,
    status: text(await status.first().innerText()),
  });
  await shot('7-restricted');

  // granting trust starts exports without a reload
  await command('Workspaces: Manage Workspace Trust');
  await page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first().click();
  await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ state: 'detached' });
  await openFile('models/router.py');
  await squiggles().first().waitFor({ timeout: LONG });
  report('trusted', { lens: text(await lens('problem').first().innerText()) });
  await shot('8-trust-granted');
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.E2E_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  page.setDefaultTimeout(30_000);
  await page.goto(process.env.E2E_URL, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('.monaco-workbench .part.editor', { timeout: 60_000 });
  await page.locator('.statusbar-item', { hasText: 'exportlens' }).first().waitFor({ timeout: LONG }); // activated
  await { trusted, restricted, missing: missingPackages, spec: specLines }[MODE]();
  report('done', {});
  await browser.close();
})().catch(async (e) => {
  report('error', { message: e.message.split('\n').slice(0, 3).join(' ') });
  if (page) await page.screenshot({ path: path.join(SHOTS, `failed-${MODE}.png`) }).catch(() => undefined);
  process.exit(1);
});
