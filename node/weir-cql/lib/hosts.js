'use strict';
// client.hosts (HostMap of Host), the host events (hostAdd, hostRemove, hostUp, hostDown)
// and getState(), from the Rust driver's cluster state. The driver itself detects node
// changes; a watcher reads its node list once per second (an unref'd timer: it never
// keeps the process alive) and turns each difference into the cassandra-driver event.

const { EventEmitter } = require('node:events');
const types = require('./types');
const { NotSupportedError } = require('./errors');

class Host extends EventEmitter {
  constructor(info) {
    super();
    this.address = info.address;
    this.hostId = types.Uuid.fromString(info.hostId);
    this.datacenter = info.datacenter;
    this.rack = info.rack;
    this.cassandraVersion = null;
    this.tokens = [];
    this._up = !!info.up;
  }
  isUp() { return this._up; }
  canBeConsideredAsUp() { return this._up; }
  /** [major, minor, patch] of the node's release version, [] when unknown. */
  getCassandraVersion() { return this.cassandraVersion ? this.cassandraVersion.split(/[.-]/).slice(0, 3).map(Number) : []; }
  toJSON() { return { address: this.address, datacenter: this.datacenter, rack: this.rack, hostId: this.hostId.toString(), up: this._up }; }
}

class HostMap extends EventEmitter {
  constructor() { super(); this._items = new Map(); }
  get length() { return this._items.size; }
  get(key) { return this._items.get(key); }
  keys() { return [...this._items.keys()]; }
  values() { return [...this._items.values()]; }
  forEach(callback) { for (const [k, v] of this._items) callback(v, k); }
  toJSON() { return Object.fromEntries([...this._items].map(([k, v]) => [k, v.toJSON()])); }
  [Symbol.iterator]() { return this._items.values(); }
}

/** Applies a node list to `map`, emitting host events on `client` (not for the initial list). */
function applyNodes(client, map, nodes, initial) {
  const seen = new Set();
  for (const n of nodes) {
    seen.add(n.address);
    const h = map.get(n.address);
    if (!h) {
      const host = new Host(n);
      map._items.set(n.address, host);
      if (initial) continue;
      map.emit('add', host);
      client.emit('hostAdd', host);
      client.log('info', `Host ${n.address} added (datacenter ${n.datacenter}, ${host._up ? 'up' : 'down'})`);
      continue;
    }
    if (h._up !== !!n.up) {
      h._up = !!n.up;
      h.emit(h._up ? 'up' : 'down');
      client.emit(h._up ? 'hostUp' : 'hostDown', h);
      client.log(h._up ? 'info' : 'warning', `Host ${n.address} is ${h._up ? 'up' : 'down'}`);
    }
  }
  for (const [addr, h] of [...map._items]) {
    if (seen.has(addr)) continue;
    map._items.delete(addr);
    map.emit('remove', h);
    client.emit('hostRemove', h);
    client.log('info', `Host ${addr} removed`);
  }
}

class HostWatcher {
  constructor(client, intervalMs) {
    this.client = client;
    this.map = new HostMap();
    this.intervalMs = intervalMs;
    this.timer = null;
    this.versions = new Map();
  }
  /** Host.cassandraVersion from system.local and system.peers (the Rust driver keeps no versions). */
  async readVersions() {
    try {
      // peers_v2 (Cassandra 4+) names each node's client address; older servers have peers.
      // Any coordinator lists every node but itself, so system.local is read (each read may
      // go to another node) until the versions cover the hosts, at most 10 times.
      let peers;
      try {
        peers = (await this.client.execute('SELECT peer, native_address, release_version FROM system.peers_v2')).rows
          .map((r) => [r.native_address || r.peer, r.release_version]);
      } catch {
        peers = (await this.client.execute('SELECT peer, rpc_address, release_version FROM system.peers')).rows
          .map((r) => [r.rpc_address || r.peer, r.release_version]);
      }
      for (const [addr, v] of peers) if (addr) this.versions.set(addr.toString(), v);
      for (let i = 0; i < 10 && this.versions.size < this.map.length; i++) {
        const local = await this.client.execute('SELECT rpc_address, release_version FROM system.local');
        for (const r of local.rows) if (r.rpc_address) this.versions.set(r.rpc_address.toString(), r.release_version);
      }
      for (const h of this.map.values()) this._setVersion(h);
    } catch (e) {
      this.client.log('warning', `Could not read the nodes' release versions: ${e.message}`);
    }
  }
  _setVersion(h) {
    const v = this.versions.get(h.address.slice(0, h.address.lastIndexOf(':')));
    if (v) h.cassandraVersion = v;
  }
  refresh(initial) {
    const info = JSON.parse(this.client._native.clusterInfo(false));
    applyNodes(this.client, this.map, info.nodes, initial);
    if (this.versions.size) for (const h of this.map.values()) if (!h.cassandraVersion) this._setVersion(h);
    return info;
  }
  start() {
    this.refresh(true);
    this.timer = setInterval(() => { try { this.refresh(); } catch { this.stop(); } }, this.intervalMs);
    this.timer.unref();
  }
  stop() { if (this.timer) clearInterval(this.timer); this.timer = null; }
}

/** getState(): a snapshot of the hosts the client holds connections to. */
class ClientState {
  constructor(hosts) { this._hosts = hosts; }
  getConnectedHosts() { return this._hosts.filter((h) => h.isUp()); }
  // Per-connection counts live inside the Rust driver's pools and are not exposed by it.
  getOpenConnections() { throw new NotSupportedError('ClientState.getOpenConnections: the Rust driver does not expose per-host connection counts'); }
  getInFlightQueries() { throw new NotSupportedError('ClientState.getInFlightQueries: the Rust driver does not expose per-host in-flight counts'); }
  toString() { return this._hosts.map((h) => `${h.address}: ${h.isUp() ? 'up' : 'down'}`).join('; '); }
}

module.exports = { Host, HostMap, HostWatcher, ClientState, applyNodes };
