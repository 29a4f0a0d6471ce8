//! The raw Rust driver baseline for bench/cql: the same four benchmarks as the JS drivers,
//! on the same `scylla` version, printing one JSON line with seconds and CPU seconds.
//!
//! usage: cql-bench-rust-raw <insert|select|concurrent_insert|concurrent_select> <ops> [host:port]

use futures::StreamExt;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::response::PagingState;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use std::time::Instant;
use uuid::Uuid;

const CONCURRENCY: usize = 100;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return f64::NAN;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// CPU seconds (user + system) the server JVMs whose pids CQL_BENCH_SERVER_PIDS lists
/// (comma-separated, set by run.js and ab.js) have used so far, from /proc/<pid>/stat in
/// clock ticks of 1/100 s (USER_HZ on Linux); NaN without the variable or with a pid gone.
fn server_cpu_seconds() -> f64 {
    let Ok(list) = std::env::var("CQL_BENCH_SERVER_PIDS") else {
        return f64::NAN;
    };
    let mut ticks = 0u64;
    for pid in list.split(',').filter(|p| !p.is_empty()) {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return f64::NAN;
        };
        // The command name may hold spaces: count fields after its closing parenthesis
        // (utime and stime are fields 14 and 15, so the 12th and 13th after it).
        let after = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
        let f: Vec<&str> = after.split_whitespace().collect();
        let field = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
        match (field(11), field(12)) {
            (Some(u), Some(s)) => ticks += u + s,
            _ => return f64::NAN,
        }
    }
    ticks as f64 / 100.0
}

