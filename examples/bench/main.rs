//! Benchmarks for ppcert, run by hand (not in CI): `cargo run --release --example bench -- all`.
//! Method and results: BENCHMARKS.md. Only loopback is contacted.
//!
//! - `critical`: sandbox latency 100 ms; wall time of the default batch at --concurrency 16 and
//!   4, divided by (longest dependency chain × 100 ms).
//! - `critical-path`: the batch at --concurrency 16 and 100 ms latency against a minimal client
//!   replaying the same requests (each flow's in order, flows 16 at a time, no gate) on the
//!   same server, alternated A B A B; the ratio of the medians. `PPCERT_BENCH_BEFORE=PATH`
//!   adds an earlier build's batch to each round, for a before/after in one run.
//! - `concurrency`: the same batch at --concurrency 1 versus 16.
//! - `soak`: `ppcert serve` under 60 s of sustained POST /quotes: requests/s and its RSS.
//! - `curve`: time per exchange and peak RSS at --scale 10, 100 and 1000 (linear or not).
//! - `scale`: --scale 100 against a zero-latency sandbox at --concurrency 32: exchanges per
//!   second and peak RSS (GNU time's %M) of the ppcert process alone.
//! - `throughput`: POST /quotes on the sandbox with keep-alive from wrk (needs `wrk`).
//! - `proxy`: p50 and p95 latency of POST /quotes with keep-alive, sent directly to a
//!   zero-latency sandbox, through `ppcert proxy` (the release binary) in front of it, and
//!   through `ppcert proxy --faults` with a plan none of these calls meets: the latency each
//!   proxy adds to a call without a fault (see `proxy.rs`); then its rate with one request in
//!   ten carrying a 1 MiB body against its small-body rate (`proxy-large` runs that alone).
//! - `webhook-flood`, `proxy-flood [SECS] [RUNS]`, `serve-batches [SECS]`: memory of the
//!   long-lived listeners under hostile or heavy traffic (see `listeners.rs`).
//! - `diff`: `ppcert diff` of two `--scale 100` bundles (see `diff.rs`).
//! - `start [RUNS]`: process start to the first request and last request to exit for the
//!   default batch, medians of RUNS (21); with `PPCERT_BENCH_BEFORE=PATH`, alternated with an
//!   earlier build (see `start.rs`).
//! - `cost [RUNS]`: CPU per exchange, `--scale 1000`, start and end costs, and the evidence
//!   tools' memory at two bundle sizes, each beside its goal (see `cost.rs`); `cost-tools`
//!   the evidence tools' figures alone.
//! - `serve-mixed [SECS]`: `ppcert serve` under SECS (default 120) of mixed load, its RSS
//!   sampled: whether it levels off, and at what (see `serve_mixed.rs`).

mod cost;
mod diff;
mod listeners;
mod proxy;
mod proxy_free;
mod serve_mixed;
mod start;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ppcert::sandbox::{Sandbox, SandboxOptions};

const RUNS: usize = 5;
const LATENCY: Duration = Duration::from_millis(100);

/// The release binary, under `CARGO_TARGET_DIR` when that is set (as `cargo run` passes it on).
fn binary() -> String {
    static BUILT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
            // Built here, once, not assumed: `cargo run --example` builds the library, not the
            // binary, and a stale binary would be measured without a word.
            let mut build = Command::new(env!("CARGO"));
            build
                .args(["build", "--release", "--bin", "ppcert", "--manifest-path"])
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"));
            // The variables `cargo run` sets for this example would make build scripts that
            // watch them run again, and the outer build after them: each bench would rebuild.
            for (name, _) in std::env::vars_os() {
                let name = name.to_string_lossy();
                if name.starts_with("CARGO_") && name != "CARGO_HOME" && name != "CARGO_TARGET_DIR"
                {
                    build.env_remove(name.as_ref());
                }
            }
            // `cargo run` also sets OUT_DIR (this package has a build script); ring's build
            // script watches it, and everything above ring would be rebuilt twice a bench.
            build.env_remove("OUT_DIR");
            let built = build.status().is_ok_and(|status| status.success());
            let path = target.join("release/ppcert");
            assert!(
                built && path.exists(),
                "cannot build: cargo build --release"
            );
            path.display().to_string()
        })
        .clone()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// Requests of the longest flow of the certification scenario (its dependency chain).
