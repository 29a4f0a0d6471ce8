'use strict';
// Starts bench/stub (weir-cql-stub, a CQL v4 server that misbehaves when a statement asks
// it to) on a free loopback port; builds it with cargo first when its binary is missing.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const dir = path.resolve(__dirname, '../../bench/stub');
const bin = path.join(dir, 'target/release/weir-cql-stub');

function build() {
  // cargo decides whether anything changed; a fresh tree builds in about a minute.
  const r = spawnSync('cargo', ['build', '--release', '--quiet'], { cwd: dir, stdio: 'inherit',
    env: { ...process.env, CARGO_TARGET_DIR: path.join(dir, 'target') } });
  if (r.error) throw new Error(`cannot run cargo to build ${dir} (${r.error.message}); install Rust from https://rustup.rs`);
  if (r.status !== 0 || !fs.existsSync(bin)) throw new Error(`cargo build --release in ${dir} failed (exit ${r.status})`);
}

/** Resolves to {address, port, pid, stop()} once the stub listens. */
async function startStub(args = []) {
  build();
  const child = spawn(bin, ['--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const address = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      const m = /listening (\S+)/.exec(text);
      if (m) resolve(m[1]);
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`weir-cql-stub exited (${code}) before listening`)));
  });
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  return { address, port: Number(address.split(':')[1]), pid: child.pid, stop };
}

module.exports = { startStub };
