// Builds the exportlens wheel from this repository into bundled/, so the .vsix carries the
// Python package of its own version: the "Install" button installs it into the user's
// environment with pip, offline as far as exportlens goes.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const here = path.resolve(__dirname, '..');
const out = path.join(here, 'bundled');
const python = process.env.EXPORTLENS_PYTHON || 'python3';
fs.rmSync(out, { recursive: true, force: true });
execFileSync(python, ['-m', 'pip', 'wheel', '--quiet', '--no-deps', '--wheel-dir', out, path.resolve(here, '..')], { stdio: 'inherit' });
const wheels = fs.readdirSync(out).filter((f) => f.endsWith('.whl'));
if (wheels.length !== 1) {
  throw new Error(`expected one exportlens wheel in ${out}, found ${wheels.join(', ') || 'none'}`);
}
console.log(`bundled ${wheels[0]}`);
