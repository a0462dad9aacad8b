//! `proxy`: the latency `ppcert proxy` adds to a call without a fault, with and without a
//! `--faults` plan. POST /quotes with keep-alive to a zero-latency sandbox: directly, through
//! a plain proxy, and through a proxy whose plan names the quote (a call number never reached)
//! and the claim, so each call is matched against the plan and relayed untouched. The three
//! are measured in turn in each round, on the same sandbox, so a busy machine weighs on all.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{RUNS, binary, latencies, median, percentile, sandbox};

/// A plan none of the bench's calls meets: a quote fault far past the calls sent, and a
/// claim fault (no claim is sent).
const PLAN: &str = "[[faults]]\noperation = \"quote\"\nkind = \"status\"\nstatus = 429\nretry_after = \"1s\"\nnth = 4000000000\n\n[[faults]]\noperation = \"claim\"\nkind = \"status\"\nstatus = 503\nnth = 1\n";

/// Calls per round and path.
const CALLS: usize = 2000;

/// `ppcert proxy` in front of `base`, its bundle under `dir`, then `extra`; its URL.
fn start(base: &str, dir: &Path, name: &str, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(binary())
        .args(["proxy", "--listen", "127.0.0.1:0", "--base-url", base])
        .args(extra)
        .arg("--out")
        .arg(dir.join(name))
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("ppcert proxy starts");
    let first = std::io::BufReader::new(child.stdout.take().unwrap())
        .lines()
        .next()
        .and_then(Result::ok)
        .unwrap_or_default();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("ppcert proxy says where it listens")
        .to_string();
    (child, url)
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

pub(crate) fn proxy(runtime: &tokio::runtime::Runtime) {
    ppcert::engine::http::install_crypto_provider();
    let sandbox = sandbox(runtime, Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.toml"), PLAN).unwrap();
    let base = sandbox.base_url();
    let (plain, plain_url) = start(&base, dir.path(), "plain", &[]);
    let (faults, faults_url) = start(&base, dir.path(), "faults", &["--faults", "plan.toml"]);
    let token = sandbox.token();
    let (mut direct, mut proxied, mut planned) = (Vec::new(), Vec::new(), Vec::new());
    let p50 = |v: &[f64]| percentile(v.to_vec(), 0.5);
    let p95 = |v: &[f64]| percentile(v.to_vec(), 0.95);
    for _ in 0..RUNS {
        let d = runtime.block_on(latencies(&base, token, CALLS));
        let p = runtime.block_on(latencies(&plain_url, token, CALLS));
        let f = runtime.block_on(latencies(&faults_url, token, CALLS));
        println!(
            "  p50/p95 µs: direct {:.0}/{:.0}; proxy {:.0}/{:.0}; proxy --faults {:.0}/{:.0}",
            p50(&d),
            p95(&d),
            p50(&p),
            p95(&p),
            p50(&f),
            p95(&f)
        );
        direct.push(p50(&d));
        proxied.push(p50(&p));
        planned.push(p50(&f));
    }
    stop(plain);
    stop(faults);
    let (direct, proxied, planned) = (median(direct), median(proxied), median(planned));
    println!(
        "proxy: POST /quotes p50 {direct:.0} µs direct, {proxied:.0} µs through ppcert proxy: {:.0} µs added (median of {RUNS} runs of {CALLS} keep-alive requests)",
        proxied - direct
    );
    println!(
        "proxy --faults, calls without a fault: p50 {planned:.0} µs: {:.0} µs added, {:+.0} µs against the proxy without a plan (goal: unchanged, within the rounds' spread above)",
        planned - direct,
        planned - proxied
    );
    large_bodies(runtime);
}

/// Seconds of each load in a round of [`large_bodies`].
const LOAD_SECS: u64 = 5;

/// Requests per second forwarded by a plain proxy to a zero-latency sandbox from 16
/// keep-alive clients during `LOAD_SECS`, one request in `large_every` carrying a 1 MiB body
/// (none when 0).
fn rate(runtime: &tokio::runtime::Runtime, addr: &str, token: &str, large_every: u64) -> f64 {
    let sent = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + Duration::from_secs(LOAD_SECS);
    runtime.block_on(futures_util::future::join_all((0..16).map(|_| {
        let to = (addr.to_string(), token.to_string());
        super::listeners::flood_client(to, until, large_every, sent.clone())
    })));
    sent.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

/// The proxy's rate when one request in ten carries a 1 MiB body, against its rate with small
/// bodies only: the two loads alternated in each of `RUNS` rounds on one proxy, so a busy
/// machine weighs on both; the goal is at least half. The same two loads sent to the sandbox
/// directly say how much of the drop is the proxy's (the clients, the sandbox and the proxy
/// share the machine).
pub(crate) fn large_bodies(runtime: &tokio::runtime::Runtime) {
    ppcert::engine::http::install_crypto_provider();
    let sandbox = sandbox(runtime, Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let (proxy, url) = start(&sandbox.base_url(), dir.path(), "large", &[]);
    let addr = url.trim_start_matches("http://").to_string();
    let base = sandbox.base_url();
    let direct = base.trim_start_matches("http://");
    let (mut small, mut large, mut direct_small, mut direct_large) =
        (vec![], vec![], vec![], vec![]);
    for _ in 0..RUNS {
        small.push(rate(runtime, &addr, sandbox.token(), 0));
        large.push(rate(runtime, &addr, sandbox.token(), 10));
        direct_small.push(rate(runtime, direct, sandbox.token(), 0));
        direct_large.push(rate(runtime, direct, sandbox.token(), 10));
        println!(
            "  requests/s through the proxy: small bodies {:.0}, one in ten with 1 MiB {:.0}; direct: {:.0}, {:.0}",
            small.last().unwrap(),
            large.last().unwrap(),
            direct_small.last().unwrap(),
            direct_large.last().unwrap()
        );
    }
    stop(proxy);
    let (small, large) = (median(small), median(large));
    let ratio = large / small;
    let (direct_small, direct_large) = (median(direct_small), median(direct_large));
    println!(
        "direct to the sandbox, the same loads: {direct_large:.0} requests/s with one in ten carrying 1 MiB, {direct_small:.0} with small bodies only: {:.2}x",
        direct_large / direct_small
    );
    println!(
        "proxy, 16 keep-alive clients for {LOAD_SECS} s a load (median of {RUNS}): {large:.0} requests/s with one in ten carrying a 1 MiB body, {small:.0} with small bodies only: {ratio:.2}x (goal >= 0.50x: {})",
        if ratio >= 0.5 { "met" } else { "not met" }
    );
}
