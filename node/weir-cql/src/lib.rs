//! weir-cql native core: a napi-rs bridge over the `scylla` crate.
//!
//! Design: crossing the JS/Rust boundary costs 12-49 us per async call on the target
//! machine, more than the JS work of a whole request, so this layer is shaped around
//! crossings rather than around statements:
//!
//! - parameters arrive already encoded as CQL cells (the JS codec knows the column types
//!   from the prepared metadata it keeps), so Rust only copies bytes;
//! - one `submit` call carries any number of requests (every `execute` of one event-loop tick,
//!   or all parameter rows of `executeConcurrent`), executes them concurrently on the tokio
//!   runtime, and answers with one `Buffer` holding every result page as raw CQL cells,
//!   which JS decodes lazily; no JS object is created per row in Rust;
//! - prepared statements live here under numeric handles; the JS side owns the bounded
//!   (maxPrepared) LRU and releases handles it evicts, so the cache cannot grow without limit;
//! - `shutdown` drops the session, which closes every connection; nothing here holds a
//!   libuv handle, so a process that never calls it still exits.

mod answer;
mod config;
mod direct;
mod errors;
mod exec;
mod history;
// Public: set_log_sink is reachable only through napi registration.
pub mod log;
mod metadata;
mod ring;
mod runtime;
mod tls;
mod wire;
mod worker_policy;
// Public: its functions are reachable only through napi registration.
pub mod wire_hooks;

use errors::{ErrorInfo, ErrorKind};
use exec::PreparedMap;
use futures::StreamExt;
use napi::bindgen_prelude::{Buffer, Function, PromiseRaw, Unknown};
use napi::JsValue;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Env;
use napi::Status;
use napi_derive::napi;
use scylla::client::session::Session;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use wire::Writer;

pub use config::ConnectOptions;

/// Builds the runtimes (see src/runtime.rs: by default the sessions' tasks run on the JS
/// thread itself, so a request wakes no second thread).
#[napi_derive::module_init]
fn init_runtime() {
    log::install();
    runtime::init();
}

/// The JS function that receives every `submit` result: one long-lived threadsafe function
/// instead of a promise (and a threadsafe function) per call. Weak: it never keeps the
/// process alive by itself; the JS side holds a ref'd handle while requests are in flight.
type Completion = ThreadsafeFunction<Vec<u8>, (), answer::Answer, Status, false, true>;

struct Inner {
    completion: Mutex<Option<Arc<Completion>>>,
    /// `js` runtime mode: the completion function, called directly after each pump.
    direct: Mutex<Option<Arc<direct::Target>>>,
    session: RwLock<Option<Arc<Session>>>,
    prepared: Mutex<PreparedMap>,
    next_handle: AtomicU32,
}

impl Inner {
    fn session(&self) -> Result<Arc<Session>, ErrorInfo> {
        let guard = self
            .session
            .read()
            .map_err(|_| ErrorInfo::new(ErrorKind::Driver, "session lock poisoned"))?;
        guard.clone().ok_or_else(|| {
            ErrorInfo::new(
                ErrorKind::Driver,
                "the client is not connected or was shut down; call connect() first",
            )
        })
    }
}

/// One connected `scylla` session plus its prepared statements.
#[napi]
pub struct NativeSession {
    inner: Arc<Inner>,
}

fn error_buffer(e: &ErrorInfo) -> Buffer {
    let mut w = Writer::with_capacity(64);
    e.write(&mut w);
    w.buf.into()
}

