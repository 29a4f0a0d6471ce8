'use strict';
// Every CQL type round-trips byte-exactly through the real server: for native types the
// server's own `<type>asblob()` must equal our encoding; for composite types the value read
// back must re-encode to the bytes we sent.
const test = require('node:test');
const assert = require('node:assert/strict');
const { cql, setupKeyspace, newClient } = require('./helpers');
const { types, codec } = cql;
const { parseTypeName } = require('../../lib/typeparse');

const NATIVE = [
  ['ascii', 'hello'],
  ['bigint', types.Long.fromString('-9223372036854775808')],
  ['blob', Buffer.from([0, 1, 2, 255])],
  ['boolean', true],
  ['date', types.LocalDate.fromString('2024-02-29')],
  ['decimal', types.BigDecimal.fromString('-12345678901234567890.000123')],
  ['double', -1.25e300],
  ['duration', types.Duration.fromString('1y2mo3d4h5m6s7ms8us9ns')],
  ['float', 3.5],
  ['inet', types.InetAddress.fromString('2001:db8::1')],
  ['int', -2147483648],
  ['smallint', -32768],
  ['text', 'zażółć gęślą jaźń ✓'],
  ['time', types.LocalTime.fromString('13:14:15.123456789')],
  ['timestamp', new Date('2001-02-03T04:05:06.789Z')],
  ['timeuuid', types.TimeUuid.fromDate(new Date('2020-01-01T00:00:00Z'), 1234)],
  ['tinyint', 127],
  ['uuid', types.Uuid.random()],
  ['varint', types.Integer.fromString('-123456789012345678901234567890')],
];

const COMPOSITE = [
  ['list<int>', [3, 1, 2]],
  ['set<text>', ['a', 'b', 'c']],
  ['map<text, bigint>', { a: types.Long.fromNumber(1), b: types.Long.fromNumber(-2) }],
  ['frozen<tuple<int, text, uuid>>', new types.Tuple(1, 'x', types.Uuid.fromString('00000000-0000-0000-0000-000000000001'))],
  ['vector<float, 3>', new types.Vector([1.5, -2, 0.25])],
  ['vector<text, 2>', new types.Vector(['ab', ''])],
  ['frozen<list<frozen<map<int, text>>>>', [{ 1: 'one' }, { 2: 'two' }]],
  ['frozen<addr>', { street: 'Main', zip: 12345, tags: ['x'] }],
];

let env;
const col = (t) => 'c_' + t.replace(/[^a-z0-9]/gi, '_');

test.before(async () => {
  env = await setupKeyspace(__filename);
  await env.client.execute('CREATE TYPE addr (street text, zip int, tags list<text>)');
  const cols = [...NATIVE, ...COMPOSITE].map(([t]) => `${col(t)} ${t}`).join(', ');
  await env.client.execute(`CREATE TABLE alltypes (id int PRIMARY KEY, ${cols})`);
});
test.after(async () => { if (env) await env.drop(); });

for (const [t, value] of NATIVE) {
  test(`${t} matches the server's ${t}asblob() and reads back equal`, async () => {
    const id = Math.floor(Math.random() * 1e9);
    await env.client.execute(`INSERT INTO alltypes (id, ${col(t)}) VALUES (?, ?)`, [id, value], { prepare: true });
    const rawExpr = t === 'blob' ? col(t) : `${t}asblob(${col(t)})`;
    const rs = await env.client.execute(`SELECT ${col(t)}, ${rawExpr} AS raw FROM alltypes WHERE id = ?`, [id], { prepare: true });
    const row = rs.first();
    const type = rs.columns[0].type;
    const sent = codec.encode(value, type);
    assert.equal(row.raw.toString('hex'), sent.toString('hex'), `server bytes for ${t}`);
    const back = row[col(t)];
    assert.equal(codec.encode(back, type).toString('hex'), sent.toString('hex'), `re-encoded ${t}`);
    if (typeof value === 'object' && typeof value.equals === 'function') assert.ok(value.equals(back), `${t}: ${back} != ${value}`);
    else if (value instanceof Date) assert.equal(back.getTime(), value.getTime());
    else assert.deepEqual(back, value);
  });
}

for (const [t, value] of COMPOSITE) {
  test(`${t} round-trips byte-exactly`, async () => {
    const id = Math.floor(Math.random() * 1e9);
    await env.client.execute(`INSERT INTO alltypes (id, ${col(t)}) VALUES (?, ?)`, [id, value], { prepare: true });
    const rs = await env.client.execute(`SELECT ${col(t)} FROM alltypes WHERE id = ?`, [id], { prepare: true });
    const type = rs.columns[0].type;
    const back = rs.first()[col(t)];
    assert.equal(codec.encode(back, type).toString('hex'), codec.encode(value, type).toString('hex'));
  });
}

test('null versus unset: null clears a column, unset leaves it', async () => {
  const id = 42;
  await env.client.execute('INSERT INTO alltypes (id, c_int, c_text) VALUES (?, ?, ?)', [id, 1, 'keep'], { prepare: true });
  await env.client.execute('INSERT INTO alltypes (id, c_int, c_text) VALUES (?, ?, ?)', [id, null, types.unset], { prepare: true });
  const row = (await env.client.execute('SELECT c_int, c_text FROM alltypes WHERE id = 42')).first();
  assert.equal(row.c_int, null);
  assert.equal(row.c_text, 'keep');
});

test('useBigIntAsLong returns bigint columns as BigInt', async () => {
  const c = newClient({ keyspace: env.ks, encoding: { useBigIntAsLong: true } });
  await c.execute('INSERT INTO alltypes (id, c_bigint) VALUES (?, ?)', [7, 2n ** 62n], { prepare: true });
  const rs = await c.execute('SELECT c_bigint FROM alltypes WHERE id = 7');
  assert.equal(rs.first().c_bigint, 2n ** 62n);
  await c.shutdown();
});

test('unprepared type guessing covers the value classes', async () => {
  const id = 99;
  const u = types.Uuid.random();
  await env.client.execute('INSERT INTO alltypes (id, c_uuid, c_text, c_double, c_boolean, c_blob, c_timestamp, c_varint, c_decimal, c_inet, c_date, c_time, c_duration, c_bigint, c_list_int_) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [id, u, 't', 1.5, false, Buffer.from('x'), new Date(5), types.Integer.fromNumber(3), types.BigDecimal.fromString('1.5'),
      types.InetAddress.fromString('1.2.3.4'), types.LocalDate.fromString('2000-01-01'), types.LocalTime.fromString('01:02:03'),
      types.Duration.fromString('1d'), types.Long.fromNumber(5), [1, 2]],
    { hints: ['int', null, null, null, null, null, null, null, null, null, null, null, null, null, 'list<int>'] });
  const row = (await env.client.execute('SELECT * FROM alltypes WHERE id = 99')).first();
  assert.ok(row.c_uuid.equals(u));
  assert.equal(row.c_inet.toString(), '1.2.3.4');
  assert.deepEqual(row.c_list_int_, [1, 2]);
});
