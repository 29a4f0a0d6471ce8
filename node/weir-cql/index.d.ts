// Type definitions for weir-cql: the cassandra-driver 4.x API it implements.
// test/unit/api.test.js checks that every runtime export is declared here.
/// <reference types="node" />
import { EventEmitter } from 'events';
import { Readable } from 'stream';
import Long = require('long');

export namespace types {
  export { Long };
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
    info: { traceId?: Uuid; warnings?: string[]; [key: string]: any };
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
  class NoHostAvailableError extends DriverError { innerErrors: { [hostAndPort: string]: any } }
  class OperationTimedOutError extends DriverError { host?: string }
  class ArgumentError extends DriverError {}
  class AuthenticationError extends DriverError {}
  class NotSupportedError extends DriverError {}
  class BusyConnectionError extends DriverError {}
  class VIntOutOfRangeException extends DriverError {}
}

export interface ClientOptions {
  contactPoints: string[];
  localDataCenter?: string;
  keyspace?: string;
  credentials?: { username: string; password: string };
  authProvider?: { username: string; password: string };
  socketOptions?: { connectTimeout?: number; readTimeout?: number };
  protocolOptions?: { port?: number };
  queryOptions?: QueryOptions;
  encoding?: { useBigIntAsLong?: boolean; useBigIntAsVarint?: boolean; useUndefinedAsUnset?: boolean; map?: MapConstructor; set?: SetConstructor };
  maxPrepared?: number;
  [other: string]: any;
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
  executionProfile?: string;
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
  execute(query: string, params?: Params, options?: QueryOptions): Promise<types.ResultSet>;
  execute(query: string, params: Params | undefined, options: QueryOptions, callback: Callback<types.ResultSet>): void;
  execute(query: string, params: Params, callback: Callback<types.ResultSet>): void;
  execute(query: string, callback: Callback<types.ResultSet>): void;
  eachRow(query: string, params: Params | undefined, options: QueryOptions, rowCallback: (n: number, row: types.Row) => void, callback?: Callback<types.ResultSet>): void;
  eachRow(query: string, params: Params | undefined, rowCallback: (n: number, row: types.Row) => void, callback?: Callback<types.ResultSet>): void;
  stream(query: string, params?: Params, options?: QueryOptions, callback?: (err?: Error | null) => void): Readable;
  batch(queries: Array<string | { query: string; params?: Params }>, options?: QueryOptions): Promise<types.ResultSet>;
  batch(queries: Array<string | { query: string; params?: Params }>, options: QueryOptions, callback: Callback<types.ResultSet>): void;
  shutdown(): Promise<void>;
  shutdown(callback: Callback<void>): void;
  /** Prepared statements held by the native session; never above maxPrepared. */
  getPreparedCount(): number;
  getState(): { connected: boolean; prepared: number };
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
