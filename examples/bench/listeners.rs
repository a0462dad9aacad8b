//! Memory of the long-lived listeners under hostile or heavy traffic (issue 25), each the
//! release binary in its own process, its resident memory read from `/proc/PID/status`:
//!
//! - `webhook-flood`: `ppcert webhook listen` under 40 forged 2 MB deliveries sent at once,
//!   with the default body limit and with `--max-body 4MiB` (read whole, then refused):
//!   peak RSS (VmHWM), median of 5 fresh processes.
//! - `proxy-flood [SECS] [RUNS]`: `ppcert proxy` in front of a zero-latency sandbox under SECS
//!   (default 60) of 16 keep-alive clients, one request in ten carrying a 1 MiB body, then
//!   quotes only: RSS each quarter and at the peak under traffic, then Ctrl-C, the peak over the
//!   process's whole life (`VmHWM` until it is gone: the bundle's writing included), the
//!   bundle's size and `ppcert verify`; RUNS (default 1) fresh processes each, with the medians.
//! - `serve-batches [SECS]`: `ppcert serve` under back-to-back certification batches (each a
//!   `ppcert run`) for SECS (default 60): RSS each quarter and at the peak, at the default
//!   `--max-bookings` and at 300 (so that eviction happens within the run); a batch that does
//!   not pass is printed with its first failure in the server's words, its bundle kept.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{RUNS, binary, median, quote_body};

/// A `/proc/PID/status` field in KiB (`VmRSS`, `VmHWM`).
pub(crate) fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub(crate) fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Starts the release binary with `args`; returns it and the `host:port` of its first line.
pub(crate) fn start(args: &[&str], env: &[(&str, &str)]) -> (Child, String) {
    let mut command = Command::new(binary());
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("ppcert starts");
    let first = std::io::BufReader::new(child.stdout.take().unwrap())
        .lines()
        .next()
        .and_then(Result::ok)
        .unwrap_or_default();
    let addr = first
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap_or_default()
        .to_string();
    (child, addr)
}

fn interrupt(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
}

/// Samples a process's RSS every 250 ms until stopped: (seconds since start, KiB).
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<(f64, u64)>>,
}

impl Sampler {
    pub(crate) fn start(pid: u32) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut samples = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                samples.push((started.elapsed().as_secs_f64(), status_kib(pid, "VmRSS:")));
                std::thread::sleep(Duration::from_millis(250));
            }
            samples
        });
        Sampler { stop, thread }
    }

    pub(crate) fn finish(self) -> Vec<(f64, u64)> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// RSS at each quarter of the samples: whether memory is flat shows at a glance.
