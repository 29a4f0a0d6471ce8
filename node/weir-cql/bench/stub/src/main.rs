//! weir-cql-stub: a CQL native-protocol v4 server on loopback for measuring CQL clients
//! without a database behind them, and for testing how they survive a misbehaving server.
//!
//! It answers OPTIONS, STARTUP, REGISTER, QUERY, PREPARE, EXECUTE and BATCH from canned
//! bytes: the system tables a driver reads while connecting (system.local with one row,
//! system.peers / peers_v2 and the system_schema tables empty, with the column types Apache
//! Cassandra 5.0 gives them), and any other table as `(id uuid, val int, payload blob)`.
//! A SELECT returns `LIMIT n` rows if it has a LIMIT, one row if it has a WHERE clause,
//! else `--rows` rows (default 10); every row is built once, when the statement is first
//! seen, so a request costs one frame parse and one copy. Writes, DDL and BATCH return
//! VOID. Result paging is not implemented: a page holds every row whatever the page size.
//! Requests that arrive in one read are answered with one write.
//!
//! Misbehaviour is asked for in the statement text (a comment is enough), so a client's
//! own prepared statements and queries trigger it:
//!   stub:silent        never answer this request
//!   stub:delay=MS      answer after MS milliseconds
//!   stub:mute=MS       answer nothing at all (any request, any connection) for MS ms
//!   stub:drop          write half of the answer frame, then close the connection
//!   stub:close         close the connection without answering
//!   stub:malformed     answer a RESULT whose rows metadata claims 2^31-1 columns and ends
//!   stub:bad-opcode    answer a frame with an opcode the protocol does not define
//!   stub:oversized     answer a header declaring a 2 GiB body, send 1 MiB of it, close
//!   stub:error=CODE    answer ERROR with that code (hex or decimal; codes without extra
//!                      fields: 0x0000 0x000A 0x1001 0x1002 0x1003 0x2000 0x2100 0x2200 0x2300)
//!
//! usage: weir-cql-stub [--listen 127.0.0.1:9042] [--rows N] [--payload-bytes N]
//!                      [--max-request-bytes N] [--verbose]
//! Prints `listening <address>` on stdout once it accepts connections (port 0 picks one).
//! --verbose prints each statement the first time it is seen, on stderr.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};

const HEADER_BYTES: usize = 9;
const OP_ERROR: u8 = 0x00;
const OP_STARTUP: u8 = 0x01;
const OP_READY: u8 = 0x02;
const OP_OPTIONS: u8 = 0x05;
const OP_SUPPORTED: u8 = 0x06;
const OP_QUERY: u8 = 0x07;
const OP_RESULT: u8 = 0x08;
const OP_PREPARE: u8 = 0x09;
const OP_EXECUTE: u8 = 0x0A;
const OP_REGISTER: u8 = 0x0B;
const OP_BATCH: u8 = 0x0D;

const ERR_PROTOCOL: u32 = 0x000A;
const ERR_INVALID: u32 = 0x2200;
const ERR_UNPREPARED: u32 = 0x2500;

/// Codes whose ERROR body is just the code and a message (others carry extra fields).
const PLAIN_ERROR_CODES: [u32; 9] = [
    0x0000, 0x000A, 0x1001, 0x1002, 0x1003, 0x2000, 0x2100, 0x2200, 0x2300,
];

