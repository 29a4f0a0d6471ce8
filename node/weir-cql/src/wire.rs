//! The byte formats that cross the Node.js boundary.
//!
//! Every crossing carries one `Buffer` each way. Framing integers are little-endian (cheap
//! to read with `Buffer.readInt32LE`); cell values inside are CQL wire bytes, produced and
//! consumed by the JavaScript codec, so Rust never builds a JS object per row or per value.
//!
//! Request batch: `u32 count`, then per request:
//! `u8 kind` (0 prepared handle, 1 query text, 2 batch), `u8 flags`, `i32 page_size`,
//! `u16 consistency`, `u16 serial_consistency` (0xFFFF = driver default), `u32 timeout_ms`
//! (0 = default), `[i64 timestamp]` if FLAG_TIMESTAMP, `[u32 len + paging state]` if
//! FLAG_PAGING_STATE, then the statement (`u32 handle` | `u32 len + utf8`) and its values
//! (`u16 n`, each `i32 len` with -1 null, -2 unset, then the bytes). A batch carries
//! `u8 batch_type`, `u16 n`, and n (`u8 sub_kind`, statement, values).
//!
//! Response: per request in order, `u8 status` (0 ok, 1 error) and the body written by
//! [`write_result`] or `errors::write_error`.

use crate::history::{with_addr_text, HostInfo};
use bytes::Bytes;
use scylla::frame::response::result::{CollectionType, ColumnSpec, ColumnType, NativeType};

pub const FLAG_PAGED: u8 = 1;
pub const FLAG_PAGING_STATE: u8 = 2;
pub const FLAG_SKIP_ROWS: u8 = 4;
pub const FLAG_TIMESTAMP: u8 = 8;
pub const FLAG_TRACING: u8 = 16;
pub const FLAG_IDEMPOTENT: u8 = 32;

/// A cursor over a request buffer; every read is bounds-checked so a malformed buffer
/// becomes an error, never a panic.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes between `start` and the current position.
    pub fn slice_from(&self, start: usize) -> &'a [u8] {
        &self.buf[start.min(self.pos)..self.pos]
    }

    pub fn bytes(&mut self, len: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|end| *end <= self.buf.len());
        match end {
            Some(end) => {
                let out = &self.buf[self.pos..end];
                self.pos = end;
                Ok(out)
            }
            None => Err(format!(
                "request buffer truncated: need {len} bytes at offset {}, have {}",
                self.pos,
                self.buf.len()
            )),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }
    pub fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_le_bytes(self.array()?))
    }
    pub fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    pub fn blob(&mut self) -> Result<&'a [u8], String> {
        let len = self.u32()? as usize;
        self.bytes(len)
    }
    pub fn string(&mut self) -> Result<&'a str, String> {
        let raw = self.blob()?;
        std::str::from_utf8(raw).map_err(|e| format!("request string is not UTF-8: {e}"))
    }
}

/// Appends little-endian framing to an output buffer.
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn with_capacity(bytes: usize) -> Self {
        Writer {
            buf: Vec::with_capacity(bytes),
        }
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn blob(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.buf.extend_from_slice(v);
    }
    /// Short strings (names) use a u16 length.
    pub fn short_str(&mut self, v: &str) {
        let bytes = v.as_bytes();
        let len = bytes.len().min(u16::MAX as usize);
        self.u16(len as u16);
        self.buf.extend_from_slice(&bytes[..len]);
    }
}

/// Vector has no native protocol code; it travels as this private code and the JS side
/// presents it as the custom type `vector`, like cassandra-driver 4.8.
const VECTOR_CODE: u16 = 0x00fe;

fn native_code(t: &NativeType) -> u16 {
    match t {
        NativeType::Ascii => 0x0001,
        NativeType::BigInt => 0x0002,
        NativeType::Blob => 0x0003,
        NativeType::Boolean => 0x0004,
        NativeType::Counter => 0x0005,
        NativeType::Decimal => 0x0006,
        NativeType::Double => 0x0007,
        NativeType::Float => 0x0008,
        NativeType::Int => 0x0009,
        NativeType::Timestamp => 0x000b,
        NativeType::Uuid => 0x000c,
        NativeType::Text => 0x000d,
        NativeType::Varint => 0x000e,
        NativeType::Timeuuid => 0x000f,
        NativeType::Inet => 0x0010,
        NativeType::Date => 0x0011,
        NativeType::Time => 0x0012,
        NativeType::SmallInt => 0x0013,
        NativeType::TinyInt => 0x0014,
        NativeType::Duration => 0x0015,
        // NativeType is non-exhaustive; an unknown type is surfaced as a blob.
        _ => 0x0003,
    }
}