/// Probes each contact point with a plain TCP connect, so `NoHostAvailableError.innerErrors`
/// names the failure of every host rather than one summary: `{message, code}` per host, the
/// code being the errno name (ECONNREFUSED, ...) as Node's net errors carry, ETIMEDOUT, or
/// ESTARTUP when TCP connected and the CQL (or TLS) start-up then failed with `session_error`.
async fn probe_hosts(
    points: &[String],
    timeout: Duration,
    session_error: &str,
) -> serde_json::Value {
    let mut inner = serde_json::Map::new();
    for p in points {
        let addr = if p.contains(':') {
            p.clone()
        } else {
            format!("{p}:9042")
        };
        let (code, msg) = match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(&addr)).await {
            // OpenSSL's reason for a refused certificate; the code and hint name the fix.
            Ok(Ok(_)) if session_error.contains("certificate verify failed") => (
                "ECERTVERIFY".to_string(),
                format!("TLS handshake with {addr}: the node's certificate was refused (not signed by a CA in sslOptions.ca, or not issued for this IP; rejectUnauthorized: false skips the check): {session_error}"),
            ),
            Ok(Ok(_)) => (
                "ESTARTUP".to_string(),
                format!("TCP connect to {addr} succeeded, then the connection start-up failed: {session_error}"),
            ),
            Ok(Err(e)) => (errors::io_code(&e), format!("connect {addr}: {e}")),
            Err(_) => (
                "ETIMEDOUT".to_string(),
                format!("connect {addr}: timed out after {} ms", timeout.as_millis()),
            ),
        };
        inner.insert(addr, serde_json::json!({"message": msg, "code": code}));
    }
    serde_json::Value::Object(inner)
}

#[napi]
impl NativeSession {
    #[napi(constructor)]
    pub fn new() -> Self {
        NativeSession {
            inner: Arc::new(Inner {
                completion: Mutex::new(None),
                direct: Mutex::new(None),
                session: RwLock::new(None),
                prepared: Mutex::new(PreparedMap::new()),
                next_handle: AtomicU32::new(1),
            }),
        }
    }

