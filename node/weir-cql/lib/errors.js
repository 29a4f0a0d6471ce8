'use strict';
// Error classes shaped like cassandra-driver 4.x (errors.*), so `instanceof` checks and
// `err.code === types.responseErrorCodes.syntaxError` keep working after a switch.

class DriverError extends Error {
  constructor(message) {
    super(message);
    this.name = this.constructor.name;
    this.info = 'Cassandra Driver Error';
  }
}

class ResponseError extends DriverError {
  constructor(code, message, extra) {
    super(message);
    this.code = code;
    this.info = 'Represents an error message from the server';
    if (extra) Object.assign(this, extra);
  }
}

/** innerErrors values are Error objects with a `code`, as cassandra-driver's (net errors). */
function innerError(value) {
  if (value instanceof Error) return value;
  const text = value && typeof value === 'object' ? String(value.message) : String(value);
  const e = new DriverError(text);
  e.code = value && typeof value === 'object' && value.code ? value.code : 'EDRIVER';
  return e;
}

class NoHostAvailableError extends DriverError {
  constructor(innerErrors, message) {
    super(message || 'All host(s) tried for query failed');
    this.innerErrors = {};
    for (const [host, v] of Object.entries(innerErrors || {})) this.innerErrors[host] = innerError(v);
    this.info = 'Represents an error when a query cannot be performed because no host is available or could be reached by the driver.';
    const hosts = Object.keys(this.innerErrors);
    if (!message && hosts.length) {
      this.message += '. First host tried, ' + hosts[0] + ': ' + this.innerErrors[hosts[0]].message;
    }
  }
}

class OperationTimedOutError extends DriverError {
  constructor(message, host) { super(message); this.host = host; }
}
class ArgumentError extends DriverError {}
class AuthenticationError extends DriverError {}
class NotSupportedError extends DriverError {}
class BusyConnectionError extends DriverError {}
class VIntOutOfRangeException extends DriverError {}

/** Builds the JS error from the fields the native layer encodes (see src/errors.rs). */
function fromNative(kind, code, message, extra) {
  switch (kind) {
    case 0: {
      if (code === 0x0100) { const e = new AuthenticationError(message); e.code = code; return e; }
      return new ResponseError(code, message, extra);
    }
    case 1: {
      const inner = (extra && extra.innerErrors) || {};
      return new NoHostAvailableError(inner, Object.keys(inner).length ? undefined : message);
    }
    case 2: return new OperationTimedOutError(message);
    case 3: return new ArgumentError(message);
    default: return new DriverError(message);
  }
}

module.exports = { DriverError, ResponseError, NoHostAvailableError, OperationTimedOutError,
  ArgumentError, AuthenticationError, NotSupportedError, BusyConnectionError,
  VIntOutOfRangeException, fromNative };