#[derive(Clone, Debug)]
enum Ty {
    Native(u16),
    List(Box<Ty>),
    Set(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
}

const BLOB: u16 = 0x03;
const BOOLEAN: u16 = 0x04;
const DOUBLE: u16 = 0x07;
const INT: u16 = 0x09;
const UUID: u16 = 0x0C;
const TEXT: u16 = 0x0D;
const INET: u16 = 0x10;

fn n(code: u16) -> Ty {
    Ty::Native(code)
}
fn text_list() -> Ty {
    Ty::List(Box::new(n(TEXT)))
}
fn text_set() -> Ty {
    Ty::Set(Box::new(n(TEXT)))
}
fn text_map() -> Ty {
    Ty::Map(Box::new(n(TEXT)), Box::new(n(TEXT)))
}

fn write_type(out: &mut Vec<u8>, t: &Ty) {
    match t {
        Ty::Native(c) => out.extend_from_slice(&c.to_be_bytes()),
        Ty::List(e) => {
            out.extend_from_slice(&0x20u16.to_be_bytes());
            write_type(out, e);
        }
        Ty::Set(e) => {
            out.extend_from_slice(&0x22u16.to_be_bytes());
            write_type(out, e);
        }
        Ty::Map(k, v) => {
            out.extend_from_slice(&0x21u16.to_be_bytes());
            write_type(out, k);
            write_type(out, v);
        }
    }
}

type Columns = Vec<(&'static str, Ty)>;

/// The system tables drivers read while connecting, with Apache Cassandra 5.0's columns.
fn system_table(keyspace: &str, table: &str) -> Option<Columns> {
    let table_options = || -> Columns {
        vec![
            ("additional_write_policy", n(TEXT)),
            ("allow_auto_snapshot", n(BOOLEAN)),
            ("bloom_filter_fp_chance", n(DOUBLE)),
            ("caching", text_map()),
            ("cdc", n(BOOLEAN)),
            ("comment", n(TEXT)),
            ("compaction", text_map()),
            ("compression", text_map()),
            ("crc_check_chance", n(DOUBLE)),
            ("default_time_to_live", n(INT)),
            ("extensions", Ty::Map(Box::new(n(TEXT)), Box::new(n(BLOB)))),
            ("gc_grace_seconds", n(INT)),
            ("id", n(UUID)),
            ("incremental_backups", n(BOOLEAN)),
            ("max_index_interval", n(INT)),
            ("memtable", n(TEXT)),
            ("memtable_flush_period_in_ms", n(INT)),
            ("min_index_interval", n(INT)),
            ("read_repair", n(TEXT)),
            ("speculative_retry", n(TEXT)),
        ]
    };
    let named = |first: Columns, rest: Columns| first.into_iter().chain(rest).collect::<Columns>();
    Some(match (keyspace, table) {
        ("system", "local") => vec![
            ("key", n(TEXT)),
            ("bootstrapped", n(TEXT)),
            ("broadcast_address", n(INET)),
            ("broadcast_port", n(INT)),
            ("cluster_name", n(TEXT)),
            ("cql_version", n(TEXT)),
            ("data_center", n(TEXT)),
            ("gossip_generation", n(INT)),
            ("host_id", n(UUID)),
            ("listen_address", n(INET)),
            ("listen_port", n(INT)),
            ("native_protocol_version", n(TEXT)),
            ("partitioner", n(TEXT)),
            ("rack", n(TEXT)),
            ("release_version", n(TEXT)),
            ("rpc_address", n(INET)),
            ("rpc_port", n(INT)),
            ("schema_version", n(UUID)),
            ("tokens", text_set()),
            (
                "truncated_at",
                Ty::Map(Box::new(n(UUID)), Box::new(n(BLOB))),
            ),
        ],
        ("system", "peers") => vec![
            ("peer", n(INET)),
            ("data_center", n(TEXT)),
            ("host_id", n(UUID)),
            ("preferred_ip", n(INET)),
            ("rack", n(TEXT)),
            ("release_version", n(TEXT)),
            ("rpc_address", n(INET)),
            ("schema_version", n(UUID)),
            ("tokens", text_set()),
        ],
        ("system", "peers_v2") => vec![
            ("peer", n(INET)),
            ("peer_port", n(INT)),
            ("data_center", n(TEXT)),
            ("host_id", n(UUID)),
            ("native_address", n(INET)),
            ("native_port", n(INT)),
            ("preferred_ip", n(INET)),
            ("preferred_port", n(INT)),
            ("rack", n(TEXT)),
            ("release_version", n(TEXT)),
            ("schema_version", n(UUID)),
            ("tokens", text_set()),
        ],
        ("system_schema", "keyspaces") => vec![
            ("keyspace_name", n(TEXT)),
            ("durable_writes", n(BOOLEAN)),
            ("replication", text_map()),
        ],
        ("system_schema", "tables") => named(
            vec![
                ("keyspace_name", n(TEXT)),
                ("table_name", n(TEXT)),
                ("flags", text_set()),
            ],
            table_options(),
        ),
        ("system_schema", "views") => named(
            vec![
                ("keyspace_name", n(TEXT)),
                ("view_name", n(TEXT)),
                ("base_table_id", n(UUID)),
                ("base_table_name", n(TEXT)),
                ("include_all_columns", n(BOOLEAN)),
                ("where_clause", n(TEXT)),
            ],
            table_options(),
        ),
        ("system_schema", "columns") => vec![
            ("keyspace_name", n(TEXT)),
            ("table_name", n(TEXT)),
            ("column_name", n(TEXT)),
            ("clustering_order", n(TEXT)),
            ("column_name_bytes", n(BLOB)),
            ("kind", n(TEXT)),
            ("position", n(INT)),
            ("type", n(TEXT)),
        ],
        ("system_schema", "types") => vec![
            ("keyspace_name", n(TEXT)),
            ("type_name", n(TEXT)),
            ("field_names", text_list()),
            ("field_types", text_list()),
        ],
        ("system_schema", "functions") => vec![
            ("keyspace_name", n(TEXT)),
            ("function_name", n(TEXT)),
            ("argument_types", text_list()),
            ("argument_names", text_list()),
            ("body", n(TEXT)),
            ("called_on_null_input", n(BOOLEAN)),
            ("language", n(TEXT)),
            ("return_type", n(TEXT)),
        ],
        ("system_schema", "aggregates") => vec![
            ("keyspace_name", n(TEXT)),
            ("aggregate_name", n(TEXT)),
            ("argument_types", text_list()),
            ("final_func", n(TEXT)),
            ("initcond", n(TEXT)),
            ("return_type", n(TEXT)),
            ("state_func", n(TEXT)),
            ("state_type", n(TEXT)),
        ],
        ("system_schema", "indexes") => vec![
            ("keyspace_name", n(TEXT)),
            ("table_name", n(TEXT)),
            ("index_name", n(TEXT)),
            ("kind", n(TEXT)),
            ("options", text_map()),
        ],
        ("system_schema", "triggers") => vec![
            ("keyspace_name", n(TEXT)),
            ("table_name", n(TEXT)),
            ("trigger_name", n(TEXT)),
            ("options", text_map()),
        ],
        ("system_schema", "dropped_columns") => vec![
            ("keyspace_name", n(TEXT)),
            ("table_name", n(TEXT)),
            ("column_name", n(TEXT)),
            ("dropped_time", n(0x0B)),
            ("kind", n(TEXT)),
            ("type", n(TEXT)),
        ],
        _ => return None,
    })
}

fn user_table() -> Columns {
    vec![("id", n(UUID)), ("val", n(INT)), ("payload", n(BLOB))]
}

const HOST_ID: [u8; 16] = [
    0x57, 0x65, 0x69, 0x72, 0x2d, 0x63, 0x71, 0x6c, 0x2d, 0x73, 0x74, 0x75, 0x62, 0x00, 0x00, 0x01,
];
const SCHEMA_VERSION: [u8; 16] = [
    0x57, 0x65, 0x69, 0x72, 0x2d, 0x63, 0x71, 0x6c, 0x2d, 0x73, 0x63, 0x68, 0x65, 0x6d, 0x61, 0x01,
];

fn text_set_cell(items: &[&str]) -> Vec<u8> {
    let mut v = (items.len() as i32).to_be_bytes().to_vec();
    for s in items {
        v.extend_from_slice(&(s.len() as i32).to_be_bytes());
        v.extend_from_slice(s.as_bytes());
    }
    v
}

/// system.local's one row, by column; None is a null cell.
fn local_cell(column: &str, ip: [u8; 4], port: u16) -> Option<Vec<u8>> {
    let text = |s: &str| Some(s.as_bytes().to_vec());
    match column {
        "key" => text("local"),
        "bootstrapped" => text("COMPLETED"),
        "broadcast_address" | "listen_address" | "rpc_address" => Some(ip.to_vec()),
        "broadcast_port" | "listen_port" => Some(7000i32.to_be_bytes().to_vec()),
        "rpc_port" => Some(i32::from(port).to_be_bytes().to_vec()),
        "cluster_name" => text("weir-cql-stub"),
        "cql_version" => text("3.4.7"),
        "data_center" => text("datacenter1"),
        "rack" => text("rack1"),
        "gossip_generation" => Some(1i32.to_be_bytes().to_vec()),
        "host_id" => Some(HOST_ID.to_vec()),
        "schema_version" => Some(SCHEMA_VERSION.to_vec()),
        "native_protocol_version" => text("4"),
        "partitioner" => text("org.apache.cassandra.dht.Murmur3Partitioner"),
        "release_version" => text("5.0.9"),
        "tokens" => Some(text_set_cell(&["0"])),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    Silent,
    Delay(u64),
    Mute(u64),
    Drop,
    Close,
    Malformed,
    BadOpcode,
    Oversized,
    Error(u32),
}

fn fault_of(query: &str) -> Fault {
    let Some(at) = query.find("stub:") else {
        return Fault::None;
    };
    let rest = &query[at + 5..];
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '=' | '_'))
        .collect();
    let (name, value) = word.split_once('=').unwrap_or((word.as_str(), ""));
    let number = || -> Option<u64> {
        match value.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => value.parse().ok(),
        }
    };
    match name {
        "silent" => Fault::Silent,
        "delay" => Fault::Delay(number().unwrap_or(100)),
        "mute" => Fault::Mute(number().unwrap_or(1000)),
        "drop" => Fault::Drop,
        "close" => Fault::Close,
        "malformed" => Fault::Malformed,
        "bad-opcode" => Fault::BadOpcode,
        "oversized" => Fault::Oversized,
        "error" => match number().map(|c| c as u32) {
            Some(c) if PLAIN_ERROR_CODES.contains(&c) => Fault::Error(c),
            _ => Fault::Error(0x0000),
        },
        _ => Fault::None,
    }
}

