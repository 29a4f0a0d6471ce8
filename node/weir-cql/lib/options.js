'use strict';
// Client options of cassandra-driver 4.x -> the native ConnectOptions (src/config.rs).
// The rule: every option either reaches the Rust driver (or changes what JS sends per
// request) or throws NotSupportedError naming it at construction. Nothing is accepted and
// silently ignored. Values equal to cassandra-driver's defaults are accepted where the Rust
// driver behaves that way anyway.

const { NotSupportedError, ArgumentError } = require('./errors');
const { nativeTls } = require('./tls');
const lb = require('./policies/load-balancing');
const retry = require('./policies/retry');
const other = require('./policies/other');
const auth = require('./auth');
const { ExecutionProfile } = require('./execution-profile');

const TOP_LEVEL = new Set(['contactPoints', 'localDataCenter', 'keyspace', 'credentials', 'authProvider',
  'sslOptions', 'policies', 'queryOptions', 'pooling', 'protocolOptions', 'socketOptions', 'encoding',
  'profiles', 'maxPrepared', 'isMetadataSyncEnabled', 'prepareOnAllHosts', 'rePrepareOnUp',
  'refreshSchemaDelay', 'applicationName', 'applicationVersion', 'id', 'promiseFactory', 'metrics',
  'requestTracker', 'cloud', 'monitorReporting', 'graphOptions']);

function unsupported(path, why) { return new NotSupportedError(`${path} is not supported: ${why}`); }

/** Throws unless `value` is undefined or equal to the accepted default. */
function onlyDefault(path, value, accepted, why) {
  if (value !== undefined && value !== accepted) throw unsupported(`${path}: ${JSON.stringify(value)}`, why);
}

function checkKeys(path, obj, allowed) {
  if (obj === undefined || obj === null) return;
  if (typeof obj !== 'object') throw new ArgumentError(`${path} must be an object, got ${typeof obj}`);
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw new NotSupportedError(`${path}.${k} is not a supported option (supported: ${allowed.join(', ')})`);
  }
}

function credentialsOf(o) {
  if (o.credentials) {
    if (typeof o.credentials.username !== 'string' || typeof o.credentials.password !== 'string') {
      throw new ArgumentError('credentials must be {username: string, password: string}');
    }
    return o.credentials;
  }
  if (o.authProvider === undefined || o.authProvider === null) return null;
  const c = auth.plainCredentials(o.authProvider);
  if (!c) {
    const n = o.authProvider.constructor ? o.authProvider.constructor.name : typeof o.authProvider;
    throw new NotSupportedError(`authProvider: ${n} is not supported; authentication runs in the Rust driver, which supports PlainTextAuthProvider (SASL PLAIN) only`);
  }
  return c;
}

function poolingSettings(p) {
  checkKeys('pooling', p, ['coreConnectionsPerHost', 'heartBeatInterval', 'maxRequestsPerConnection', 'warmup']);
  const out = { heartbeatIntervalMs: 30000 };
  if (!p) return out;
  if (p.coreConnectionsPerHost !== undefined) {
    const local = p.coreConnectionsPerHost[0];
    if (!(local >= 1)) throw new ArgumentError('pooling.coreConnectionsPerHost[distance.local] must be >= 1');
    out.connectionsPerHost = local | 0;
  }
  if (p.heartBeatInterval !== undefined) out.heartbeatIntervalMs = Math.max(0, p.heartBeatInterval | 0);
  if (p.maxRequestsPerConnection !== undefined) {
    throw unsupported('pooling.maxRequestsPerConnection', 'the Rust driver allows 32768 requests per connection');
  }
  onlyDefault('pooling.warmup', p.warmup, true, 'the Rust driver always opens every pool at connect()');
  return out;
}