/// Writes a column type in the protocol's [option] layout (u16 code, then sub-types).
pub fn write_type(w: &mut Writer, t: &ColumnType<'_>) {
    match t {
        ColumnType::Native(n) => w.u16(native_code(n)),
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(e) => {
                w.u16(0x0020);
                write_type(w, e);
            }
            CollectionType::Map(k, v) => {
                w.u16(0x0021);
                write_type(w, k);
                write_type(w, v);
            }
            CollectionType::Set(e) => {
                w.u16(0x0022);
                write_type(w, e);
            }
            _ => w.u16(0x0003),
        },
        ColumnType::Vector { typ, dimensions } => {
            w.u16(VECTOR_CODE);
            write_type(w, typ);
            w.u16(*dimensions);
        }
        ColumnType::UserDefinedType { definition, .. } => {
            w.u16(0x0030);
            w.short_str(&definition.keyspace);
            w.short_str(&definition.name);
            w.u16(definition.field_types.len() as u16);
            for (name, field) in &definition.field_types {
                w.short_str(name);
                write_type(w, field);
            }
        }
        ColumnType::Tuple(items) => {
            w.u16(0x0031);
            w.u16(items.len() as u16);
            for item in items {
                write_type(w, item);
            }
        }
        _ => w.u16(0x0003),
    }
}