/// What a statement gets back, built once per distinct statement text.
struct Statement {
    fault: Fault,
    /// RESULT body with full metadata (or VOID, SET_KEYSPACE, ERROR body when `error`).
    body: Vec<u8>,
    /// RESULT body without the rows metadata, for EXECUTE with skip_metadata.
    body_no_metadata: Vec<u8>,
    /// Some(code): `body` is an ERROR body.
    error: Option<u32>,
    /// PREPARED body (prepared id, bind and result metadata), when it can be prepared.
    prepared: Option<Vec<u8>>,
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn error_body(code: u32, message: &str) -> Vec<u8> {
    let mut b = code.to_be_bytes().to_vec();
    put_string(&mut b, message);
    b
}

fn void_body() -> Vec<u8> {
    1i32.to_be_bytes().to_vec()
}

fn column_specs(out: &mut Vec<u8>, keyspace: &str, table: &str, cols: &[(String, Ty)]) {
    out.extend_from_slice(&1i32.to_be_bytes()); // global_tables_spec
    out.extend_from_slice(&(cols.len() as i32).to_be_bytes());
    put_string(out, keyspace);
    put_string(out, table);
    for (name, t) in cols {
        put_string(out, name);
        write_type(out, t);
    }
}

/// A statement's shape, from its text: enough of CQL for what drivers and benchmarks send.
struct Parsed {
    verb: String,
    keyspace: String,
    table: String,
    /// SELECT: the selected columns (`*` expanded); other verbs: empty.
    selected: Vec<String>,
    /// The column each `?` binds, in order (`IN ?` binds a list of it).
    binds: Vec<(String, bool)>,
    limit: Option<usize>,
    has_where: bool,
}

fn ident(s: &str) -> String {
    s.trim().trim_matches('"').to_ascii_lowercase()
}

fn parse(query: &str, session_keyspace: &str) -> Parsed {
    // Drop comments, keep the rest as written; tokens are compared lowercased.
    let mut clean = String::with_capacity(query.len());
    let mut rest = query;
    while let Some(i) = rest.find("/*") {
        clean.push_str(&rest[..i]);
        clean.push(' ');
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    clean.push_str(rest);
    let lower = clean.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let verb = words.first().map_or(String::new(), |w| w.to_string());
    let after = |kw: &str| -> Option<usize> { words.iter().position(|w| *w == kw) };
    let qualified = |i: Option<usize>| -> (String, String) {
        let raw = i.and_then(|i| words.get(i + 1)).copied().unwrap_or("");
        let raw = raw.split('(').next().unwrap_or("").trim_end_matches(';');
        match raw.split_once('.') {
            Some((k, t)) => (ident(k), ident(t)),
            None => (session_keyspace.to_string(), ident(raw)),
        }
    };
    let (keyspace, table) = match verb.as_str() {
        "select" | "delete" => qualified(after("from")),
        "insert" => qualified(after("into")),
        "update" => qualified(Some(0)),
        _ => (String::new(), String::new()),
    };
    let mut selected = Vec::new();
    if verb == "select" {
        if let Some(from) = lower.find(" from ") {
            for c in lower["select".len()..from].split(',') {
                selected.push(ident(c));
            }
        }
    }
    let mut binds = Vec::new();
    if verb == "insert" {
        if let (Some(open), Some(close)) = (lower.find('('), lower.find(')')) {
            let cols: Vec<String> = lower[open + 1..close].split(',').map(ident).collect();
            let values = lower[close..]
                .find('(')
                .map_or("", |i| &lower[close + i + 1..]);
            let values = values.split(')').next().unwrap_or("");
            for (i, v) in values.split(',').enumerate() {
                if v.trim() == "?" {
                    binds.push((cols.get(i).cloned().unwrap_or_default(), false));
                }
            }
        }
    } else {
        // `col = ?`, `col IN ?`, `col < ?`: the bound column is the identifier before.
        let tokens: Vec<&str> = lower
            .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
            .filter(|t| !t.is_empty())
            .collect();
        for (i, t) in tokens.iter().enumerate() {
            if *t == "?" && i >= 2 {
                let op = tokens[i - 1];
                let list = op == "in";
                binds.push((ident(tokens[i - 2]), list));
            } else if t.ends_with('?') && t.len() > 1 {
                // `col=?`
                let col = t.trim_end_matches('?').trim_end_matches(['=', '<', '>']);
                binds.push((ident(col), false));
            }
        }
    }
    let limit = after("limit")
        .and_then(|i| words.get(i + 1))
        .and_then(|w| w.trim_end_matches(';').parse().ok());
    Parsed {
        verb,
        keyspace,
        table,
        selected,
        binds,
        limit,
        has_where: after("where").is_some(),
    }
}

struct Server {
    ip: [u8; 4],
    port: u16,
    default_rows: usize,
    payload_bytes: usize,
    verbose: bool,
    by_text: Mutex<HashMap<(String, String), Arc<Statement>>>,
    by_id: Mutex<HashMap<Vec<u8>, Arc<Statement>>>,
    /// While `Instant::now()` is before this (as ms since `start`), nothing is answered.
    muted_until_ms: AtomicU64,
    start: Instant,
}

fn prepared_id(text: &str) -> Vec<u8> {
    // FNV-1a, twice with different bases: 16 stable bytes per statement text.
    let mut out = Vec::with_capacity(16);
    for basis in [0xcbf29ce484222325u64, 0x84222325cbf29ce4] {
        let mut h = basis;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
        out.extend_from_slice(&h.to_be_bytes());
    }
    out
}

impl Server {
    fn statement(&self, text: &str, keyspace: &str) -> Arc<Statement> {
        let key = (text.to_string(), keyspace.to_string());
        if let Some(s) = self.by_text.lock().expect("statement map").get(&key) {
            return s.clone();
        }
        let s = Arc::new(self.build(text, keyspace));
        if self.verbose {
            eprintln!(
                "stub: statement {text:?}: {}",
                match s.error {
                    Some(c) => format!("error 0x{c:04x}"),
                    None => "ok".to_string(),
                }
            );
        }
        self.by_text
            .lock()
            .expect("statement map")
            .insert(key, s.clone());
        if s.prepared.is_some() {
            self.by_id
                .lock()
                .expect("prepared map")
                .insert(prepared_id(text), s.clone());
        }
        s
    }

    fn build(&self, text: &str, session_keyspace: &str) -> Statement {
        let fault = fault_of(text);
        let p = parse(text, session_keyspace);
        let fail = |code: u32, msg: String| Statement {
            fault,
            body: error_body(code, &msg),
            body_no_metadata: Vec::new(),
            error: Some(code),
            prepared: None,
        };
        if let Fault::Error(code) = fault {
            return fail(
                code,
                format!("stub: error 0x{code:04x} asked for by the statement"),
            );
        }
        let system = p.keyspace.starts_with("system");
        let table_cols = if system {
            match system_table(&p.keyspace, &p.table) {
                Some(c) => c,
                None => {
                    return fail(
                        ERR_INVALID,
                        format!("unconfigured table {}.{}", p.keyspace, p.table),
                    )
                }
            }
        } else {
            user_table()
        };
        let type_of = |name: &str| {
            table_cols
                .iter()
                .find(|(c, _)| *c == name)
                .map(|(_, t)| t.clone())
        };
        let mut bind_cols = Vec::new();
        for (name, list) in &p.binds {
            let Some(t) = type_of(name) else {
                return fail(
                    ERR_INVALID,
                    format!("Undefined column name {name} in {text}"),
                );
            };
            bind_cols.push((name.clone(), if *list { Ty::List(Box::new(t)) } else { t }));
        }
        let mut result_cols: Vec<(String, Ty)> = Vec::new();
        let (body, body_no_metadata) = match p.verb.as_str() {
            "select" if !p.table.is_empty() => {
                for name in &p.selected {
                    if name == "*" {
                        result_cols
                            .extend(table_cols.iter().map(|(c, t)| (c.to_string(), t.clone())));
                    } else if let Some(t) = type_of(name) {
                        result_cols.push((name.clone(), t));
                    } else {
                        return fail(
                            ERR_INVALID,
                            format!("Undefined column name {name} in {text}"),
                        );
                    }
                }
                let rows = if system {
                    usize::from(p.keyspace == "system" && p.table == "local")
                } else {
                    p.limit
                        .unwrap_or(if p.has_where { 1 } else { self.default_rows })
                };
                let mut cells = Vec::new();
                cells.extend_from_slice(&(rows as i32).to_be_bytes());
                for i in 0..rows {
                    for (name, _) in &result_cols {
                        let cell = if system {
                            local_cell(name, self.ip, self.port)
                        } else {
                            match name.as_str() {
                                "id" => {
                                    let mut id = HOST_ID;
                                    id[8..].copy_from_slice(&(i as u64).to_be_bytes());
                                    Some(id.to_vec())
                                }
                                "val" => Some((i as i32).to_be_bytes().to_vec()),
                                _ => Some(vec![0xA5; self.payload_bytes]),
                            }
                        };
                        match cell {
                            Some(c) => {
                                cells.extend_from_slice(&(c.len() as i32).to_be_bytes());
                                cells.extend_from_slice(&c);
                            }
                            None => cells.extend_from_slice(&(-1i32).to_be_bytes()),
                        }
                    }
                }
                let mut full = 2i32.to_be_bytes().to_vec();
                column_specs(&mut full, &p.keyspace, &p.table, &result_cols);
                full.extend_from_slice(&cells);
                let mut bare = 2i32.to_be_bytes().to_vec();
                bare.extend_from_slice(&4i32.to_be_bytes()); // no_metadata
                bare.extend_from_slice(&(result_cols.len() as i32).to_be_bytes());
                bare.extend_from_slice(&cells);
                (full, bare)
            }
            "use" => {
                let ks = text.split_whitespace().nth(1).unwrap_or("");
                let mut b = 3i32.to_be_bytes().to_vec();
                put_string(&mut b, &ident(ks.trim_end_matches(';')));
                (b.clone(), b)
            }
            _ => (void_body(), void_body()),
        };
        let prepared = if matches!(p.verb.as_str(), "select" | "insert" | "update" | "delete") {
            let mut b = 4i32.to_be_bytes().to_vec();
            let id = prepared_id(text);
            b.extend_from_slice(&(id.len() as u16).to_be_bytes());
            b.extend_from_slice(&id);
            // Bind metadata: flags (global spec), count, pk count + indexes, spec.
            b.extend_from_slice(&1i32.to_be_bytes());
            b.extend_from_slice(&(bind_cols.len() as i32).to_be_bytes());
            let pk: Vec<u16> = bind_cols
                .iter()
                .position(|(c, t)| c == "id" && matches!(t, Ty::Native(_)))
                .map(|i| i as u16)
                .into_iter()
                .collect();
            b.extend_from_slice(&(pk.len() as i32).to_be_bytes());
            for i in pk {
                b.extend_from_slice(&i.to_be_bytes());
            }
            put_string(&mut b, &p.keyspace);
            put_string(&mut b, &p.table);
            for (name, t) in &bind_cols {
                put_string(&mut b, name);
                write_type(&mut b, t);
            }
            if result_cols.is_empty() {
                b.extend_from_slice(&4i32.to_be_bytes());
                b.extend_from_slice(&0i32.to_be_bytes());
            } else {
                column_specs(&mut b, &p.keyspace, &p.table, &result_cols);
            }
            Some(b)
        } else {
            None
        };
        Statement {
            fault,
            body,
            body_no_metadata,
            error: None,
            prepared,
        }
    }

    fn muted(&self) -> bool {
        self.start.elapsed().as_millis() as u64 <= self.muted_until_ms.load(Ordering::Relaxed)
            && self.muted_until_ms.load(Ordering::Relaxed) != 0
    }
}

fn frame(out: &mut Vec<u8>, stream: i16, opcode: u8, body: &[u8]) {
    out.push(0x84);
    out.push(0);
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(opcode);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(body);
}

/// A bounds-checked cursor over a request body.
struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(len).filter(|e| *e <= self.b.len())?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|s| u16::from_be_bytes([s[0], s[1]]))
    }
    fn i32(&mut self) -> Option<i32> {
        self.take(4)
            .map(|s| i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn long_string(&mut self) -> Option<&'a str> {
        let len = usize::try_from(self.i32()?).ok()?;
        std::str::from_utf8(self.take(len)?).ok()
    }
    fn short_bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::from(self.u16()?);
        self.take(len)
    }
    fn skip_values(&mut self) -> Option<()> {
        for _ in 0..self.u16()? {
            let len = self.i32()?;
            if len > 0 {
                self.take(len as usize)?;
            }
        }
        Some(())
    }
    fn skip_bytes_map(&mut self) -> Option<()> {
        for _ in 0..self.u16()? {
            self.short_bytes()?; // the key is a [string]: same layout
            let len = self.i32()?;
            if len > 0 {
                self.take(len as usize)?;
            }
        }
        Some(())
    }
}

