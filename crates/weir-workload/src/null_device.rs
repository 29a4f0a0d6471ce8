//! io_tester's `--storage /dev/null`: a device where every request completes at once with its
//! full length and nothing is read or written, so a run measures the framework's own
//! overhead (arrivals, the shard loop, accounting). Times come from CLOCK_MONOTONIC, as on
//! the real rings.

use crate::run::DeviceOpenError;
use weir_model::device::{Device, DeviceError, IoCompletion, IoOp};

use crate::run::DeviceFactory;

/// Makes one [`NullDevice`] per shard.
pub struct NullFactory;

impl DeviceFactory for NullFactory {
    type Device = NullDevice;

    fn name(&self) -> String {
        "null".into()
    }

    fn open(&self, _shard: usize, depth: u32) -> Result<NullDevice, DeviceOpenError> {
        Ok(NullDevice {
            depth,
            ready: Vec::with_capacity(depth as usize),
        })
    }
}

/// Completes each request when it is pushed.
pub struct NullDevice {
    depth: u32,
    ready: Vec<IoCompletion>,
}

impl Device for NullDevice {
    fn now_ns(&self) -> u64 {
        weir_engine::monotonic_ns()
    }

    fn capacity(&self) -> u32 {
        self.depth
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        self.ready.push(IoCompletion {
            user_data: op.user_data,
            // Requests are at most 1 GiB (validated), so the length fits.
            result: op.len_bytes as i32,
            completed_at_ns: self.now_ns(),
        });
        Ok(())
    }

    fn submit_and_wait(&mut self, min: u32, deadline: Option<u64>) -> Result<u32, DeviceError> {
        // Nothing is ever in flight: a wait for a completion is a wait for the deadline (the
        // next arrival or think time).
        if min > 0 && self.ready.is_empty() {
            if let Some(deadline_ns) = deadline {
                let now_ns = self.now_ns();
                if deadline_ns > now_ns {
                    std::thread::sleep(std::time::Duration::from_nanos(deadline_ns - now_ns));
                }
            }
        }
        Ok(0)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let n = self.ready.len();
        out.append(&mut self.ready);
        n
    }
}
