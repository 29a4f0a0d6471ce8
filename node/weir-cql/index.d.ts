// Type definitions for weir-cql: the cassandra-driver 4.x API it implements.
// test/unit/api.test.js checks that every runtime export is declared here.
/// <reference types="node" />
import { EventEmitter } from 'events';
import { Readable } from 'stream';
import Long = require('long');

export namespace types {
  // No `export {}` here: it would turn off the implicit export of every other member.
  type Long = import('long');
  const Long: typeof import('long');
  class Uuid {
    constructor(buffer: Buffer);
    static fromString(value: string): Uuid;
    static random(): Uuid;
    buffer: Buffer;
    getBuffer(): Buffer;
    equals(other: Uuid): boolean;
    toString(): string;
  }
  class TimeUuid extends Uuid {
    constructor(value?: Date | Buffer, ticks?: number, nodeId?: Buffer | string, clockId?: Buffer | string);
    static fromDate(date: Date, ticks?: number, nodeId?: Buffer | string, clockId?: Buffer | string): TimeUuid;
    static now(nodeId?: Buffer | string, clockId?: Buffer | string): TimeUuid;
    static min(date: Date): TimeUuid;
    static max(date: Date): TimeUuid;
    static fromString(value: string): TimeUuid;
    getDate(): Date;
    getDatePrecision(): { date: Date; ticks: number };
    getNodeId(): Buffer;
    getClockId(): Buffer;
  }
  class Integer {
    constructor(value: bigint | number | string);
    value: bigint;
    static fromNumber(n: number): Integer;
    static fromString(s: string, radix?: number): Integer;
    static fromBuffer(b: Buffer): Integer;
    static toBuffer(v: Integer): Buffer;
    toBigInt(): bigint;
    toNumber(): number;
    toString(radix?: number): string;
    equals(o: Integer): boolean;
    compare(o: Integer): number;
    isNegative(): boolean;
    isZero(): boolean;
    negate(): Integer;
    add(o: Integer): Integer;
    subtract(o: Integer): Integer;
    multiply(o: Integer): Integer;
    abs(): Integer;
  }
  class BigDecimal {
    constructor(unscaledValue: Integer | bigint | number, scale: number);
    static fromString(s: string): BigDecimal;
    static fromNumber(n: number): BigDecimal;
    static fromBuffer(b: Buffer): BigDecimal;
    static toBuffer(v: BigDecimal): Buffer;
    getUnscaledValue(): Integer;
    getScale(): number;
    toNumber(): number;
    toString(): string;
    equals(o: BigDecimal): boolean;
  }
  class InetAddress {
    constructor(buffer: Buffer);
    static fromString(s: string): InetAddress;
    buffer: Buffer;
    length: number;
    version: number;
    getBuffer(): Buffer;
    equals(o: InetAddress): boolean;
    toString(): string;
  }
  class LocalDate {
    constructor(year: number, month: number, day: number);
    static fromDate(date: Date): LocalDate;
    static fromString(s: string): LocalDate;
    static fromDays(days: number): LocalDate;
    static now(): LocalDate;
    static utcNow(): LocalDate;
    year: number;
    month: number;
    day: number;
    date: Date;
    daysSinceEpoch(): number;
    equals(o: LocalDate): boolean;
    compare(o: LocalDate): number;
    toString(): string;
  }
  class LocalTime {
    constructor(totalNanoseconds: Long | bigint | number);
    static fromString(s: string): LocalTime;
    static fromMilliseconds(ms: number, nanos?: number): LocalTime;
    static fromDate(date: Date, nanos?: number): LocalTime;
    static fromParts(hour: number, minute: number, second?: number, nanosecond?: number): LocalTime;
    static now(nanos?: number): LocalTime;
    hour: number;
    minute: number;
    second: number;
    nanosecond: number;
    getTotalNanoseconds(): Long;
    equals(o: LocalTime): boolean;
    compare(o: LocalTime): number;
    toString(): string;
  }
  class Duration {
    constructor(months: number, days: number, nanoseconds: Long | number | bigint | string);
    static fromString(s: string): Duration;
    months: number;
    days: number;
    nanoseconds: Long;
    equals(o: Duration): boolean;
    toString(): string;
  }
  class Tuple {
    constructor(...elements: any[]);
    static fromArray(elements: any[]): Tuple;
    elements: any[];
    length: number;
    get(index: number): any;
    values(): any[];
  }
  class Vector {
    constructor(elements: ArrayLike<any>, subtype?: string);
    elements: any[];
    length: number;
    subtype?: string;
    get(index: number): any;
    getSubtype(): string | undefined;
    [Symbol.iterator](): Iterator<any>;
  }
  const unset: Readonly<object>;
  const consistencies: { any: 0; one: 1; two: 2; three: 3; quorum: 4; all: 5; localQuorum: 6; eachQuorum: 7; serial: 8; localSerial: 9; localOne: 10 };
  const dataTypes: { [name: string]: any; getByName(name: string): DataType };
  const responseErrorCodes: { [name: string]: number };
  const distance: { local: 0; remote: 1; ignored: 2 };
  function timeuuid(options?: { nodeId?: Buffer | string; clockId?: Buffer | string }): string;
  function uuid(): string;

