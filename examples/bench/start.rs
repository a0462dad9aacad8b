//! `start [RUNS]`: process start to the staging's first request, and its last request to the
//! process's exit (the bundle written), for the default batch against the embedded sandbox at
//! zero latency. `PPCERT_BENCH_BEFORE=PATH` runs an earlier build in each round too, alternated
//! A B A B, so that both meet the same load on a shared machine. Medians.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One default batch of `binary`: milliseconds from spawn to the first request the sandbox
/// received, and from its last request to the process's exit; `None` when the watcher was not
/// scheduled while the batch ran (a machine loaded past its cores), so saw no request.
fn start_and_end_once(runtime: &tokio::runtime::Runtime, binary: &str) -> Option<(f64, f64)> {
    let sandbox = Arc::new(super::sandbox(runtime, Duration::ZERO));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), sandbox.token()).unwrap();
    let base = sandbox.base_url();
    let done = Arc::new(AtomicBool::new(false));
    // The sandbox's request count is watched from a thread that spins (yielding the core
    // when another thread wants it), so the resolution is microseconds.
    let watcher = {
        let (sandbox, done) = (sandbox.clone(), done.clone());
        std::thread::spawn(move || {
            let (mut first, mut last, mut seen) = (None, Instant::now(), 0);
            while !done.load(Ordering::Relaxed) {
                let now = sandbox.requests_received();
                if now != seen {
                    let at = Instant::now();
                    first.get_or_insert(at);
                    (last, seen) = (at, now);
                }
                std::thread::yield_now();
            }
            (first, last)
        })
    };
    let started = Instant::now();
    let status = std::process::Command::new(binary)
        .args(["run", "--base-url", &base, "--token-file", "token"])
        .args(["--quiet", "--out", "b"])
        .current_dir(dir.path())
        .env_remove("PPCERT_TOKEN")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    let exited = Instant::now();
    done.store(true, Ordering::Relaxed);
    let (first, last) = watcher.join().unwrap();
    assert!(status.success(), "the default batch passes");
    let start = (first? - started).as_secs_f64() * 1e3;
    Some((start, (exited - last).as_secs_f64() * 1e3))
}

/// Medians of `runs` rounds of each build in `binaries`, alternated.
pub(crate) fn start_and_end(
    runtime: &tokio::runtime::Runtime,
    binaries: &[String],
    runs: usize,
) -> Vec<(f64, f64)> {
    let mut measured = vec![(Vec::new(), Vec::new()); binaries.len()];
    for _ in 0..runs {
        for (binary, (starts, ends)) in binaries.iter().zip(measured.iter_mut()) {
            match start_and_end_once(runtime, binary) {
                Some((start, end)) => {
                    starts.push(start);
                    ends.push(end);
                }
                None => eprintln!("{binary}: a round left out: its requests were not seen"),
            }
        }
    }
    (measured.into_iter())
        .map(|(starts, ends)| (super::median(starts), super::median(ends)))
        .collect()
}

/// The line of one build's figures, beside their goals.
pub(crate) fn say(who: &str, (start, end): (f64, f64), runs: usize) {
    println!(
        "{who}: start to first request: median {start:.2} ms of {runs} (goal <= 2 ms); last request to exit, bundle written: median {end:.2} ms (goal <= 3 ms)"
    );
}

pub(crate) fn start(runtime: &tokio::runtime::Runtime) {
    let runs = (std::env::args().nth(2))
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    let mut binaries = vec![super::binary()];
    binaries.extend(std::env::var("PPCERT_BENCH_BEFORE").ok());
    let figures = start_and_end(runtime, &binaries, runs);
    for (binary, figures) in binaries.iter().zip(figures) {
        say(binary, figures, runs);
    }
}
