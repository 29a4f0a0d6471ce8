//! CPU cost of the scheduler per request: enqueue + dispatch + completion accounting, in steady
//! state with every class backlogged (the heap holds all of them) and the window full, so each
//! completion lets exactly one request out. Run with `cargo bench -p weir-sched`.
//! Prints the median of several runs; targets: <= 100 ns with 8 classes, <= 200 ns with 1000.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use weir_model::cost::CostModel;
use weir_model::device::Direction;
use weir_sched::{
    ClassConfig, Dispatched, GroupConfig, Request, SchedConfig, ShardQueue, SharedBudget,
};

const REQUESTS: u64 = 2_000_000;
const RUNS: usize = 7;

/// `groups` > 0 puts the classes in that many supergroups (round robin).
fn one_run(classes: u32, groups: u32) -> f64 {
    // 1M IOPS: a 4 KiB request costs 1 us of disk time; a 64 us goal keeps ~64 in flight.
    let model = CostModel::new(1e6, 1e10, 1e6, 1e10, 1.0, false).expect("valid model");
    let config = SchedConfig {
        latency_goal: Duration::from_micros(64),
        feedback: true,
        ..Default::default()
    };
    let budget = Arc::new(SharedBudget::new(model, config).expect("budget"));
    let mut queue = ShardQueue::new(budget, 0).expect("queue");
    let group_ids: Vec<_> = (0..groups)
        .map(|g| {
            queue
                .add_group(GroupConfig::new(format!("group-{g}"), 100 + g * 100))
                .expect("group")
        })
        .collect();
    let ids: Vec<_> = (0..classes)
        .map(|i| {
            let shares = 100 + (i % 10) * 100;
            let config = ClassConfig::new(format!("class-{i}"), shares);
            match group_ids.get((i % groups.max(1)) as usize) {
                Some(&g) => queue.add_class_in(g, config),
                None => queue.add_class(config),
            }
            .expect("class")
        })
        .collect();
    let request = |i: u64| Request {
        direction: if i % 4 == 0 {
            Direction::Write
        } else {
            Direction::Read
        },
        len_bytes: 4096,
        user_data: i,
    };
    let mut now = 0u64;
    // Two requests per class queued, and the window filled.
    for (i, id) in ids.iter().enumerate() {
        for k in 0..2 {
            queue
                .enqueue(*id, request((i * 2 + k) as u64), now)
                .expect("enqueue");
        }
    }
    let mut out: Vec<Dispatched> = Vec::with_capacity(1024);
    let mut in_disk: VecDeque<u64> = VecDeque::with_capacity(4096);
    now += 1_000_000;
    queue.dispatch(now, &mut out);
    in_disk.extend(out.drain(..).map(|d| d.token));
    let start = Instant::now();
    let mut checksum = 0u64;
    for i in 0..REQUESTS {
        now += 1_000;
        if let Some(token) = in_disk.pop_front() {
            if let Some(done) = queue.complete(token, now) {
                checksum = checksum.wrapping_add(done.disk_ns);
            }
        }
        let class = ids[(i % u64::from(classes)) as usize];
        queue.enqueue(class, request(i), now).expect("enqueue");
        queue.dispatch(now, &mut out);
        in_disk.extend(out.drain(..).map(|d| d.token));
    }
    let elapsed = start.elapsed();
    std::hint::black_box(checksum);
    elapsed.as_nanos() as f64 / REQUESTS as f64
}

fn main() {
    println!("weir-sched overhead: enqueue + dispatch + complete, per request");
    for (classes, groups, target_ns) in [
        (8u32, 0u32, 100.0),
        (1000, 0, 200.0),
        (8, 2, 100.0),
        (1000, 10, 200.0),
    ] {
        let mut runs: Vec<f64> = (0..RUNS).map(|_| one_run(classes, groups)).collect();
        runs.sort_by(f64::total_cmp);
        let median = runs[RUNS / 2];
        println!(
            "{classes:>5} classes in {groups:>2} supergroups: median {median:6.1} ns/request (min {:.1}, max {:.1}; target <= {target_ns} ns) {}",
            runs[0],
            runs[RUNS - 1],
            if median <= target_ns { "OK" } else { "OVER TARGET" }
        );
    }
}
