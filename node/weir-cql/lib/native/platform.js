'use strict';
// The platform name of a native binding, as napi-rs names it: `linux-x64-gnu`,
// `linux-x64-musl`, `linux-arm64-gnu`, `darwin-arm64`, `win32-x64-msvc`... The addon file is
// `weir-cql.<name>.node` and the npm package that carries it `weir-cql-<name>`. One rule for
// the loader, the build script and the packing script.

const fs = require('node:fs');

/** Whether this Linux process runs on musl libc (Alpine) rather than glibc. */
function isMusl() {
  // musl's ldd is a script that names musl; glibc's names GNU libc.
  try {
    const ldd = fs.readFileSync('/usr/bin/ldd', 'utf8');
    if (ldd.includes('musl')) return true;
    if (ldd.includes('GNU C Library') || ldd.includes('glibc')) return false;
  } catch { /* no /usr/bin/ldd: ask the process report */ }
  // A glibc process reports its glibc version; a musl process reports none.
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  const header = report && (typeof report === 'string' ? JSON.parse(report).header : report.header);
  return !(header && header.glibcVersionRuntime);
}

/** The napi-rs platform name of this process (`linux-x64-gnu`, `darwin-arm64`, ...). */
function platformName(platform = process.platform, arch = process.arch) {
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/** napi-rs's platform name of a Rust target triple (x86_64-unknown-linux-gnu -> linux-x64-gnu). */
function targetPlatform(triple) {
  const [cpu, , os, abi] = triple.split('-');
  const arch = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }[cpu] || cpu;
  if (os === 'linux') return `linux-${arch}-${abi}`;
  if (os === 'darwin') return `darwin-${arch}`;
  if (os === 'windows') return `win32-${arch}-${abi}`;
  return `${os}-${arch}`;
}

const BINARY_NAME = 'weir-cql';

/** The addon's file name for a platform name. */
function addonFile(name = platformName()) { return `${BINARY_NAME}.${name}.node`; }

/** The npm package that carries the prebuilt addon for a platform name. */
function packageName(name = platformName()) { return `${BINARY_NAME}-${name}`; }

module.exports = { isMusl, platformName, targetPlatform, addonFile, packageName, BINARY_NAME };