fn longest_chain() -> usize {
    let (_, text) = ppcert::scenario::BUILTIN[0];
    let scenario = ppcert::scenario::parse("certification", text)
        .unwrap()
        .scenario;
    let requests = |step: &ppcert::scenario::Step| match step {
        ppcert::scenario::Step::Update { .. } => 2,
        _ => 1,
    };
    scenario
        .flows
        .iter()
        .map(|f| f.steps.iter().map(requests).sum())
        .max()
        .unwrap_or(1)
}

struct Measured {
    wall: Duration,
    exchanges: usize,
    peak_kb: Option<u64>,
}

/// Runs the release binary against `sandbox`; times it and reads its peak RSS from GNU time.
fn run_ppcert(sandbox: &Sandbox, args: &[&str]) -> Measured {
    let dir = tempfile::tempdir().unwrap();
    run_ppcert_into(sandbox, args, &dir.path().join("b"))
}

/// As [`run_ppcert`], the bundle written to `out` (which must not exist yet).
fn run_ppcert_into(sandbox: &Sandbox, args: &[&str], out: &Path) -> Measured {
    run_binary_into(&binary(), sandbox, args, out)
}

/// As [`run_ppcert_into`], with the ppcert binary at `binary` (an earlier build, to compare).
fn run_binary_into(binary: &str, sandbox: &Sandbox, args: &[&str], out: &Path) -> Measured {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), sandbox.token()).unwrap();
    let out = out.display().to_string();
    let base = sandbox.base_url();
    let mut all = vec![
        "run",
        "--base-url",
        &base,
        "--token-file",
        "token",
        "--out",
        &out,
        "--quiet",
    ];
    all.extend_from_slice(args);
    let gnu_time = Path::new("/usr/bin/time").exists();
    let mut command = if gnu_time {
        Command::new("/usr/bin/time")
    } else {
        Command::new(binary)
    };
    if gnu_time {
        command.args(["-f", "%M", binary]);
    }
    let start = Instant::now();
    let output = command
        .args(&all)
        .current_dir(dir.path())
        .env_remove("PPCERT_TOKEN")
        .output()
        .unwrap();
    let wall = start.elapsed();
    assert!(
        output.status.success(),
        "ppcert failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let peak_kb = gnu_time
        .then(|| {
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .and_then(|l| l.trim().parse().ok())
        })
        .flatten();
    let evidence: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(&out).join("evidence.json")).unwrap())
            .unwrap();
    Measured {
        wall,
        exchanges: evidence["exchanges"].as_array().unwrap().len(),
        peak_kb,
    }
}

fn sandbox(runtime: &tokio::runtime::Runtime, latency: Duration) -> Sandbox {
    runtime
        .block_on(Sandbox::start(SandboxOptions {
            latency,
            claim_step: Duration::from_millis(50),
            ..SandboxOptions::default()
        }))
        .unwrap()
}

fn batch_seconds(runtime: &tokio::runtime::Runtime, concurrency: &str) -> f64 {
    let times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let sandbox = sandbox(runtime, LATENCY);
            run_ppcert(&sandbox, &["--concurrency", concurrency])
                .wall
                .as_secs_f64()
        })
        .collect();
    median(times)
}

fn critical(runtime: &tokio::runtime::Runtime) {
    let chain = longest_chain();
    let floor = chain as f64 * LATENCY.as_secs_f64();
    for concurrency in ["16", "4"] {
        let wall = batch_seconds(runtime, concurrency);
        println!(
            "critical path: concurrency {concurrency}: median wall {wall:.3} s over {RUNS} runs; chain {chain} x 100 ms = {floor:.1} s; ratio {:.3}",
            wall / floor
        );
    }
}

/// Each flow's requests as a run sent them (final attempts, in order): method, URL, body.
type Chains = Vec<Vec<(String, String, Option<serde_json::Value>)>>;

