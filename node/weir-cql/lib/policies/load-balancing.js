'use strict';
// Load-balancing policies of cassandra-driver 4.x, mapped onto the Rust driver's
// DefaultPolicy (datacenter preference, token awareness) and its AllowListHostFilter.
// Query plans are computed in Rust; a user subclass with its own newQueryPlan() cannot run
// there, so lib/options.js refuses it with NotSupportedError.

const { NotSupportedError, ArgumentError } = require('../errors');

class LoadBalancingPolicy {
  init(client, hosts, callback) { this.client = client; this.hosts = hosts; if (callback) callback(); }
  getDistance() { return 0; }
  newQueryPlan() {
    throw new NotSupportedError(`${this.constructor.name}.newQueryPlan: query plans are computed by the Rust driver`);
  }
  getOptions() { return new Map(); }
}

class RoundRobinPolicy extends LoadBalancingPolicy {
  _native() { return { tokenAware: false, localDc: null }; }
}

class DCAwareRoundRobinPolicy extends LoadBalancingPolicy {
  constructor(localDc, usedHostsPerRemoteDc) {
    super();
    if (usedHostsPerRemoteDc) throw new NotSupportedError('DCAwareRoundRobinPolicy: usedHostsPerRemoteDc (remote datacenter failover) is not supported');
    this.localDc = localDc;
  }
  getOptions() { return new Map([['localDataCenter', this.localDc]]); }
  _native(clientDc) { return { tokenAware: false, localDc: this.localDc || clientDc }; }
}

class TokenAwarePolicy extends LoadBalancingPolicy {
  constructor(childPolicy) {
    super();
    if (!childPolicy) throw new ArgumentError('TokenAwarePolicy needs a child policy');
    this.childPolicy = childPolicy;
  }
  getOptions() { return new Map([['childPolicy', this.childPolicy.constructor.name]]); }
  _native(clientDc) { return { ...describe(this.childPolicy, clientDc), tokenAware: true }; }
}

class AllowListPolicy extends LoadBalancingPolicy {
  constructor(childPolicy, allowList) {
    super();
    if (!childPolicy) throw new ArgumentError('AllowListPolicy needs a child policy');
    if (!Array.isArray(allowList)) throw new ArgumentError('AllowListPolicy needs an array of "host:port" strings');
    this.childPolicy = childPolicy;
    this.allowList = allowList;
  }
  getOptions() { return new Map([['childPolicy', this.childPolicy.constructor.name], ['allowList', this.allowList]]); }
  _native(clientDc) {
    const child = describe(this.childPolicy, clientDc);
    const list = this.allowList.map((a) => (/:\d+$/.test(a) ? a : `${a}:9042`));
    return { ...child, allowList: child.allowList ? child.allowList.filter((a) => list.includes(a)) : list };
  }
}

class WhiteListPolicy extends AllowListPolicy {}

/** cassandra-driver 4.x's default: token aware, local datacenter only. */
class DefaultLoadBalancingPolicy extends LoadBalancingPolicy {
  constructor(options) {
    super();
    const o = typeof options === 'string' ? { localDc: options } : (options || {});
    if (o.filter) throw new NotSupportedError('DefaultLoadBalancingPolicy: a host filter function is not supported; use AllowListPolicy');
    this.localDc = o.localDc;
  }
  getOptions() { return new Map([['localDataCenter', this.localDc]]); }
  _native(clientDc) { return { tokenAware: true, localDc: this.localDc || clientDc }; }
}

const KNOWN = [RoundRobinPolicy, DCAwareRoundRobinPolicy, TokenAwarePolicy, AllowListPolicy,
  WhiteListPolicy, DefaultLoadBalancingPolicy];

/** {tokenAware, localDc, allowList?} for a built-in policy; NotSupportedError otherwise. */
function describe(policy, clientDc) {
  if (!policy || !KNOWN.includes(policy.constructor)) {
    const name = policy && policy.constructor ? policy.constructor.name : String(policy);
    throw new NotSupportedError(`policies.loadBalancing: ${name} is not supported; custom load-balancing policies cannot run in the Rust driver (use DefaultLoadBalancingPolicy, DCAwareRoundRobinPolicy, TokenAwarePolicy, AllowListPolicy or RoundRobinPolicy)`);
  }
  return policy._native(clientDc);
}

module.exports = { LoadBalancingPolicy, RoundRobinPolicy, DCAwareRoundRobinPolicy, TokenAwarePolicy,
  AllowListPolicy, WhiteListPolicy, DefaultLoadBalancingPolicy, describe };
