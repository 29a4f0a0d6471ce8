'use strict';
// The platform name in the addon's file name: one rule for the loader, the build and the
// install step.
const path = require('node:path');

function triple() {
  const { platform, arch } = process;
  if (platform !== 'linux') return `${platform}-${arch}`;
  // musl has no glibc version in the process report.
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  const glibc = report && report.header && report.header.glibcVersionRuntime;
  return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`;
}

function addonPath(root) { return path.join(root, 'lib', 'native', `weir-cql.${triple()}.node`); }

module.exports = { triple, addonPath };