  interface DataType { code: number; info: any; customTypeName?: string }
  interface ColumnInfo { name: string; type: DataType; ksname?: string; tablename?: string }

  class Row {
    [column: string]: any;
    get(column: string | number): any;
    values(): any[];
    keys(): string[];
    forEach(callback: (value: any, name: string) => void): void;
  }

  class ResultSet implements Iterable<Row>, AsyncIterable<Row> {
    info: {
      /** host:port of the coordinator that answered. */
      queriedHost: string;
      /** Every host an attempt went to: null, or the Error its attempt failed with. */
      triedHosts: { [key: string]: any };
      speculativeExecutions: number;
      achievedConsistency: number;
      traceId?: Uuid;
      warnings?: string[];
      customPayload: any;
      isSchemaInAgreement: boolean;
    };
    columns: ColumnInfo[] | null;
    rows: Row[];
    rowLength: number;
    /** Hex string of the paging state, or null on the last page. */
    pageState: string | null;
    rawPageState?: Buffer | null;
    nextPage?: (callback?: (err: Error | null, rs?: ResultSet) => void) => Promise<ResultSet> | undefined;
    first(): Row | null;
    wasApplied(): boolean;
    isPaged(): boolean;
    getColumns(): ColumnInfo[] | null;
    [Symbol.iterator](): Iterator<Row>;
    [Symbol.asyncIterator](): AsyncIterator<Row>;
  }
}

export namespace errors {
  class DriverError extends Error { info: string }
  class ResponseError extends DriverError {
    code: number;
    consistencies?: number; required?: number; alive?: number; received?: number; blockFor?: number;
    writeType?: string; isDataPresent?: boolean; keyspace?: string; table?: string;
  }
  class NoHostAvailableError extends DriverError { innerErrors: { [hostAndPort: string]: Error & { code?: string } } }
  class OperationTimedOutError extends DriverError { host?: string }
  class ArgumentError extends DriverError {}
  class AuthenticationError extends DriverError {}
  class NotSupportedError extends DriverError {}
  class BusyConnectionError extends DriverError {}
  class VIntOutOfRangeException extends DriverError {}
}

export interface ClientOptions {
  contactPoints?: string[];
  localDataCenter?: string;
  keyspace?: string;
  credentials?: { username: string; password: string };
  authProvider?: auth.AuthProvider;
  /** Node's tls options: ca, cert, key, pfx, passphrase, rejectUnauthorized (default true here), minVersion, maxVersion, secureProtocol, ciphers. */
  sslOptions?: import('tls').ConnectionOptions | boolean;
  policies?: {
    addressResolution?: policies.addressResolution.AddressTranslator;
    loadBalancing?: policies.loadBalancing.LoadBalancingPolicy;
    reconnection?: policies.reconnection.ReconnectionPolicy;
    retry?: policies.retry.RetryPolicy;
    speculativeExecution?: policies.speculativeExecution.SpeculativeExecutionPolicy;
    timestampGeneration?: policies.timestampGeneration.TimestampGenerator | null;
  };
  pooling?: { coreConnectionsPerHost?: { [distance: number]: number }; heartBeatInterval?: number; maxRequestsPerConnection?: number; warmup?: boolean };
  socketOptions?: { connectTimeout?: number; readTimeout?: number; keepAlive?: boolean; keepAliveDelay?: number; tcpNoDelay?: boolean; coalescingThreshold?: number; defunctReadTimeoutThreshold?: number };
  protocolOptions?: { port?: number; maxSchemaAgreementWaitSeconds?: number; maxVersion?: number; noCompact?: boolean };
  queryOptions?: QueryOptions;
  encoding?: { useBigIntAsLong?: boolean; useBigIntAsVarint?: boolean; useUndefinedAsUnset?: boolean; copyBuffer?: boolean; map?: Function; set?: Function };
  profiles?: ExecutionProfile[];
  maxPrepared?: number;
  isMetadataSyncEnabled?: boolean;
  prepareOnAllHosts?: boolean;
  rePrepareOnUp?: boolean;
  refreshSchemaDelay?: number;
  applicationName?: string;
  applicationVersion?: string;
  id?: types.Uuid;
  /** Refused with NotSupportedError (kept so programs written for cassandra-driver compile). */
  promiseFactory?: any;
  metrics?: any;
  requestTracker?: any;
  cloud?: { secureConnectBundle: string | URL };
  monitorReporting?: { enabled?: boolean };
}

