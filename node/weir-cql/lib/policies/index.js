'use strict';
// `policies` of cassandra-driver 4.x: the same namespaces and classes. What each maps onto
// in the Rust driver is described in its module; lib/options.js applies them.

const loadBalancing = require('./load-balancing');
const retry = require('./retry');
const other = require('./other');

module.exports = {
  loadBalancing: {
    LoadBalancingPolicy: loadBalancing.LoadBalancingPolicy,
    RoundRobinPolicy: loadBalancing.RoundRobinPolicy,
    DCAwareRoundRobinPolicy: loadBalancing.DCAwareRoundRobinPolicy,
    TokenAwarePolicy: loadBalancing.TokenAwarePolicy,
    AllowListPolicy: loadBalancing.AllowListPolicy,
    WhiteListPolicy: loadBalancing.WhiteListPolicy,
    DefaultLoadBalancingPolicy: loadBalancing.DefaultLoadBalancingPolicy,
  },
  retry: {
    RetryPolicy: retry.RetryPolicy,
    FallthroughRetryPolicy: retry.FallthroughRetryPolicy,
    IdempotenceAwareRetryPolicy: retry.IdempotenceAwareRetryPolicy,
  },
  reconnection: {
    ReconnectionPolicy: other.ReconnectionPolicy,
    ConstantReconnectionPolicy: other.ConstantReconnectionPolicy,
    ExponentialReconnectionPolicy: other.ExponentialReconnectionPolicy,
  },
  speculativeExecution: {
    SpeculativeExecutionPolicy: other.SpeculativeExecutionPolicy,
    NoSpeculativeExecutionPolicy: other.NoSpeculativeExecutionPolicy,
    ConstantSpeculativeExecutionPolicy: other.ConstantSpeculativeExecutionPolicy,
  },
  timestampGeneration: {
    TimestampGenerator: other.TimestampGenerator,
    MonotonicTimestampGenerator: other.MonotonicTimestampGenerator,
  },
  addressResolution: {
    AddressTranslator: other.AddressTranslator,
    EC2MultiRegionTranslator: other.EC2MultiRegionTranslator,
  },
  defaultLoadBalancingPolicy: (localDc) => new loadBalancing.DefaultLoadBalancingPolicy(localDc),
  defaultRetryPolicy: () => new retry.RetryPolicy(),
  defaultReconnectionPolicy: () => other.DEFAULTS.reconnection,
  defaultSpeculativeExecutionPolicy: () => new other.NoSpeculativeExecutionPolicy(),
  defaultTimestampGenerator: () => new other.MonotonicTimestampGenerator(),
  defaultAddressTranslator: () => new other.AddressTranslator(),
};