/// Column specs: `u16 n`, then per column keyspace, table, name and type.
pub fn write_specs(w: &mut Writer, specs: &[ColumnSpec<'_>]) {
    w.u16(specs.len() as u16);
    for spec in specs {
        w.short_str(spec.table_spec().ks_name());
        w.short_str(spec.table_spec().table_name());
        w.short_str(spec.name());
        write_type(w, spec.typ());
    }
}

/// Bound values already encoded to CQL cells by the JS codec: `count` cells of `i32 len` +
/// bytes (little-endian length; -1 null, -2 unset), validated when parsed, so serializing
/// them only copies bytes.
#[derive(Clone)]
pub struct RawValues {
    pub count: u16,
    pub cells: Bytes,
}

impl RawValues {
    pub fn read(r: &mut Reader<'_>, whole: &Bytes) -> Result<Self, String> {
        let count = r.u16()?;
        // Walk the cells once to find the region's end and validate every length.
        let start = r.position();
        for _ in 0..count {
            let len = r.i32()?;
            if len >= 0 {
                r.bytes(len as usize)?;
            } else if len != -1 && len != -2 {
                return Err(format!(
                    "invalid cell length {len} at offset {}",
                    r.position() - 4
                ));
            }
        }
        Ok(RawValues {
            count,
            cells: whole.slice_ref(r.slice_from(start)),
        })
    }

    fn write(&self, w: &mut Writer) {
        w.u16(self.count);
        w.buf.extend_from_slice(&self.cells);
    }
}

/// The header every request carries (see the module doc for the layout). Consistencies
/// stay protocol codes here; the executor maps them.
pub struct RequestHeader {
    pub flags: u8,
    pub page_size: i32,
    pub consistency: u16,
    pub serial_consistency: u16,
    pub timeout_ms: u32,
    pub timestamp: Option<i64>,
    pub paging_state: Option<Bytes>,
}

/// A statement of a batch: a prepared handle or query text.
pub enum BatchItem {
    Prepared(u32),
    Query(String),
}

pub enum RequestBody {
    Prepared(u32, RawValues),
    Query(String, RawValues),
    Batch(u8, Vec<(BatchItem, RawValues)>),
}

/// One request as it crossed the boundary, before prepared handles are resolved.
pub struct Request {
    pub header: RequestHeader,
    pub body: RequestBody,
}

const KIND_PREPARED: u8 = 0;
const KIND_QUERY: u8 = 1;
const KIND_BATCH: u8 = 2;

impl Request {
    /// Parses one request; `whole` is the buffer `r` reads, so values are sliced, not copied.
    pub fn read(r: &mut Reader<'_>, whole: &Bytes) -> Result<Self, String> {
        let kind = r.u8()?;
        let flags = r.u8()?;
        let page_size = r.i32()?;
        let consistency = r.u16()?;
        let serial_consistency = r.u16()?;
        let timeout_ms = r.u32()?;
        let timestamp = if flags & FLAG_TIMESTAMP != 0 {
            Some(r.i64()?)
        } else {
            None
        };
        let paging_state = if flags & FLAG_PAGING_STATE != 0 {
            Some(whole.slice_ref(r.blob()?))
        } else {
            None
        };
        let header = RequestHeader {
            flags,
            page_size,
            consistency,
            serial_consistency,
            timeout_ms,
            timestamp,
            paging_state,
        };
        let body = match kind {
            KIND_PREPARED => RequestBody::Prepared(r.u32()?, RawValues::read(r, whole)?),
            KIND_QUERY => {
                let q = r.string()?.to_string();
                RequestBody::Query(q, RawValues::read(r, whole)?)
            }
            KIND_BATCH => {
                let batch_type = r.u8()?;
                let n = r.u16()?;
                let mut items = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    let item = match r.u8()? {
                        KIND_PREPARED => BatchItem::Prepared(r.u32()?),
                        KIND_QUERY => BatchItem::Query(r.string()?.to_string()),
                        k => return Err(format!("unknown batch item kind {k}")),
                    };
                    items.push((item, RawValues::read(r, whole)?));
                }
                RequestBody::Batch(batch_type, items)
            }
            k => return Err(format!("unknown request kind {k}")),
        };
        Ok(Request { header, body })
    }

    /// Writes the request back in the format it was read from (the round-trip test's
    /// check that the decoder keeps every field the JS encoder writes).
    pub fn write(&self, w: &mut Writer) {
        let h = &self.header;
        w.u8(match self.body {
            RequestBody::Prepared(..) => KIND_PREPARED,
            RequestBody::Query(..) => KIND_QUERY,
            RequestBody::Batch(..) => KIND_BATCH,
        });
        w.u8(h.flags);
        w.i32(h.page_size);
        w.u16(h.consistency);
        w.u16(h.serial_consistency);
        w.u32(h.timeout_ms);
        if let Some(ts) = h.timestamp {
            w.i64(ts);
        }
        if let Some(ps) = &h.paging_state {
            w.blob(ps);
        }
        match &self.body {
            RequestBody::Prepared(handle, values) => {
                w.u32(*handle);
                values.write(w);
            }
            RequestBody::Query(q, values) => {
                w.blob(q.as_bytes());
                values.write(w);
            }
            RequestBody::Batch(batch_type, items) => {
                w.u8(*batch_type);
                w.u16(items.len() as u16);
                for (item, values) in items {
                    match item {
                        BatchItem::Prepared(handle) => {
                            w.u8(KIND_PREPARED);
                            w.u32(*handle);
                        }
                        BatchItem::Query(q) => {
                            w.u8(KIND_QUERY);
                            w.blob(q.as_bytes());
                        }
                    }
                    values.write(w);
                }
            }
        }
    }
}

/// Parses a whole request buffer: `u32 count`, then the requests.
pub fn read_requests(whole: &Bytes) -> Result<Vec<Request>, String> {
    let mut r = Reader::new(whole);
    let count = r.u32()?;
    // Every request takes at least 14 bytes: a count beyond that is a malformed buffer,
    // not a reason to reserve gigabytes.
    let mut out = Vec::with_capacity((count as usize).min(whole.len() / 14 + 1));
    for _ in 0..count {
        out.push(Request::read(&mut r, whole)?);
    }
    if r.position() != whole.len() {
        return Err(format!(
            "request buffer has {} trailing bytes after {count} requests",
            whole.len() - r.position()
        ));
    }
    Ok(out)
}

/// Writes requests back as one buffer (`u32 count` + each request).
pub fn write_requests(requests: &[Request]) -> Vec<u8> {
    let mut w = Writer::with_capacity(64 * requests.len() + 4);
    w.u32(requests.len() as u32);
    for r in requests {
        r.write(&mut w);
    }
    w.buf
}