    /// Connects; resolves to an empty Buffer on success or an encoded error.
    #[napi]
    pub fn connect<'env>(
        &self,
        env: &'env Env,
        options: ConnectOptions,
    ) -> napi::Result<PromiseRaw<'env, Buffer>> {
        let inner = self.inner.clone();
        env.spawn_future(runtime::on_session_runtime(async move {
            let connect_timeout = Duration::from_millis(options.connect_timeout_ms.unwrap_or(5000) as u64);
            let builder = match config::session_builder(&options) {
                Ok(b) => b,
                Err(e) => return Ok(error_buffer(&e)),
            };
            match builder.build().await {
                Ok(session) => {
                    if let Err(e) = config::check_local_dc(&session, options.local_data_center.as_deref()) {
                        return Ok(error_buffer(&e));
                    }
                    if let Ok(mut guard) = inner.session.write() {
                        *guard = Some(Arc::new(session));
                    }
                    Ok(Buffer::from(Vec::new()))
                }
                Err(e) => {
                    let mut info = match &e {
                        scylla::errors::NewSessionError::UseKeyspaceError(
                            scylla::errors::UseKeyspaceError::RequestError(a),
                        ) => errors::execution_error(&scylla::errors::ExecutionError::LastAttemptError(
                            a.clone(),
                        )),
                        _ => ErrorInfo::new(ErrorKind::NoHostAvailable, e.to_string()),
                    };
                    if matches!(info.kind, ErrorKind::NoHostAvailable) {
                        info.extra = serde_json::json!({
                            "innerErrors": probe_hosts(&options.contact_points, connect_timeout, &e.to_string()).await
                        });
                    }
                    Ok(error_buffer(&info))
                }
            }
        }))
    }

    /// Prepares a statement; resolves to `u8 0`, `u32 handle`, bind-marker specs,
    /// partition-key indexes (`u16 n` + u16 each) and result specs, or an encoded error.
    #[napi]
    pub fn prepare<'env>(
        &self,
        env: &'env Env,
        query: String,
    ) -> napi::Result<PromiseRaw<'env, Buffer>> {
        let inner = self.inner.clone();
        env.spawn_future(runtime::on_session_runtime(async move {
            let session = match inner.session() {
                Ok(s) => s,
                Err(e) => return Ok(error_buffer(&e)),
            };
            let prepared = match session.prepare(query).await {
                Ok(p) => p,
                Err(e) => {
                    let e = scylla::errors::ExecutionError::PrepareError(e);
                    return Ok(error_buffer(&errors::execution_error(&e)));
                }
            };
            let handle = inner.next_handle.fetch_add(1, Ordering::Relaxed);
            let mut w = Writer::with_capacity(256);
            w.u8(0);
            w.u32(handle);
            wire::write_specs(&mut w, prepared.get_variable_col_specs().as_slice());
            let pk = prepared.get_variable_pk_indexes();
            w.u16(pk.len() as u16);
            for k in pk {
                w.u16(k.index);
            }
            let result_specs = prepared.get_current_result_set_col_specs();
            wire::write_specs(&mut w, result_specs.get().as_slice());
            if let Ok(mut map) = inner.prepared.lock() {
                map.insert(handle, Arc::new(prepared));
            }
            Ok(w.buf.into())
        }))
    }

    /// Forgets a prepared statement (called by the JS LRU on eviction).
    #[napi]
    pub fn release(&self, handle: u32) {
        if let Ok(mut map) = self.inner.prepared.lock() {
            map.remove(&handle);
        }
    }

    /// Number of prepared statements held (for tests of the bounded cache).
    #[napi]
    pub fn prepared_count(&self) -> u32 {
        self.inner
            .prepared
            .lock()
            .map(|m| m.len() as u32)
            .unwrap_or(0)
    }

    /// Registers the function that receives the results of `submit`: each answer as a
    /// Buffer, or, in `js` mode when it fits in `answers` (a Buffer the caller keeps for
    /// this client), as its length after it was copied into `answers` (src/direct.rs).
    /// Also makes libuv watch the JS-thread runtime (WEIR_CQL_RUNTIME=js, src/runtime.rs).
    #[napi(ts_args_type = "callback: (answer: Buffer | number) => void, answers?: Buffer")]
    pub fn set_completion(
        &self,
        env: &Env,
        callback: Function<Buffer, ()>,
        answers: Option<Unknown>,
    ) -> napi::Result<()> {
        runtime::watch(env).map_err(|e| {
            napi::Error::from_reason(format!(
                "weir-cql: cannot watch the runtime from libuv ({e}); set WEIR_CQL_RUNTIME=worker"
            ))
        })?;
        let tsfn = callback
            .build_threadsafe_function::<Vec<u8>>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(|ctx| Ok(answer::Answer(ctx.value)))?;
        if let Ok(mut slot) = self.inner.completion.lock() {
            *slot = Some(Arc::new(tsfn));
        }
        if runtime::mode() == runtime::Mode::Js {
            let answers = answers.map_or(std::ptr::null_mut(), |a| a.raw());
            let target = direct::Target::new(env, &callback, answers).map_err(|e| {
                napi::Error::from_reason(format!(
                    "weir-cql: cannot hold the completion function ({e}); set WEIR_CQL_RUNTIME=worker"
                ))
            })?;
            if let Ok(mut slot) = self.inner.direct.lock() {
                *slot = Some(target);
            }
        }
        Ok(())
    }

    /// The one execution path of `execute`, `batch` and `executeConcurrent`: executes every
    /// request of `requests` with at most `concurrency` in flight and hands the results to
    /// the completion function as they complete (see `run_requests` for the layout). No
    /// promise per call: one long-lived threadsafe function serves them all.
    #[napi]
    pub fn submit(&self, requests: Buffer, concurrency: u32, token: u32) -> napi::Result<()> {
        let completion = self
            .inner
            .completion
            .lock()
            .ok()
            .and_then(|c| c.clone())
            .ok_or_else(|| {
                napi::Error::from_reason("setCompletion must be called before submit")
            })?;
        let direct = self.inner.direct.lock().ok().and_then(|d| d.clone());
        let inner = self.inner.clone();
        let requests = bytes::Bytes::from(requests.to_vec());
        // JS-thread runtime: the pump run here writes the requests to their sockets
        // before this returns.
        // Boxed once, here (see runtime::LocalTask): the run's future is ~5.3 KB.
        runtime::spawn_and_pump(move |busy| {
            Box::pin(async move {
                run_requests(
                    inner,
                    requests,
                    concurrency,
                    token,
                    move |out| match &direct {
                        // `js` mode: handed to JS inside the pump (src/direct.rs).
                        Some(target) => direct::deliver(target, out),
                        None => {
                            completion.call(out, ThreadsafeFunctionCallMode::NonBlocking);
                        }
                    },
                )
                .await;
                drop(busy);
            })
        });
        Ok(())
    }

    /// Runs the JS-thread runtime until idle (WEIR_CQL_RUNTIME=js; libuv normally does this
    /// itself, see src/runtime.rs); does nothing in the other runtime modes.
    #[napi]
    pub fn pump(&self) {
        runtime::pump(runtime::Cause::Call);
    }

    /// The ring's ranges with their replicas in `keyspace`, as JSON
    /// (`[{start, end, replicas}]`, tokens as decimal strings).
    #[napi]
    pub fn token_ranges(&self, keyspace: String) -> String {
        match self.inner.session() {
            Ok(s) => ring::token_ranges_json(&s, &keyspace),
            Err(_) => "[]".into(),
        }
    }

    /// Drops the session: every connection of this client closes.
    #[napi]
    pub fn shutdown(&self) {
        if let Ok(mut guard) = self.inner.session.write() {
            guard.take();
        }
        if let Ok(mut map) = self.inner.prepared.lock() {
            map.clear();
        }
        if let Ok(mut completion) = self.inner.completion.lock() {
            completion.take();
        }
        if let Ok(mut direct) = self.inner.direct.lock() {
            direct.take();
        }
        // JS-thread runtime: let the connection tasks see the session gone and close now.
        runtime::pump(runtime::Cause::Call);
    }
}

