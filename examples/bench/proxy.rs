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
    start_with(&binary(), base, dir, name, extra)
}

/// [`start`] with the build at `bin`.
fn start_with(bin: &str, base: &str, dir: &Path, name: &str, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(bin)
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
/// (none when 0); and how many were sent.
fn rate(
    runtime: &tokio::runtime::Runtime,
    addr: &str,
    token: &str,
    large_every: u64,
) -> (f64, f64) {
    let sent = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + Duration::from_secs(LOAD_SECS);
    runtime.block_on(futures_util::future::join_all((0..16).map(|_| {
        let to = (addr.to_string(), token.to_string());
        super::listeners::flood_client(to, until, large_every, sent.clone())
    })));
    let sent = sent.load(Ordering::Relaxed) as f64;
    (sent / started.elapsed().as_secs_f64(), sent)
}

/// The CPU time (user + system) the process `pid` has used so far, in seconds; 0 when unknown.
fn cpu_secs(pid: Option<u32>) -> f64 {
    let Some(pid) = pid else { return 0.0 };
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's name in parentheses: utime and stime are the 12th and 13th fields.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<f64> = (rest.split_whitespace())
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    let ticks = fields.get(11).copied().unwrap_or(0.0) + fields.get(12).copied().unwrap_or(0.0);
    // USER_HZ, 100 on Linux.
    ticks / 100.0
}

/// One proxy's two rates over `RUNS` rounds, against `upstream`: requests per second of
/// the clock, and per CPU-second of the proxy process itself (what it forwards on a core of
/// its own, whatever the clients and the upstream beside it take).
struct Rates {
    label: String,
    addr: String,
    pid: Option<u32>,
    small: Vec<f64>,
    large: Vec<f64>,
    small_cpu: Vec<f64>,
    large_cpu: Vec<f64>,
}

impl Rates {
    fn new(label: &str, url: &str, pid: Option<u32>) -> Rates {
        let addr = url.trim_start_matches("http://").to_string();
        let label = label.to_string();
        let (small, large, small_cpu, large_cpu) = (vec![], vec![], vec![], vec![]);
        Rates {
            label,
            addr,
            pid,
            small,
            large,
            small_cpu,
            large_cpu,
        }
    }

    /// One load: its rate, and its requests per CPU-second of the proxy.
    fn load(&self, runtime: &tokio::runtime::Runtime, token: &str, every: u64) -> (f64, f64) {
        let cpu = cpu_secs(self.pid);
        let (rate, sent) = rate(runtime, &self.addr, token, every);
        (rate, sent / (cpu_secs(self.pid) - cpu).max(0.01))
    }

    /// One round: the small-body load, then the mixed one.
    fn round(&mut self, runtime: &tokio::runtime::Runtime, token: &str) {
        let (rate, per_cpu) = self.load(runtime, token, 0);
        self.small.push(rate);
        self.small_cpu.push(per_cpu);
        let (rate, per_cpu) = self.load(runtime, token, 10);
        self.large.push(rate);
        self.large_cpu.push(per_cpu);
    }

    fn last(&self) -> String {
        let (s, l) = (self.small.last().unwrap(), self.large.last().unwrap());
        let mut said = format!("{}: {s:.0} and {l:.0} ({:.2}x)", self.label, l / s);
        if self.pid.is_some() {
            let (s, l) = (
                self.small_cpu.last().unwrap(),
                self.large_cpu.last().unwrap(),
            );
            said += &format!(", per proxy CPU-second {s:.0} and {l:.0} ({:.2}x)", l / s);
        }
        said
    }

    /// The medians and their ratio, beside the goal when `goal`.
    fn say(&self, goal: bool) {
        let verdict = |ratio: f64| {
            let met = if ratio >= 0.5 { "met" } else { "not met" };
            if goal {
                format!(" (goal >= 0.50x: {met})")
            } else {
                String::new()
            }
        };
        let (small, large) = (median(self.small.clone()), median(self.large.clone()));
        let ratio = large / small;
        println!(
            "{}, 16 keep-alive clients for {LOAD_SECS} s a load (median of {RUNS}): {large:.0} requests/s with one in ten carrying a 1 MiB body, {small:.0} with small bodies only: {ratio:.2}x{}",
            self.label,
            verdict(ratio)
        );
        if self.pid.is_some() {
            let (small, large) = (
                median(self.small_cpu.clone()),
                median(self.large_cpu.clone()),
            );
            let ratio = large / small;
            println!(
                "  the same per CPU-second of the proxy process: {large:.0} requests with one in ten carrying 1 MiB, {small:.0} with small bodies only: {ratio:.2}x{}",
                verdict(ratio)
            );
        }
    }
}

/// The proxy's rate when one request in ten carries a 1 MiB body, against its rate with small
/// bodies only, each load alternated in each of `RUNS` rounds, so a busy machine weighs on
/// all. Measured twice: in front of the sandbox (the clients, the sandbox and the proxy share
/// the machine, and the same loads sent to the sandbox directly say how much of the drop is
/// the sandbox's), and in front of an upstream that costs next to nothing (`proxy_free`), so
/// that the rate is the proxy's own forwarding rate. With `PPCERT_BENCH_BEFORE=PATH`, that
/// build's proxy is measured in the same rounds.
pub(crate) fn large_bodies(runtime: &tokio::runtime::Runtime) {
    ppcert::engine::http::install_crypto_provider();
    let sandbox = sandbox(runtime, Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    let free = super::proxy_free::start(runtime, &base, sandbox.token());
    let this = binary();
    let before = std::env::var("PPCERT_BENCH_BEFORE").ok();
    let mut builds = vec![("", this.as_str())];
    if let Some(before) = &before {
        builds.push(("before: ", before.as_str()));
    }
    let (mut children, mut all) = (Vec::new(), Vec::new());
    for (n, (tag, bin)) in builds.iter().enumerate() {
        for (upstream, what) in [
            (&base, "proxy in front of the sandbox"),
            (
                &free,
                "proxy in front of a free upstream (its own forwarding rate)",
            ),
        ] {
            let name = format!("large-{n}-{}", all.len());
            let (child, url) = start_with(bin, upstream, dir.path(), &name, &[]);
            all.push(Rates::new(&format!("{tag}{what}"), &url, Some(child.id())));
            children.push(child);
        }
    }
    let mut direct = Rates::new("direct to the sandbox, the same loads", &base, None);
    for _ in 0..RUNS {
        for rates in all.iter_mut().chain(std::iter::once(&mut direct)) {
            rates.round(runtime, sandbox.token());
        }
        let said: Vec<String> = all.iter().chain([&direct]).map(Rates::last).collect();
        println!(
            "  requests/s, small bodies and one in ten with 1 MiB: {}",
            said.join("; ")
        );
    }
    children.into_iter().for_each(stop);
    direct.say(false);
    all.iter().for_each(|rates| rates.say(true));
}
