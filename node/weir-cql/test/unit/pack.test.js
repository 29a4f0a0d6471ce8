'use strict';
// Installable as a user would: `npm pack` gives a tarball that installs into a fresh
// project and works (the native addon of this platform inside); without a matching addon
// the install step builds it from the Rust sources with cargo, and says what to install
// when cargo is missing.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const { addonPath } = require('../../scripts/triple');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'weircql-pack-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function run(cmd, args, opts) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.error) throw r.error;
  return r;
}

let tarball;
test('npm pack includes the native addon, the sources and the typings', () => {
  const r = run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root });
  assert.equal(r.status, 0, r.stderr);
  const [info] = JSON.parse(r.stdout);
  const files = info.files.map((f) => f.path);
  for (const f of ['index.js', 'index.d.ts', 'src/lib.rs', 'Cargo.lock', '.cargo/config.toml', 'scripts/install.js', path.relative(root, addonPath(root))]) {
    assert.ok(files.includes(f), `${f} missing from the tarball`);
  }
  assert.ok(!files.some((f) => f.startsWith('test/') || f.startsWith('target/')), 'tests or build output packed');
  tarball = path.join(tmp, info.filename);
});

test('the tarball installs into a fresh project and works', () => {
  const app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  const r = run('npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: app, env: { ...process.env, INIT_CWD: app } });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const script = `
    const cql = require('weir-cql');
    const c = new cql.Client({ contactPoints: ['127.0.0.1:1'], localDataCenter: 'dc1', socketOptions: { connectTimeout: 500 } });
    c.connect().then(() => process.exit(2), (e) => {
      console.log(e.constructor.name, Object.values(e.innerErrors)[0].code, JSON.stringify(cql.types.Long.fromNumber(7)));
      return c.shutdown();
    });`;
  const out = run(process.execPath, ['-e', script], { cwd: app });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), 'NoHostAvailableError ECONNREFUSED "7"');
});

test('without a matching addon: a clear message when cargo is missing, a source build when present', () => {
  const pkg = path.join(tmp, 'extract');
  fs.mkdirSync(pkg);
  assert.equal(run('tar', ['-xzf', tarball, '-C', pkg]).status, 0);
  const dir = path.join(pkg, 'package');
  fs.rmSync(addonPath(dir));
  const node = path.dirname(process.execPath);
  const noCargo = run(process.execPath, ['scripts/install.js'], { cwd: dir, env: { PATH: `${node}:/usr/bin:/bin`, HOME: os.tmpdir(), INIT_CWD: tmp, CARGO_HOME: path.join(tmp, 'none'), RUSTUP_HOME: path.join(tmp, 'none') } });
  if (run('sh', ['-c', 'command -v cargo'], { env: { PATH: `${node}:/usr/bin:/bin` } }).status !== 0) {
    assert.equal(noCargo.status, 1);
    assert.match(noCargo.stderr, /cargo \(Rust\) was not found on PATH[\s\S]*rustup\.rs/);
  } else {
    console.log('# cargo is in /usr/bin here: the missing-cargo message is not exercised');
  }
  // The crate's own target directory keeps the dependencies compiled: only weir-cql builds.
  const build = run(process.execPath, ['scripts/install.js'], { cwd: dir, env: { ...process.env, INIT_CWD: tmp, CARGO_TARGET_DIR: path.join(root, 'target') } });
  assert.equal(build.status, 0, build.stdout + build.stderr);
  assert.match(build.stdout, /building it from source with cargo/);
  assert.ok(fs.existsSync(addonPath(dir)));
  const out = run(process.execPath, ['-e', "console.log(typeof require('./lib/native/native.js').NativeSession)"], { cwd: dir });
  assert.equal(out.stdout.trim(), 'function', out.stderr);
});