/// What one request asks the connection to do besides (or instead of) answering.
enum Action {
    Answer,
    Later(u64, Vec<u8>),
    DropAfter(Vec<u8>),
    Close,
    Raw(Vec<u8>),
}

struct Connection {
    server: Arc<Server>,
    keyspace: String,
}

impl Connection {
    /// Appends the answer to one request frame to `out` (or returns what to do instead).
    fn handle(
        &mut self,
        version: u8,
        flags: u8,
        stream: i16,
        opcode: u8,
        body: &[u8],
        out: &mut Vec<u8>,
    ) -> Action {
        let server = self.server.clone();
        if version != 0x04 {
            let msg = format!(
                "Invalid or unsupported protocol version ({version}); supported versions are (4/v4)"
            );
            frame(out, stream, OP_ERROR, &error_body(ERR_PROTOCOL, &msg));
            return Action::Answer;
        }
        if flags & 0x01 != 0 {
            frame(
                out,
                stream,
                OP_ERROR,
                &error_body(ERR_PROTOCOL, "compression was not negotiated"),
            );
            return Action::Answer;
        }
        let mut c = Cursor { b: body, pos: 0 };
        if flags & 0x04 != 0 && c.skip_bytes_map().is_none() {
            frame(
                out,
                stream,
                OP_ERROR,
                &error_body(ERR_PROTOCOL, "truncated custom payload"),
            );
            return Action::Answer;
        }
        let malformed = |out: &mut Vec<u8>| {
            frame(
                out,
                stream,
                OP_ERROR,
                &error_body(ERR_PROTOCOL, "malformed request body"),
            );
            Action::Answer
        };
        let statement: Arc<Statement>;
        let mut skip_metadata = false;
        match opcode {
            OP_OPTIONS => {
                let mut b = Vec::new();
                b.extend_from_slice(&3u16.to_be_bytes());
                put_string(&mut b, "CQL_VERSION");
                b.extend_from_slice(&1u16.to_be_bytes());
                put_string(&mut b, "3.4.7");
                put_string(&mut b, "COMPRESSION");
                b.extend_from_slice(&0u16.to_be_bytes());
                put_string(&mut b, "PROTOCOL_VERSIONS");
                b.extend_from_slice(&1u16.to_be_bytes());
                put_string(&mut b, "4/v4");
                frame(out, stream, OP_SUPPORTED, &b);
                return Action::Answer;
            }
            OP_STARTUP | OP_REGISTER => {
                frame(out, stream, OP_READY, &[]);
                return Action::Answer;
            }
            OP_QUERY => {
                let Some(text) = c.long_string() else {
                    return malformed(out);
                };
                statement = server.statement(text, &self.keyspace);
                if text
                    .trim_start()
                    .get(..3)
                    .is_some_and(|w| w.eq_ignore_ascii_case("use"))
                    && statement.error.is_none()
                {
                    let ks = text.split_whitespace().nth(1).unwrap_or("");
                    self.keyspace = ident(ks.trim_end_matches(';'));
                }
            }
            OP_PREPARE => {
                let Some(text) = c.long_string() else {
                    return malformed(out);
                };
                let s = server.statement(text, &self.keyspace);
                match (&s.prepared, s.error) {
                    (_, Some(_)) => frame(out, stream, OP_ERROR, &s.body),
                    (Some(p), None) => frame(out, stream, OP_RESULT, p),
                    (None, None) => frame(
                        out,
                        stream,
                        OP_ERROR,
                        &error_body(
                            ERR_INVALID,
                            "the stub prepares SELECT, INSERT, UPDATE and DELETE only",
                        ),
                    ),
                }
                return Action::Answer;
            }
            OP_EXECUTE => {
                let Some(id) = c.short_bytes() else {
                    return malformed(out);
                };
                let found = server.by_id.lock().expect("prepared map").get(id).cloned();
                let Some(s) = found else {
                    let mut b = error_body(ERR_UNPREPARED, "Prepared query with ID not found");
                    b.extend_from_slice(&(id.len() as u16).to_be_bytes());
                    b.extend_from_slice(id);
                    frame(out, stream, OP_ERROR, &b);
                    return Action::Answer;
                };
                let (Some(_consistency), Some(qflags)) = (c.u16(), c.u8()) else {
                    return malformed(out);
                };
                skip_metadata = qflags & 0x02 != 0;
                statement = s;
            }
            OP_BATCH => {
                let (Some(_kind), Some(count)) = (c.u8(), c.u16()) else {
                    return malformed(out);
                };
                let mut first: Option<Arc<Statement>> = None;
                for _ in 0..count {
                    let s = match c.u8() {
                        Some(0) => match c.long_string() {
                            Some(t) => server.statement(t, &self.keyspace),
                            None => return malformed(out),
                        },
                        Some(1) => match c.short_bytes().and_then(|id| {
                            server.by_id.lock().expect("prepared map").get(id).cloned()
                        }) {
                            Some(s) => s,
                            None => {
                                frame(
                                    out,
                                    stream,
                                    OP_ERROR,
                                    &error_body(
                                        ERR_INVALID,
                                        "a batch names an unknown prepared id",
                                    ),
                                );
                                return Action::Answer;
                            }
                        },
                        _ => return malformed(out),
                    };
                    if c.skip_values().is_none() {
                        return malformed(out);
                    }
                    if first.is_none() || s.fault != Fault::None {
                        first = Some(s);
                    }
                }
                let s = first.unwrap_or_else(|| server.statement("BEGIN BATCH APPLY BATCH", ""));
                // A batch answers VOID unless a statement in it asked for a fault or failed.
                statement = Arc::new(Statement {
                    fault: s.fault,
                    body: if s.error.is_some() {
                        s.body.clone()
                    } else {
                        void_body()
                    },
                    body_no_metadata: void_body(),
                    error: s.error,
                    prepared: None,
                });
            }
            _ => {
                frame(
                    out,
                    stream,
                    OP_ERROR,
                    &error_body(ERR_PROTOCOL, &format!("unknown opcode 0x{opcode:02x}")),
                );
                return Action::Answer;
            }
        }
        let (op, body) = match statement.error {
            Some(_) => (OP_ERROR, &statement.body),
            None if skip_metadata => (OP_RESULT, &statement.body_no_metadata),
            None => (OP_RESULT, &statement.body),
        };
        match statement.fault {
            Fault::None | Fault::Error(_) => {
                frame(out, stream, op, body);
                Action::Answer
            }
            Fault::Silent => Action::Answer,
            Fault::Mute(ms) => {
                let until = server.start.elapsed().as_millis() as u64 + ms;
                server.muted_until_ms.store(until, Ordering::Relaxed);
                Action::Answer
            }
            Fault::Delay(ms) => {
                let mut later = Vec::new();
                frame(&mut later, stream, op, body);
                Action::Later(ms, later)
            }
            Fault::Drop => {
                let mut whole = Vec::new();
                frame(&mut whole, stream, op, body);
                // At least the header and one body byte, never the whole frame.
                let half = (whole.len() / 2).clamp(HEADER_BYTES + 1, whole.len() - 1);
                whole.truncate(half);
                Action::DropAfter(whole)
            }
            Fault::Close => Action::Close,
            Fault::Malformed => {
                let mut b = 2i32.to_be_bytes().to_vec();
                b.extend_from_slice(&0i32.to_be_bytes());
                b.extend_from_slice(&i32::MAX.to_be_bytes());
                frame(out, stream, OP_RESULT, &b);
                Action::Answer
            }
            Fault::BadOpcode => {
                frame(out, stream, 0x7E, &[]);
                Action::Answer
            }
            Fault::Oversized => {
                let mut raw = vec![0x84, 0];
                raw.extend_from_slice(&stream.to_be_bytes());
                raw.push(OP_RESULT);
                raw.extend_from_slice(&(1u32 << 31).to_be_bytes());
                raw.resize(HEADER_BYTES + (1 << 20), 0);
                Action::Raw(raw)
            }
        }
    }
}

