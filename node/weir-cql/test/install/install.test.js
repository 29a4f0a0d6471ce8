'use strict';
// The package as a user gets it: `npm run pack-local` writes the main tarball and this
// platform's binding tarball; both install into an empty project with no cargo or rustc on
// PATH, and there a CommonJS script, an ES module, a TypeScript program (type-checked against
// the shipped index.d.ts by tsc, then run) and every file of examples/ work against the test
// server (WEIR_CQL_CONTACT_POINT, as the integration tests; WEIR_CQL_TLS_DIR for the TLS
// example). Also: the main tarball holds no Rust sources and no binding, and
// `npm publish --dry-run` of the package is clean.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { platformName, packageName } = require('../../lib/native/platform');

const root = path.resolve(__dirname, '../..');
const pkg = require('../../package.json');
const CONTACT_POINT = process.env.WEIR_CQL_CONTACT_POINT || '127.0.0.1:9042';
const TLS_DIR = process.env.WEIR_CQL_TLS_DIR || '';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'weircql-install-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function run(cmd, args, opts) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 300_000, ...opts });
  if (r.error) throw r.error;
  return r;
}

/** PATH without any directory that holds cargo or rustc, so nothing can build Rust. */
function pathWithoutRust() {
  const dirs = (process.env.PATH || '').split(path.delimiter).filter((d) => d &&
    !['cargo', 'rustc'].some((exe) => fs.existsSync(path.join(d, exe))));
  // node and npm must stay reachable even if they share a directory with cargo.
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  for (const exe of ['node', 'npm', 'npx']) {
    const found = run('sh', ['-c', `command -v ${exe}`]).stdout.trim();
    if (found && !fs.existsSync(path.join(bin, exe))) fs.symlinkSync(found, path.join(bin, exe));
  }
  return [bin, ...dirs].join(path.delimiter);
}

const app = path.join(tmp, 'app');
const userEnv = {
  ...process.env,
  PATH: pathWithoutRust(),
  CARGO_HOME: path.join(tmp, 'no-cargo'),
  RUSTUP_HOME: path.join(tmp, 'no-rustup'),
  WEIR_CQL_NATIVE_PATH: '',
  NAPI_RS_NATIVE_LIBRARY_PATH: '',
  CQL_CONTACT_POINTS: CONTACT_POINT,
  CQL_LOCAL_DC: 'datacenter1',
};
let tarballs;

test('pack-local writes the main and the platform tarball', () => {
  const r = run(process.execPath, [path.join(root, 'scripts', 'pack-local.js'), path.join(tmp, 'dist')], { cwd: root });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  tarballs = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  assert.equal(tarballs.length, 2);
  assert.equal(path.basename(tarballs[0].file), `weir-cql-${pkg.version}.tgz`);
  assert.equal(path.basename(tarballs[1].file), `${packageName()}-${pkg.version}.tgz`);
  for (const t of tarballs) console.log(`# ${path.basename(t.file)}: ${t.packed_bytes} bytes packed, ${t.unpacked_bytes} unpacked, ${t.files} files`);
});

test('the main tarball holds JavaScript and typings only, and names the binding package', () => {
  const list = run('tar', ['-tzf', tarballs[0].file]).stdout.trim().split('\n');
  for (const f of ['package/index.js', 'package/index.mjs', 'package/index.d.ts', 'package/lib/native/native.js', 'package/README.md', 'package/LICENSE', 'package/CHANGELOG.md']) {
    assert.ok(list.includes(f), `${f} missing from the main tarball`);
  }
  const rust = list.filter((f) => /\.(rs|node)$|Cargo\.(toml|lock)$|build\.rs$|\.cargo\//.test(f));
  assert.deepEqual(rust, [], 'Rust sources or a binding in the main tarball');
  const manifest = JSON.parse(run('tar', ['-xzOf', tarballs[0].file, 'package/package.json']).stdout);
  assert.deepEqual(manifest.optionalDependencies, { [packageName()]: pkg.version });
  assert.equal(manifest.scripts.install, undefined, 'an install script would run at npm install');
  const platform = JSON.parse(run('tar', ['-xzOf', tarballs[1].file, 'package/package.json']).stdout);
  const [os_, cpu] = platformName().split('-');
  assert.deepEqual([platform.os, platform.cpu], [[os_], [cpu]]);
  if (os_ === 'linux') assert.deepEqual(platform.libc, [platformName().endsWith('musl') ? 'musl' : 'glibc']);
});

test('both tarballs install into an empty project with no Rust toolchain on PATH', () => {
  assert.notEqual(run('sh', ['-c', 'command -v cargo || command -v rustc'], { env: userEnv }).status, 0,
    'cargo or rustc is still reachable on the stripped PATH');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  const tsVersion = require('typescript/package.json').version;
  const typesNode = require('@types/node/package.json').version;
  const r = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs.map((t) => t.file),
    `typescript@${tsVersion}`, `@types/node@${typesNode}`], { cwd: app, env: userEnv });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.ok(fs.existsSync(path.join(app, 'node_modules', packageName())));
});

