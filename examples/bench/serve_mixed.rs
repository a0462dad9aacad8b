//! `serve-mixed [SECS]`: `ppcert serve` (the release binary, its defaults) under SECS (default
//! 120) of mixed load: back-to-back certification batches (each a `ppcert run`: bookings,
//! contracts, claims, flight reports) beside 8 keep-alive clients sending quotes (open quotes
//! up to `--max-quotes`), one request in ten of theirs a 1 MiB body (refused). Its RSS is
//! sampled every 250 ms: it levels off when the last quarter rises no more than 5 % above the
//! third's highest reading, and the goal is a level at or below 200 MiB.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use super::listeners::{Sampler, batch, flood_client, mib, quarters, start, status_kib};

const TOKEN: &str = "bench-serve-token-1234";

/// The highest reading in samples `from..to` (fractions of the run).
fn highest(samples: &[(f64, u64)], from: f64, to: f64) -> u64 {
    let at = |f: f64| (samples.len() as f64 * f) as usize;
    (samples[at(from)..at(to)].iter())
        .map(|(_, kib)| *kib)
        .max()
        .unwrap_or(0)
}

pub(crate) fn serve_mixed(runtime: &tokio::runtime::Runtime, secs: u64) {
    let token_dir = tempfile::tempdir().unwrap();
    let token_file = token_dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let args = ["serve", "--addr", "127.0.0.1:0", "--token", TOKEN];
    let (mut child, addr) = start(&args, &[]);
    let sampler = Sampler::start(child.id());
    let until = Instant::now() + Duration::from_secs(secs);
    let base = format!("http://{addr}");
    let batches = std::thread::spawn(move || {
        let (mut batches, mut failed) = (0, 0);
        while Instant::now() < until {
            batches += 1;
            failed += usize::from(batch(&base, &token_file).is_some());
        }
        (batches, failed)
    });
    let quotes = Arc::new(AtomicU64::new(0));
    runtime.block_on(futures_util::future::join_all((0..8).map(|_| {
        let to = (addr.clone(), TOKEN.to_string());
        flood_client(to, until, 10, quotes.clone())
    })));
    let (batches, failed) = batches.join().unwrap();
    let samples = sampler.finish();
    let peak = status_kib(child.id(), "VmHWM:");
    let _ = child.kill();
    let _ = child.wait();
    let (third, last) = (highest(&samples, 0.5, 0.75), highest(&samples, 0.75, 1.0));
    let levelled = last as f64 <= third as f64 * 1.05;
    println!(
        "serve-mixed: {secs} s, {batches} certification batches ({failed} not passed) beside {} quote requests (one in ten 1 MiB): RSS {}; highest in the third quarter {}, in the last {}: {}; peak {} (goal: levels off at or below 200 MiB: {})",
        quotes.load(std::sync::atomic::Ordering::Relaxed),
        quarters(&samples),
        mib(third),
        mib(last),
        if levelled {
            "levelled off"
        } else {
            "still rising"
        },
        mib(peak),
        if levelled && peak <= 200 * 1024 {
            "met"
        } else {
            "not met"
        }
    );
}