async fn write_locked(w: &tokio::sync::Mutex<OwnedWriteHalf>, bytes: &[u8]) -> std::io::Result<()> {
    w.lock().await.write_all(bytes).await
}

async fn serve(server: Arc<Server>, socket: TcpStream, max_request_bytes: usize) {
    let _ = socket.set_nodelay(true);
    let (mut reader, writer) = socket.into_split();
    let writer = Arc::new(tokio::sync::Mutex::new(writer));
    let mut conn = Connection {
        server: server.clone(),
        keyspace: String::new(),
    };
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let got = match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(k) => k,
        };
        buf.extend_from_slice(&chunk[..got]);
        let mut at = 0;
        let mut end: Option<Action> = None;
        while buf.len() - at >= HEADER_BYTES {
            let h = &buf[at..at + HEADER_BYTES];
            let len = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) as usize;
            let stream = i16::from_be_bytes([h[2], h[3]]);
            if len > max_request_bytes {
                let msg = format!("request frame of {len} bytes is over the stub's limit of {max_request_bytes} bytes");
                frame(&mut out, stream, OP_ERROR, &error_body(ERR_PROTOCOL, &msg));
                end = Some(Action::Close);
                break;
            }
            if buf.len() - at < HEADER_BYTES + len {
                break;
            }
            let (version, flags, opcode) = (h[0], h[1], h[4]);
            let body_start = at + HEADER_BYTES;
            let body = buf[body_start..body_start + len].to_vec();
            at = body_start + len;
            if server.muted() {
                continue;
            }
            match conn.handle(version & 0x7F, flags, stream, opcode, &body, &mut out) {
                Action::Answer => {}
                Action::Later(ms, bytes) => {
                    let w = writer.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        let _ = write_locked(&w, &bytes).await;
                    });
                }
                Action::Raw(bytes) => {
                    out.extend_from_slice(&bytes);
                    end = Some(Action::Close);
                    break;
                }
                other => {
                    end = Some(other);
                    break;
                }
            }
        }
        buf.drain(..at);
        if !out.is_empty() {
            if write_locked(&writer, &out).await.is_err() {
                return;
            }
            out.clear();
        }
        match end {
            None => {}
            Some(Action::DropAfter(partial)) => {
                let mut w = writer.lock().await;
                let _ = w.write_all(&partial).await;
                let _ = w.shutdown().await;
                return;
            }
            Some(_) => {
                let _ = writer.lock().await.shutdown().await;
                return;
            }
        }
    }
}

