//! What the resolved config hands out, seen from outside: `probe` and `run` retry a busy
//! staging the same way (the same attempts, the same first wait), and the system's root
//! certificates are read only when an https URL needs them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};

use crate::common::*;

/// When each attempt of each call arrived, by the call's trace (its retries share one).
type Arrivals = Arc<Mutex<BTreeMap<String, Vec<Instant>>>>;

/// A staging that answers every quote 503 with no announced wait: each call is retried after
/// the retry policy's own backoff.
async fn busy_staging() -> (String, Arrivals) {
    let arrivals = Arrivals::default();
    let seen = arrivals.clone();
    let router = axum::Router::new().fallback(move |headers: HeaderMap| {
        let seen = seen.clone();
        async move {
            let traceparent = headers
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            // version-TRACE-parent-flags: the trace is what a call's attempts share.
            let trace = traceparent
                .split('-')
                .nth(1)
                .unwrap_or_default()
                .to_string();
            seen.lock()
                .unwrap()
                .entry(trace)
                .or_default()
                .push(Instant::now());
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({"error": {"code": "BUSY", "message": "try later"}})),
            )
        }
    });
    (serve(router).await, arrivals)
}

/// Each call's attempts and the wait between its first two, once `command` has run.
async fn attempts_of(command: &[&str]) -> Vec<(usize, Duration)> {
    let (base, arrivals) = busy_staging().await;
    let dir = dir_with_config("[run]\nretries = 1\n");
    let mut args = command.to_vec();
    args.extend(["--base-url", &base]);
    let finished = ppcert(dir.path(), &args, Some("a-staging-token-0123456789")).await;
    assert_ne!(
        finished.code, 0,
        "a staging that is always busy passes nothing"
    );
    let arrivals = arrivals.lock().unwrap();
    assert!(!arrivals.is_empty(), "{}", finished.stderr);
    arrivals
        .values()
        .map(|times| {
            let wait = times.get(1).map_or(Duration::ZERO, |t| *t - times[0]);
            (times.len(), wait)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_and_run_retry_a_busy_staging_the_same_way() {
    let probed = attempts_of(&["probe"]).await;
    let ran = attempts_of(&["run", "--scenario", "smoke", "--out", "b", "--no-progress"]).await;
    for (command, calls) in [("probe", &probed), ("run", &ran)] {
        for (attempts, wait) in calls.iter() {
            // `[run] retries = 1`: one retry of each call, by both commands.
            assert_eq!(*attempts, 2, "{command}: {calls:?}");
            // The default first backoff (250 ms, plus jitter) before it: a wait that can only
            // be longer, never shorter (probe once retried at once, with no backoff at all).
            assert!(wait >= &Duration::from_millis(250), "{command}: {calls:?}");
        }
    }
}

/// `SSL_CERT_FILE` and `SSL_CERT_DIR` pointing nowhere: the system has no root certificate.
const NO_SYSTEM_ROOTS: [(&str, &str); 2] = [
    ("SSL_CERT_FILE", "/nonexistent/ppcert-roots.pem"),
    ("SSL_CERT_DIR", "/nonexistent/ppcert-roots"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_http_run_never_reads_the_system_roots() {
    // With no root certificate to be had, a client that read them at its start would fail
    // before the first request; over plain http none is needed, so none is read.
    let mut run = Run::embedded().scenario("smoke").args(&["--no-progress"]);
    for (name, value) in NO_SYSTEM_ROOTS {
        run = run.env(name, value);
    }
    let (finished, evidence, _dir) = run.evidence().await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    assert_eq!(evidence["verdict"], "passed", "{}", evidence["verdict"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_trusts_cacert_alone_or_the_system_roots_when_it_needs_them() {
    let base = crate::tls::private_ca_staging().await;
    let ca = crate::tls::fixture("private-ca.pem");
    let ca = ca.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let token = Some("a-staging-token-0123456789");
    // --cacert alone is enough: the system's roots, missing here, are not needed to build.
    let args = ["check-token", "--base-url", &base, "--cacert", ca];
    let mut command = ppcert_command(dir.path(), &args, token);
    command.envs(NO_SYSTEM_ROOTS);
    let alone = finished(command.output().await.unwrap());
    assert_eq!(alone.code, 0, "{}\n{}", alone.stdout, alone.stderr);
    // The system's roots, read at the first handshake, are trusted as before.
    let args = ["check-token", "--base-url", &base];
    let mut command = ppcert_command(dir.path(), &args, token);
    command.env("SSL_CERT_FILE", ca).env_remove("SSL_CERT_DIR");
    let system = finished(command.output().await.unwrap());
    assert_eq!(system.code, 0, "{}\n{}", system.stdout, system.stderr);
    // And with none to be had, an https staging is refused with the way out named.
    let mut command = ppcert_command(dir.path(), &args, token);
    command.envs(NO_SYSTEM_ROOTS);
    let none = finished(command.output().await.unwrap());
    assert_eq!(none.code, 4, "{}", none.stderr);
    assert!(none.stderr.contains("--cacert FILE"), "{}", none.stderr);
}
