'use strict';
// weir-cql: a CQL driver for Node.js on the ScyllaDB Rust driver, with cassandra-driver 4.x's API.

const { Client } = require('./lib/client');
const types = require('./lib/types');
const errors = require('./lib/errors');
const concurrent = require('./lib/concurrent');
const { ResultSet, Row } = require('./lib/result');
const codec = require('./lib/codec');
const policies = require('./lib/policies');
const auth = require('./lib/auth');
const { ExecutionProfile } = require('./lib/execution-profile');
const mapping = require('./lib/mapping');

types.ResultSet = ResultSet;
types.Row = Row;

module.exports = {
  Client,
  ExecutionProfile,
  types,
  policies,
  mapping,
  auth: { AuthProvider: auth.AuthProvider, Authenticator: auth.Authenticator,
    PlainTextAuthProvider: auth.PlainTextAuthProvider, DsePlainTextAuthProvider: auth.DsePlainTextAuthProvider },
  errors,
  concurrent: { executeConcurrent: concurrent.executeConcurrent, ResultSetGroup: concurrent.ResultSetGroup },
  codec: { encode: codec.encode, decode: codec.decode, guessType: codec.guessType },
  version: require('./package.json').version,
};