fn usage(msg: &str) -> ! {
    eprintln!("weir-cql-stub: {msg}");
    eprintln!("usage: weir-cql-stub [--listen 127.0.0.1:9042] [--rows N] [--payload-bytes N] [--max-request-bytes N] [--verbose]");
    std::process::exit(2);
}

fn main() {
    let mut listen = "127.0.0.1:9042".to_string();
    let mut rows = 10usize;
    let mut payload_bytes = 0usize;
    let mut max_request_bytes = 256usize << 20;
    let mut verbose = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| usage(&format!("{name} needs a value")))
        };
        let mut number = |name: &str| -> usize {
            let v = value(name);
            v.parse()
                .unwrap_or_else(|_| usage(&format!("{name} takes a whole number, got {v:?}")))
        };
        match a.as_str() {
            "--listen" => listen = value("--listen"),
            "--rows" => rows = number("--rows"),
            "--payload-bytes" => payload_bytes = number("--payload-bytes"),
            "--max-request-bytes" => max_request_bytes = number("--max-request-bytes"),
            "--verbose" => verbose = true,
            "-h" | "--help" => usage("a CQL v4 stub server"),
            other => usage(&format!("unknown argument {other:?}")),
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| usage(&format!("cannot start the runtime: {e}")));
    rt.block_on(async move {
        let listener = match TcpListener::bind(&listen).await {
            Ok(l) => l,
            Err(e) => usage(&format!("cannot listen on {listen}: {e}")),
        };
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| usage(&format!("no local address: {e}")));
        let ip = match addr.ip() {
            std::net::IpAddr::V4(v4) => v4.octets(),
            std::net::IpAddr::V6(_) => usage("listen on an IPv4 address"),
        };
        let server = Arc::new(Server {
            ip,
            port: addr.port(),
            default_rows: rows,
            payload_bytes,
            verbose,
            by_text: Mutex::new(HashMap::new()),
            by_id: Mutex::new(HashMap::new()),
            muted_until_ms: AtomicU64::new(0),
            start: Instant::now(),
        });
        println!("listening {addr}");
        let _ = std::io::stdout().flush();
        loop {
            match listener.accept().await {
                Ok((socket, _)) => {
                    tokio::spawn(serve(server.clone(), socket, max_request_bytes));
                }
                Err(e) => {
                    eprintln!("weir-cql-stub: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
    });
}