function socketSettings(s) {
  checkKeys('socketOptions', s, ['connectTimeout', 'readTimeout', 'keepAlive', 'keepAliveDelay', 'tcpNoDelay',
    'coalescingThreshold', 'defunctReadTimeoutThreshold']);
  const out = { tcpNoDelay: true };
  if (!s) return out;
  if (s.tcpNoDelay !== undefined) out.tcpNoDelay = !!s.tcpNoDelay;
  if (s.keepAlive !== false && s.keepAliveDelay > 0) out.tcpKeepaliveMs = s.keepAliveDelay | 0;
  onlyDefault('socketOptions.coalescingThreshold', s.coalescingThreshold, 65536, 'the Rust driver coalesces writes itself');
  onlyDefault('socketOptions.defunctReadTimeoutThreshold', s.defunctReadTimeoutThreshold, 64, 'the Rust driver detects dead connections with heartbeats');
  return out;
}

function protocolSettings(p) {
  checkKeys('protocolOptions', p, ['port', 'maxSchemaAgreementWaitSeconds', 'maxVersion', 'noCompact']);
  if (!p) return {};
  if (p.maxVersion !== undefined && p.maxVersion !== 0 && p.maxVersion !== 4) {
    throw unsupported(`protocolOptions.maxVersion: ${p.maxVersion}`, 'the Rust driver speaks protocol v4 only (use 4 or 0)');
  }
  onlyDefault('protocolOptions.noCompact', p.noCompact, false, 'the NO_COMPACT start-up option is not sent by the Rust driver');
  const out = {};
  if (p.maxSchemaAgreementWaitSeconds !== undefined) out.schemaAgreementTimeoutMs = Math.round(p.maxSchemaAgreementWaitSeconds * 1000);
  return out;
}

function policySettings(p, clientDc) {
  checkKeys('policies', p, ['loadBalancing', 'retry', 'reconnection', 'speculativeExecution', 'timestampGeneration', 'addressResolution']);
  const pol = p || {};
  const balancing = lb.describe(pol.loadBalancing || new lb.DefaultLoadBalancingPolicy(), clientDc);
  const out = { tokenAware: balancing.tokenAware, localDc: balancing.localDc, allowList: balancing.allowList,
    retry: retry.describe(pol.retry || new retry.RetryPolicy()) };
  other.checkReconnection(pol.reconnection);
  other.checkAddressTranslator(pol.addressResolution);
  const spec = pol.speculativeExecution ? other.describeSpeculative(pol.speculativeExecution) : null;
  if (spec) { out.speculativeDelayMs = spec.delayMs; out.speculativeMax = spec.max; }
  const ts = other.describeTimestamps(pol.timestampGeneration === undefined ? new other.MonotonicTimestampGenerator() : pol.timestampGeneration);
  out.timestampGenerator = typeof ts === 'string' ? ts : 'server';
  out.jsTimestampGenerator = typeof ts === 'string' ? null : ts;
  return out;
}

function profileSettings(profiles, client) {
  const map = new Map();
  if (profiles === undefined) return map;
  if (!Array.isArray(profiles)) throw new ArgumentError('profiles must be an array of ExecutionProfile');
  for (const p of profiles) {
    if (!(p instanceof ExecutionProfile)) throw new ArgumentError('profiles must contain ExecutionProfile instances');
    // Load balancing and retry are per session in the native layer: a profile may only
    // repeat the client's.
    if (p.loadBalancing !== undefined && JSON.stringify(lb.describe(p.loadBalancing, client.localDc)) !== JSON.stringify(client.balancing)) {
      throw unsupported(`ExecutionProfile '${p.name}'.loadBalancing`, 'a profile cannot use a load-balancing policy other than the client\'s');
    }
    if (p.retry !== undefined && retry.describe(p.retry) !== client.retry) {
      throw unsupported(`ExecutionProfile '${p.name}'.retry`, 'a profile cannot use a retry policy other than the client\'s');
    }
    if (p.graphOptions !== undefined) throw unsupported(`ExecutionProfile '${p.name}'.graphOptions`, 'DSE Graph is not supported');
    map.set(p.name, p);
  }
  return map;
}

/**
 * Validates `o` (already merged with defaults by the Client) and returns
 * {native: ConnectOptions fields other than contact points/keyspace, profiles, timestampGenerator}.
 */