/// Result layout, head: `u8 0`, `u8 flags` (1 more pages, 2 rows, 4 tracing id, 8 hosts),
/// `[u32 len + paging state]`, `[16-byte tracing id]`, `u16 warnings` + (`u32 len` + UTF-8)
/// each, `[hosts]` ([`write_host_info`]). With rows, [`write_rows`] follows.
pub fn write_result_head(
    w: &mut Writer,
    paging: Option<&[u8]>,
    tracing: Option<&[u8; 16]>,
    warnings: &[String],
    hosts: Option<&HostInfo>,
    has_rows: bool,
) {
    let mut flags = 0u8;
    if hosts.is_some() {
        flags |= 8;
    }
    if paging.is_some() {
        flags |= 1;
    }
    if has_rows {
        flags |= 2;
    }
    if tracing.is_some() {
        flags |= 4;
    }
    w.u8(0);
    w.u8(flags);
    if let Some(p) = paging {
        w.blob(p);
    }
    if let Some(t) = tracing {
        w.buf.extend_from_slice(t);
    }
    w.u16(warnings.len() as u16);
    for warning in warnings {
        w.blob(warning.as_bytes());
    }
    if let Some(h) = hosts {
        write_host_info(w, h);
    }
}

/// `ResultSet.info`'s hosts (flag 8 of the result head): `str queriedHost`, `u16`
/// achieved consistency (0xFFFF: unknown), `u16` speculative executions, `u16 n`, then n
/// tried hosts, each `str host`, `u8 failed` and, when 1, `str error message`.
fn write_host_info(w: &mut Writer, h: &HostInfo) {
    with_addr_text(h.queried, |t| w.blob(t.as_bytes()));
    w.u16(h.consistency.map_or(0xFFFF, |c| c as u16));
    w.u16(h.speculative);
    w.u16(h.tried.len().min(u16::MAX as usize) as u16);
    for (host, error) in h.tried.iter().take(u16::MAX as usize) {
        with_addr_text(*host, |t| w.blob(t.as_bytes()));
        match error {
            Some(e) => {
                w.u8(1);
                w.blob(e.as_bytes());
            }
            None => w.u8(0),
        }
    }
}

/// Result layout, rows: `u32` byte length of the specs (so JS can cache their parse by
/// content), the specs, `i32 row_count`, `u32` byte length of the rows, then the rows as
/// CQL cells ([`push_cell`]) written by `write_cells`.
pub fn write_rows(
    w: &mut Writer,
    specs: &[ColumnSpec<'_>],
    row_count: i32,
    write_cells: impl FnOnce(&mut Vec<u8>),
) {
    let specs_at = w.buf.len();
    w.u32(0);
    write_specs(w, specs);
    let specs_bytes = (w.buf.len() - specs_at - 4) as u32;
    w.buf[specs_at..specs_at + 4].copy_from_slice(&specs_bytes.to_le_bytes());
    w.i32(row_count);
    let len_at = w.buf.len();
    w.u32(0);
    write_cells(&mut w.buf);
    let rows_bytes = (w.buf.len() - len_at - 4) as u32;
    w.buf[len_at..len_at + 4].copy_from_slice(&rows_bytes.to_le_bytes());
}

/// One result cell as on the CQL wire: `i32 BE len` + bytes, -1 for null.
pub fn push_cell(buf: &mut Vec<u8>, cell: Option<&[u8]>) {
    match cell {
        Some(bytes) => {
            buf.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
            buf.extend_from_slice(bytes);
        }
        None => buf.extend_from_slice(&(-1i32).to_be_bytes()),
    }
}

/// Walks request-format cells (`i32 LE len`, -1 null, -2 unset) as result cells.
pub fn cells_of(values: &RawValues) -> Result<Vec<Option<&[u8]>>, String> {
    let mut r = Reader::new(&values.cells);
    let mut out = Vec::with_capacity(values.count as usize);
    for _ in 0..values.count {
        match r.i32()? {
            -1 => out.push(None),
            -2 => return Err("an unset value cannot be a result cell".into()),
            n => out.push(Some(r.bytes(n as usize)?)),
        }
    }
    Ok(out)
}
