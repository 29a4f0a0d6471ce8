//! Executes decoded requests on the `scylla` session and writes their results.
//!
//! A run carries any number of requests; they are executed concurrently (up to the run's
//! concurrency limit, in order of submission) and their results are written in request
//! order into one buffer. The JS side uses this both for the statements of one event-loop
//! tick (coalesced) and for `executeConcurrent` (all parameter rows at once).

use crate::errors::{execution_error, ErrorInfo, ErrorKind};
use crate::history::{AttemptLog, HostInfo};
use crate::wire::{self, BatchItem, RawValues, Reader, RequestBody, Writer};
use scylla::client::session::Session;
use scylla::errors::IntoRowsResultError;
use scylla::response::query_result::QueryResult;
use scylla::response::{PagingState, PagingStateResponse};
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::writers::RowWriter;
use scylla::serialize::SerializationError;
use scylla::statement::batch::{Batch, BatchStatement, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::unprepared::Statement;
use scylla::statement::{Consistency, SerialConsistency};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug)]
struct CellTooLarge;
impl std::fmt::Display for CellTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a bound value is larger than 2 GiB, the CQL cell limit")
    }
}
impl std::error::Error for CellTooLarge {}

impl SerializeRow for RawValues {
    fn serialize(
        &self,
        _ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter,
    ) -> Result<(), SerializationError> {
        // The cells were validated when the request was decoded, so reads cannot fail here.
        let mut r = Reader::new(&self.cells);
        for _ in 0..self.count {
            let len = r.i32().map_err(|_| SerializationError::new(CellTooLarge))?;
            let cell = writer.make_cell_writer();
            match len {
                -1 => {
                    cell.set_null();
                }
                -2 => {
                    cell.set_unset();
                }
                n => {
                    let bytes = r
                        .bytes(n as usize)
                        .map_err(|_| SerializationError::new(CellTooLarge))?;
                    cell.set_value(bytes)
                        .map_err(|_| SerializationError::new(CellTooLarge))?;
                }
            }
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.count == 0
    }
}

pub struct Options {
    flags: u8,
    page_size: i32,
    consistency: Option<Consistency>,
    serial: Option<SerialConsistency>,
    timeout_ms: u32,
    timestamp: Option<i64>,
    paging_state: Option<Arc<[u8]>>,
}

pub enum Stmt {
    Prepared(Arc<PreparedStatement>, RawValues),
    Query(String, RawValues),
    Batch(BatchType, Vec<(BatchStatement, RawValues)>),
}

pub struct Job {
    opts: Options,
    stmt: Stmt,
}

pub type PreparedMap = HashMap<u32, Arc<PreparedStatement>>;

fn options(h: wire::RequestHeader) -> Result<Options, String> {
    let consistency = match h.consistency {
        0xFFFF => None,
        c => Some(Consistency::try_from(c).map_err(|_| format!("unknown consistency {c}"))?),
    };
    let serial = match h.serial_consistency {
        0xFFFF => None,
        c => Some(
            SerialConsistency::try_from(c as i16)
                .map_err(|_| format!("unknown serial consistency {c}"))?,
        ),
    };
    Ok(Options {
        flags: h.flags,
        page_size: h.page_size,
        consistency,
        serial,
        timeout_ms: h.timeout_ms,
        timestamp: h.timestamp,
        paging_state: h.paging_state.map(|b| Arc::from(&b[..])),
    })
}

fn lookup(prepared: &PreparedMap, handle: u32) -> Result<Arc<PreparedStatement>, String> {
    prepared.get(&handle).cloned().ok_or_else(|| {
        format!("prepared statement handle {handle} is unknown (released or from another client)")
    })
}

/// Resolves a parsed request's prepared handles into a job. The prepared-statement map is
/// only read here, so the executor never holds its lock across an await.
pub fn resolve(req: wire::Request, prepared: &PreparedMap) -> Result<Job, String> {
    let opts = options(req.header)?;
    let stmt = match req.body {
        RequestBody::Prepared(handle, values) => Stmt::Prepared(lookup(prepared, handle)?, values),
        RequestBody::Query(q, values) => Stmt::Query(q, values),
        RequestBody::Batch(batch_type, items) => {
            let batch_type = match batch_type {
                0 => BatchType::Logged,
                1 => BatchType::Unlogged,
                2 => BatchType::Counter,
                t => return Err(format!("unknown batch type {t}")),
            };
            let mut out = Vec::with_capacity(items.len());
            for (item, values) in items {
                let st = match item {
                    BatchItem::Prepared(h) => {
                        BatchStatement::PreparedStatement((*lookup(prepared, h)?).clone())
                    }
                    BatchItem::Query(q) => BatchStatement::Query(Statement::new(q)),
                };
                out.push((st, values));
            }
            Stmt::Batch(batch_type, out)
        }
    };
    Ok(Job { opts, stmt })
}

macro_rules! apply_options {
    ($s:expr, $o:expr) => {{
        if $o.page_size > 0 {
            $s.set_page_size($o.page_size);
        }
        if let Some(c) = $o.consistency {
            $s.set_consistency(c);
        }
        if $o.serial.is_some() {
            $s.set_serial_consistency($o.serial);
        }
        if $o.timestamp.is_some() {
            $s.set_timestamp($o.timestamp);
        }
        if $o.timeout_ms > 0 {
            $s.set_request_timeout(Some(Duration::from_millis($o.timeout_ms as u64)));
        }
        if $o.flags & wire::FLAG_IDEMPOTENT != 0 {
            $s.set_is_idempotent(true);
        }
        if $o.flags & wire::FLAG_TRACING != 0 {
            $s.set_tracing(true);
        }
    }};
}

type Outcome = Result<(QueryResult, Option<Arc<[u8]>>, HostInfo), ErrorInfo>;

fn paging_of(resp: PagingStateResponse) -> Option<Arc<[u8]>> {
    match resp {
        PagingStateResponse::HasMorePages { state } => state.as_bytes_slice().cloned(),
        _ => None,
    }
}

async fn execute(session: &Session, job: Job) -> Outcome {
    let o = &job.opts;
    // Every request carries its own attempt log, read below for `ResultSet.info`.
    let log = Arc::new(AttemptLog::default());
    let paged = o.flags & wire::FLAG_PAGED != 0;
    let state = match &o.paging_state {
        Some(bytes) => PagingState::new_from_raw_bytes(bytes.clone()),
        None => PagingState::start(),
    };
    let res = match job.stmt {
        Stmt::Prepared(p, values) => {
            let mut p = (*p).clone();
            apply_options!(p, o);
            p.set_history_listener(log.clone());
            if paged {
                session
                    .execute_single_page(&p, values, state)
                    .await
                    .map(|(r, s)| (r, paging_of(s)))
            } else {
                session.execute_unpaged(&p, values).await.map(|r| (r, None))
            }
        }
        Stmt::Query(q, values) => {
            let mut s = Statement::new(q);
            apply_options!(s, o);
            s.set_history_listener(log.clone());
            if paged {
                session
                    .query_single_page(s, values, state)
                    .await
                    .map(|(r, s)| (r, paging_of(s)))
            } else {
                session.query_unpaged(s, values).await.map(|r| (r, None))
            }
        }
        Stmt::Batch(batch_type, items) => {
            let mut batch = Batch::new(batch_type);
            batch.set_history_listener(log.clone());
            if let Some(c) = o.consistency {
                batch.set_consistency(c);
            }
            if o.serial.is_some() {
                batch.set_serial_consistency(o.serial);
            }
            if o.timestamp.is_some() {
                batch.set_timestamp(o.timestamp);
            }
            if o.timeout_ms > 0 {
                batch.set_request_timeout(Some(Duration::from_millis(o.timeout_ms as u64)));
            }
            let mut values = Vec::with_capacity(items.len());
            for (st, v) in items {
                batch.append_statement(st);
                values.push(v);
            }
            session.batch(&batch, values).await.map(|r| (r, None))
        }
    };
    let (result, paging) = res.map_err(|e| execution_error(&e))?;
    // The statement's consistency, else the default profile's (JS sends one unless the
    // user set `consistency: null`).
    let requested = o.consistency.unwrap_or_else(|| {
        session
            .get_default_execution_profile_handle()
            .pointee_to_builder()
            .build()
            .get_consistency()
    });
    let hosts = log.host_info(result.request_coordinator().connection_address(), requested);
    Ok((result, paging, hosts))
}

/// Writes a server result in the result layout of [`wire::write_result_head`] and
/// [`wire::write_rows`].
fn write_result(
    w: &mut Writer,
    result: QueryResult,
    paging: Option<Arc<[u8]>>,
    hosts: &HostInfo,
    skip_rows: bool,
) {
    let tracing = result.tracing_id();
    let warnings: Vec<String> = result.warnings().map(str::to_string).collect();
    let rows = match result.into_rows_result() {
        Ok(rows) => Some(rows),
        Err(IntoRowsResultError::ResultNotRows(_)) => None,
        Err(e) => {
            ErrorInfo::new(ErrorKind::Driver, format!("cannot read rows result: {e}")).write(w);
            return;
        }
    };
    let rows = rows.filter(|_| !skip_rows);
    let tracing = tracing.map(|t| *t.as_bytes());
    wire::write_result_head(
        w,
        paging.as_deref(),
        tracing.as_ref(),
        &warnings,
        Some(hosts),
        rows.is_some(),
    );
    let Some(rows) = rows else {
        return;
    };
    wire::write_rows(
        w,
        rows.column_specs().as_slice(),
        rows.rows_num() as i32,
        // The rows exactly as the server sent them (each cell `i32 BE len` + bytes, -1 for
        // null: the layout JS reads), in one copy: walking them cell by cell with
        // ColumnIterator to write the same bytes again costs ~1 us per 10-row page (perf of
        // sequential selects).
        |buf| buf.extend_from_slice(rows.raw_rows_with_metadata().raw_rows()),
    );
}

/// Runs one job and appends its encoded result to `w` (the sequential path writes straight
/// into the answer buffer).
pub async fn run_job_into(session: &Session, job: Job, w: &mut Writer) {
    let skip_rows = job.opts.flags & wire::FLAG_SKIP_ROWS != 0;
    match execute(session, job).await {
        Ok((result, paging, hosts)) => write_result(w, result, paging, &hosts, skip_rows),
        Err(e) => e.write(w),
    }
}

/// Runs one job and returns its encoded result.
pub async fn run_job(session: Arc<Session>, job: Job) -> Vec<u8> {
    let mut w = Writer::with_capacity(64);
    run_job_into(&session, job, &mut w).await;
    w.buf
}
