//! The progress line on a terminal: which phase runs, how long it has left and how long the
//! whole report has left, redrawn twice a second by a small thread. Off a terminal it draws
//! nothing (the page is the output; logs stay clean).

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
    ticker: Option<JoinHandle<()>>,
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
    /// A progress line on stderr.
    pub fn on_terminal() -> Self {
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
                        let mut err = std::io::stderr().lock();
                        let _ = err.write_all(text.as_bytes());
                        let _ = err.flush();
                    }
                    std::thread::sleep(Duration::from_millis(500));
                }
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
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
            // Clear the line so the caller's next message starts clean.
            eprint!("\r\x1b[K");
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