/// The `js` runtime's counters (src/runtime.rs), for tests and benchmarks: the runtime mode,
/// pumps and answers delivered per cause (`call`, `readable`, `timer`; answers after a timer
/// pump waited for it; `continue`: the pump right after one that ended on its budget), the extra rounds of pumps, and the tokio workers' scheduling policy
/// (src/worker_policy.rs: `workerPolicy`, and `workerPolicyFallback` saying why when it is not
/// the one asked for), as JSON.
#[napi]
pub fn runtime_stats() -> String {
    let (pumps, answers, repumps) = runtime::stats();
    let by_cause = |a: [u64; 4]| {
        serde_json::json!({"call": a[0], "readable": a[1], "timer": a[2], "continue": a[3]})
    };
    let (worker_policy, fallback) = worker_policy::outcome();
    serde_json::json!({
        "mode": format!("{:?}", runtime::mode()).to_lowercase(),
        "pumps": by_cause(pumps),
        "answers": by_cause(answers),
        "repumps": repumps,
        "workerPolicy": worker_policy,
        "workerPolicyFallback": fallback,
    })
    .to_string()
}

/// An answer to JS: `u32 token`, `u8 0`, `u8 last` (1 when the run is complete), `u32 n`, then
/// n results each as `u32 request index` + the result; or `u32 token`, `u8 1` and one error
/// for the whole run (the buffer was malformed or the client is not connected).
fn answer_head(token: u32, capacity: usize) -> Writer {
    let mut w = Writer::with_capacity(capacity);
    w.u32(token);
    w.u8(0);
    w.u8(0);
    w.u32(0);
    w
}

/// Sets the `last` flag and the result count of an answer started by [`answer_head`].
fn answer_close(w: &mut Writer, last: bool, count: u32) {
    w.buf[5] = last as u8;
    w.buf[6..10].copy_from_slice(&count.to_le_bytes());
}

