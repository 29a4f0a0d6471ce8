//! Entry points for the round-trip tests of the boundary formats (test/unit/wire.test.js).
//! They run the same parser and writers as the execution path, on buffers a test builds,
//! without a server: JS encoder -> Rust decoder -> back, and Rust result writer -> JS decoder.

use crate::history::{AttemptLog, HostInfo};
use crate::wire::{self, RawValues, Reader, Writer};
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use scylla::errors::RequestAttemptError;
use scylla::frame::response::result::{
    CollectionType, ColumnSpec, ColumnType, NativeType, TableSpec, UserDefinedType,
};
use scylla::observability::history::HistoryListener;
use scylla::policies::retry::RetryDecision;
use scylla::statement::Consistency;
use std::sync::Arc;

/// Parses a request buffer exactly as `submit` does and writes it back, so a test can check
/// that the decoder keeps every field the JS encoder writes. A malformed buffer gives an
/// `Error` naming the offset, never a panic.
#[napi]
pub fn wire_echo_requests(requests: Buffer) -> napi::Result<Buffer> {
    let whole = bytes::Bytes::from(requests.to_vec());
    wire::read_requests(&whole)
        .map(|reqs| wire::write_requests(&reqs).into())
        .map_err(napi::Error::from_reason)
}

fn native(t: NativeType) -> ColumnType<'static> {
    ColumnType::Native(t)
}

fn collection(typ: CollectionType<'static>) -> ColumnType<'static> {
    ColumnType::Collection { frozen: true, typ }
}

/// The columns of [`wire_sample_result`]: every kind of type the spec writer handles.
fn sample_specs() -> Vec<ColumnSpec<'static>> {
    let table = || TableSpec::owned("ks".into(), "t".into());
    let address = UserDefinedType {
        name: "address".into(),
        keyspace: "ks".into(),
        field_types: vec![
            ("street".into(), native(NativeType::Text)),
            ("zip".into(), native(NativeType::Int)),
        ],
    };
    let columns: Vec<(&str, ColumnType<'static>)> = vec![
        ("id", native(NativeType::Int)),
        ("name", native(NativeType::Text)),
        (
            "tags",
            collection(CollectionType::Map(
                Box::new(native(NativeType::Text)),
                Box::new(collection(CollectionType::List(Box::new(native(
                    NativeType::BigInt,
                ))))),
            )),
        ),
        (
            "ids",
            collection(CollectionType::Set(Box::new(native(NativeType::Uuid)))),
        ),
        (
            "pair",
            ColumnType::Tuple(vec![native(NativeType::Int), native(NativeType::Text)]),
        ),
        (
            "addr",
            ColumnType::UserDefinedType {
                frozen: true,
                definition: Arc::new(address),
            },
        ),
        (
            "v",
            ColumnType::Vector {
                typ: Box::new(native(NativeType::Float)),
                dimensions: 3,
            },
        ),
    ];
    columns
        .into_iter()
        .map(|(name, typ)| ColumnSpec::owned(name.into(), typ, table()))
        .collect()
}

/// Writes a rows result through the execution path's writers: the columns of
/// [`sample_specs`], `row_count` rows whose cells are `cells` (request-values format as the
/// JS codec writes them: `u16 n`, then `i32 LE len` + bytes, -1 null), the paging state,
/// tracing id and warnings given.
#[napi]
pub fn wire_sample_result(
    paging_state: Option<Buffer>,
    tracing_id: Option<Buffer>,
    warnings: Vec<String>,
    row_count: u32,
    cells: Buffer,
    queried_host: Option<String>,
) -> napi::Result<Buffer> {
    let err = napi::Error::from_reason;
    let specs = sample_specs();
    let whole = bytes::Bytes::from(cells.to_vec());
    let values = RawValues::read(&mut Reader::new(&whole), &whole).map_err(err)?;
    if values.count as usize != row_count as usize * specs.len() {
        return Err(err(format!(
            "{} cells given for {row_count} rows of {} columns",
            values.count,
            specs.len()
        )));
    }
    let cells = wire::cells_of(&values).map_err(err)?;
    let tracing: Option<[u8; 16]> = match &tracing_id {
        Some(t) => Some(
            t.as_ref()
                .try_into()
                .map_err(|_| err("a tracing id has 16 bytes".into()))?,
        ),
        None => None,
    };
    // With a queried host: a sample history driven through the attempt log itself, one
    // failed attempt on 127.0.0.9 whose retry asks for ONE, then the queried host answering,
    // the request having been sent at QUORUM.
    let hosts = match queried_host {
        Some(q) => {
            let addr: std::net::SocketAddr = q
                .parse()
                .map_err(|e| err(format!("queried host '{q}': {e}")))?;
            Some(sample_history(addr))
        }
        None => None,
    };
    let mut w = Writer::with_capacity(256);
    wire::write_result_head(
        &mut w,
        paging_state.as_deref(),
        tracing.as_ref(),
        &warnings,
        hosts.as_ref(),
        true,
    );
    wire::write_rows(&mut w, &specs, row_count as i32, |buf| {
        for cell in cells {
            wire::push_cell(buf, cell);
        }
    });
    Ok(w.buf.into())
}

fn sample_history(answered_by: std::net::SocketAddr) -> HostInfo {
    let log = AttemptLog::default();
    let request = log.log_request_start();
    let fiber = log.log_new_speculative_fiber(request);
    let failed = log.log_attempt_start(request, None, ([127, 0, 0, 9], 9042).into());
    log.log_attempt_error(
        failed,
        &RequestAttemptError::UnableToAllocStreamId,
        &RetryDecision::RetryNextTarget(Some(Consistency::One)),
    );
    let ok = log.log_attempt_start(request, Some(fiber), answered_by);
    log.log_attempt_success(ok);
    log.log_request_success(request);
    log.host_info(answered_by, Consistency::Quorum)
}

/// Test hook for `client.on('log')`: emits `n` DEBUG events of target `weir_cql::log_test`
/// through `tracing`, as fast as a loop can, so a test can watch the rate limit of
/// src/log.rs drop what exceeds it.
#[napi]
pub fn log_test_burst(n: u32) {
    for i in 0..n {
        tracing::debug!(target: "weir_cql::log_test", "burst event {i}");
    }
}
