'use strict';
// Reconnection, speculative-execution, timestamp-generation and address-resolution
// policies of cassandra-driver 4.x. Each either maps onto the Rust driver (speculative
// execution -> SimpleSpeculativeExecutionPolicy, MonotonicTimestampGenerator -> the Rust
// driver's generator), runs in JS where its effect is per request (a custom timestamp
// generator's next()), or is refused by lib/options.js with NotSupportedError.

const Long = require('long');
const { NotSupportedError, ArgumentError } = require('../errors');

// --- reconnection: the Rust driver refills pools with its own exponential backoff
// (50 ms to 10 s); its policy API is unstable, so explicit policies are refused.
class ReconnectionPolicy {
  newSchedule() { throw new NotSupportedError(`${this.constructor.name}.newSchedule: reconnection is scheduled by the Rust driver`); }
  getOptions() { return new Map(); }
}
class ConstantReconnectionPolicy extends ReconnectionPolicy {
  constructor(delay) { super(); this.delay = delay; }
  * newSchedule() { for (;;) yield this.delay; }
  getOptions() { return new Map([['delay', this.delay]]); }
}
class ExponentialReconnectionPolicy extends ReconnectionPolicy {
  constructor(baseDelay, maxDelay, startWithNoDelay) { super(); Object.assign(this, { baseDelay, maxDelay, startWithNoDelay }); }
  * newSchedule() {
    let d = this.baseDelay;
    if (this.startWithNoDelay) yield 0;
    for (;;) { yield Math.min(d, this.maxDelay); d = Math.min(d * 2, this.maxDelay); }
  }
  getOptions() { return new Map([['baseDelay', this.baseDelay], ['maxDelay', this.maxDelay], ['startWithNoDelay', !!this.startWithNoDelay]]); }
}

// --- speculative execution (only idempotent statements are speculated, as in both drivers)
class SpeculativeExecutionPolicy {
  init() {}
  shutdown() {}
  newPlan() { throw new NotSupportedError(`${this.constructor.name}.newPlan: speculative executions are scheduled by the Rust driver`); }
  getOptions() { return new Map(); }
}
class NoSpeculativeExecutionPolicy extends SpeculativeExecutionPolicy {
  _native() { return null; }
}
class ConstantSpeculativeExecutionPolicy extends SpeculativeExecutionPolicy {
  constructor(delay, maxSpeculativeExecutions) {
    super();
    if (!(delay >= 0)) throw new ArgumentError('ConstantSpeculativeExecutionPolicy: delay must be a number of milliseconds >= 0');
    if (!(maxSpeculativeExecutions > 0)) throw new ArgumentError('ConstantSpeculativeExecutionPolicy: maxSpeculativeExecutions must be > 0');
    this._delay = delay;
    this._maxSpeculativeExecutions = maxSpeculativeExecutions;
  }
  getOptions() { return new Map([['delay', this._delay], ['maxSpeculativeExecutions', this._maxSpeculativeExecutions]]); }
  _native() { return { delayMs: this._delay, max: this._maxSpeculativeExecutions }; }
}

// --- timestamp generation
class TimestampGenerator {
  next() { throw new NotSupportedError(`${this.constructor.name}.next() must be implemented`); }
}
/** Microseconds since the epoch, strictly increasing within this process. */
class MonotonicTimestampGenerator extends TimestampGenerator {
  constructor(warningThreshold, minLogInterval) {
    super();
    this._warningThreshold = warningThreshold === undefined ? 1000 : warningThreshold;
    this._minLogInterval = minLogInterval === undefined ? 1000 : minLogInterval;
    this._last = 0;
  }
  getDate() { return Date.now(); }
  next() {
    let us = this.getDate() * 1000;
    if (us <= this._last) us = this._last + 1;
    this._last = us;
    return Long.fromNumber(us);
  }
}

// --- address resolution: only the identity translator (the Rust driver connects to the
// addresses the nodes broadcast).
class AddressTranslator {
  translate(address, port, callback) { callback(`${address}:${port}`); }
}
class EC2MultiRegionTranslator extends AddressTranslator {}

function describeSpeculative(p) {
  if (p instanceof NoSpeculativeExecutionPolicy || p instanceof ConstantSpeculativeExecutionPolicy) {
    if (p.constructor === NoSpeculativeExecutionPolicy || p.constructor === ConstantSpeculativeExecutionPolicy) return p._native();
  }
  throw new NotSupportedError(`policies.speculativeExecution: ${name(p)} is not supported (use ConstantSpeculativeExecutionPolicy or NoSpeculativeExecutionPolicy)`);
}

/** 'monotonic' (the Rust driver's generator), 'server' (none), or a JS generator object. */
function describeTimestamps(g) {
  if (g === null) return 'server';
  if (g && g.constructor === MonotonicTimestampGenerator) return 'monotonic';
  if (g && typeof g.next === 'function' && g.constructor !== TimestampGenerator) return g;
  throw new NotSupportedError(`policies.timestampGeneration: ${name(g)} has no next() method`);
}

function checkReconnection(p) {
  if (p === undefined || p === DEFAULTS.reconnection) return;
  throw new NotSupportedError(`policies.reconnection: ${name(p)} is not supported; the Rust driver reconnects with its own exponential backoff (50 ms doubling to 10 s)`);
}

function checkAddressTranslator(t) {
  if (t === undefined || (t && t.constructor === AddressTranslator)) return;
  throw new NotSupportedError(`policies.addressResolution: ${name(t)} is not supported; the Rust driver connects to the addresses the nodes broadcast`);
}

function name(p) { return p && p.constructor ? p.constructor.name : String(p); }

const DEFAULTS = { reconnection: new ExponentialReconnectionPolicy(1000, 10 * 60 * 1000, false) };

module.exports = {
  ReconnectionPolicy, ConstantReconnectionPolicy, ExponentialReconnectionPolicy,
  SpeculativeExecutionPolicy, NoSpeculativeExecutionPolicy, ConstantSpeculativeExecutionPolicy,
  TimestampGenerator, MonotonicTimestampGenerator, AddressTranslator, EC2MultiRegionTranslator,
  describeSpeculative, describeTimestamps, checkReconnection, checkAddressTranslator, DEFAULTS,
};
