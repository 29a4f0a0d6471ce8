#!/usr/bin/env node
'use strict';
// npm's install step of the published package: the tarball carries the native addon of
// the platform it was packed on (lib/native/weir-cql.<triple>.node). On any other platform
// the addon is built from the Rust sources in the tarball with cargo, and when cargo is
// missing the install fails with a message that says what to install.
// In the development checkout (`npm ci` in this folder) nothing is done here:
// `npm test` / `npm run build` build the addon.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const { addonPath } = require('./triple');

if (process.env.INIT_CWD && path.resolve(process.env.INIT_CWD) === root) process.exit(0);
const addon = addonPath(root);
if (fs.existsSync(addon) && process.env.WEIR_CQL_FORCE_BUILD !== '1') process.exit(0);

console.log(`weir-cql: no prebuilt native addon for this platform (${path.basename(addon)}); building it from source with cargo`);
const probe = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  console.error('weir-cql: cannot build the native addon: cargo (Rust) was not found on PATH.\n' +
    '  Install Rust from https://rustup.rs (and OpenSSL headers: apt-get install libssl-dev pkg-config),\n' +
    '  then run `npm rebuild weir-cql`.');
  process.exit(1);
}
const r = spawnSync(process.execPath, [path.join(__dirname, 'build.js')], { cwd: root, stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
