'use strict';
// sslOptions (Node's tls.ConnectionOptions, as cassandra-driver takes them) -> the native
// TLS settings (src/tls.rs, OpenSSL). Every key either reaches OpenSSL or throws
// NotSupportedError naming it: a client that asked for TLS never connects in plaintext.
//
// One deliberate difference: cassandra-driver defaults rejectUnauthorized to false (it
// accepts any certificate); weir-cql verifies the chain and the node's IP unless
// `rejectUnauthorized: false` is given, and says so when verification fails.

const tls = require('node:tls');
const { NotSupportedError, ArgumentError } = require('./errors');

const SECURE_PROTOCOLS = {
  TLS_method: [undefined, undefined], SSLv23_method: [undefined, undefined],
  TLSv1_2_method: ['TLSv1.2', 'TLSv1.2'], TLSv1_3_method: ['TLSv1.3', 'TLSv1.3'],
};

function buffers(value, name) {
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(value) ? value : [value];
  return list.map((v, i) => {
    if (Buffer.isBuffer(v)) return v;
    if (typeof v === 'string') return Buffer.from(v);
    if (v && typeof v === 'object' && (v.pem !== undefined || v.buf !== undefined)) {
      if (v.passphrase !== undefined) throw new NotSupportedError(`sslOptions.${name}[${i}].passphrase is not supported; use sslOptions.passphrase`);
      return buffers(v.pem !== undefined ? v.pem : v.buf, name)[0];
    }
    throw new ArgumentError(`sslOptions.${name} must be PEM text or a Buffer (or an array of them), got ${typeof v}`);
  });
}

/** Returns the native TLS options for `sslOptions`, or undefined for plaintext. */
function nativeTls(sslOptions) {
  if (sslOptions === undefined || sslOptions === null || sslOptions === false) return undefined;
  if (sslOptions === true) sslOptions = {};
  if (typeof sslOptions !== 'object') throw new ArgumentError(`sslOptions must be an object (tls.ConnectionOptions), got ${typeof sslOptions}`);
  const out = { rejectUnauthorized: sslOptions.rejectUnauthorized !== false };
  for (const [key, value] of Object.entries(sslOptions)) {
    if (value === undefined) continue;
    switch (key) {
      case 'ca': case 'cert': case 'key': out[key] = buffers(value, key); break;
      case 'pfx': {
        const b = buffers(value, key);
        if (b.length !== 1) throw new NotSupportedError('sslOptions.pfx: only one PKCS#12 bundle is supported');
        out.pfx = b[0];
        break;
      }
      case 'passphrase': out.passphrase = String(value); break;
      case 'rejectUnauthorized': break;
      case 'minVersion': case 'maxVersion': out[key] = String(value); break;
      case 'ciphers': out.ciphers = String(value); break;
      case 'secureProtocol': {
        const v = SECURE_PROTOCOLS[value];
        if (!v) throw new NotSupportedError(`sslOptions.secureProtocol '${value}' is not supported; use minVersion/maxVersion ('TLSv1.2', 'TLSv1.3')`);
        if (v[0]) { out.minVersion = v[0]; out.maxVersion = v[1]; }
        break;
      }
      case 'checkServerIdentity':
        // The node's IP is checked against the certificate by OpenSSL during the handshake,
        // as tls.checkServerIdentity does for an IP; a custom function cannot run there.
        if (value !== tls.checkServerIdentity) {
          throw new NotSupportedError('sslOptions.checkServerIdentity: a custom function is not supported; the certificate is checked against the node\'s IP address during the handshake (set rejectUnauthorized: false to skip all checks)');
        }
        break;
      // Node-level socket settings cassandra-driver passes through unchanged but that have
      // no meaning for the connections the Rust driver opens.
      default:
        throw new NotSupportedError(`sslOptions.${key} is not supported (supported: ca, cert, key, pfx, passphrase, rejectUnauthorized, minVersion, maxVersion, secureProtocol, ciphers, checkServerIdentity: tls.checkServerIdentity)`);
    }
  }
  return out;
}

module.exports = { nativeTls };
