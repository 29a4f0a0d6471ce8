'use strict';
// The native binding's loader (lib/native/native.js): platform names as napi-rs spells them,
// WEIR_CQL_NATIVE_PATH first, and when nothing loads an error that names the platform, every
// place tried with its reason, and how to build from source. Each case runs in a fresh
// process on a copy of the loader, so no cached module hides a failure.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { platformName, targetPlatform, addonFile, packageName } = require('../../lib/native/platform');

const root = path.resolve(__dirname, '../..');
const built = path.join(root, 'lib', 'native', addonFile());
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'weircql-loader-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A copy of the loader alone in a fresh directory: no binding beside it, no package. */
function loaderCopy(name) {
  const dir = path.join(tmp, name, 'lib', 'native');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['native.js', 'platform.js']) fs.copyFileSync(path.join(root, 'lib', 'native', f), path.join(dir, f));
  // The loader reads napi.targets from the package's package.json.
  fs.copyFileSync(path.join(root, 'package.json'), path.join(tmp, name, 'package.json'));
  return dir;
}

function load(dir, env) {
  const script = `try { const m = require(${JSON.stringify(path.join(dir, 'native.js'))}); console.log('loaded', typeof m.NativeSession); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  const clean = { ...process.env, WEIR_CQL_NATIVE_PATH: '', NAPI_RS_NATIVE_LIBRARY_PATH: '', ...env };
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: clean, cwd: tmp });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

test('platform names follow napi-rs: os-arch, with the libc on Linux and msvc on Windows', () => {
  assert.equal(platformName('darwin', 'arm64'), 'darwin-arm64');
  assert.equal(platformName('win32', 'x64'), 'win32-x64-msvc');
  assert.match(platformName('linux', 'arm64'), /^linux-arm64-(gnu|musl)$/);
  assert.equal(addonFile('linux-x64-musl'), 'weir-cql.linux-x64-musl.node');
  assert.equal(packageName('darwin-x64'), 'weir-cql-darwin-x64');
  assert.deepEqual(['x86_64-unknown-linux-gnu', 'aarch64-unknown-linux-musl', 'aarch64-apple-darwin', 'x86_64-pc-windows-msvc'].map(targetPlatform),
    ['linux-x64-gnu', 'linux-arm64-musl', 'darwin-arm64', 'win32-x64-msvc']);
  if (process.platform === 'linux') {
    const glibc = process.report.getReport().header.glibcVersionRuntime;
    assert.equal(platformName().endsWith('-gnu'), Boolean(glibc), `glibc ${glibc} but platform ${platformName()}`);
  }
});

test('with no binding anywhere the error names the platform, each place tried and how to build one', () => {
  const out = JSON.parse(load(loaderCopy('none')));
  assert.equal(out.code, 'WEIR_CQL_NO_NATIVE_BINDING');
  assert.match(out.message, new RegExp(`Cannot find native binding for ${platformName()}`));
  assert.match(out.message, new RegExp(`tried .*${addonFile().replace(/\./g, '\\.')}: not built here`));
  assert.match(out.message, new RegExp(`tried ${packageName()}: not installed`));
  assert.match(out.message, /--omit=optional/);
  assert.match(out.message, /npm ci && npm run build/);
  assert.match(out.message, /WEIR_CQL_NATIVE_PATH=/);
});

test('a binding that is present but cannot load is reported with the loader\'s reason', () => {
  const dir = loaderCopy('broken');
  fs.writeFileSync(path.join(dir, addonFile()), 'not a shared object');
  const out = JSON.parse(load(dir));
  assert.equal(out.code, 'WEIR_CQL_NO_NATIVE_BINDING');
  assert.match(out.message, /invalid ELF header|not a valid|file too short|slice is not valid mach-o/i);
});

test('WEIR_CQL_NATIVE_PATH loads the named binding, and names itself when that fails', { skip: fs.existsSync(built) ? false : `${built} is not built (npm run build)` }, () => {
  assert.equal(load(loaderCopy('explicit'), { WEIR_CQL_NATIVE_PATH: built }), 'loaded function');
  const bad = JSON.parse(load(loaderCopy('explicit-bad'), { WEIR_CQL_NATIVE_PATH: path.join(tmp, 'missing.node') }));
  assert.match(bad.message, /cannot load the native binding WEIR_CQL_NATIVE_PATH=.*missing\.node/);
});