/// Decodes and executes a request buffer, handing answers to `deliver`. Results go out as
/// they complete, in batches of whatever is ready at once: a request slow to answer (a
/// paused replica, a timeout) never holds back the others of its run, and a burst of fast
/// answers still crosses to JS in one call.
async fn run_requests(
    inner: Arc<Inner>,
    requests: bytes::Bytes,
    concurrency: u32,
    token: u32,
    mut deliver: impl FnMut(Vec<u8>) + Send + 'static,
) {
    let fail = |e: ErrorInfo| {
        let mut w = Writer::with_capacity(64);
        w.u32(token);
        e.write(&mut w);
        w.buf
    };
    let session = match inner.session() {
        Ok(s) => s,
        Err(e) => return deliver(fail(e)),
    };
    let jobs = match read_jobs(&inner, &requests) {
        Ok(jobs) => jobs,
        Err(e) => return deliver(fail(e)),
    };
    if jobs.len() == 1 {
        // 512 bytes: a page of a few rows (a 10-row select's answer is ~430 bytes) is written
        // without growing the Vec; an insert's (~60) wastes nothing that outlives the call.
        let mut out = answer_head(token, 512);
        out.u32(0);
        if let Some(job) = jobs.into_iter().next() {
            exec::run_job_into(&session, job, &mut out).await;
        }
        answer_close(&mut out, true, 1);
        return deliver(out.buf);
    }
    if runtime::drive_run_apart(jobs.len()) {
        // Drive the run from a thread of its own while the connections' tasks stay on the
        // worker (the raw driver's shape: its loop runs in `block_on` on the main thread).
        // On one worker, the run and the connection's router share a thread: the router reads
        // a whole buffer of answers before the run issues their successors, which then reach
        // the server as one burst of ~50 requests per TCP segment instead of a trickle, and
        // the one-CPU server serves the bursts slower (concurrent select takes 0.68x the
        // time with this, a count of requests per socket write shows 6-9 requests per segment, as raw's).
        let handle = tokio::runtime::Handle::current();
        let _ = tokio::task::spawn_blocking(move || {
            handle.block_on(run_many(session, jobs, concurrency, token, deliver))
        })
        .await;
        return;
    }
    run_many(session, jobs, concurrency, token, deliver).await;
}

/// Executes the jobs of a run of more than one request (see [`run_requests`]).
async fn run_many(
    session: Arc<Session>,
    jobs: Vec<exec::Job>,
    concurrency: u32,
    token: u32,
    mut deliver: impl FnMut(Vec<u8>),
) {
    let total = jobs.len();
    let mut results = futures::stream::iter(jobs.into_iter().enumerate())
        .map(|(i, job)| {
            let session = session.clone();
            async move { (i, exec::run_job(session, job).await) }
        })
        .buffer_unordered(concurrency.max(1) as usize);
    let mut done = 0usize;
    while let Some((i, res)) = results.next().await {
        let mut out = answer_head(token, 64 + res.len());
        let mut count = 0u32;
        let mut next = Some((i, res));
        // Take every result that is ready now, without waiting for more.
        while let Some((i, res)) = next.take() {
            out.u32(i as u32);
            out.buf.extend_from_slice(&res);
            count += 1;
            if let Some(Some(more)) = futures::FutureExt::now_or_never(results.next()) {
                next = Some(more);
            }
        }
        done += count as usize;
        answer_close(&mut out, done == total, count);
        deliver(out.buf);
    }
    if total == 0 {
        let mut out = answer_head(token, 16);
        answer_close(&mut out, true, 0);
        deliver(out.buf);
    }
}

fn read_jobs(inner: &Inner, whole: &bytes::Bytes) -> Result<Vec<exec::Job>, ErrorInfo> {
    let requests =
        wire::read_requests(whole).map_err(|e| ErrorInfo::new(ErrorKind::Argument, e))?;
    let map = inner
        .prepared
        .lock()
        .map_err(|_| ErrorInfo::new(ErrorKind::Driver, "prepared-statement lock poisoned"))?;
    requests
        .into_iter()
        .map(|r| exec::resolve(r, &map).map_err(|e| ErrorInfo::new(ErrorKind::Argument, e)))
        .collect()
}

impl Default for NativeSession {
    fn default() -> Self {
        Self::new()
    }
}
