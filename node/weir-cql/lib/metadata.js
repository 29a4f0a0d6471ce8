'use strict';
// client.metadata of cassandra-driver 4.x over the Rust driver's schema and token ring
// (src/metadata.rs). Reads take a fresh snapshot of the driver's metadata, which the Rust
// driver keeps current (schema-change events, and a refresh after DDL it awaits).

const { Reader } = require('./result');
const errors = require('./errors');
const types = require('./types');

function parseType(hex) { return new Reader(Buffer.from(hex, 'hex'), 0).type(); }

function columnsOf(t) {
  // cassandra-driver's order: partition key, clustering key, then the rest by name.
  const rank = (n) => { const p = t.partitionKey.indexOf(n); if (p >= 0) return p; const c = t.clusteringKey.indexOf(n); return c >= 0 ? 1000 + c : 100000; };
  const columns = Object.entries(t.columns).map(([name, c]) => ({ name, type: parseType(c.type), kind: c.kind }))
    .sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = Object.fromEntries(columns.map((c) => [c.name, c]));
  return { columns, columnsByName: byName,
    partitionKeys: t.partitionKey.map((n) => byName[n]), clusteringKeys: t.clusteringKey.map((n) => byName[n]) };
}

class TableMetadata {
  constructor(keyspace, name, t) {
    this.keyspace = keyspace;
    this.name = name;
    Object.assign(this, columnsOf(t));
    this.partitioner = t.partitioner;
  }
}

class MaterializedView extends TableMetadata {
  constructor(keyspace, name, t) { super(keyspace, name, t); this.tableName = t.baseTableName; }
}

class TokenRange {
  constructor(start, end) { this.start = start; this.end = end; }
  toString() { return `]${this.start}, ${this.end}]`; }
}

/** Calls back and/or resolves, as cassandra-driver's metadata methods do. */
function settle(promise, callback) {
  if (typeof callback !== 'function') return promise;
  promise.then((v) => callback(null, v), (e) => callback(e));
  return undefined;
}

class Metadata {
  constructor(client) { this._client = client; }

  _info() {
    if (!this._client.connected) throw new errors.DriverError('client.metadata needs a connected client; call connect() first');
    return JSON.parse(this._client._native.clusterInfo(true));
  }

  get clusterName() { return this._client.connected ? JSON.parse(this._client._native.clusterInfo(false)).clusterName : undefined; }

  /** {name: {name, strategy, strategyOptions, durableWrites}} */
  get keyspaces() {
    if (!this._client.connected) return {};
    const out = {};
    for (const [name, k] of Object.entries(this._info().keyspaces)) {
      out[name] = { name, strategy: k.strategy, strategyOptions: k.strategyOptions, durableWrites: k.durableWrites };
    }
    return out;
  }

  _keyspace(name) {
    const k = this._info().keyspaces[name];
    return k || null;
  }

  getTable(keyspace, name, callback) {
    return settle(Promise.resolve().then(() => {
      const k = this._keyspace(keyspace);
      return k && k.tables[name] ? new TableMetadata(keyspace, name, k.tables[name]) : null;
    }), callback);
  }

  getMaterializedView(keyspace, name, callback) {
    return settle(Promise.resolve().then(() => {
      const k = this._keyspace(keyspace);
      return k && k.views[name] ? new MaterializedView(keyspace, name, k.views[name]) : null;
    }), callback);
  }

  getUdt(keyspace, name, callback) {
    return settle(Promise.resolve().then(() => {
      const k = this._keyspace(keyspace);
      const u = k && k.udts[name];
      return u ? { name, keyspace, fields: u.fields.map((f) => ({ name: f.name, type: parseType(f.type) })) } : null;
    }), callback);
  }

  refreshKeyspaces(waitReconnect, callback) {
    if (typeof waitReconnect === 'function') callback = waitReconnect;
    return settle(this._client._native.refreshMetadata().then((buf) => {
      if (buf.length > 0) throw new Reader(buf, 1).error();
    }), callback);
  }

  refreshKeyspace(name, waitReconnect, callback) {
    if (typeof waitReconnect === 'function') callback = waitReconnect;
    return this.refreshKeyspaces(callback);
  }

  /** true once every node reports the same schema version (waits up to the agreement timeout). */
  checkSchemaAgreement(callback) {
    return settle(this._client._native.awaitSchemaAgreement().then((buf) => buf.length === 0), callback);
  }

  /** Hosts holding the partition whose serialized partition key is `token` (a Buffer). */
  getReplicas(keyspace, token) {
    if (!Buffer.isBuffer(token)) throw new errors.ArgumentError('getReplicas(keyspace, routingKey): routingKey must be the serialized partition key as a Buffer');
    return this._client._native.replicas(keyspace, token).map((a) => this._client.hosts.get(a)).filter(Boolean);
  }

  /** The token ring as ranges ]start, end], each owned by the node at its end. */
  getTokenRanges() {
    const ring = this._info().tokenRing;
    const out = new Set();
    for (let i = 0; i < ring.length; i++) {
      const prev = ring[(i + ring.length - 1) % ring.length][0];
      out.add(new TokenRange(prev, ring[i][0]));
    }
    return out;
  }

  /** The ranges ]start, end] `host` is a replica of in `keyspace` (at its replication). */
  getTokenRangesForHost(keyspace, host) {
    const addr = typeof host === 'string' ? host : host.address;
    const out = new Set();
    for (const r of JSON.parse(this._client._native.tokenRanges(keyspace))) {
      if (r.replicas.includes(addr)) out.add(new TokenRange(r.start, r.end));
    }
    return out;
  }

  /** The server's trace of a request traced with {traceQuery: true}. */
  getTrace(traceId, consistency, callback) {
    if (typeof consistency === 'function') callback = consistency;
    const id = traceId instanceof types.Uuid ? traceId.toString() : String(traceId);
    return settle(this._client._native.trace(id).then((text) => {
      const t = JSON.parse(text);
      if (t.error) throw new errors.DriverError(t.error);
      return {
        requestType: t.requestType,
        coordinator: t.coordinator ? types.InetAddress.fromString(t.coordinator) : null,
        parameters: t.parameters || {},
        startedAt: t.startedAt === null || t.startedAt === undefined ? null : types.Long.fromNumber(t.startedAt),
        duration: t.duration,
        clientAddress: t.clientAddress,
        events: t.events.map((e) => ({ id: types.TimeUuid.fromString(e.id), activity: e.activity,
          source: e.source ? types.InetAddress.fromString(e.source) : null, elapsed: e.elapsed, thread: e.thread })),
      };
    }), callback);
  }
}

module.exports = { Metadata, TableMetadata, MaterializedView, TokenRange };