export class ExecutionProfile {
  constructor(name: string, options?: { consistency?: number; loadBalancing?: policies.loadBalancing.LoadBalancingPolicy; readTimeout?: number; retry?: policies.retry.RetryPolicy; serialConsistency?: number; graphOptions?: object });
  name: string;
  consistency?: number;
  loadBalancing?: policies.loadBalancing.LoadBalancingPolicy;
  readTimeout?: number;
  retry?: policies.retry.RetryPolicy;
  serialConsistency?: number;
}

export class Host extends EventEmitter {
  address: string;
  hostId: types.Uuid;
  datacenter: string;
  rack: string;
  cassandraVersion: string | null;
  tokens: string[];
  isUp(): boolean;
  canBeConsideredAsUp(): boolean;
  getCassandraVersion(): number[];
}

export class HostMap extends EventEmitter {
  readonly length: number;
  get(key: string): Host | undefined;
  keys(): string[];
  values(): Host[];
  forEach(callback: (value: Host, key: string) => void): void;
  toJSON(): object;
}

export namespace metadata {
  interface ColumnInfo { name: string; type: types.DataType; kind?: string }
  interface TableMetadata {
    keyspace: string; name: string; columns: ColumnInfo[]; columnsByName: { [name: string]: ColumnInfo };
    partitionKeys: ColumnInfo[]; clusteringKeys: ColumnInfo[]; partitioner?: string;
  }
  interface MaterializedView extends TableMetadata { tableName: string }
  interface DataTypeInfo { name: string; keyspace: string; fields: Array<{ name: string; type: types.DataType }> }
  interface QueryTrace {
    requestType: string; coordinator: types.InetAddress | null; parameters: { [key: string]: any };
    startedAt: types.Long | null; duration: number; clientAddress: string;
    events: Array<{ id: types.TimeUuid; activity: string; source: types.InetAddress | null; elapsed: number; thread: string }>;
  }
  class TokenRange { start: string; end: string; toString(): string }
  class Metadata {
    readonly clusterName: string | undefined;
    readonly keyspaces: { [name: string]: { name: string; strategy: string; strategyOptions: { [k: string]: string }; durableWrites: boolean } };
    getTable(keyspace: string, name: string): Promise<TableMetadata | null>;
    getTable(keyspace: string, name: string, callback: Callback<TableMetadata | null>): void;
    getMaterializedView(keyspace: string, name: string): Promise<MaterializedView | null>;
    getMaterializedView(keyspace: string, name: string, callback: Callback<MaterializedView | null>): void;
    getUdt(keyspace: string, name: string): Promise<DataTypeInfo | null>;
    getUdt(keyspace: string, name: string, callback: Callback<DataTypeInfo | null>): void;
    refreshKeyspaces(waitReconnect?: boolean): Promise<void>;
    refreshKeyspaces(waitReconnect: boolean, callback: Callback<void>): void;
    refreshKeyspace(name: string, waitReconnect?: boolean): Promise<void>;
    checkSchemaAgreement(): Promise<boolean>;
    checkSchemaAgreement(callback: Callback<boolean>): void;
    getReplicas(keyspace: string, token: Buffer): Host[];
    getTokenRanges(): Set<TokenRange>;
    getTokenRangesForHost(keyspace: string, host: Host | string): Set<TokenRange>;
    getTrace(traceId: types.Uuid | string, consistency?: number): Promise<QueryTrace>;
    getTrace(traceId: types.Uuid | string, callback: Callback<QueryTrace>): void;
    getTrace(traceId: types.Uuid | string, consistency: number, callback: Callback<QueryTrace>): void;
  }
}

