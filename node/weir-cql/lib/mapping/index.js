'use strict';
// `mapping` of cassandra-driver 4.x: Mapper, ModelMapper, q operators, table mappings.

const { ModelMapper, ModelInfo, Result } = require('./model-mapper');
const { q } = require('./q');
const { TableMappings, DefaultTableMappings, UnderscoreCqlToCamelCaseMappings } = require('./table-mappings');
const { ArgumentError } = require('../errors');

class Mapper {
  constructor(client, options) {
    if (!client) throw new ArgumentError('Mapper needs a Client');
    this.client = client;
    this._models = (options && options.models) || {};
    this._mappers = new Map();
  }

  forModel(name) {
    let m = this._mappers.get(name);
    if (!m) {
      m = new ModelMapper(name, new ModelInfo(this.client, name, this._models[name] || {}));
      this._mappers.set(name, m);
    }
    return m;
  }

  /** Runs items from modelMapper.batching.insert/update/remove as one CQL batch. */
  async batch(items, executionOptions) {
    if (!Array.isArray(items) || items.length === 0) throw new ArgumentError('Mapper.batch needs a non-empty array of batch items');
    const queries = [];
    for (const it of items) queries.push(...await it.build());
    const rs = await this.client.batch(queries, { prepare: true, ...executionOptions });
    return new Result(rs, { toObject: (r) => r });
  }
}

module.exports = { Mapper, ModelMapper, Result, q, TableMappings, DefaultTableMappings, UnderscoreCqlToCamelCaseMappings };
