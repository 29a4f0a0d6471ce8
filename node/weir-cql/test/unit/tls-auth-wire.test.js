'use strict';
// What the client sends on the wire, against local fake servers (no Cassandra needed):
// TLS is used when asked (never a plaintext fallback), the node's certificate is checked
// against the CA and the node's IP, and PlainTextAuthProvider's credentials reach the
// server. Certificates are made with the openssl command-line tool.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const tls = require('node:tls');
const cql = require('../..');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'weircql-tls-'));
const file = (n) => path.join(dir, n);
const ssl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function makeCa(name) {
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.pem`));
}
function makeLeaf(name, ca, ip) {
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${ip}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`));
  fs.writeFileSync(file(`${name}.ext`), `subjectAltName=IP:${ip}\n`);
  ssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file(`${ca}.pem`), '-CAkey', file(`${ca}.key`), '-CAcreateserial',
    '-days', '2', '-extfile', file(`${name}.ext`), '-out', file(`${name}.pem`));
}
makeCa('ca');
makeCa('other');
makeLeaf('node', 'ca', '127.0.0.1');
makeLeaf('elsewhere', 'ca', '127.0.0.9');
const read = (n) => fs.readFileSync(file(n));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A TLS server that records what happened and closes each connection after its first bytes. */
async function tlsServer(leaf) {
  const seen = { secure: 0, clientErrors: 0, firstBytes: null };
  const server = tls.createServer({ key: read(`${leaf}.key`), cert: read(`${leaf}.pem`) }, (sock) => {
    seen.secure++;
    sock.once('data', (d) => { if (!seen.firstBytes) seen.firstBytes = d; sock.destroy(); });
    sock.on('error', () => {});
  });
  server.on('tlsClientError', () => { seen.clientErrors++; });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { seen, port: server.address().port, close: () => new Promise((r) => server.close(r)) };
}

async function connectError(port, extra) {
  const c = new cql.Client({ contactPoints: [`127.0.0.1:${port}`], localDataCenter: 'dc1', socketOptions: { connectTimeout: 2000 }, ...extra });
  try {
    await c.connect();
    return null;
  } catch (e) {
    return e;
  } finally {
    await c.shutdown();
  }
}

test('a certificate from the trusted CA for the node IP: the CQL handshake runs inside TLS', async () => {
  const s = await tlsServer('node');
  try {
    const err = await connectError(s.port, { sslOptions: { ca: [read('ca.pem')] } });
    assert.ok(err, 'the fake server closes the connection, so connect() fails');
    assert.ok(s.seen.secure >= 1, 'the TLS handshake completed');
    assert.equal(s.seen.firstBytes[0], 0x04, 'the first decrypted bytes are a CQL v4 request frame');
    assert.equal(s.seen.firstBytes[4], 0x05, 'an OPTIONS request');
  } finally { await s.close(); }
});

test('a certificate from another CA is refused before any CQL byte is sent', async () => {
  const s = await tlsServer('node');
  try {
    const err = await connectError(s.port, { sslOptions: { ca: [read('other.pem')] } });
    assert.ok(err instanceof cql.errors.NoHostAvailableError, String(err));
    const inner = Object.values(err.innerErrors)[0];
    assert.ok(inner instanceof Error);
    assert.equal(inner.code, 'ECERTVERIFY', inner.message);
    assert.equal(s.seen.secure, 0);
    assert.equal(s.seen.firstBytes, null);
  } finally { await s.close(); }
});

test('a certificate of the trusted CA issued for another IP is refused (identity check)', async () => {
  const s = await tlsServer('elsewhere');
  try {
    const err = await connectError(s.port, { sslOptions: { ca: [read('ca.pem')] } });
    assert.ok(err instanceof cql.errors.NoHostAvailableError, String(err));
    assert.equal(Object.values(err.innerErrors)[0].code, 'ECERTVERIFY');
    assert.equal(s.seen.secure, 0);
  } finally { await s.close(); }
});

test('rejectUnauthorized: false accepts any certificate (still over TLS)', async () => {
  const s = await tlsServer('elsewhere');
  try {
    await connectError(s.port, { sslOptions: { ca: [read('other.pem')], rejectUnauthorized: false } });
    assert.ok(s.seen.secure >= 1);
    assert.equal(s.seen.firstBytes[0], 0x04);
  } finally { await s.close(); }
});

test('a plaintext server never receives a plaintext CQL frame from a TLS client', async () => {
  const first = [];
  const server = net.createServer((sock) => {
    sock.once('data', (d) => { first.push(d[0]); sock.end(Buffer.from([0x84, 0, 0, 0, 0x06, 0, 0, 0, 2, 0, 0])); });
    sock.on('error', () => {});
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const err = await connectError(server.address().port, { sslOptions: { ca: [read('ca.pem')] } });
    assert.ok(err instanceof cql.errors.NoHostAvailableError);
    assert.ok(first.length >= 1);
    for (const b of first) assert.equal(b, 0x16, 'every connection starts with a TLS handshake record');
  } finally { await new Promise((r) => server.close(r)); }
});

/** A CQL server that asks for SASL PLAIN and records the client's token. */
function frame(stream, opcode, body) {
  const h = Buffer.alloc(9);
  h[0] = 0x84; h.writeInt16BE(stream, 2); h[4] = opcode; h.writeInt32BE(body.length, 5);
  return Buffer.concat([h, body]);
}
function shortString(s) { const b = Buffer.from(s); const l = Buffer.alloc(2); l.writeUInt16BE(b.length); return Buffer.concat([l, b]); }

test('PlainTextAuthProvider sends its username and password as SASL PLAIN', async () => {
  const tokens = [];
  const server = net.createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('error', () => {});
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 9 && buf.length >= 9 + buf.readInt32BE(5)) {
        const stream = buf.readInt16BE(2), opcode = buf[4], len = buf.readInt32BE(5);
        const body = buf.subarray(9, 9 + len);
        buf = buf.subarray(9 + len);
        if (opcode === 0x05) sock.write(frame(stream, 0x06, Buffer.from([0, 0])));
        else if (opcode === 0x01) sock.write(frame(stream, 0x03, shortString('org.apache.cassandra.auth.PasswordAuthenticator')));
        else if (opcode === 0x0f) {
          tokens.push(body.subarray(4, 4 + body.readInt32BE(0)).toString('latin1'));
          const code = Buffer.alloc(4); code.writeInt32BE(0x0100);
          sock.write(frame(stream, 0x00, Buffer.concat([code, shortString('Provided username and/or password are incorrect')])));
        }
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const err = await connectError(server.address().port, { authProvider: new cql.auth.PlainTextAuthProvider('alice', 's3cret') });
    assert.ok(err, 'the fake server refuses the credentials');
    assert.ok(tokens.length >= 1, 'an AUTH_RESPONSE reached the server');
    assert.equal(tokens[0], '\0alice\0s3cret');
  } finally { await new Promise((r) => server.close(r)); }
});
