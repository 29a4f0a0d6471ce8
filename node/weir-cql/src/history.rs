//! Per-request attempt log for `ResultSet.info` (`triedHosts`, `achievedConsistency`,
//! `speculativeExecutions`): a small [`HistoryListener`] set on each request's statement.
//!
//! The crate's own `HistoryCollector` keeps timestamped events of every kind; this keeps only
//! what `info` shows (the node of each attempt, the error of each failed one, the consistency
//! a retry decision asked for), so its cost per request is one allocation and a few lock
//! operations, against the hundreds of microseconds of a round trip.

use scylla::errors::{RequestAttemptError, RequestError};
use scylla::observability::history::{AttemptId, HistoryListener, RequestId, SpeculativeId};
use scylla::policies::retry::RetryDecision;
use scylla::statement::Consistency;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::Mutex;

/// One attempt: the node it was sent to and, when it failed, the error's message.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub node: SocketAddr,
    pub error: Option<String>,
}

#[derive(Debug, Default)]
struct Log {
    attempts: Vec<Attempt>,
    speculative: u16,
    /// The consistency the last retry decision asked for (a downgrading policy's choice).
    retry_consistency: Option<Consistency>,
}

/// The attempts of one request, in the order they started.
#[derive(Debug, Default)]
pub struct AttemptLog {
    log: Mutex<Log>,
}

/// What `ResultSet.info` reports about the hosts of one request.
pub struct HostInfo {
    /// The coordinator that answered (written as `host:port` by [`with_addr_text`]).
    pub queried: SocketAddr,
    /// Every host an attempt went to, each with its error message (none: it answered or was
    /// still running when another answered).
    pub tried: Vec<(SocketAddr, Option<String>)>,
    pub consistency: Option<Consistency>,
    pub speculative: u16,
}

impl AttemptLog {
    /// `info` for a request answered by `coordinator`, sent at `requested` consistency.
    pub fn host_info(&self, coordinator: SocketAddr, requested: Consistency) -> HostInfo {
        let log = match self.log.lock() {
            Ok(l) => l,
            // A poisoned lock means a listener call panicked; report only the coordinator.
            Err(p) => p.into_inner(),
        };
        // Addresses stay `SocketAddr` here (compared as numbers); their text is written once,
        // from a per-thread cache: formatting them twice per request was ~1 us of a
        // sequential select's client CPU (perf).
        let mut tried: Vec<(SocketAddr, Option<String>)> = Vec::with_capacity(log.attempts.len());
        for a in &log.attempts {
            match tried.iter_mut().find(|(h, _)| *h == a.node) {
                // A host tried twice keeps its latest outcome, as cassandra-driver's map does.
                Some(slot) => slot.1 = a.error.clone(),
                None => tried.push((a.node, a.error.clone())),
            }
        }
        if !tried.iter().any(|(h, _)| *h == coordinator) {
            tried.push((coordinator, None));
        }
        HostInfo {
            queried: coordinator,
            tried,
            consistency: Some(log.retry_consistency.unwrap_or(requested)),
            speculative: log.speculative,
        }
    }
}

/// How many addresses a thread keeps the text of: more than any cluster a client talks to
/// through one thread would need; past it the oldest is replaced.
const ADDR_TEXT_CACHE_LEN: usize = 64;

thread_local! {
    static ADDR_TEXT: RefCell<Vec<(SocketAddr, Box<str>)>> = const { RefCell::new(Vec::new()) };
}

/// Calls `f` with `addr` as `host:port` (`SocketAddr`'s `Display`), formatted once per thread
/// and address.
pub fn with_addr_text<R>(addr: SocketAddr, f: impl FnOnce(&str) -> R) -> R {
    ADDR_TEXT.with(|cell| {
        let mut cache = cell.borrow_mut();
        let at = match cache.iter().position(|(a, _)| *a == addr) {
            Some(i) => i,
            None => {
                if cache.len() >= ADDR_TEXT_CACHE_LEN {
                    cache.remove(0);
                }
                cache.push((addr, addr.to_string().into_boxed_str()));
                cache.len() - 1
            }
        };
        f(&cache[at].1)
    })
}

impl HistoryListener for AttemptLog {
    fn log_request_start(&self) -> RequestId {
        RequestId(0)
    }

    fn log_request_success(&self, _request_id: RequestId) {}

    fn log_request_error(&self, _request_id: RequestId, _error: &RequestError) {}

    fn log_new_speculative_fiber(&self, _request_id: RequestId) -> SpeculativeId {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.speculative = log.speculative.saturating_add(1);
        SpeculativeId(log.speculative as usize)
    }

    fn log_attempt_start(
        &self,
        _request_id: RequestId,
        _speculative_id: Option<SpeculativeId>,
        node_addr: SocketAddr,
    ) -> AttemptId {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.attempts.push(Attempt {
            node: node_addr,
            error: None,
        });
        AttemptId(log.attempts.len() - 1)
    }

    fn log_attempt_success(&self, _attempt_id: AttemptId) {}

    fn log_attempt_error(
        &self,
        attempt_id: AttemptId,
        error: &RequestAttemptError,
        retry_decision: &RetryDecision,
    ) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(a) = log.attempts.get_mut(attempt_id.0) {
            a.error = Some(error.to_string());
        }
        match retry_decision {
            RetryDecision::RetrySameTarget(Some(c)) | RetryDecision::RetryNextTarget(Some(c)) => {
                log.retry_consistency = Some(*c);
            }
            _ => {}
        }
    }
}
