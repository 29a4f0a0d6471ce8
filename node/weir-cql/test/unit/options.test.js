'use strict';
// Every client option either reaches the native ConnectOptions (checked here on the
// resolved values; the integration tests observe the effects on a server) or throws
// NotSupportedError naming it when the Client is constructed.
const test = require('node:test');
const assert = require('node:assert/strict');
const tls = require('node:tls');
const cql = require('../..');
const { resolve } = require('../../lib/options');

const { policies, auth, errors, ExecutionProfile, types } = cql;
const base = { contactPoints: ['127.0.0.1'], localDataCenter: 'dc1' };
const client = (extra) => new cql.Client({ ...base, ...extra });
const nativeOf = (extra) => client(extra)._resolved.native;

function refuses(extra, pattern) {
  assert.throws(() => client(extra), (e) => {
    assert.ok(e instanceof errors.NotSupportedError, `expected NotSupportedError, got ${e.constructor.name}: ${e.message}`);
    assert.match(e.message, pattern);
    return true;
  });
}

test('defaults: token-aware in the local DC, default retry, monotonic timestamps, heartbeats', () => {
  const n = nativeOf({});
  assert.equal(n.localDataCenter, 'dc1');
  assert.equal(n.tokenAware, true);
  assert.equal(n.retry, 'default');
  assert.equal(n.timestampGenerator, 'monotonic');
  assert.equal(n.heartbeatIntervalMs, 30000);
  assert.equal(n.tcpNoDelay, true);
  assert.equal(n.tls, undefined);
});

test('load-balancing policies map onto the Rust DefaultPolicy and host filter', () => {
  const lb = policies.loadBalancing;
  assert.deepEqual([nativeOf({ policies: { loadBalancing: new lb.RoundRobinPolicy() } })].map((n) => [n.tokenAware, n.localDataCenter]), [[false, undefined]]);
  let n = nativeOf({ policies: { loadBalancing: new lb.DCAwareRoundRobinPolicy('dc2') } });
  assert.deepEqual([n.tokenAware, n.localDataCenter], [false, 'dc2']);
  n = nativeOf({ policies: { loadBalancing: new lb.TokenAwarePolicy(new lb.DCAwareRoundRobinPolicy()) } });
  assert.deepEqual([n.tokenAware, n.localDataCenter], [true, 'dc1']);
  n = nativeOf({ policies: { loadBalancing: new lb.AllowListPolicy(new lb.TokenAwarePolicy(new lb.RoundRobinPolicy()), ['127.0.0.2', '127.0.0.3:9043']) } });
  assert.deepEqual(n.allowList, ['127.0.0.2:9042', '127.0.0.3:9043']);
  assert.equal(n.tokenAware, true);
  class Mine extends lb.LoadBalancingPolicy { newQueryPlan() {} }
  refuses({ policies: { loadBalancing: new Mine() } }, /policies\.loadBalancing: Mine/);
  assert.throws(() => new lb.DefaultLoadBalancingPolicy({ filter: () => true }), errors.NotSupportedError);
});

test('retry, speculative execution and timestamp policies map or are refused', () => {
  assert.equal(nativeOf({ policies: { retry: new policies.retry.FallthroughRetryPolicy() } }).retry, 'fallthrough');
  assert.equal(nativeOf({ policies: { retry: new policies.retry.IdempotenceAwareRetryPolicy(new policies.retry.RetryPolicy()) } }).retry, 'default');
  class MyRetry extends policies.retry.RetryPolicy { onReadTimeout() { return this.retryResult(); } }
  refuses({ policies: { retry: new MyRetry() } }, /policies\.retry: MyRetry/);
  const spec = nativeOf({ policies: { speculativeExecution: new policies.speculativeExecution.ConstantSpeculativeExecutionPolicy(40, 2) } });
  assert.deepEqual([spec.speculativeDelayMs, spec.speculativeMax], [40, 2]);
  assert.equal(nativeOf({ policies: { speculativeExecution: new policies.speculativeExecution.NoSpeculativeExecutionPolicy() } }).speculativeDelayMs, undefined);
  assert.equal(nativeOf({ policies: { timestampGeneration: null } }).timestampGenerator, 'server');
  const gen = { next: () => 42 };
  const c = client({ policies: { timestampGeneration: gen } });
  assert.equal(c._resolved.native.timestampGenerator, 'server');
  assert.equal(c._execOptions({}).timestamp, 42, 'a JS generator stamps each request');
  refuses({ policies: { reconnection: new policies.reconnection.ConstantReconnectionPolicy(100) } }, /policies\.reconnection: ConstantReconnectionPolicy/);
  assert.doesNotThrow(() => client({ policies: { reconnection: policies.defaultReconnectionPolicy() } }));
  refuses({ policies: { addressResolution: new policies.addressResolution.EC2MultiRegionTranslator() } }, /addressResolution: EC2MultiRegionTranslator/);
});