function resolve(o) {
  for (const k of Object.keys(o)) {
    if (!TOP_LEVEL.has(k)) throw new NotSupportedError(`Client option '${k}' is not a cassandra-driver 4.x option weir-cql knows`);
  }
  for (const k of ['promiseFactory', 'metrics', 'requestTracker', 'cloud', 'graphOptions']) {
    if (o[k] !== undefined && o[k] !== null) throw unsupported(k, k === 'cloud' ? 'DataStax Astra secure bundles are not supported' : 'not implemented by weir-cql');
  }
  if (o.monitorReporting !== undefined && o.monitorReporting.enabled !== false) throw unsupported('monitorReporting', 'DSE Insights reporting is not implemented; pass {enabled: false}');
  onlyDefault('prepareOnAllHosts', o.prepareOnAllHosts, true, 'the Rust driver always prepares on every node');
  onlyDefault('rePrepareOnUp', o.rePrepareOnUp, true, 'the Rust driver re-prepares on demand when a node answers UNPREPARED');
  onlyDefault('refreshSchemaDelay', o.refreshSchemaDelay, 1000, 'the Rust driver refreshes its schema metadata after each schema change it awaits');
  checkKeys('queryOptions', o.queryOptions, ['autoPage', 'consistency', 'counter', 'executionProfile', 'fetchSize', 'hints',
    'isIdempotent', 'logged', 'pageState', 'prepare', 'readTimeout', 'routingIndexes', 'routingKey', 'routingNames',
    'serialConsistency', 'timestamp', 'traceQuery', 'captureStackTrace', 'paged', 'keyspace', 'customPayload', 'host', 'retry']);
  if (o.queryOptions) checkQueryOptions(o.queryOptions);
  checkKeys('encoding', o.encoding, ['map', 'set', 'copyBuffer', 'useUndefinedAsUnset', 'useBigIntAsLong', 'useBigIntAsVarint']);
  const creds = credentialsOf(o);
  const pol = policySettings(o.policies, o.localDataCenter);
  const native = {
    username: creds ? creds.username : undefined,
    password: creds ? creds.password : undefined,
    localDataCenter: pol.localDc || undefined,
    tls: nativeTls(o.sslOptions),
    tokenAware: pol.tokenAware,
    allowList: pol.allowList,
    retry: pol.retry,
    speculativeDelayMs: pol.speculativeDelayMs,
    speculativeMax: pol.speculativeMax,
    timestampGenerator: pol.timestampGenerator,
    fetchSchemaMetadata: o.isMetadataSyncEnabled === undefined ? undefined : !!o.isMetadataSyncEnabled,
    applicationName: o.applicationName,
    applicationVersion: o.applicationVersion,
    clientId: o.id === undefined ? undefined : String(o.id),
  };
  const pool = poolingSettings(o.pooling);
  native.connectionsPerHost = pool.connectionsPerHost;
  native.heartbeatIntervalMs = pool.heartbeatIntervalMs;
  const sock = socketSettings(o.socketOptions);
  native.tcpNoDelay = sock.tcpNoDelay;
  native.tcpKeepaliveMs = sock.tcpKeepaliveMs;
  Object.assign(native, protocolSettings(o.protocolOptions));
  const balancing = { tokenAware: pol.tokenAware, localDc: pol.localDc, allowList: pol.allowList };
  const profiles = profileSettings(o.profiles, { localDc: o.localDataCenter, balancing, retry: pol.retry });
  return { native, profiles, timestampGenerator: pol.jsTimestampGenerator };
}

const QUERY_OPTION_REFUSED = {
  customPayload: 'custom payloads are not sent by the native layer',
  host: 'pinning a statement to one host is not supported',
  keyspace: 'protocol v4 has no per-statement keyspace; qualify the table name',
};

/** Per-request check of options the native layer cannot apply. */
function checkQueryOptions(options) {
  for (const k in QUERY_OPTION_REFUSED) {
    if (options[k] !== undefined && options[k] !== null) throw unsupported(`Query option '${k}'`, QUERY_OPTION_REFUSED[k]);
  }
  if (options.retry !== undefined) throw unsupported('Query option \'retry\'', 'the retry policy is per client; set policies.retry');
  if (options.captureStackTrace) throw unsupported('Query option \'captureStackTrace\'', 'errors carry the stack of the native completion');
}

module.exports = { resolve, checkQueryOptions };