/// User and system CPU seconds of this process (every thread).
fn user_system_seconds() -> (f64, f64) {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (f64::NAN, f64::NAN);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// Per thread of this process: (name, user s, system s, voluntary and involuntary context
/// switches), from /proc/self/task, as bench/cql/threads.js reads them for the JS drivers.
type ThreadStat = (String, f64, f64, u64, u64);
fn thread_snapshot() -> std::collections::HashMap<String, ThreadStat> {
    const TICKS_PER_SECOND: f64 = 100.0; // USER_HZ on Linux
    let mut out = std::collections::HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for entry in dir.flatten() {
        let tid = entry.file_name().to_string_lossy().into_owned();
        let (Ok(stat), Ok(status)) = (
            std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")),
            std::fs::read_to_string(format!("/proc/self/task/{tid}/status")),
        ) else {
            continue; // the thread exited between read_dir and read
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close]
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .to_string();
        let f: Vec<&str> = stat[close + 2..].split(' ').collect();
        let tick = |i: usize| {
            f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / TICKS_PER_SECOND
        };
        let field = |k: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        out.insert(
            tid,
            (
                comm,
                tick(11),
                tick(12),
                field("voluntary_ctxt_switches:"),
                field("nonvoluntary_ctxt_switches:"),
            ),
        );
    }
    out
}

/// JSON object of what each thread name did between two snapshots (same shape as threads.js).
fn thread_diff_json(
    a: &std::collections::HashMap<String, ThreadStat>,
    b: &std::collections::HashMap<String, ThreadStat>,
) -> String {
    let mut by_name: std::collections::BTreeMap<String, (u32, f64, f64, u64, u64)> =
        Default::default();
    for (tid, (comm, u, s, v, n)) in b {
        let (u0, s0, v0, n0) = a
            .get(tid)
            .map_or((0.0, 0.0, 0, 0), |t| (t.1, t.2, t.3, t.4));
        let g = by_name.entry(comm.clone()).or_default();
        g.0 += 1;
        g.1 += u - u0;
        g.2 += s - s0;
        g.3 += v - v0;
        g.4 += n - n0;
    }
    let parts: Vec<String> = by_name
        .iter()
        .filter(|(_, g)| g.1 + g.2 > 0.0 || g.3 + g.4 > 0)
        .map(|(name, g)| {
            format!(
                "\"{name}\":{{\"threads\":{},\"utime_s\":{:.2},\"stime_s\":{:.2},\"vcs\":{},\"nvcs\":{}}}",
                g.0, g.1, g.2, g.3, g.4
            )
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

async fn select_once(session: &Session, select: &PreparedStatement) -> Result<usize, String> {
    // One page (of at most 10 rows for `select`, the JS drivers' fetchSize: 10).
    let (res, _) = session
        .execute_single_page(select, &[], PagingState::start())
        .await
        .map_err(|e| e.to_string())?;
    let rows = res.into_rows_result().map_err(|e| e.to_string())?;
    let mut n = 0;
    for row in rows.rows::<(Uuid, i32)>().map_err(|e| e.to_string())? {
        row.map_err(|e| e.to_string())?;
        n += 1;
    }
    Ok(n)
}

async fn run(bench: &str, ops: usize, host: &str) -> Result<(), String> {
    // RAW_WRITE_COALESCING=0 turns the crate's write coalescing off (its default is on: the
    // connection's writer yields once before flushing, hoping to batch more requests).
    let coalescing = std::env::var("RAW_WRITE_COALESCING").map_or(true, |v| v != "0");
    let session = SessionBuilder::new()
        .known_node(host)
        .write_coalescing(coalescing)
        .build()
        .await
        .map_err(|e| format!("connect {host}: {e}"))?;
    let mut insert = session
        .prepare("INSERT INTO benchmarks.basic (id, val) VALUES (?, ?)")
        .await
        .map_err(|e| e.to_string())?;
    let mut select = session
        .prepare("SELECT * FROM benchmarks.basic")
        .await
        .map_err(|e| e.to_string())?;
    select.set_page_size(10);
    // cassandra-driver's default consistency, so all three drivers do the same work.
    insert.set_consistency(Consistency::LocalOne);
    select.set_consistency(Consistency::LocalOne);
    // CQL_BENCH_WARMUP_OPS=N: N uncounted operations of a sequential benchmark first (one row
    // overwritten then deleted for insert, so the table's row count stays what run.js checks).
    let warmup_ops: usize = std::env::var("CQL_BENCH_WARMUP_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let warm_id = Uuid::nil();
    if bench == "insert" && warmup_ops > 0 {
        for i in 0..warmup_ops {
            session
                .execute_unpaged(&insert, (warm_id, i as i32))
                .await
                .map_err(|e| e.to_string())?;
        }
        session
            .query_unpaged("DELETE FROM benchmarks.basic WHERE id = ?", (warm_id,))
            .await
            .map_err(|e| e.to_string())?;
    } else if bench == "select" {
        for _ in 0..warmup_ops {
            select_once(&session, &select).await?;
        }
    }
    let threads0 = thread_snapshot();
    let (user0, system0) = user_system_seconds();
    let cpu0 = cpu_seconds();
    let server0 = server_cpu_seconds();
    let t0 = Instant::now();
    match bench {
        "insert" => {
            for i in 0..ops {
                session
                    .execute_unpaged(&insert, (Uuid::new_v4(), i as i32))
                    .await
                    .map_err(|e| e.to_string())?;
            }
        }
        "concurrent_insert" => {
            let mut s = futures::stream::iter(0..ops)
                .map(|i| {
                    let (session, insert) = (&session, &insert);
                    async move {
                        session
                            .execute_unpaged(insert, (Uuid::new_v4(), i as i32))
                            .await
                    }
                })
                .buffer_unordered(CONCURRENCY);
            while let Some(r) = s.next().await {
                r.map_err(|e| e.to_string())?;
            }
        }
        "select" => {
            for _ in 0..ops {
                let n = select_once(&session, &select).await?;
                if n != 10 {
                    return Err(format!("select returned {n} rows, expected 10"));
                }
            }
        }
        "concurrent_select" => {
            // The JS drivers' executeConcurrent pages at their default fetchSize (5000): the
            // same request on the wire, the whole 10-row table in one page.
            let mut whole = select.clone();
            whole.set_page_size(5000);
            let mut s = futures::stream::iter(0..ops)
                .map(|_| select_once(&session, &whole))
                .buffer_unordered(CONCURRENCY);
            while let Some(r) = s.next().await {
                let n = r?;
                if n != 10 {
                    return Err(format!("a select returned {n} rows, expected 10"));
                }
            }
        }
        other => return Err(format!("unknown benchmark '{other}'")),
    }
    let seconds = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let server = server_cpu_seconds() - server0;
    // JSON has no NaN: without CQL_BENCH_SERVER_PIDS the figure is null.
    let server = if server.is_finite() {
        format!("{server:.4}")
    } else {
        "null".to_string()
    };
    let (user1, system1) = user_system_seconds();
    let (user, system) = (user1 - user0, system1 - system0);
    let threads = thread_diff_json(&threads0, &thread_snapshot());
    println!("{{\"driver\":\"rust-raw\",\"bench\":\"{bench}\",\"ops\":{ops},\"seconds\":{seconds:.4},\"cpu_seconds\":{cpu:.4},\"user_seconds\":{user:.4},\"system_seconds\":{system:.4},\"server_cpu_seconds\":{server},\"threads\":{threads}}}");
    Ok(())
}

fn main() {
    // RAW_RUNTIME=current runs everything on this thread (tokio current_thread); the default
    // is the multi-thread runtime of #[tokio::main], where the connection's tasks run on a
    // worker and each request crosses threads twice.
    let current = std::env::var("RAW_RUNTIME").is_ok_and(|v| v == "current");
    let rt = if current {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    };
    match rt {
        Ok(rt) => rt.block_on(real_main()),
        Err(e) => {
            eprintln!("rust-raw: cannot build the tokio runtime: {e}");
            std::process::exit(1);
        }
    }
}

async fn real_main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: cql-bench-rust-raw <insert|select|concurrent_insert|concurrent_select> <ops> [host:port]");
        std::process::exit(2);
    }
    let ops: usize = match args[2].parse() {
        Ok(n) => n,
        Err(_) => {
            eprintln!("ops must be a positive integer, got '{}'", args[2]);
            std::process::exit(2);
        }
    };
    let host = args.get(3).map(String::as_str).unwrap_or("127.0.0.1:9042");
    if let Err(e) = run(&args[1], ops, host).await {
        eprintln!("rust-raw {}: {e}", args[1]);
        std::process::exit(1);
    }
}
