//! Shards that each run on their own CPU over a device that completes inside the submission
//! (zram under io_uring), seeded. The lockstep harness (`harness/mod.rs`) dispatches every
//! shard at the same instant and serves their rounds together, so a shard never waits for
//! another's round there; on the machine each shard's thread serves its own round on its
//! own CPU, and a shard whose head leads the other's by more than the lag sleeps until its
//! timer (docs/scheduler-rate.md sections 18-19). Here each shard has its own inline disk
//! (one CPU, half the device's rates, its own jitter) and the shards are stepped in the
//! order of their clocks; a timer wake-up comes `TIMER_SLACK_NS` late, as a VM's does. Each
//! check prints the stalls and how many woke at the laggard's next expected call.

mod harness;

use harness::{model_of, seed};
use std::collections::HashMap;
use weir_model::cost::CostModel;
use weir_model::device::Direction::{self, Read, Write};
use weir_model::device::{Device, IoCompletion, IoOp};
use weir_sched::{
    ClassConfig, ClassId, Dispatched, Request, SchedConfig, ShardQueue, SharedBudget,
};
use weir_sim::{SimConfig, SimDisk};

const S: u64 = 1_000_000_000;
/// How late a timer wakes a sleeping shard loop (an hrtimer on this project's VM).
const TIMER_SLACK_NS: u64 = 20_000;

/// One shard: its CPU (an inline disk of its own), its queue, and its two classes' jobs.
struct Shard {
    disk: SimDisk,
    queue: ShardQueue,
    classes: [ClassId; 2],
    outstanding: [u32; 2],
    /// Request id -> class, for requests queued or in the disk.
    requests: HashMap<u64, usize>,
    /// Completed requests per class in the measured window.
    done: [u64; 2],
}

struct Run {
    /// Completed requests per class per second, both shards, from 0.5 s to the end.
    per_class: [f64; 2],
    lag_stalls: u64,
    short_wakes: u64,
    /// Leads let go because the laggard was off its CPU (`queue/lag.rs`).
    overdue_skips: u64,
}

/// The second shard's CPU: its speed against the first's, and how long the shard loop is off
/// that CPU after each pass (0: never; another process's thread holding the CPU, as a
/// runnable shard thread waits for its turn behind a CPU hog under CFS).
#[derive(Clone, Copy)]
struct SecondCpu {
    speed: f64,
    off_cpu_ns: u64,
}

impl SecondCpu {
    fn at(speed: f64) -> Self {
        SecondCpu {
            speed,
            off_cpu_ns: 0,
        }
    }
}

/// One shard's CPU: half of `cpu_inline`'s two, with its own seed.
fn cpu_of(seed: u64, shard: u64, speed: f64) -> SimConfig {
    let mut sim = SimConfig::cpu_inline(seed.wrapping_add(shard));
    sim.channels = 1;
    for rates in [&mut sim.read, &mut sim.write] {
        rates.iops *= speed / 2.0;
        rates.bytes_per_sec *= speed / 2.0;
    }
    sim
}

fn op(user_data: u64, direction: Direction, len_bytes: u64) -> IoOp {
    let align = len_bytes.next_power_of_two().max(4096);
    IoOp {
        user_data,
        direction,
        fd: -1,
        offset_bytes: (user_data.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) * align,
        len_bytes: len_bytes as u32,
        buf: std::ptr::null_mut(),
        flags: Default::default(),
        vectored: None,
    }
}

fn push(disk: &mut SimDisk, op: IoOp) {
    // SAFETY: the simulated disk never touches buffers (all null here).
    unsafe { disk.push(op) }.expect("room");
}

