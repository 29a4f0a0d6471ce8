'use strict';
// Host events from successive node lists (the watcher's diffing), without a server.
const test = require('node:test');
const assert = require('node:assert/strict');
const { EventEmitter } = require('node:events');
const { HostMap, applyNodes } = require('../../lib/hosts');

const node = (address, up) => ({ address, up, hostId: '00000000-0000-4000-8000-00000000000' + address.slice(-6, -5), datacenter: 'dc1', rack: 'r1' });

test('hostAdd, hostDown, hostUp and hostRemove follow the node list', () => {
  const client = new EventEmitter();
  const logs = [];
  client.log = (level, message) => logs.push(`${level}: ${message}`);
  const events = [];
  for (const e of ['hostAdd', 'hostRemove', 'hostUp', 'hostDown']) client.on(e, (h) => events.push(`${e} ${h.address}`));
  const map = new HostMap();
  applyNodes(client, map, [node('10.0.0.1:9042', true), node('10.0.0.2:9042', true)], true);
  assert.deepEqual(events, [], 'the initial hosts are no events');
  assert.equal(map.length, 2);
  applyNodes(client, map, [node('10.0.0.1:9042', true), node('10.0.0.2:9042', false), node('10.0.0.3:9042', true)]);
  applyNodes(client, map, [node('10.0.0.2:9042', true), node('10.0.0.3:9042', true)]);
  assert.deepEqual(events, ['hostDown 10.0.0.2:9042', 'hostAdd 10.0.0.3:9042', 'hostUp 10.0.0.2:9042', 'hostRemove 10.0.0.1:9042']);
  assert.equal(map.get('10.0.0.2:9042').isUp(), true);
  assert.deepEqual(map.keys(), ['10.0.0.2:9042', '10.0.0.3:9042']);
  assert.equal(logs.length, 4);
});
