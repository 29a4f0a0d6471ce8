//! The completion queue each simulated device keeps: completions ordered by the virtual time
//! they are due, popped once the device's clock reaches them. `SimDisk`, `MixedDisk` and each
//! shard of the shared disk model service differently but reap and wait on this queue alike.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use weir_model::device::IoCompletion;

/// A pending completion: (time, sequence, user_data, result). The sequence breaks ties between
/// completions due at the same nanosecond so they come out in the order they were started.
pub(crate) type Event = Reverse<(u64, u64, u64, i32)>;

/// Moves every completion due by `now_ns` into `out`, earliest first; returns how many moved.
pub(crate) fn reap_due(
    events: &mut BinaryHeap<Event>,
    now_ns: u64,
    out: &mut Vec<IoCompletion>,
) -> usize {
    let mut moved = 0;
    while let Some(&Reverse((at, _, user_data, result))) = events.peek() {
        if at > now_ns {
            break;
        }
        events.pop();
        out.push(IoCompletion {
            user_data,
            result,
            completed_at_ns: at,
        });
        moved += 1;
    }
    moved
}

/// When the `wanted`-th earliest completion is due (`wanted` from 1 to `events.len()`): the
/// time a wait for `wanted` completions ends. `scratch` is reused so a busy loop need not
/// allocate on every wait.
pub(crate) fn nth_due_ns(events: &BinaryHeap<Event>, wanted: usize, scratch: &mut Vec<u64>) -> u64 {
    debug_assert!(wanted >= 1 && wanted <= events.len());
    if wanted == 1 {
        // The heap's top is the earliest: no need to select.
        return events.peek().map_or(0, |e| e.0 .0);
    }
    scratch.clear();
    scratch.extend(events.iter().map(|e| e.0 .0));
    let (_, nth, _) = scratch.select_nth_unstable(wanted - 1);
    *nth
}