fn chains(evidence: &serde_json::Value) -> Chains {
    let mut by_flow: std::collections::BTreeMap<String, Vec<_>> = Default::default();
    for e in evidence["exchanges"].as_array().unwrap() {
        if e["retried"] == true {
            continue;
        }
        by_flow
            .entry(e["flow"].as_str().unwrap().to_string())
            .or_default()
            .push((
                e["method"].as_str().unwrap().to_string(),
                e["url"].as_str().unwrap().to_string(),
                e["request"]["body"]
                    .as_object()
                    .map(|_| e["request"]["body"].clone()),
            ));
    }
    by_flow.into_values().collect()
}

/// The minimal client: every chain in order, `width` chains at a time, answers ignored.
async fn replay(chains: &Chains, token: &str, width: usize) -> Duration {
    ppcert::engine::http::install_crypto_provider();
    let http = reqwest::Client::new();
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(width));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for chain in chains.iter().cloned() {
        let (http, token, permits) = (http.clone(), token.to_string(), permits.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.unwrap();
            for (method, url, body) in chain {
                let mut request = http
                    .request(method.parse().unwrap(), url)
                    .bearer_auth(&token)
                    .header("content-type", "application/json");
                if let Some(body) = body {
                    request = request.body(body.to_string());
                }
                let _ = request.send().await.map(|r| r.bytes());
            }
        });
    }
    tasks.join_all().await;
    start.elapsed()
}

/// ppcert's batch (A) and the minimal client replaying its requests (B), A B A B on one server.
/// With `PPCERT_BENCH_BEFORE=PATH`, an earlier ppcert binary's batch too, in each round before
/// A: the two builds side by side in one run.
fn critical_path(runtime: &tokio::runtime::Runtime) {
    let sandbox = sandbox(runtime, LATENCY);
    let dir = tempfile::tempdir().unwrap();
    let before = std::env::var("PPCERT_BENCH_BEFORE").ok();
    let (mut ours, mut minimal, mut earlier) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..RUNS {
        if let Some(binary) = &before {
            let out = dir.path().join(format!("before{round}"));
            let args = ["--concurrency", "16"];
            earlier.push(
                run_binary_into(binary, &sandbox, &args, &out)
                    .wall
                    .as_secs_f64(),
            );
        }
        let out = dir.path().join(format!("b{round}"));
        let measured = run_ppcert_into(&sandbox, &["--concurrency", "16"], &out);
        let evidence: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("evidence.json")).unwrap()).unwrap();
        let replayed = runtime.block_on(replay(&chains(&evidence), sandbox.token(), 16));
        ours.push(measured.wall.as_secs_f64());
        minimal.push(replayed.as_secs_f64());
    }
    let (a, b) = (median(ours), median(minimal));
    let floor = longest_chain() as f64 * LATENCY.as_secs_f64();
    println!(
        "critical-path: ppcert {a:.3} s ({:.3}x the {floor:.1} s chain), minimal client {b:.3} s ({:.3}x); ppcert / minimal {:.3} (medians of {RUNS}, A B A B)",
        a / floor,
        b / floor,
        a / b
    );
    if !earlier.is_empty() {
        let e = median(earlier);
        println!(
            "critical-path: before ({}) {e:.3} s ({:.3}x the chain, {:.3}x the minimal client); this build / before {:.3}",
            before.unwrap_or_default(),
            e / floor,
            e / b,
            a / e
        );
    }
}

fn concurrency(runtime: &tokio::runtime::Runtime) {
    let one = batch_seconds(runtime, "1");
    let sixteen = batch_seconds(runtime, "16");
    println!(
        "concurrency: 1 -> {one:.3} s, 16 -> {sixteen:.3} s (median of {RUNS}); speed-up {:.1}x",
        one / sixteen
    );
}

