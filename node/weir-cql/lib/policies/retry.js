'use strict';
// Retry policies of cassandra-driver 4.x, mapped onto the Rust driver's: RetryPolicy ->
// DefaultRetryPolicy (the same rules: a read timeout retried once when enough replicas
// answered without data, a write timeout retried only for idempotent batch-log writes, an
// unavailable error tried once on the next host, a broken connection retried on the next
// host only for idempotent statements), FallthroughRetryPolicy -> FallthroughRetryPolicy.
// The decisions are taken in Rust, so a user subclass's on*() methods cannot run.

const { NotSupportedError } = require('../errors');

const retryDecision = { rethrow: 0, retry: 1, ignore: 2 };

class RetryPolicy {
  onUnavailable(info, consistency) { return info.nbRetry > 0 ? this.rethrowResult() : this.retryResult(consistency, false); }
  onReadTimeout(info, consistency, received, blockFor, isDataPresent) {
    return info.nbRetry > 0 ? this.rethrowResult() : received >= blockFor && !isDataPresent ? this.retryResult(consistency) : this.rethrowResult();
  }
  onWriteTimeout(info, consistency, received, blockFor, writeType) {
    return info.nbRetry > 0 ? this.rethrowResult() : writeType === 'BATCH_LOG' ? this.retryResult(consistency) : this.rethrowResult();
  }
  onRequestError(info, consistency) { return info.executionOptions && info.executionOptions.isIdempotent ? this.retryResult(consistency, false) : this.rethrowResult(); }
  rethrowResult() { return { decision: retryDecision.rethrow }; }
  retryResult(consistency, useCurrentHost) { return { decision: retryDecision.retry, consistency, useCurrentHost: useCurrentHost !== false }; }
  _native() { return 'default'; }
}
RetryPolicy.retryDecision = retryDecision;

class FallthroughRetryPolicy extends RetryPolicy {
  onUnavailable() { return this.rethrowResult(); }
  onReadTimeout() { return this.rethrowResult(); }
  onWriteTimeout() { return this.rethrowResult(); }
  onRequestError() { return this.rethrowResult(); }
  _native() { return 'fallthrough'; }
}

/** Deprecated in cassandra-driver; the Rust driver's default already applies its rules. */
class IdempotenceAwareRetryPolicy extends RetryPolicy {
  constructor(childPolicy) { super(); this._child = childPolicy || new RetryPolicy(); }
  _native() { return describe(this._child); }
}

const KNOWN = [RetryPolicy, FallthroughRetryPolicy, IdempotenceAwareRetryPolicy];

function describe(policy) {
  if (!policy || !KNOWN.includes(policy.constructor)) {
    const name = policy && policy.constructor ? policy.constructor.name : String(policy);
    throw new NotSupportedError(`policies.retry: ${name} is not supported; retry decisions are taken by the Rust driver (use RetryPolicy or FallthroughRetryPolicy)`);
  }
  return policy._native();
}

module.exports = { RetryPolicy, FallthroughRetryPolicy, IdempotenceAwareRetryPolicy, describe };
