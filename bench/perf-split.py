#!/usr/bin/env python3
"""perf-split.py: where one benchmark process's CPU goes per I/O, by thread and by kernel job.

Usage: perf script -F tid,comm,time,ip,sym,dso -i perf.data | perf-split.py IOS FREQ_HZ LABEL
(bench/engine-profile-zram.sh runs it; KEEP_DIR there keeps the `perf script` text to rerun it)

Reads `perf script` output of a `perf record -e cpu-clock -g -F FREQ_HZ` of one process (its
io-wq threads included) and prints, per thread group (the submitting thread, the io-wq
workers `iou-wrk-*`, SQPOLL `iou-sqp-*`), the CPU microseconds per I/O in user space and in
each kernel job, plus each group's busy share over the sampled span (a worker at ~100% is the
limit of a run where one worker does every read). A kernel sample goes to the job of the
first frame of its call chain, from the leaf up, that names one; generic frames (locks,
memcpy, irq flags) are skipped so a lock lands on whoever took it.
"""
import re
import sys
from collections import defaultdict

# Checked in this order for every frame; the first match names the job.
JOBS = [
    ("zram read/copy", r"^(zram_|zs_|zsmalloc|copy_page|lz4|lzo|zstd|__zram)"),
    ("iomap/XFS", r"^(iomap_|xfs_|__iomap)"),
    ("bio/block", r"^(bio_|__bio|blk_|__blk|submit_bio|__submit_bio|blkdev_|__blkdev|bdev_|"
     r"bvec_|iov_iter|dio_|__dio|bio$)"),
    ("io-wq hand-off", r"^(io_wq_|io_wqe_|io_worker|io_wq$|create_io_worker|io_queue_iowq|"
     r"io_prep_async|io_wq_submit_work|io_acct_|io_get_next_work)"),
    ("io_uring complete/wait", r"^(io_req_task_complete|io_req_rw_complete|__io_submit_flush|"
     r"io_cqring|io_cqe|io_free_batch|io_req_local_work|io_run_local_work|__io_run_local|"
     r"io_complete_rw|io_req_complete|io_fill_cqe|__io_cq|io_cq_|io_post_aux|io_req_post|"
     r"io_handle_tw|tctx_task_work|io_req_normal_work|io_req_task_work|__io_req_task_work|"
     r"io_wake_function|io_cqring_wait)"),
    ("io_uring submit", r"^(io_submit_sqes|io_issue_sqe|io_read|__io_read|io_write|io_prep_|"
     r"io_init_req|io_queue_|io_import|io_rw_|io_file_get|io_assign_file|io_alloc_|"
     r"io_req_|io_rsrc|io_find_buf|io_init_rw|io_uring_enter|__do_sys_io_uring_enter|"
     r"io_get_sqe|io_submit_|io_ring_|io_sqe|io_|__io_)"),
    ("scheduler", r"^(schedule|__schedule|finish_task_switch|try_to_wake_up|ttwu|enqueue_|"
     r"dequeue_|pick_next|pick_task|update_curr|update_load|wake_up|__wake_up|select_task_rq|"
     r"psi_|put_prev|set_next|check_preempt|sched_|__sched|resched|wakeup_|prepare_task_switch|"
     r"__switch_to|switch_mm|context_switch|task_tick|update_rq|newidle|balance|load_balance|"
     r"idle_|do_idle|cpuidle|default_idle|raw_spin_rq|avg_vruntime|place_entity|reweight|"
     r"update_cfs|update_se|hrtick|account_|cpuacct|__update_load|sched_clock|"
     r"native_sched_clock|__cgroup_account|cgroup_rstat|__set_task_cpu|migrate_)"),
    ("syscall entry/exit", r"^(entry_SYSCALL|do_syscall|syscall_exit|__x64_sys|x64_sys|"
     r"exit_to_user|syscall_trace|__task_pid|syscall_enter|arch_exit|fpregs|switch_fpu|"
     r"restore_fpregs|entry_|__rseq|rseq_)"),
    ("timers/irq", r"^(hrtimer|__hrtimer|ktime_|tick_|irq_|__irq|asm_|sysvec|__sysvec|"
     r"handle_irq|do_softirq|__do_softirq|run_timer|timekeeping|clockevents|lapic|"
     r"native_apic|smp_call|generic_smp|flush_smp|run_ksoftirqd|rcu_|__rcu)"),
]
JOB_RES = [(name, re.compile(rx)) for name, rx in JOBS]
# Frames that say nothing about whose work it is: skip them and look one frame up.
GENERIC = re.compile(r"^(_raw_|raw_|__raw_|queued_spin|native_queued|mutex_|__mutex|"
                     r"osq_|memcpy|__memcpy|memset|__memset|rep_movs|copy_user|_copy_|"
                     r"__check_object|check_heap|kmem_cache|__kmem|kfree|__kmalloc|kmalloc|"
                     r"mempool|native_irq|__local_bh|local_bh|preempt_|__cond_resched|"
                     r"srso_|__x86_return|retbleed|__pfx_|\[unknown\]|up_read|down_read|"
                     r"percpu_|__percpu|refcount|fput|fget|__fget|mod_node|__mod|"
                     r"lock_|unlock_|__lock|spin_)")