/// Two shards x two classes (`shares`) of `depth` requests each, for `until_ns` of each
/// shard's clock; `scheduled: false` sends every request straight to the shard's CPU.
fn run(
    seed: u64,
    (dir, len): (Direction, u64),
    shares: (u32, u32),
    depth: u32,
    scheduled: bool,
    second_cpu: SecondCpu,
) -> Run {
    let until_ns = 2 * S;
    let model: CostModel = model_of(&SimConfig::cpu_inline(seed));
    let config = SchedConfig {
        shards: 2,
        unlimited: !scheduled,
        ..SchedConfig::default()
    };
    let budget = std::sync::Arc::new(SharedBudget::new(model, config).expect("budget"));
    let mut shards: Vec<Shard> = (0..2)
        .map(|s| {
            let mut queue = ShardQueue::new(budget.clone(), s).expect("queue");
            let a = queue.add_class(ClassConfig::new("a", shares.0)).expect("a");
            let b = queue.add_class(ClassConfig::new("b", shares.1)).expect("b");
            Shard {
                disk: SimDisk::new(cpu_of(
                    seed,
                    s as u64,
                    if s == 1 { second_cpu.speed } else { 1.0 },
                )),
                queue,
                classes: [a, b],
                outstanding: [0; 2],
                requests: HashMap::new(),
                done: [0; 2],
            }
        })
        .collect();
    let mut next_id = 0u64;
    let mut dispatched: Vec<Dispatched> = Vec::new();
    let mut completions: Vec<IoCompletion> = Vec::new();
    loop {
        // The shard furthest behind in its own clock runs its loop's next pass.
        let (index, now) = shards
            .iter()
            .enumerate()
            .map(|(i, s)| (i, s.disk.now_ns()))
            .min_by_key(|&(_, t)| t)
            .expect("two shards");
        if now >= until_ns {
            break;
        }
        let shard = &mut shards[index];
        for class in 0..2 {
            while shard.outstanding[class] < depth {
                shard.outstanding[class] += 1;
                next_id += 1;
                shard.requests.insert(next_id, class);
                if scheduled {
                    let request = Request {
                        direction: dir,
                        len_bytes: len,
                        user_data: next_id,
                    };
                    let id = shard.classes[class];
                    shard.queue.enqueue(id, request, now).expect("enqueue");
                } else {
                    push(&mut shard.disk, op(next_id, dir, len));
                }
            }
        }
        if scheduled {
            dispatched.clear();
            shard.queue.dispatch(now, &mut dispatched);
            for d in &dispatched {
                push(&mut shard.disk, op(d.token, d.direction, d.len_bytes));
            }
        }
        // Pieces pushed now are served inside this wait; with none, the loop sleeps on its
        // timer, which wakes it late.
        let timer = shard
            .queue
            .next_wakeup_ns()
            .map(|w| w.max(now + 1) + TIMER_SLACK_NS);
        shard
            .disk
            .submit_and_wait(1, Some(timer.unwrap_or(until_ns)))
            .expect("wait");
        completions.clear();
        shard.disk.reap(&mut completions);
        for c in &completions {
            let user_data = if scheduled {
                let done = shard.queue.complete(c.user_data, c.completed_at_ns);
                match done.expect("token in flight") {
                    d if d.request_done => d.user_data,
                    _ => continue,
                }
            } else {
                c.user_data
            };
            let class = shard.requests.remove(&user_data).expect("known request");
            shard.outstanding[class] -= 1;
            if c.completed_at_ns >= S / 2 {
                shard.done[class] += 1;
            }
        }
        if index == 1 && second_cpu.off_cpu_ns > 0 {
            // Nothing is in the inline disk after the wait: the loop is simply not running.
            let back_ns = shard.disk.now_ns() + second_cpu.off_cpu_ns;
            shard
                .disk
                .submit_and_wait(1, Some(back_ns))
                .expect("off CPU");
        }
    }
    let secs = (until_ns - S / 2) as f64 / 1e9;
    Run {
        per_class: [0, 1].map(|c| shards.iter().map(|s| s.done[c]).sum::<u64>() as f64 / secs),
        lag_stalls: shards.iter().map(|s| s.queue.lag_stalls()).sum(),
        short_wakes: shards.iter().map(|s| s.queue.lag_short_wakes()).sum(),
        overdue_skips: shards.iter().map(|s| s.queue.lag_overdue_skips()).sum(),
    }
}

/// On zram the round bound holds every ratio at 1.000 of asked, but a lag that wakes only at
/// goal / 8 held 4 KiB writes at 0.90-0.96 of unscheduled, with 19,000-27,000 cross-shard stalls a 3 s row
/// (docs/scheduler-rate.md section 18). Two CPUs of one speed: the totals and the ratios hold
/// here, and the stalls that remain fall mid-call (the round in flight brings the shard back),
/// or, with nothing in the disk, wake at the laggard's next expected call (`queue/lag.rs`).
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn shards_on_equal_cpus_keep_the_total_and_the_shares() {
    let seed = seed(253);
    for (dir, len) in [(Write, 4096), (Read, 4096), (Write, 16384), (Read, 16384)] {
        for shares in [(1000, 100), (1, 1), (100, 1000)] {
            let what = format!(
                "seed {seed}: own CPUs, {dir:?} {len} B x32, {}:{}",
                shares.0, shares.1
            );
            let _ =
                check_reach_and_ratio(seed, (dir, len), shares, SecondCpu::at(1.0), 0.97, &what);
        }
    }
}