function node(args, extraEnv) {
  const r = run(process.execPath, args, { cwd: app, env: { ...userEnv, ...extraEnv } });
  assert.equal(r.status, 0, `node ${args.join(' ')} failed:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

test('a CommonJS script connects and round-trips a value', () => {
  fs.writeFileSync(path.join(app, 'app.cjs'), `
const cassandra = require('weir-cql');
const client = new cassandra.Client({ contactPoints: [process.env.CQL_CONTACT_POINTS], localDataCenter: 'datacenter1' });
(async () => {
  const id = cassandra.types.Uuid.random();
  const rs = await client.execute('SELECT blobAsUuid(?) AS id FROM system.local', [cassandra.types.Uuid.fromString(id.toString()).getBuffer()], { prepare: true });
  console.log(rs.first().id.equals(id), require.resolve('weir-cql').includes('node_modules'));
})().catch((e) => { console.error(e); process.exitCode = 1; }).finally(() => client.shutdown());
`);
  assert.equal(node(['app.cjs']).trim(), 'true true');
});

test('an ES module gets the default export and named imports', () => {
  fs.writeFileSync(path.join(app, 'app.mjs'), `
import cassandra from 'weir-cql';
import { Client, types, errors } from 'weir-cql';
const client = new Client({ contactPoints: [process.env.CQL_CONTACT_POINTS], localDataCenter: 'datacenter1' });
try {
  const rs = await client.execute('SELECT release_version FROM system.local');
  let code;
  try { await client.execute('SELEC nonsense'); } catch (e) { code = e instanceof errors.ResponseError && e.code === types.responseErrorCodes.syntaxError; }
  console.log(cassandra.Client === Client, typeof rs.first().release_version, code);
} finally { await client.shutdown(); }
`);
  assert.equal(node(['app.mjs']).trim(), 'true string true');
});

test('TypeScript programs (CommonJS and ES module) type-check against the shipped index.d.ts and run', () => {
  fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true,
      outDir: 'out', types: ['node'], skipLibCheck: false },
    files: ['app.ts', 'esm.mts'],
  }, null, 2));
  // The same package from an ES module compiled by TypeScript (nodenext: .mts is ESM).
  fs.writeFileSync(path.join(app, 'esm.mts'), `
import cassandra, { Client, concurrent, types } from 'weir-cql';

const client = new Client({ contactPoints: [process.env.CQL_CONTACT_POINTS as string], localDataCenter: 'datacenter1' });
try {
  const group: concurrent.ResultSetGroup = await cassandra.concurrent.executeConcurrent(client,
    'SELECT key FROM system.local WHERE key = ?', [['local'], ['local']], { collectResults: true });
  const first: types.ResultSet | Error | undefined = group.resultItems?.[0];
  console.log(group.totalExecuted, first instanceof Error ? 'error' : first?.rowLength);
} finally {
  await client.shutdown();
}
`);
  fs.writeFileSync(path.join(app, 'app.ts'), `
import cassandra, { Client, types, errors } from 'weir-cql';

const client: Client = new cassandra.Client({
  contactPoints: [process.env.CQL_CONTACT_POINTS as string],
  localDataCenter: 'datacenter1',
  queryOptions: { consistency: types.consistencies.localOne },
});

async function main(): Promise<void> {
  const rs: types.ResultSet = await client.execute('SELECT release_version FROM system.local', [], { prepare: true });
  const row: types.Row | null = rs.first();
  if (row === null) throw new Error('system.local returned no row');
  const version: string = row.get('release_version');
  const err: errors.DriverError = new errors.ArgumentError('x');
  console.log(version.split('.').length >= 2, err instanceof Error);
}

main().catch((e: unknown) => { console.error(e); process.exitCode = 1; }).finally(() => client.shutdown());
`);
  const tsc = path.join(app, 'node_modules', 'typescript', 'bin', 'tsc');
  const check = run(process.execPath, [tsc, '--noEmit', '-p', 'tsconfig.json'], { cwd: app, env: userEnv });
  assert.equal(check.status, 0, `tsc --noEmit:\n${check.stdout}${check.stderr}`);
  // Checked above; the emit only transpiles (--noCheck) so the programs can run.
  const emit = run(process.execPath, [tsc, '-p', 'tsconfig.json', '--noCheck'], { cwd: app, env: userEnv });
  assert.equal(emit.status, 0, `tsc:\n${emit.stdout}${emit.stderr}`);
  assert.equal(node([path.join('out', 'app.js')]).trim(), 'true true');
  assert.equal(node([path.join('out', 'esm.mjs')]).trim(), '2 1');
});

test('every example runs against the installed package', () => {
  const dir = path.join(root, 'examples');
  const files = fs.readdirSync(dir).filter((f) => /\.(c?js|mjs)$/.test(f)).sort();
  assert.ok(files.length >= 5, `only ${files.length} examples`);
  fs.cpSync(dir, path.join(app, 'examples'), { recursive: true });
  for (const f of files.filter((f) => f !== 'tls.js')) {
    const out = node([path.join('examples', f)]);
    console.log(`# examples/${f}: ${out.trim().split('\n').join(' | ')}`);
  }
});

test('the TLS example connects with the test server\'s CA', { skip: TLS_DIR ? false : 'WEIR_CQL_TLS_DIR is not set (the server was not started by npm test)' }, () => {
  const ca = path.join(TLS_DIR, 'ca.pem');
  assert.ok(fs.existsSync(ca), `no ca.pem in WEIR_CQL_TLS_DIR=${TLS_DIR}`);
  const out = node([path.join('examples', 'tls.js')], { CQL_CA_FILE: ca });
  assert.match(out, /^TLS connection to Cassandra \d/);
});

test('npm publish --dry-run is clean', () => {
  // --ignore-scripts: prepublishOnly is `napi prepublish`, which publishes the platform
  // packages of a release build; a dry run of the main package must not run it.
  const r = run('npm', ['publish', '--dry-run', '--ignore-scripts'], { cwd: root });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const warnings = r.stderr.split('\n').filter((l) => /\bwarn\b/i.test(l) && !/dry-run|This command requires you to be logged in|EBADENGINE/i.test(l));
  assert.deepEqual(warnings, []);
});
