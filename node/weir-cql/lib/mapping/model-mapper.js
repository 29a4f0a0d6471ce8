'use strict';
// ModelMapper of cassandra-driver's Mapper: CQL generated from documents and the table
// metadata (client.metadata.getTable), executed as prepared statements. A model maps onto
// one or more tables; find/get use the first table whose partition key the document
// covers, insert/update/remove write every table whose primary key it covers.

const { QueryOperator, QueryAssignment } = require('./q');
const { ArgumentError } = require('../errors');

const quote = (name) => (/^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

class Result {
  constructor(rs, info) {
    this._rs = rs;
    this._info = info;
    this._rows = null;
  }
  get length() { return this.toArray().length; }
  toArray() {
    if (!this._rows) this._rows = this._rs.rows ? this._rs.rows.map((r) => this._info.toObject(r)) : [];
    return this._rows;
  }
  first() { return this.toArray()[0] || null; }
  forEach(cb) { this.toArray().forEach(cb); }
  wasApplied() { return this._rs.wasApplied(); }
  get pageState() { return this._rs.pageState; }
  [Symbol.iterator]() { return this.toArray()[Symbol.iterator](); }
}

class ModelInfo {
  constructor(client, name, opts) {
    this.client = client;
    this.name = name;
    const tables = opts.tables && opts.tables.length ? opts.tables : [name];
    this.tables = tables.map((t) => (typeof t === 'string' ? t : t.name));
    this.keyspace = opts.keyspace;
    this.mappings = opts.mappings || new (require('./table-mappings').DefaultTableMappings)();
    this.colToProp = new Map();
    this.propToCol = new Map();
    for (const [col, v] of Object.entries(opts.columns || {})) {
      const prop = typeof v === 'string' ? v : v.name;
      this.colToProp.set(col, prop);
      this.propToCol.set(prop, col);
    }
    this._meta = null;
  }
  col(prop) { return this.propToCol.get(prop) || this.mappings.getColumnName(prop); }
  prop(col) { return this.colToProp.get(col) || this.mappings.getPropertyName(col); }
  toObject(row) {
    const o = this.mappings.newObjectInstance();
    for (const k of row.keys()) o[this.prop(k)] = row[k];
    return o;
  }
  async meta() {
    if (this._meta) return this._meta;
    await this.client.connect();
    const ks = this.keyspace || this.client.keyspace;
    if (!ks) throw new ArgumentError(`Mapper model '${this.name}': no keyspace (set the model's keyspace or the client's)`);
    const out = [];
    for (const t of this.tables) {
      const m = (await this.client.metadata.getTable(ks, t)) || (await this.client.metadata.getMaterializedView(ks, t));
      if (!m) throw new ArgumentError(`Mapper model '${this.name}': table ${ks}.${t} not found`);
      const pk = m.partitionKeys.map((c) => c.name);
      const ck = m.clusteringKeys.map((c) => c.name);
      out.push({ name: `${quote(ks)}.${quote(t)}`, pk, ck, columns: new Set(m.columns.map((c) => c.name)) });
    }
    this._meta = out;
    return out;
  }
}

/** [{col, value}] of the document's defined properties. */
function docColumns(info, doc) {
  return Object.keys(doc || {}).filter((p) => doc[p] !== undefined).map((p) => ({ col: info.col(p), value: doc[p] }));
}

function whereClause(cols, params) {
  const parts = [];
  const add = (col, v) => {
    if (v instanceof QueryOperator) {
      if (v.hasChildValues) { add(col, v.value[0]); add(col, v.value[1]); return; }
      parts.push(`${quote(col)} ${v.sign} ?`);
      params.push(v.value);
      return;
    }
    parts.push(`${quote(col)} = ?`);
    params.push(v);
  };
  for (const { col, value } of cols) add(col, value);
  return parts.length ? ` WHERE ${parts.join(' AND ')}` : '';
}

function conditions(info, docInfo, params) {
  if (!docInfo) return '';
  if (docInfo.ifExists) return ' IF EXISTS';
  if (docInfo.when) {
    const cols = docColumns(info, docInfo.when);
    return ' IF ' + cols.map(({ col, value }) => { params.push(value instanceof QueryOperator ? value.value : value); return `${quote(col)} ${value instanceof QueryOperator ? value.sign : '='} ?`; }).join(' AND ');
  }
  return '';
}

class ModelMapper {
  constructor(name, info) {
    this.name = name;
    this._info = info;
    this.batching = {
      insert: (doc, docInfo) => ({ build: () => this._insertQueries(doc, docInfo) }),
      update: (doc, docInfo) => ({ build: () => this._updateQueries(doc, docInfo) }),
      remove: (doc, docInfo) => ({ build: () => this._removeQueries(doc, docInfo) }),
    };
  }

  async _select(doc, docInfo, executionOptions, forGet) {
    const info = this._info;
    const tables = await info.meta();
    const cols = docColumns(info, doc);
    const names = new Set(cols.map((c) => c.col));
    const table = tables.find((t) => t.pk.every((k) => names.has(k)) && cols.every((c) => t.pk.includes(c.col) || t.ck.includes(c.col)) &&
      (!forGet || t.ck.every((k) => names.has(k))));
    if (!table && cols.length) throw new ArgumentError(`Mapper model '${info.name}': no table of [${info.tables}] has the columns [${[...names]}] as its primary key`);
    const t = table || tables[0];
    const params = [];
    const fields = docInfo && docInfo.fields ? docInfo.fields.map((f) => quote(info.col(f))).join(', ') : '*';
    let query = `SELECT ${fields} FROM ${t.name}${whereClause(cols, params)}`;
    if (docInfo && docInfo.orderBy) {
      query += ' ORDER BY ' + Object.entries(docInfo.orderBy).map(([p, dir]) => `${quote(info.col(p))} ${String(dir).toUpperCase() === 'DESC' ? 'DESC' : 'ASC'}`).join(', ');
    }
    const limit = forGet ? 1 : docInfo && docInfo.limit;
    if (limit) { query += ' LIMIT ?'; params.push(limit | 0); }
    const rs = await info.client.execute(query, params, { prepare: true, isIdempotent: true, ...executionOptions });
    return new Result(rs, info);
  }

  find(doc, docInfo, executionOptions) { return this._select(doc, docInfo, executionOptions, false); }
  findAll(docInfo, executionOptions) { return this._select({}, docInfo, executionOptions, false); }
  async get(doc, docInfo, executionOptions) { return (await this._select(doc, docInfo, executionOptions, true)).first(); }

  async _keyedTables(doc, what) {
    const info = this._info;
    const tables = await info.meta();
    const names = new Set(docColumns(info, doc).map((c) => c.col));
    const hit = tables.filter((t) => t.pk.every((k) => names.has(k)) && t.ck.every((k) => names.has(k)));
    if (!hit.length) throw new ArgumentError(`Mapper model '${info.name}': ${what} needs every primary key column of one of [${info.tables}]; the document has [${[...names]}]`);
    return hit;
  }

  async _insertQueries(doc, docInfo) {
    const info = this._info;
    const out = [];
    for (const t of await this._keyedTables(doc, 'insert')) {
      const cols = docColumns(info, doc).filter((c) => t.columns.has(c.col) && (!docInfo || !docInfo.fields || docInfo.fields.some((f) => info.col(f) === c.col) || t.pk.includes(c.col) || t.ck.includes(c.col)));
      let query = `INSERT INTO ${t.name} (${cols.map((c) => quote(c.col)).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
      const params = cols.map((c) => c.value);
      if (docInfo && docInfo.ifNotExists) query += ' IF NOT EXISTS';
      if (docInfo && docInfo.ttl) { query += ' USING TTL ?'; params.push(docInfo.ttl | 0); }
      out.push({ query, params });
    }
    return out;
  }

  async _updateQueries(doc, docInfo) {
    const info = this._info;
    const out = [];
    for (const t of await this._keyedTables(doc, 'update')) {
      const cols = docColumns(info, doc).filter((c) => t.columns.has(c.col));
      const keys = cols.filter((c) => t.pk.includes(c.col) || t.ck.includes(c.col));
      const sets = cols.filter((c) => !keys.includes(c));
      const params = [];
      let query = `UPDATE ${t.name}`;
      if (docInfo && docInfo.ttl) { query += ' USING TTL ?'; params.push(docInfo.ttl | 0); }
      query += ' SET ' + sets.map(({ col, value }) => {
        if (value instanceof QueryAssignment) {
          params.push(value.value);
          return value.inverted ? `${quote(col)} = ? ${value.sign} ${quote(col)}` : `${quote(col)} = ${quote(col)} ${value.sign} ?`;
        }
        params.push(value);
        return `${quote(col)} = ?`;
      }).join(', ');
      query += whereClause(keys, params);
      query += conditions(info, docInfo, params);
      out.push({ query, params });
    }
    return out;
  }

  async _removeQueries(doc, docInfo) {
    const info = this._info;
    const out = [];
    for (const t of await this._keyedTables(doc, 'remove')) {
      const keys = docColumns(info, doc).filter((c) => t.pk.includes(c.col) || t.ck.includes(c.col));
      const params = [];
      const fields = docInfo && docInfo.fields ? docInfo.fields.map((f) => quote(info.col(f))).join(', ') + ' ' : '';
      let query = `DELETE ${fields}FROM ${t.name}` + whereClause(keys, params);
      query += conditions(info, docInfo, params);
      out.push({ query, params });
    }
    return out;
  }

  async _write(queries, executionOptions) {
    const client = this._info.client;
    const rs = queries.length === 1
      ? await client.execute(queries[0].query, queries[0].params, { prepare: true, ...executionOptions })
      : await client.batch(queries, { prepare: true, ...executionOptions });
    return new Result(rs, this._info);
  }

  async insert(doc, docInfo, executionOptions) { return this._write(await this._insertQueries(doc, docInfo), executionOptions); }
  async update(doc, docInfo, executionOptions) { return this._write(await this._updateQueries(doc, docInfo), executionOptions); }
  async remove(doc, docInfo, executionOptions) { return this._write(await this._removeQueries(doc, docInfo), executionOptions); }

  mapWithQuery(query, paramsHandler, executionOptions) {
    return async (doc, options) => {
      const rs = await this._info.client.execute(query, paramsHandler(doc), { prepare: true, ...executionOptions, ...options });
      return new Result(rs, this._info);
    };
  }
}

module.exports = { ModelMapper, ModelInfo, Result };
