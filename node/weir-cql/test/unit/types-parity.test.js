'use strict';
// Value types that must behave as cassandra-driver's: TimeUuid dates, Long in JSON.
const test = require('node:test');
const assert = require('node:assert/strict');
const { types } = require('../..');

test('TimeUuid.fromDate keeps a past date after TimeUuid.now()', () => {
  types.TimeUuid.now();
  const past = new Date('2020-03-04T05:06:07.089Z');
  const id = types.TimeUuid.fromDate(past);
  assert.equal(id.getDate().getTime(), past.getTime());
  // Two ids of the same past millisecond stay distinct and ordered by their ticks.
  const again = types.TimeUuid.fromDate(past);
  assert.equal(again.getDate().getTime(), past.getTime());
  assert.ok(again.getDatePrecision().ticks > id.getDatePrecision().ticks);
  const later = types.TimeUuid.now();
  assert.ok(later.getDate().getTime() >= Date.now() - 5000);
});

test('new TimeUuid(date, ticks, nodeId, clockId) and new TimeUuid()', () => {
  const d = new Date('2011-01-02T03:04:05.006Z');
  const id = new types.TimeUuid(d, 1234, Buffer.from('abcdef'), Buffer.from([1, 2]));
  assert.ok(id instanceof types.TimeUuid && id instanceof types.Uuid);
  assert.deepEqual(id.getDatePrecision(), { date: d, ticks: 1234 });
  assert.equal(id.getNodeId().toString(), 'abcdef');
  assert.equal(id.toString()[14], '1', 'version 1');
  const now = new types.TimeUuid();
  assert.ok(Math.abs(now.getDate().getTime() - Date.now()) < 5000);
  const copy = new types.TimeUuid(id.getBuffer());
  assert.ok(copy.equals(id));
  assert.throws(() => new types.TimeUuid(new Date('nope')), /valid Date/);
  assert.throws(() => types.TimeUuid.fromDate(d, 10000), /ticks/);
});

test('Long serializes to JSON as its decimal string', () => {
  const v = types.Long.fromString('1234567890123');
  assert.equal(JSON.stringify(v), '"1234567890123"');
  assert.equal(JSON.stringify({ id: types.Long.fromNumber(-5) }), '{"id":"-5"}');
});

test('NoHostAvailableError.innerErrors values are Errors with a code', () => {
  const e = new (require('../../lib/errors').NoHostAvailableError)({
    '10.0.0.1:9042': { message: 'connect 10.0.0.1:9042: Connection refused', code: 'ECONNREFUSED' },
    '10.0.0.2:9042': 'plain text',
  });
  assert.ok(e.innerErrors['10.0.0.1:9042'] instanceof Error);
  assert.equal(e.innerErrors['10.0.0.1:9042'].code, 'ECONNREFUSED');
  assert.ok(e.innerErrors['10.0.0.2:9042'] instanceof Error);
  assert.equal(typeof e.innerErrors['10.0.0.2:9042'].code, 'string');
  assert.match(e.message, /Connection refused/);
});
