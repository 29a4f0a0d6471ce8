#!/usr/bin/env node
'use strict';
// Builds the native addon: `cargo build --release` of this crate, then copies the shared
// library to lib/native/weir-cql.<platform>.node, where lib/native/native.js loads it.
// (Plain cargo keeps `npm ci` free of napi-rs's CLI and its per-platform binaries.)

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const targetDir = process.env.CARGO_TARGET_DIR || path.join(root, 'target');
const r = spawnSync('cargo', ['build', '--release'], { cwd: root, stdio: 'inherit', env: { ...process.env, CARGO_TARGET_DIR: targetDir } });
if (r.error) { console.error(`weir-cql build: cannot run cargo (${r.error.message}); install Rust from https://rustup.rs`); process.exit(1); }
if (r.status !== 0) process.exit(r.status || 1);

const lib = { linux: 'libweir_cql.so', darwin: 'libweir_cql.dylib', win32: 'weir_cql.dll' }[process.platform];
if (!lib) { console.error(`weir-cql build: unsupported platform ${process.platform}`); process.exit(1); }
const src = path.join(targetDir, 'release', lib);
// Same naming as the loader in lib/native/native.js.
const { platform, arch } = process;
let triple = `${platform}-${arch}`;
if (platform === 'linux') {
  const glibc = process.report.getReport().header.glibcVersionRuntime;
  triple = `linux-${arch}-${glibc ? 'gnu' : 'musl'}`;
}
const dst = path.join(root, 'lib', 'native', `weir-cql.${triple}.node`);
// Copy to a temporary name and rename, so a running process never maps a half-written file.
fs.copyFileSync(src, dst + '.tmp');
fs.renameSync(dst + '.tmp', dst);
console.log(`weir-cql build: ${path.relative(root, dst)}`);
