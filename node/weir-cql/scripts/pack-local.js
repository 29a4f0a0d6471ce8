#!/usr/bin/env node
'use strict';
// usage: npm run pack-local -- DIR
//
// Writes the two tarballs a Linux x64 (or whatever this machine is) user installs into DIR:
//   weir-cql-<version>.tgz              the main package: JavaScript, typings, no Rust sources;
//   weir-cql-<platform>-<version>.tgz   the prebuilt native binding for this platform.
// The steps are the release workflow's, on one platform:
//   1. build the binding (scripts/build.js: cargo build --release; nothing to do when current);
//   2. `npm pack` the main package and unpack it in a staging directory;
//   3. there, `napi create-npm-dirs` makes the per-platform package folders from package.json's
//      napi.targets and `napi artifacts` copies the binding into its folder; `npm pack` it;
//   4. write the platform package into the main package's optionalDependencies, as
//      `napi prepublish` does at publish time (only this platform's: the others are not built
//      here, and naming them would send npm to the registry for packages that do not exist), and
//      `npm pack` the main package again.
// The binding is stripped of its symbol table (`strip --strip-unneeded`) as a release build is.
// Prints one JSON line per tarball: file, packed and unpacked bytes, file count.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { platformName, targetPlatform, addonFile, packageName } = require('../lib/native/platform');

const root = path.resolve(__dirname, '..');

function die(msg) { console.error(`pack-local: ${msg}`); process.exit(1); }

function run(cmd, args, cwd, capture) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: capture ? ['ignore', 'pipe', 'inherit'] : 'inherit' });
  if (r.error) die(`cannot run ${cmd}: ${r.error.message}`);
  if (r.status !== 0) die(`${cmd} ${args.join(' ')} (in ${cwd}) exited with ${r.status}`);
  return r.stdout;
}

function pack(dir, dest) {
  const [info] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dest], dir, true));
  return info;
}

function main() {
  const out = process.argv[2];
  if (!out || process.argv.length > 3) die('usage: npm run pack-local -- DIR   (DIR receives the two tarballs)');
  const dest = path.resolve(out);
  fs.mkdirSync(dest, { recursive: true });

  run(process.execPath, [path.join(__dirname, 'build.js')], root);
  const name = platformName();
  const addon = path.join(root, 'lib', 'native', addonFile(name));
  if (!fs.existsSync(addon)) die(`the build left no ${addon}`);

  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'weircql-pack-'));
  try {
    const first = pack(root, stage);
    run('tar', ['-xzf', path.join(stage, first.filename), '-C', stage], stage);
    const main = path.join(stage, 'package');
    // The staged package keeps only this platform's target: `napi artifacts` requires a
    // binding for every target it is given, and the others are built by the release workflow.
    const manifest = path.join(main, 'package.json');
    const staged0 = JSON.parse(fs.readFileSync(manifest, 'utf8'));
    const target = staged0.napi.targets.find((t) => targetPlatform(t) === name);
    if (!target) die(`package.json napi.targets has no target for ${name} (targets: ${staged0.napi.targets.join(', ')})`);
    staged0.napi.targets = [target];
    fs.writeFileSync(manifest, JSON.stringify(staged0, null, 2) + '\n');
    const napi = path.join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js');
    if (!fs.existsSync(napi)) die(`${napi} is missing: run npm ci in ${root}`);
    run(process.execPath, [napi, 'create-npm-dirs', '--cwd', main, '--npm-dir', 'npm'], root);
    const artifacts = path.join(main, 'artifacts');
    fs.mkdirSync(artifacts);
    const staged = path.join(artifacts, addonFile(name));
    fs.copyFileSync(addon, staged);
    if (process.platform !== 'win32') run('strip', ['--strip-unneeded', staged], stage);
    run(process.execPath, [napi, 'artifacts', '--cwd', main, '--output-dir', 'artifacts', '--npm-dir', 'npm'], root);
    const platformDir = path.join(main, 'npm', name);
    if (!fs.existsSync(path.join(platformDir, addonFile(name)))) die(`napi artifacts did not fill ${platformDir}`);
    const platformInfo = pack(platformDir, dest);

    fs.rmSync(path.join(main, 'npm'), { recursive: true });
    fs.rmSync(artifacts, { recursive: true });
    const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
    pkg.napi.targets = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).napi.targets;
    pkg.optionalDependencies = { [packageName(name)]: pkg.version };
    fs.writeFileSync(manifest, JSON.stringify(pkg, null, 2) + '\n');
    const mainInfo = pack(main, dest);
    for (const info of [mainInfo, platformInfo]) {
      console.log(JSON.stringify({ file: path.join(dest, info.filename), packed_bytes: info.size,
        unpacked_bytes: info.unpackedSize, files: info.entryCount }));
    }
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

main();