export namespace mapping {
  interface FindDocInfo { fields?: string[]; orderBy?: { [key: string]: string }; limit?: number }
  interface InsertDocInfo { fields?: string[]; ttl?: number; ifNotExists?: boolean }
  interface UpdateDocInfo { fields?: string[]; ttl?: number; ifExists?: boolean; when?: { [key: string]: any } }
  interface RemoveDocInfo { fields?: string[]; ttl?: number; ifExists?: boolean; when?: { [key: string]: any } }
  interface ModelOptions { tables?: Array<string | { name: string; isView?: boolean }>; mappings?: TableMappings; columns?: { [key: string]: string | { name: string } }; keyspace?: string }
  interface MappingOptions { models: { [key: string]: ModelOptions } }
  interface ModelBatchItem { build(): Promise<Array<{ query: string; params: any[] }>> }
  class Result<T = any> implements Iterable<T> {
    length: number;
    pageState: string | null;
    first(): T | null;
    toArray(): T[];
    forEach(callback: (currentValue: T, index: number) => void): void;
    wasApplied(): boolean;
    [Symbol.iterator](): Iterator<T>;
  }
  class TableMappings {
    getColumnName(propName: string): string;
    getPropertyName(columnName: string): string;
    newObjectInstance(): any;
  }
  class DefaultTableMappings extends TableMappings {}
  class UnderscoreCqlToCamelCaseMappings extends TableMappings {}
  class ModelMapper<T = any> {
    name: string;
    batching: { insert(doc: T, docInfo?: InsertDocInfo): ModelBatchItem; update(doc: T, docInfo?: UpdateDocInfo): ModelBatchItem; remove(doc: T, docInfo?: RemoveDocInfo): ModelBatchItem };
    get(doc: { [key: string]: any }, docInfo?: { fields?: string[] }, executionOptions?: string | QueryOptions): Promise<null | T>;
    find(doc: { [key: string]: any }, docInfo?: FindDocInfo, executionOptions?: string | QueryOptions): Promise<Result<T>>;
    findAll(docInfo?: FindDocInfo, executionOptions?: string | QueryOptions): Promise<Result<T>>;
    insert(doc: { [key: string]: any }, docInfo?: InsertDocInfo, executionOptions?: string | QueryOptions): Promise<Result<T>>;
    update(doc: { [key: string]: any }, docInfo?: UpdateDocInfo, executionOptions?: string | QueryOptions): Promise<Result<T>>;
    remove(doc: { [key: string]: any }, docInfo?: RemoveDocInfo, executionOptions?: string | QueryOptions): Promise<Result<T>>;
    mapWithQuery(query: string, paramsHandler: (doc: any) => any[], executionOptions?: string | QueryOptions): (doc: any, executionOptions?: string | QueryOptions) => Promise<Result<T>>;
  }
  class Mapper {
    constructor(client: Client, options?: MappingOptions);
    batch(items: ModelBatchItem[], executionOptions?: string | QueryOptions): Promise<Result>;
    forModel<T = any>(name: string): ModelMapper<T>;
  }
  namespace q {
    interface QueryOperator {}
    function in_(arr: any[]): QueryOperator;
    function gt(value: any): QueryOperator;
    function gte(value: any): QueryOperator;
    function lt(value: any): QueryOperator;
    function lte(value: any): QueryOperator;
    function notEq(value: any): QueryOperator;
    function and(condition1: any, condition2: any): QueryOperator;
    function incr(value: any): QueryOperator;
    function decr(value: any): QueryOperator;
    function append(value: any): QueryOperator;
    function prepend(value: any): QueryOperator;
    function remove(value: any): QueryOperator;
  }
}