fn scale(runtime: &tokio::runtime::Runtime) {
    let mut rates = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..RUNS {
        let sandbox = sandbox(runtime, Duration::ZERO);
        let measured = run_ppcert(&sandbox, &["--scale", "100", "--concurrency", "32"]);
        rates.push(measured.exchanges as f64 / measured.wall.as_secs_f64());
        peaks.extend(measured.peak_kb.map(|kb| kb as f64 / 1024.0));
        println!(
            "  scale 100: {} exchanges in {:.3} s, peak RSS {:?} KiB",
            measured.exchanges,
            measured.wall.as_secs_f64(),
            measured.peak_kb
        );
    }
    let peak = median_peak(peaks);
    println!(
        "scale: median {:.0} exchanges/s, median peak RSS {peak}",
        median(rates)
    );
}

/// The median of the peak RSS measured, in MiB, or why there is none.
fn median_peak(peaks: Vec<f64>) -> String {
    if peaks.is_empty() {
        "unmeasured (install GNU time)".to_string()
    } else {
        format!("{:.1} MiB", median(peaks))
    }
}

/// Time per exchange and peak RSS at --scale 10, 100 and 1000 (zero latency, --concurrency
/// 32): flat per-exchange time means linear cost. Scale 1000 runs once (it takes a while).
fn curve(runtime: &tokio::runtime::Runtime) {
    for (scale, runs) in [("10", RUNS), ("100", RUNS), ("1000", 1)] {
        let mut per_exchange = Vec::new();
        let mut peaks = Vec::new();
        let mut rates = Vec::new();
        for _ in 0..runs {
            let sandbox = sandbox(runtime, Duration::ZERO);
            let measured = run_ppcert(&sandbox, &["--scale", scale, "--concurrency", "32"]);
            let seconds = measured.wall.as_secs_f64();
            per_exchange.push(seconds * 1e6 / measured.exchanges as f64);
            rates.push(measured.exchanges as f64 / seconds);
            peaks.extend(measured.peak_kb.map(|kb| kb as f64 / 1024.0));
        }
        let peak = median_peak(peaks);
        println!(
            "curve: scale {scale}: median {:.0} µs per exchange, {:.0} exchanges/s, peak RSS {peak} ({runs} run(s))",
            median(per_exchange),
            median(rates)
        );
    }
}

/// The body of a valid, future-dated quote.
fn quote_body() -> String {
    let departure =
        (chrono::Utc::now() + chrono::Duration::days(40)).format("%Y-%m-%dT10:00:00+00:00");
    let arrival =
        (chrono::Utc::now() + chrono::Duration::days(40)).format("%Y-%m-%dT12:05:00+00:00");
    format!(
        r#"{{"data":{{"currency":"EUR","trips":[{{"price":{{"amount":420.5,"currency":"EUR"}},"journeys":[{{"flights":[{{"airlineIata":"AF","number":"1234","departureAirportIata":"CDG","arrivalAirportIata":"FCO","departureDate":"{departure}","arrivalDate":"{arrival}"}}]}}],"travelers":[{{"ageRange":"ADULT"}}]}}]}}}}"#
    )
}

/// Latencies in µs of `count` sequential POST /quotes to `base` over one keep-alive connection.
async fn latencies(base: &str, token: &str, count: usize) -> Vec<f64> {
    let client = reqwest::Client::new();
    let body = quote_body();
    let mut spent = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let answer = client
            .post(format!("{base}/quotes"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("the quote is answered");
        assert_eq!(answer.status(), 201);
        let _ = answer.bytes().await;
        spent.push(started.elapsed().as_secs_f64() * 1e6);
    }
    spent
}

fn percentile(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * p).round() as usize]
}

/// Writes `dir/quote.lua`: wrk POSTs one valid, future-dated quote with `token`.
fn quote_script(dir: &Path, token: &str) {
    let body = quote_body();
    let script = format!(
        "wrk.method = \"POST\"\nwrk.body = [[{body}]]\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"Authorization\"] = \"Bearer {token}\"\n"
    );
    std::fs::write(dir.join("quote.lua"), script).unwrap();
}