/// The second shard's CPU at 0.85 of the first's (another thread on it, as under a build on a
/// two-vCPU guest). A lag that held the first shard to the second's pace in virtual time
/// gave every row 0.919 of unscheduled (2 x 0.85 / 1.85), 4 KiB writes at 1000:100 with
/// ~6,100 stalls, the shape of zram's write rows. The lag holds only while
/// a backlogged shard may wait on the shared budget; here each shard's rounds are paced by its
/// own CPU, so neither waits for the other (docs/scheduler-rate.md section 19).
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn a_slower_cpu_does_not_hold_the_faster_one_back() {
    let seed = seed(254);
    for (dir, len) in [(Write, 4096), (Read, 4096)] {
        for shares in [(1000, 100), (1, 1), (100, 1000)] {
            let what = format!(
                "seed {seed}: own CPUs, the second at 0.85, {dir:?} {len} B x32, {}:{}",
                shares.0, shares.1
            );
            let _ =
                check_reach_and_ratio(seed, (dir, len), shares, SecondCpu::at(0.85), 0.97, &what);
        }
    }
}

/// Another process holding CPU 0 so that a thread pinned there gets 3% of it: unguarded, shard 0 (pinned there) was runnable but off its CPU for
/// milliseconds at a time; shard 1 stalled on the cross-shard lag ~29,000 times a 3 s row
/// waiting for it, and the scheduled 4 KiB reads ran 4 K IOPS against 284 K unscheduled.
/// A laggard that ended its last call waiting on the budget but is long past its own wake-up
/// is waiting for a CPU, not for the budget: holding the leader gives it nothing
/// (`queue/lag.rs`). Here the second shard runs one loop pass, then is off its CPU for 3 ms.
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn a_shard_off_its_cpu_does_not_hold_the_other_back() {
    let seed = seed(255);
    let starved = SecondCpu {
        speed: 1.0,
        off_cpu_ns: 3_000_000,
    };
    for (dir, len) in [(Read, 4096), (Write, 4096)] {
        for shares in [(1000, 100), (1, 1), (100, 1000)] {
            let what = format!(
                "seed {seed}: the second shard off its CPU 3 ms a pass, {dir:?} {len} B x32, {}:{}",
                shares.0, shares.1
            );
            let _ = check_reach_and_ratio(seed, (dir, len), shares, starved, 0.95, &what);
        }
    }
}

fn check_reach_and_ratio(
    seed: u64,
    op: (Direction, u64),
    shares: (u32, u32),
    second_cpu: SecondCpu,
    min_reach: f64,
    what: &str,
) -> u64 {
    let bare = run(seed, op, shares, 32, false, second_cpu);
    let sched = run(seed, op, shares, 32, true, second_cpu);
    let bare_total = bare.per_class[0] + bare.per_class[1];
    let reach = (sched.per_class[0] + sched.per_class[1]) / bare_total;
    let asked = f64::from(shares.0) / f64::from(shares.1);
    let ratio = sched.per_class[0] / sched.per_class[1] / asked;
    println!(
        "{what}: {reach:.3} of unscheduled ({bare_total:.0} req/s), ratio {ratio:.3} of asked, \
         cross-shard stalls {} (woken at the laggard's next call: {}){}",
        sched.lag_stalls,
        sched.short_wakes,
        // Only where it happens, so the other checks print what they printed before.
        if sched.overdue_skips > 0 {
            format!(
                ", leads let go for a laggard off its CPU {}",
                sched.overdue_skips
            )
        } else {
            String::new()
        }
    );
    assert!(reach >= min_reach, "{what}: {reach:.3} of unscheduled");
    assert!(
        (ratio - 1.0).abs() <= 0.05,
        "{what}: ratio {ratio:.3} of asked"
    );
    sched.lag_stalls
}

/// The cross-shard lag is a goal of disk time at the largest shares on the shard, not at
/// 1000 shares always: two 1-share classes stall no more than a 1000:100 pair on the same
/// load. A lag of a sixteenth of a goal for them made 16 KiB writes at 1:1 stall 1,631 times
/// here against 0 at 1000:100 (vda's 4 KiB reads at 1:1: 16-18 K stalls a 5 s row against
/// 5-8 K; docs/scheduler-rate.md section 21).
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn one_share_classes_stall_no_more_than_a_thousand_share_pair() {
    let seed = seed(253);
    let load = (Write, 16384);
    let what = |a: u32, b: u32| format!("seed {seed}: own CPUs, {load:?} x32, {a}:{b}");
    let unequal = check_reach_and_ratio(
        seed,
        load,
        (1000, 100),
        SecondCpu::at(1.0),
        0.97,
        &what(1000, 100),
    );
    let equal = check_reach_and_ratio(seed, load, (1, 1), SecondCpu::at(1.0), 0.97, &what(1, 1));
    assert!(
        equal <= 2 * unequal + 50,
        "seed {seed}: 1:1 stalled {equal} times, 1000:100 {unequal}"
    );
}