export namespace auth {
  interface Authenticator {
    initialResponse(callback: Function): void;
    evaluateChallenge(challenge: Buffer, callback: Function): void;
    onAuthenticationSuccess(token?: Buffer): void;
  }
  class Authenticator {}
  interface AuthProvider { newAuthenticator(endpoint: string, name: string): Authenticator }
  class AuthProvider {}
  class PlainTextAuthProvider implements AuthProvider {
    constructor(username: string, password: string);
    newAuthenticator(endpoint?: string, name?: string): Authenticator;
  }
  class DsePlainTextAuthProvider extends PlainTextAuthProvider {
    constructor(username: string, password: string, authorizationId?: string);
  }
}

export namespace policies {
  function defaultAddressTranslator(): addressResolution.AddressTranslator;
  function defaultLoadBalancingPolicy(localDc?: string): loadBalancing.LoadBalancingPolicy;
  function defaultReconnectionPolicy(): reconnection.ReconnectionPolicy;
  function defaultRetryPolicy(): retry.RetryPolicy;
  function defaultSpeculativeExecutionPolicy(): speculativeExecution.SpeculativeExecutionPolicy;
  function defaultTimestampGenerator(): timestampGeneration.TimestampGenerator;
  namespace addressResolution {
    class AddressTranslator { translate(address: string, port: number, callback: Function): void }
    class EC2MultiRegionTranslator extends AddressTranslator {}
  }
  namespace loadBalancing {
    abstract class LoadBalancingPolicy {
      init(client: Client, hosts: HostMap, callback: (err?: Error) => void): void;
      getDistance(host: Host): number;
      getOptions(): Map<string, object>;
    }
    class DCAwareRoundRobinPolicy extends LoadBalancingPolicy { constructor(localDc?: string) }
    class TokenAwarePolicy extends LoadBalancingPolicy { constructor(childPolicy: LoadBalancingPolicy) }
    class AllowListPolicy extends LoadBalancingPolicy { constructor(childPolicy: LoadBalancingPolicy, allowList: string[]) }
    class WhiteListPolicy extends AllowListPolicy {}
    class RoundRobinPolicy extends LoadBalancingPolicy { constructor() }
    class DefaultLoadBalancingPolicy extends LoadBalancingPolicy { constructor(options?: { localDc?: string; filter?: (host: Host) => boolean } | string) }
  }
  namespace reconnection {
    interface ReconnectionPolicy { getOptions(): Map<string, object>; newSchedule(): Iterator<number> }
    class ReconnectionPolicy {}
    class ConstantReconnectionPolicy implements ReconnectionPolicy {
      constructor(delay: number);
      getOptions(): Map<string, object>;
      newSchedule(): Iterator<number>;
    }
    class ExponentialReconnectionPolicy implements ReconnectionPolicy {
      constructor(baseDelay: number, maxDelay: number, startWithNoDelay?: boolean);
      getOptions(): Map<string, object>;
      newSchedule(): Iterator<number>;
    }
  }
  namespace retry {
    interface DecisionInfo { decision: number; consistency?: number; useCurrentHost?: boolean }
    interface OperationInfo { query: string; executionOptions: any; nbRetry: number }
    class RetryPolicy {
      onReadTimeout(info: OperationInfo, consistency: number, received: number, blockFor: number, isDataPresent: boolean): DecisionInfo;
      onRequestError(info: OperationInfo, consistency: number, err: Error): DecisionInfo;
      onUnavailable(info: OperationInfo, consistency: number, required: number, alive: boolean): DecisionInfo;
      onWriteTimeout(info: OperationInfo, consistency: number, received: number, blockFor: number, writeType: string): DecisionInfo;
      rethrowResult(): DecisionInfo;
      retryResult(consistency?: number, useCurrentHost?: boolean): DecisionInfo;
    }
    namespace RetryPolicy {
      enum retryDecision { rethrow = 0, retry = 1, ignore = 2 }
    }
    class FallthroughRetryPolicy extends RetryPolicy { constructor() }
    class IdempotenceAwareRetryPolicy extends RetryPolicy { constructor(childPolicy?: RetryPolicy) }
  }
  namespace speculativeExecution {
    class SpeculativeExecutionPolicy {
      init(client: Client): void;
      shutdown(): void;
      getOptions(): Map<string, object>;
    }
    class NoSpeculativeExecutionPolicy extends SpeculativeExecutionPolicy { constructor() }
    class ConstantSpeculativeExecutionPolicy extends SpeculativeExecutionPolicy { constructor(delay: number, maxSpeculativeExecutions: number) }
  }
  namespace timestampGeneration {
    class TimestampGenerator { next(client: Client): types.Long | number | null }
    class MonotonicTimestampGenerator extends TimestampGenerator {
      constructor(warningThreshold?: number, minLogInterval?: number);
      getDate(): number;
    }
  }
}