def group_of(comm):
    if comm.startswith("iou-wrk"):
        return "io-wq workers"
    if comm.startswith("iou-sqp"):
        return "sqpoll"
    return "submitter"


def job_of(frames):
    if "kernel" not in frames[0][2]:
        # The leaf is in user space (its chain may go on into the kernel's): name its object.
        return "user: " + (frames[0][2].rsplit("/", 1)[-1] or "?")
    for _, sym, dso in frames:
        if "kernel" not in dso:
            break  # the chain left the kernel: the rest is the caller in user space
        s = sym.split("+")[0]
        if GENERIC.match(s):
            continue
        for name, rx in JOB_RES:
            if rx.match(s):
                return name
        return "other kernel: " + s
    return "other kernel: " + (frames[0][1].split("+")[0] if frames else "?")


def samples(stream):
    """(tid, comm, time_s, frames leaf-first) per sample of `perf script` output."""
    head, frames = None, []
    for line in stream:
        line = line.rstrip("\n")
        if not line.strip():
            if head:
                yield (*head, frames)
            head, frames = None, []
            continue
        if not line.startswith((" ", "\t")):
            m = re.match(r"^\s*(\S.*?)\s+(\d+)\s+([\d.]+):", line)
            if not m:
                m2 = re.match(r"^\s*(\S.*?)\s+(\d+)\s+([\d.]+)", line)
                m = m2
            head = (int(m.group(2)), m.group(1), float(m.group(3))) if m else None
            frames = []
        else:
            parts = line.split(None, 2)
            if len(parts) >= 2:
                ip = parts[0]
                rest = parts[1] if len(parts) == 2 else parts[1] + " " + parts[2]
                m = re.match(r"^(.*?)\s*\(([^)]*)\)\s*$", rest)
                sym, dso = (m.group(1), m.group(2)) if m else (rest, "")
                frames.append((ip, sym, dso))
    if head:
        yield (*head, frames)


def main():
    ios, freq, label = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    per = defaultdict(lambda: defaultdict(int))  # group -> job -> samples
    tids = defaultdict(set)
    t0, t1 = float("inf"), 0.0
    for tid, comm, t, frames in samples(sys.stdin):
        g = group_of(comm)
        tids[g].add(tid)
        job = job_of(frames) if frames else "other kernel: ?"
        per[g][job] += 1
        t0, t1 = min(t0, t), max(t1, t)
    span = max(t1 - t0, 1e-9)
    us = 1e6 / freq / max(ios, 1)  # microseconds per I/O of one sample
    total = sum(sum(j.values()) for j in per.values())
    print(f"== {label}: {ios} I/Os over {span:.2f} s sampled ({ios / span / 1e3:.1f} K IOPS), "
          f"{total} samples at {freq:.0f} Hz = {total * us:.3f} CPU us/IO")
    for g in sorted(per):
        jobs = per[g]
        n = sum(jobs.values())
        print(f"  {g} ({len(tids[g])} threads): {n * us:.3f} us/IO, busy "
              f"{n / freq / span:.2f} CPUs")
        user = sum(v for k, v in jobs.items() if k.startswith("user"))
        print(f"    {'user space':28} {user * us:7.3f} us/IO {100 * user / n:5.1f}%  kernel "
              f"{(n - user) * us:.3f} us/IO")
        named = sorted(((k, v) for k, v in jobs.items() if not k.startswith("other")),
                       key=lambda kv: -kv[1])
        other = sorted(((k, v) for k, v in jobs.items() if k.startswith("other")),
                       key=lambda kv: -kv[1])
        for k, v in named:
            print(f"    {k:28} {v * us:7.3f} us/IO {100 * v / n:5.1f}%")
        rest = sum(v for _, v in other)
        print(f"    {'other kernel':28} {rest * us:7.3f} us/IO {100 * rest / max(n, 1):5.1f}%"
              + "  (" + ", ".join(f"{k[14:]} {v * us:.3f}" for k, v in other[:6]) + ")")


if __name__ == "__main__":
    main()
