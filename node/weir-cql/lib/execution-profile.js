'use strict';
// ExecutionProfile of cassandra-driver 4.x: a named set of per-request defaults selected
// with `{executionProfile: name}`. consistency, serialConsistency and readTimeout are
// applied per request; loadBalancing and retry must equal the client's (lib/options.js).

const { ArgumentError } = require('./errors');

class ExecutionProfile {
  constructor(name, options) {
    if (typeof name !== 'string' || name === '') throw new ArgumentError('ExecutionProfile needs a name');
    const o = options || {};
    this.name = name;
    this.consistency = o.consistency;
    this.loadBalancing = o.loadBalancing;
    this.readTimeout = o.readTimeout;
    this.retry = o.retry;
    this.serialConsistency = o.serialConsistency;
    this.graphOptions = o.graphOptions;
  }
}

module.exports = { ExecutionProfile };