export interface ClientState {
  getConnectedHosts(): Host[];
  /** Throws NotSupportedError: the Rust driver does not expose per-host counts. */
  getOpenConnections(host: Host): number;
  /** Throws NotSupportedError: the Rust driver does not expose per-host counts. */
  getInFlightQueries(host: Host): number;
  /** weir-cql extras. */
  connected: boolean;
  prepared: number;
}

export interface QueryOptions {
  prepare?: boolean;
  fetchSize?: number;
  pageState?: Buffer | string;
  autoPage?: boolean;
  /** weir-cql extension: false runs the statement unpaged (all rows in one response). */
  paged?: boolean;
  consistency?: number;
  serialConsistency?: number;
  hints?: Array<string | number | types.DataType | null> | Array<Array<string | number | types.DataType | null>>;
  timestamp?: number | bigint | Long;
  isIdempotent?: boolean;
  traceQuery?: boolean;
  readTimeout?: number;
  routingKey?: Buffer | Buffer[];
  keyspace?: string;
  executionProfile?: string | ExecutionProfile;
  logged?: boolean;
  counter?: boolean;
  [other: string]: any;
}

type Params = any[] | { [name: string]: any };
type Callback<T> = (err: Error | null, result?: T) => void;

export class Client extends EventEmitter {
  constructor(options: ClientOptions);
  keyspace?: string;
  connected: boolean;
  connect(): Promise<void>;
  connect(callback: Callback<void>): void;
  execute(query: string, callback: Callback<types.ResultSet>): void;
  execute(query: string, params: Params, callback: Callback<types.ResultSet>): void;
  execute(query: string, params: Params | undefined, options: QueryOptions, callback: Callback<types.ResultSet>): void;
  execute(query: string, params?: Params, options?: QueryOptions): Promise<types.ResultSet>;
  eachRow(query: string, params: Params | undefined, options: QueryOptions, rowCallback: (n: number, row: types.Row) => void, callback?: Callback<types.ResultSet>): void;
  eachRow(query: string, params: Params | undefined, rowCallback: (n: number, row: types.Row) => void, callback?: Callback<types.ResultSet>): void;
  stream(query: string, params?: Params, options?: QueryOptions, callback?: (err?: Error | null) => void): Readable;
  batch(queries: Array<string | { query: string; params?: Params }>, options?: QueryOptions): Promise<types.ResultSet>;
  batch(queries: Array<string | { query: string; params?: Params }>, options: QueryOptions, callback: Callback<types.ResultSet>): void;
  shutdown(): Promise<void>;
  shutdown(callback: Callback<void>): void;
  /** Prepared statements held by the native session; never above maxPrepared. */
  getPreparedCount(): number;
  getState(): ClientState;
  readonly hosts: HostMap;
  metadata: metadata.Metadata;
  /** Emits 'log' (level, className, message, furtherInfo). */
  log(level: string, message: string, furtherInfo?: any): void;
  on(event: 'log', listener: (level: string, className: string, message: string, furtherInfo?: any) => void): this;
  on(event: 'hostAdd' | 'hostRemove' | 'hostUp' | 'hostDown', listener: (host: Host) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

export namespace concurrent {
  interface Options {
    concurrencyLevel?: number;
    raiseOnFirstError?: boolean;
    collectResults?: boolean;
    maxErrors?: number;
    executionProfile?: string;
    [other: string]: any;
  }
  class ResultSetGroup {
    errors: Error[];
    resultItems?: Array<types.ResultSet | Error>;
    totalExecuted: number;
  }
  function executeConcurrent(client: Client, query: string, parameters: any[][] | Readable, options?: Options): Promise<ResultSetGroup>;
  function executeConcurrent(client: Client, queries: Array<{ query: string; params: Params }>, options?: Options): Promise<ResultSetGroup>;
}

export namespace codec {
  function encode(value: any, type: types.DataType, options?: object): Buffer | null;
  function decode(buf: Buffer, offset: number, length: number, type: types.DataType, options?: object): any;
  function guessType(value: any): types.DataType | null;
}

export const version: string;
