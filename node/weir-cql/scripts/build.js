#!/usr/bin/env node
'use strict';
// Builds the native binding from source: `cargo build --release` of this crate, then copies
// the shared library to lib/native/weir-cql.<platform>.node, the first place the loader
// (lib/native/native.js) looks after WEIR_CQL_NATIVE_PATH. The file name is the one
// `napi build --platform` gives, so the packing script and `napi artifacts` take it as is.
// Extra arguments go to cargo (e.g. `npm run build -- --features vendored-openssl`).

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { addonFile } = require('../lib/native/platform');

const root = path.resolve(__dirname, '..');
const targetDir = process.env.CARGO_TARGET_DIR || path.join(root, 'target');
const r = spawnSync('cargo', ['build', '--release', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit', env: { ...process.env, CARGO_TARGET_DIR: targetDir } });
if (r.error) { console.error(`weir-cql build: cannot run cargo (${r.error.message}); install Rust from https://rustup.rs`); process.exit(1); }
if (r.status !== 0) process.exit(r.status || 1);

const lib = { linux: 'libweir_cql.so', darwin: 'libweir_cql.dylib', win32: 'weir_cql.dll' }[process.platform];
if (!lib) { console.error(`weir-cql build: no rule for the shared library's name on ${process.platform}`); process.exit(1); }
const src = path.join(targetDir, 'release', lib);
const dst = path.join(root, 'lib', 'native', addonFile());
// Copy to a temporary name and rename, so a running process never maps a half-written file.
fs.copyFileSync(src, dst + '.tmp');
fs.renameSync(dst + '.tmp', dst);
console.log(`weir-cql build: ${path.relative(root, dst)}`);
