//! The progress line: which phase runs, how long it has left and how long the whole report
//! has left, redrawn twice a second by a small thread into the writer the caller gives (the
//! `weir` binary gives its terminal's stderr, and nothing off a terminal, so logs stay clean).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The phase being run and the estimates of what follows.
#[derive(Debug, Clone)]
struct State {
    index: usize,
    count: usize,
    name: String,
    started: Instant,
    estimate: Duration,
    /// Estimated time of the phases after this one.
    after: Duration,
}

/// Where phases announce themselves. `Progress::hidden()` draws nothing.
pub struct Progress {
    state: Arc<Mutex<Option<State>>>,
    stop: Arc<AtomicBool>,
    /// The ticker thread, and the writer it hands back when it ends.
    ticker: Option<JoinHandle<Box<dyn Write + Send>>>,
}

/// `m:ss`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}", s / 60, s % 60)
}

/// The line `spent` into the phase (the caller reads the clock, so a test can fix it).
fn line(state: &State, spent: Duration) -> String {
    let left = state.estimate.saturating_sub(spent);
    format!(
        "\r\x1b[K[{}/{}] {}: {} left in this phase, about {} in total",
        state.index + 1,
        state.count,
        state.name,
        clock(left),
        clock(left + state.after)
    )
}

impl Progress {
    /// A progress line redrawn in place on `out` (a terminal: the line starts with a carriage
    /// return and an erase-line sequence).
    pub fn drawing_to(mut out: Box<dyn Write + Send>) -> Self {
        let state: Arc<Mutex<Option<State>>> = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (Arc::clone(&state), Arc::clone(&stop));
        let ticker = std::thread::Builder::new()
            .name("weir-progress".into())
            .spawn(move || {
                while !st.load(Ordering::Relaxed) {
                    let text = s
                        .lock()
                        .ok()
                        .and_then(|g| g.as_ref().map(|st| line(st, st.started.elapsed())));
                    if let Some(text) = text {
                        let _ = out.write_all(text.as_bytes());
                        let _ = out.flush();
                    }
                    std::thread::sleep(Duration::from_millis(500));
                }
                out
            })
            .ok();
        Progress {
            state,
            stop,
            ticker,
        }
    }

    /// No output at all.
    pub fn hidden() -> Self {
        Progress {
            state: Arc::new(Mutex::new(None)),
            stop: Arc::new(AtomicBool::new(true)),
            ticker: None,
        }
    }

    /// Phase `index` of `count` starts; `estimate` is its budget and `after` the budget of
    /// the phases still to come.
    pub fn phase(
        &self,
        index: usize,
        count: usize,
        name: &str,
        estimate: Duration,
        after: Duration,
    ) {
        if let Ok(mut g) = self.state.lock() {
            *g = Some(State {
                index,
                count,
                name: name.into(),
                started: Instant::now(),
                estimate,
                after,
            });
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(Ok(mut out)) = self.ticker.take().map(JoinHandle::join) {
            // Clear the line so the caller's next message starts clean.
            let _ = out.write_all(b"\r\x1b[K");
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_counts_down_within_the_phase_and_in_total() {
        let state = State {
            index: 2,
            count: 6,
            name: "tune".into(),
            started: Instant::now(),
            estimate: Duration::from_secs(30),
            after: Duration::from_secs(95),
        };
        // 1.5 s into the 30 s phase: 28.5 s left, shown as whole seconds.
        let text = line(&state, Duration::from_millis(1500));
        assert!(text.contains("[3/6] tune: 0:28 left"), "{text}");
        assert!(text.contains("about 2:03 in total"), "{text}");
        assert_eq!(clock(Duration::from_secs(125)), "2:05");
    }
}
