//! Forwards the Rust driver's `tracing` events to JS, for `client.on('log')`.
//!
//! The `scylla` crate logs through `tracing` with no session attached to its events, so the
//! forwarder is process-wide: JS registers one sink while any client has a 'log' listener
//! and fans each event out to those clients. While no sink is registered the forwarder
//! reports a maximum level of OFF, so the crate's `tracing` macros cost one relaxed load.
//!
//! Levels map onto cassandra-driver's: ERROR -> error, WARN -> warning, INFO -> info,
//! DEBUG -> verbose; TRACE is never forwarded (per-request noise). At most
//! [`EVENTS_PER_SECOND`] events cross per second; the next one to cross after a drop says how
//! many were dropped, so a reconnect storm cannot flood the JS thread.

use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// Events forwarded per second at most; the rest are counted and dropped.
pub const EVENTS_PER_SECOND: u32 = 100;

type Sink = ThreadsafeFunction<String, (), String, Status, false, true>;

struct Window {
    started: Instant,
    sent: u32,
    dropped: u64,
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static SINK: Mutex<Option<Sink>> = Mutex::new(None);
static WINDOW: Mutex<Option<Window>> = Mutex::new(None);

/// Installs the forwarder as the process's `tracing` subscriber (once, at module load).
/// Another subscriber already installed by the host wins; 'log' then gets no Rust events.
pub fn install() {
    if tracing::subscriber::set_global_default(Forwarder).is_err() {
        eprintln!("weir-cql: a tracing subscriber is already installed; the Rust driver's logs will not reach client.on('log')");
    }
}

/// Registers (or, with `null`, removes) the JS function that receives the Rust driver's log
/// events, each as a JSON string `{level, target, message}`.
#[napi]
pub fn set_log_sink(callback: Option<Function<String, ()>>) -> napi::Result<()> {
    let sink = match callback {
        Some(f) => Some(
            f.build_threadsafe_function::<String>()
                .callee_handled::<false>()
                .weak::<true>()
                .build()?,
        ),
        None => None,
    };
    let on = sink.is_some();
    if let Ok(mut slot) = SINK.lock() {
        *slot = sink;
    }
    ENABLED.store(on, Ordering::Release);
    // The macros cache the maximum level; recompute it from max_level_hint.
    tracing::callsite::rebuild_interest_cache();
    Ok(())
}

fn level_name(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warning",
        Level::INFO => "info",
        _ => "verbose",
    }
}

/// Whether an event may cross now; returns the count dropped since the last one that did.
fn admit() -> Option<u64> {
    let mut w = WINDOW.lock().unwrap_or_else(|p| p.into_inner());
    let w = w.get_or_insert_with(|| Window {
        started: Instant::now(),
        sent: 0,
        dropped: 0,
    });
    if w.started.elapsed().as_secs() >= 1 {
        w.started = Instant::now();
        w.sent = 0;
    }
    if w.sent >= EVENTS_PER_SECOND {
        w.dropped += 1;
        return None;
    }
    w.sent += 1;
    Some(std::mem::take(&mut w.dropped))
}

struct Message(String);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            let _ = write!(self.0, " {}={}", field.name(), value);
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.insert_str(0, &format!("{value:?}"));
        } else {
            let _ = write!(self.0, " {}={:?}", field.name(), value);
        }
    }
}

struct Forwarder;

impl Subscriber for Forwarder {
    fn register_callsite(&self, m: &'static Metadata<'static>) -> Interest {
        // Spans are never recorded; events up to DEBUG are decided per hit by `enabled`.
        if m.is_event() && *m.level() <= Level::DEBUG {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.is_event() && *m.level() <= Level::DEBUG && ENABLED.load(Ordering::Acquire)
    }
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(if ENABLED.load(Ordering::Acquire) {
            LevelFilter::DEBUG
        } else {
            LevelFilter::OFF
        })
    }
    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        // Unreachable in practice (spans have Interest::never); a valid id all the same.
        Id::from_u64(1)
    }
    fn record(&self, _span: &Id, _values: &Record<'_>) {}
    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let Some(dropped) = admit() else { return };
        let mut msg = Message(String::new());
        event.record(&mut msg);
        let m = event.metadata();
        let mut message = msg.0;
        if dropped > 0 {
            let _ = write!(
                message,
                " ({dropped} earlier log events dropped: more than {EVENTS_PER_SECOND} per second)"
            );
        }
        let json = serde_json::json!({
            "level": level_name(m.level()),
            "target": m.target(),
            "message": message,
        })
        .to_string();
        if let Ok(slot) = SINK.lock() {
            if let Some(sink) = slot.as_ref() {
                sink.call(json, ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    }
    fn enter(&self, _span: &Id) {}
    fn exit(&self, _span: &Id) {}
}
