//! The raw `scylla` crate under bench/client.js's workloads: one JSON line with wall seconds
//! and this process's CPU seconds (getrusage, every thread) over the timed part.
//!
//! usage: weir-cql-bench-raw <insert|select1|select100> <in-flight> <ops> [host:port]
//! BENCH_WARMUP_OPS (default 2000) uncounted requests first; BENCH_PERF_CTL / BENCH_PERF_ACK:
//! perf stat's control fifos, enabled for the timed part only (as client.js does).

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;
use uuid::Uuid;

const SELECT1_ID: &str = "57656972-2d63-716c-0000-000000000000";

fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage only writes into the zeroed struct passed to it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (f64::NAN, f64::NAN);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

fn perf(command: &str) -> Result<(), String> {
    let (Ok(ctl), Ok(ack)) = (
        std::env::var("BENCH_PERF_CTL"),
        std::env::var("BENCH_PERF_ACK"),
    ) else {
        return Ok(());
    };
    let mut c = std::fs::OpenOptions::new()
        .write(true)
        .open(&ctl)
        .map_err(|e| format!("{ctl}: {e}"))?;
    c.write_all(format!("{command}\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut a = std::fs::File::open(&ack).map_err(|e| format!("{ack}: {e}"))?;
    let mut buf = [0u8; 16];
    a.read(&mut buf).map_err(|e| e.to_string())?;
    Ok(())
}

async fn one(
    session: &Session,
    st: &PreparedStatement,
    workload: &str,
    i: usize,
    id: Uuid,
) -> Result<(), String> {
    match workload {
        "insert" => {
            session
                .execute_unpaged(st, (Uuid::new_v4(), i as i32))
                .await
                .map_err(|e| e.to_string())?;
        }
        _ => {
            let want = if workload == "select1" { 1 } else { 100 };
            let res = if workload == "select1" {
                session.execute_unpaged(st, (id,)).await
            } else {
                session.execute_unpaged(st, ()).await
            }
            .map_err(|e| e.to_string())?;
            let rows = res.into_rows_result().map_err(|e| e.to_string())?;
            let mut n = 0;
            for row in rows.rows::<(Uuid, i32)>().map_err(|e| e.to_string())? {
                row.map_err(|e| e.to_string())?;
                n += 1;
            }
            if n != want {
                return Err(format!("{workload} returned {n} rows, expected {want}"));
            }
        }
    }
    Ok(())
}

async fn run_loops(
    session: Arc<Session>,
    st: Arc<PreparedStatement>,
    workload: &'static str,
    total: usize,
    inflight: usize,
) -> Result<(), String> {
    let next = Arc::new(AtomicUsize::new(0));
    let id = Uuid::parse_str(SELECT1_ID).map_err(|e| e.to_string())?;
    let mut tasks = Vec::new();
    for _ in 0..inflight {
        let (session, st, next) = (session.clone(), st.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    return Ok::<(), String>(());
                }
                one(&session, &st, workload, i, id).await?;
            }
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    Ok(())
}

async fn run(
    workload: &'static str,
    inflight: usize,
    ops: usize,
    host: &str,
) -> Result<(), String> {
    let query = match workload {
        "insert" => "INSERT INTO benchmarks.basic (id, val) VALUES (?, ?)",
        "select1" => "SELECT id, val FROM benchmarks.basic WHERE id = ?",
        "select100" => "SELECT id, val FROM benchmarks.basic LIMIT 100",
        _ => return Err(format!("unknown workload {workload:?}")),
    };
    let session = SessionBuilder::new()
        .known_node(host)
        .build()
        .await
        .map_err(|e| format!("connect {host}: {e}"))?;
    let mut st = session.prepare(query).await.map_err(|e| e.to_string())?;
    // cassandra-driver's default consistency, so every client asks for the same work.
    st.set_consistency(Consistency::LocalOne);
    let (session, st) = (Arc::new(session), Arc::new(st));
    let warmup: usize = std::env::var("BENCH_WARMUP_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    run_loops(
        session.clone(),
        st.clone(),
        workload,
        warmup.max(inflight),
        inflight,
    )
    .await?;
    perf("enable")?;
    let (u0, s0) = cpu_seconds();
    let t0 = Instant::now();
    run_loops(session.clone(), st.clone(), workload, ops, inflight).await?;
    let seconds = t0.elapsed().as_secs_f64();
    let (u1, s1) = cpu_seconds();
    perf("disable")?;
    println!(
        "{{\"driver\":\"rust-raw\",\"workload\":\"{workload}\",\"inflight\":{inflight},\"ops\":{ops},\"seconds\":{seconds:.4},\"cpu_seconds\":{:.4},\"user_seconds\":{:.4},\"system_seconds\":{:.4}}}",
        (u1 - u0) + (s1 - s0),
        u1 - u0,
        s1 - s0
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: weir-cql-bench-raw <insert|select1|select100> <in-flight> <ops> [host:port]";
    let (Some(w), Some(inflight), Some(ops)) = (
        args.first(),
        args.get(1)
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|v| *v >= 1),
        args.get(2).and_then(|v| v.parse::<usize>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let workload: &'static str = match w.as_str() {
        "insert" => "insert",
        "select1" => "select1",
        "select100" => "select100",
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let host = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| "127.0.0.1:9042".to_string());
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("weir-cql-bench-raw: runtime: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = rt.block_on(run(workload, inflight, ops, &host)) {
        eprintln!("weir-cql-bench-raw {workload}: {e}");
        std::process::exit(1);
    }
}