pub(crate) fn quarters(samples: &[(f64, u64)]) -> String {
    if samples.is_empty() {
        return "no samples".into();
    }
    (1..=4)
        .map(|q| {
            let (at, kib) = samples[(samples.len() * q / 4).saturating_sub(1)];
            format!("{at:.0} s {}", mib(kib))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

const SECRET: &str = "whsec_YmVuY2gtd2ViaG9vay1zZWNyZXQ=";

/// One fresh `webhook listen`, 40 forged 2 MB deliveries at once: its peak RSS in KiB and the
/// statuses answered.
fn webhook_once(runtime: &tokio::runtime::Runtime, extra: &[&str]) -> (u64, Vec<u16>) {
    let mut args = vec!["webhook", "listen", "--addr", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let (mut child, addr) = start(&args, &[("PPCERT_WEBHOOK_SECRET", SECRET)]);
    let body = format!(
        r#"{{"event":"claim.updated","data":{{"pad":"{}"}}}}"#,
        "x".repeat(2_000_000)
    );
    let statuses = runtime.block_on(async {
        let client = reqwest::Client::new();
        let sends = (0..40).map(|i| {
            let request = client
                .post(format!("http://{addr}/hooks"))
                .header("koala-signature", format!("{i:064x}"))
                .body(body.clone());
            async move { request.send().await.map_or(0, |r| r.status().as_u16()) }
        });
        futures_util::future::join_all(sends).await
    });
    let peak = status_kib(child.id(), "VmHWM:");
    let _ = child.kill();
    let _ = child.wait();
    (peak, statuses)
}

pub fn webhook_flood(runtime: &tokio::runtime::Runtime) {
    for (label, extra) in [
        ("default limits (1 MiB body)", &[][..]),
        ("--max-body 4MiB", &["--max-body", "4MiB"][..]),
    ] {
        let mut peaks = Vec::new();
        let mut answered = Vec::new();
        for _ in 0..RUNS {
            let (peak, statuses) = webhook_once(runtime, extra);
            peaks.push(peak as f64);
            answered = statuses;
        }
        answered.sort_unstable();
        answered.dedup();
        println!(
            "webhook-flood, {label}: 40 forged 2 MB deliveries at once, answered {answered:?}; peak RSS median {} (runs: {})",
            mib(median(peaks.clone()) as u64),
            peaks
                .iter()
                .map(|p| mib(*p as u64))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// One keep-alive client sending until `until`: quotes, and every `large_every`th request a
/// 1 MiB body (never when 0).
pub(crate) async fn flood_client(
    (addr, token): (String, String),
    until: Instant,
    large_every: u64,
    sent: Arc<AtomicU64>,
) {
    let client = reqwest::Client::new();
    // Shared, not copied for each request: the load generator shares the machine.
    let quote = axum::body::Bytes::from(quote_body());
    let large =
        axum::body::Bytes::from(format!(r#"{{"data":{{"pad":"{}"}}}}"#, "z".repeat(1 << 20)));
    let mut n = 0u64;
    while Instant::now() < until {
        n += 1;
        let large_now = large_every > 0 && n.is_multiple_of(large_every);
        let body = if large_now {
            large.clone()
        } else {
            quote.clone()
        };
        let answer = client
            .post(format!("http://{addr}/quotes"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await;
        if let Ok(answer) = answer {
            let _ = answer.bytes().await;
            sent.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn dir_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Watches a process's peak RSS (`VmHWM`) every 10 ms until it is gone: the last reading is
/// its peak over its whole life, what it does after the last sample of traffic (writing the
/// bundle) included, but for its last 10 ms (exiting, which only frees). Not wait4(2)'s
/// `ru_maxrss`: across exec that keeps the peak of the process that spawned it (this bench,
/// which holds the sandbox and its every quote), which is not the proxy's.
struct PeakWatch(std::thread::JoinHandle<u64>);

impl PeakWatch {
    fn start(pid: u32) -> PeakWatch {
        PeakWatch(std::thread::spawn(move || {
            let mut peak = 0;
            loop {
                // A process that has ended (a zombie included) has no VmHWM any more.
                let kib = status_kib(pid, "VmHWM:");
                if kib == 0 {
                    return peak;
                }
                peak = peak.max(kib);
                std::thread::sleep(Duration::from_millis(10));
            }
        }))
    }

    fn finish(self) -> u64 {
        self.0.join().unwrap_or(0)
    }
}

pub fn proxy_flood(runtime: &tokio::runtime::Runtime, secs: u64, runs: usize) {
    for large_every in [10, 0] {
        let (mut under_traffic, mut whole_life) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let (traffic, life) = proxy_flood_once(runtime, secs, large_every);
            under_traffic.push(traffic as f64);
            whole_life.push(life as f64);
        }
        println!(
            "proxy-flood, {}: median of {runs}: peak under traffic {}, whole-life peak {} (runs: {})",
            flood_name(large_every),
            mib(median(under_traffic) as u64),
            mib(median(whole_life.clone()) as u64),
            whole_life
                .iter()
                .map(|p| mib(*p as u64))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

fn flood_name(large_every: u64) -> String {
    if large_every > 0 {
        format!("one in {large_every} with a 1 MiB body")
    } else {
        "quotes only".to_string()
    }
}

/// One fresh proxy under SECS of flood, then Ctrl-C: its peak RSS under traffic and over its
/// whole life, in KiB.
fn proxy_flood_once(runtime: &tokio::runtime::Runtime, secs: u64, large_every: u64) -> (u64, u64) {
    let sandbox = super::sandbox(runtime, Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let base = sandbox.base_url();
    let out_arg = out.display().to_string();
    let (mut child, addr) = start(
        &[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--base-url",
            &base,
            "--out",
            &out_arg,
        ],
        &[],
    );
    let sampler = Sampler::start(child.id());
    let whole_life = PeakWatch::start(child.id());
    let sent = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(secs);
    runtime.block_on(async {
        let clients = (0..16).map(|_| {
            let to = (addr.clone(), sandbox.token().to_string());
            flood_client(to, until, large_every, sent.clone())
        });
        futures_util::future::join_all(clients).await;
    });
    let samples = sampler.finish();
    let peak = status_kib(child.id(), "VmHWM:");
    let stopping = Instant::now();
    interrupt(&mut child);
    let whole_life = whole_life.finish();
    let written = stopping.elapsed().as_secs_f64();
    let _ = child.wait();
    let verified = Command::new(binary())
        .args(["verify", &out_arg])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let exchanges = sent.load(Ordering::Relaxed);
    let size = dir_size(&out);
    println!(
        "proxy-flood: {secs} s, 16 clients, {exchanges} exchanges ({}): RSS {}; peak under traffic {}; Ctrl-C to bundle written {written:.1} s; whole-life peak {}; bundle {} ({} bytes an exchange), verify {}",
        flood_name(large_every),
        quarters(&samples),
        mib(peak),
        mib(whole_life),
        mib(size / 1024),
        size / exchanges.max(1),
        if verified { "ok" } else { "FAILED" }
    );
    (peak, whole_life)
}

/// One certification batch against `base`, the release binary as a user runs it: `None` when
/// it passed, else its exit code and what it printed, its bundle kept for a look.
pub(crate) fn batch(base: &str, token_file: &std::path::Path) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let finished = Command::new(binary())
        .args(["run", "--base-url", base, "--token-file"])
        .arg(token_file)
        .args(["--quiet", "--concurrency", "8", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .ok()?;
    if finished.status.success() {
        return None;
    }
    // The report's first failure says why in the server's words: a 409 "booking number …
    // already sent" is another batch's booking (run ids collided), anything else is ppcert's
    // or the sandbox's.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap_or_default();
    let first_failure = report
        .lines()
        .find(|l| l.starts_with("| ") && l.contains("| HTTP "))
        .unwrap_or("no failed exchange in report.md")
        .to_string();
    let kept = dir.keep();
    Some(format!(
        "exit {:?}, bundle {}: {first_failure} {}",
        finished.status.code(),
        kept.join("b").display(),
        String::from_utf8_lossy(&finished.stderr).trim()
    ))
}

pub fn serve_batches(secs: u64) {
    let token_dir = tempfile::tempdir().unwrap();
    let token_file = token_dir.path().join("token");
    std::fs::write(&token_file, "bench-serve-token-1234").unwrap();
    for max_bookings in [None, Some("300")] {
        let mut args = vec![
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--token",
            "bench-serve-token-1234",
        ];
        if let Some(max) = max_bookings {
            args.extend_from_slice(&["--max-bookings", max]);
        }
        let (mut child, addr) = start(&args, &[]);
        let base = format!("http://{addr}");
        let sampler = Sampler::start(child.id());
        let until = Instant::now() + Duration::from_secs(secs);
        let (mut batches, mut failed) = (0, 0);
        while Instant::now() < until {
            batches += 1;
            if let Some(why) = batch(&base, &token_file) {
                failed += 1;
                println!("  batch {batches} not passed: {why}");
            }
        }
        let samples = sampler.finish();
        let peak = status_kib(child.id(), "VmHWM:");
        let _ = child.kill();
        let _ = child.wait();
        println!(
            "serve-batches, --max-bookings {}: {secs} s, {batches} certification batches ({failed} not passed): RSS {}; peak {}",
            max_bookings.unwrap_or("10000 (default)"),
            quarters(&samples),
            mib(peak)
        );
    }
}
