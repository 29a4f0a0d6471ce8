//! The engine's A/B switches as values: how io_uring waits and treats files that punt, the
//! ring's optional setup flags, and whether a block device keeps its access time. Each names
//! one idea measured against the default (docs/engine.md); none is on by default.
//!
//! A library never reads the environment: the binary reads its `WEIR_*` variables, hands
//! their text to [`EngineOptions::from_switches`], reports the notes it returns, and sets the
//! result once with [`set_engine_options`] before the first ring is made. Every ring of every
//! shard then uses it; a process that sets nothing gets [`EngineOptions::default`].
//!
//! ```
//! use weir_engine::EngineOptions;
//!
//! let (options, notes) = EngineOptions::from_switches(|name| match name {
//!     "WEIR_URING_RINGFD" => Some("on".to_string()),
//!     "WEIR_URING_BATCH" => Some("zero".to_string()),
//!     _ => None,
//! });
//! assert!(options.ring_fd);
//! assert_eq!(notes, ["WEIR_URING_BATCH=\"zero\" is not a count >= 1; using 1"]);
//! ```

use std::sync::OnceLock;

use crate::uring_wait::WaitPolicy;

/// The engine's A/B switches. `Default` is the engine as measured best.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EngineOptions {
    /// How io_uring rings wait (`WEIR_URING_WAIT`, `WEIR_URING_DEFER`, `WEIR_URING_DEEP`,
    /// `WEIR_URING_SUBMIT`, `WEIR_URING_BATCH`).
    pub wait: WaitPolicy,
    /// Requests on files that punt go without IOSQE_ASYNC, by the kernel's own path
    /// (`WEIR_URING_PUNT=inline`).
    pub punt_inline: bool,
    /// Enter by the ring's registered index (`IORING_REGISTER_RING_FDS`;
    /// `WEIR_URING_RINGFD=on`).
    pub ring_fd: bool,
    /// Bound each shard thread's io-wq workers, bounded and unbounded alike
    /// (`WEIR_URING_IOWQ_MAX=<n>`).
    pub iowq_max: Option<u32>,
    /// A ring without the submission index array (`IORING_SETUP_NO_SQARRAY`, Linux 6.6;
    /// `WEIR_URING_NOSQARRAY=on`).
    pub no_sqarray: bool,
    /// Open block devices without `O_NOATIME` (`WEIR_DEVICE_ATIME=on`).
    pub keep_device_atime: bool,
}

impl EngineOptions {
    /// The switches `lookup` gives by variable name (the binary passes the environment's;
    /// an empty value counts as unset), and a note for each value not understood, which then
    /// keeps its default: an A/B switch must not stop a run.
    pub fn from_switches(lookup: impl Fn(&str) -> Option<String>) -> (EngineOptions, Vec<String>) {
        let var = |name: &str| lookup(name).filter(|v| !v.is_empty());
        let mut notes = Vec::new();
        let wait_var = var("WEIR_URING_WAIT");
        let defer_var = var("WEIR_URING_DEFER");
        let mut wait =
            WaitPolicy::parse(wait_var.as_deref(), defer_var.as_deref()).unwrap_or_else(|e| {
                notes.push(format!(
                    "{e}; using the default (chosen by depth, DEFER_TASKRUN)"
                ));
                WaitPolicy::default()
            });
        // `WEIR_URING_PUNT` set fixes the wait too, so an A/B row names everything it changes.
        let punt = var("WEIR_URING_PUNT");
        wait.by_depth &= punt.is_none();
        match var("WEIR_URING_DEEP").as_deref() {
            None | Some("inline") => {}
            Some("async") => wait.deep_inline = false,
            Some(v) => notes.push(format!(
                "WEIR_URING_DEEP={v:?} is not async or inline; using inline"
            )),
        }
        match var("WEIR_URING_SUBMIT").as_deref() {
            None | Some("eager") => {}
            Some("deferred") => wait.deferred_submit = true,
            Some(v) => notes.push(format!(
                "WEIR_URING_SUBMIT={v:?} is not eager or deferred; using eager"
            )),
        }
        if let Some(v) = var("WEIR_URING_BATCH") {
            match v.parse::<u32>() {
                Ok(n) if n >= 1 => wait.min_batch = n,
                _ => notes.push(format!(
                    "WEIR_URING_BATCH={v:?} is not a count >= 1; using 1"
                )),
            }
        }
        let iowq_max = var("WEIR_URING_IOWQ_MAX").and_then(|v| match v.parse() {
            Ok(n) => Some(n),
            Err(_) => {
                notes.push(format!(
                    "WEIR_URING_IOWQ_MAX={v:?} is not a count of workers; leaving io-wq unbounded"
                ));
                None
            }
        });
        let options = EngineOptions {
            wait,
            punt_inline: punt.as_deref() == Some("inline"),
            ring_fd: var("WEIR_URING_RINGFD").is_some_and(|v| v == "on"),
            iowq_max,
            no_sqarray: var("WEIR_URING_NOSQARRAY").is_some_and(|v| v == "on"),
            keep_device_atime: var("WEIR_DEVICE_ATIME").is_some_and(|v| v == "on"),
        };
        (options, notes)
    }
}

static OPTIONS: OnceLock<EngineOptions> = OnceLock::new();

/// Sets the process's engine options, once, before the first ring or device is opened.
/// Returns the options back when they were already set (or already read by a ring).
pub fn set_engine_options(options: EngineOptions) -> Result<(), EngineOptions> {
    OPTIONS.set(options)
}

/// The process's engine options: those set with [`set_engine_options`], else the defaults.
pub fn engine_options() -> &'static EngineOptions {
    OPTIONS.get_or_init(EngineOptions::default)
}
