'use strict';
// Command-line pieces the bench/cql scripts share: `--name value` flags, the server's
// host:port among the bare arguments, and `--env NAME=VALUE` as an environment to add.

/** The value after `--name`, or `dflt` when the flag is absent. */
function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : dflt;
}

/** The first bare `address:port` argument, or the local node's. */
function hostArg() {
  return process.argv.slice(2).find((a) => /^[\d.]+:\d+$/.test(a)) || '127.0.0.1:9042';
}

/** `--env NAME=VALUE` as an object to merge into a child's environment ({} without it);
 * exits 2 with the expected shape when the value is not NAME=VALUE. */
function envArg() {
  const text = arg('env', null);
  if (!text) return {};
  const m = /^([A-Z0-9_]+)=(.*)$/.exec(text);
  if (!m) {
    console.error(`--env wants NAME=VALUE, got '${text}'`);
    process.exit(2);
  }
  return { [m[1]]: m[2] };
}

module.exports = { arg, hostArg, envArg };