/// `ppcert serve` (the release binary, its own process) under 60 s of sustained POST /quotes
/// with keep-alive: requests per second and the server's resident memory at the end.
fn soak() {
    use std::io::BufRead;
    let mut serve = Command::new(binary())
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--token",
            "soak-token-1234",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("ppcert serve starts");
    let stdout = serve.stdout.take().unwrap();
    let first = std::io::BufReader::new(stdout)
        .lines()
        .next()
        .and_then(Result::ok)
        .unwrap_or_default();
    let base = first.rsplit(' ').next().unwrap_or_default().to_string();
    let dir = tempfile::tempdir().unwrap();
    quote_script(dir.path(), "soak-token-1234");
    let output = Command::new("wrk")
        .args(["-t1", "-c64", "-d60s", "-s"])
        .arg(dir.path().join("quote.lua"))
        .arg(format!("{base}/quotes"))
        .output()
        .expect("wrk is installed (apt-get install wrk)");
    let text = String::from_utf8_lossy(&output.stdout);
    let rate = text
        .lines()
        .find(|l| l.starts_with("Requests/sec:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("?")
        .to_string();
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", serve.id())).unwrap_or_default();
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .unwrap_or("VmRSS: ?")
        .to_string();
    let _ = serve.kill();
    let _ = serve.wait();
    println!(
        "soak: ppcert serve, 60 s of POST /quotes (wrk -t1 -c64): {rate} requests/s, {} at the end{}",
        rss.trim_start_matches("VmRSS:").trim(),
        if text.contains("Non-2xx") {
            " (some answers were not 2xx)"
        } else {
            ""
        }
    );
}

fn throughput(runtime: &tokio::runtime::Runtime) {
    if Command::new("wrk").arg("--version").output().is_err() {
        println!("throughput: unmeasured (install the load generator: apt-get install wrk)");
        return;
    }
    let sandbox = sandbox(runtime, Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    quote_script(dir.path(), sandbox.token());
    let url = format!("{}/quotes", sandbox.base_url());
    let mut rates = Vec::new();
    for _ in 0..RUNS {
        let output = Command::new("wrk")
            .args(["-t1", "-c64", "-d5s", "-s"])
            .arg(dir.path().join("quote.lua"))
            .arg(&url)
            .output()
            .expect("wrk is installed (apt-get install wrk)");
        let text = String::from_utf8_lossy(&output.stdout);
        let rate = text
            .lines()
            .find(|l| l.starts_with("Requests/sec:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0);
        assert!(
            !text.contains("Non-2xx"),
            "every quote must be accepted:\n{text}"
        );
        println!("  wrk: {rate:.0} requests/s");
        rates.push(rate);
    }
    println!(
        "throughput: median {:.0} POST /quotes per second (wrk -t1 -c64, sandbox on the same 2 cores)",
        median(rates)
    );
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let all = which == "all";
    if all || which == "critical" {
        critical(&runtime);
    }
    if all || which == "critical-path" {
        critical_path(&runtime);
    }
    if all || which == "concurrency" {
        concurrency(&runtime);
    }
    if which == "curve" {
        curve(&runtime);
    }
    if which == "soak" {
        soak();
    }
    if all || which == "scale" {
        scale(&runtime);
    }
    if all || which == "throughput" {
        throughput(&runtime);
    }
    if all || which == "proxy" {
        proxy::proxy(&runtime);
    }
    if all || which == "diff" {
        diff::diff();
    }
    if all || which == "cost" {
        cost::cost(&runtime);
    }
    if which == "cost-tools" {
        cost::tools_only();
    }
    if which == "proxy-large" {
        proxy::large_bodies(&runtime);
    }
    if which == "start" {
        start::start(&runtime);
    }
    ppcert::engine::http::install_crypto_provider();
    let secs = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    if which == "webhook-flood" {
        listeners::webhook_flood(&runtime);
    }
    if which == "proxy-flood" {
        let runs = std::env::args()
            .nth(3)
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        listeners::proxy_flood(&runtime, secs, runs);
    }
    if which == "serve-batches" {
        listeners::serve_batches(secs);
    }
    if which == "serve-mixed" {
        let secs = std::env::args().nth(2).and_then(|s| s.parse().ok());
        serve_mixed::serve_mixed(&runtime, secs.unwrap_or(120));
    }
}