test('auth: PlainTextAuthProvider reaches the native layer, a custom provider is refused', () => {
  const n = nativeOf({ authProvider: new auth.PlainTextAuthProvider('u1', 'p1') });
  assert.deepEqual([n.username, n.password], ['u1', 'p1']);
  assert.deepEqual([nativeOf({ credentials: { username: 'a', password: 'b' } }).username], ['a']);
  class Custom extends auth.AuthProvider { newAuthenticator() { return new auth.Authenticator(); } }
  refuses({ authProvider: new Custom() }, /authProvider: Custom/);
});

test('pooling, socket and protocol options map or are refused', () => {
  const n = nativeOf({ pooling: { coreConnectionsPerHost: { [types.distance.local]: 3, [types.distance.remote]: 1 }, heartBeatInterval: 0 },
    socketOptions: { tcpNoDelay: false, keepAlive: true, keepAliveDelay: 5000 }, protocolOptions: { maxSchemaAgreementWaitSeconds: 2, maxVersion: 4 },
    isMetadataSyncEnabled: false, applicationName: 'app', applicationVersion: '1.2', id: types.Uuid.random() });
  assert.deepEqual([n.connectionsPerHost, n.heartbeatIntervalMs, n.tcpNoDelay, n.tcpKeepaliveMs, n.schemaAgreementTimeoutMs, n.fetchSchemaMetadata, n.applicationName, n.applicationVersion],
    [3, 0, false, 5000, 2000, false, 'app', '1.2']);
  assert.match(n.clientId, /^[0-9a-f-]{36}$/);
  refuses({ pooling: { maxRequestsPerConnection: 100 } }, /maxRequestsPerConnection/);
  refuses({ pooling: { warmup: false } }, /pooling\.warmup/);
  refuses({ socketOptions: { coalescingThreshold: 1000 } }, /coalescingThreshold/);
  refuses({ protocolOptions: { maxVersion: 5 } }, /maxVersion/);
  refuses({ protocolOptions: { noCompact: true } }, /noCompact/);
  refuses({ prepareOnAllHosts: false }, /prepareOnAllHosts/);
  refuses({ promiseFactory: (h) => new Promise(h) }, /promiseFactory/);
  refuses({ cloud: { secureConnectBundle: 'x.zip' } }, /cloud/);
  refuses({ pooling: { nope: 1 } }, /pooling\.nope/);
  refuses({ contactPoint: ['x'] }, /'contactPoint'/);
  refuses({ queryOptions: { keyspace: 'other' } }, /keyspace/);
  refuses({ queryOptions: { fetchsize: 10 } }, /queryOptions\.fetchsize/);
  refuses({ encoding: { useBigInt: true } }, /encoding\.useBigInt/);
});

test('sslOptions map to native TLS settings; unknown keys and custom identity checks are refused', () => {
  const n = nativeOf({ sslOptions: { ca: ['-----BEGIN CERTIFICATE-----'], rejectUnauthorized: false, secureProtocol: 'TLSv1_2_method', checkServerIdentity: tls.checkServerIdentity } });
  assert.ok(Buffer.isBuffer(n.tls.ca[0]));
  assert.equal(n.tls.rejectUnauthorized, false);
  assert.deepEqual([n.tls.minVersion, n.tls.maxVersion], ['TLSv1.2', 'TLSv1.2']);
  assert.equal(nativeOf({ sslOptions: {} }).tls.rejectUnauthorized, true, 'verification is on by default');
  refuses({ sslOptions: { checkServerIdentity: () => undefined } }, /checkServerIdentity/);
  refuses({ sslOptions: { servername: 'db.example' } }, /sslOptions\.servername/);
});

test('execution profiles apply consistency and readTimeout per request', () => {
  const c = client({ profiles: [new ExecutionProfile('default', { consistency: types.consistencies.one }),
    new ExecutionProfile('slow', { consistency: types.consistencies.quorum, readTimeout: 30000 })] });
  assert.equal(c._execOptions({}).consistency, types.consistencies.one);
  const o = c._execOptions({ executionProfile: 'slow' });
  assert.deepEqual([o.consistency, o.readTimeout], [types.consistencies.quorum, 30000]);
  assert.equal(c._execOptions({ executionProfile: 'slow', consistency: types.consistencies.all }).consistency, types.consistencies.all);
  assert.throws(() => c._execOptions({ executionProfile: 'nope' }), /Execution profile 'nope' not found/);
  refuses({ profiles: [new ExecutionProfile('x', { retry: new policies.retry.FallthroughRetryPolicy() })] }, /retry/);
  assert.doesNotThrow(() => client({ profiles: [new ExecutionProfile('x', { loadBalancing: new policies.loadBalancing.DefaultLoadBalancingPolicy() })] }));
});

test('query options the native layer cannot apply are refused per request', () => {
  const c = client({});
  assert.throws(() => c._execOptions({ keyspace: 'other' }), errors.NotSupportedError);
  assert.throws(() => c._execOptions({ customPayload: {} }), errors.NotSupportedError);
  assert.equal(typeof resolve, 'function');
});
