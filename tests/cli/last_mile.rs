//! Issue 39's first done-when: a staging with trailing-slash paths, a required version header,
//! decimal-string amounts, UTC-only date-times, gzip answers and a `PUT` flight-status call,
//! all at once, certified with transport.md's config alone (no date arithmetic in it), its
//! counts equal to the staging's.

use ppcert::models::Operation;
use ppcert::sandbox::{DeltaShape, Layout, Quirks, SandboxOptions, Transport};

use crate::common::*;

const CONFIG: &str = "# ppcert.toml: a staging behind a gateway";

fn gateway_staging() -> SandboxOptions {
    SandboxOptions {
        layout: Layout {
            price_delta: DeltaShape::String,
            ..Layout::default()
        },
        transport: Transport {
            gzip: true,
            required_headers: vec![("X-Api-Version".into(), "2".into())],
            ..Transport::default()
        },
        quirks: Quirks {
            trailing_slash: true,
            utc_only: true,
            flight_status_put: true,
        },
        ..fast_options()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_staging_with_all_six_is_certified_from_the_docs_alone() {
    let sandbox = sandbox_with(gateway_staging()).await;
    let config = toml_block(include_str!("../../docs/transport.md"), CONFIG);
    let (finished, evidence, _dir) = Run::against(&sandbox)
        .config(&config)
        .args(&["--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert_eq!(evidence["verdict"], "passed");
    assert!(every_requirement_met(&evidence));
    ledger_equals(&evidence, &sandbox);
    // Each of the six was met, not stepped around: every call slashed and asking for gzip,
    // no bare path redirected, no offset refused, the reports made by PUT.
    let seen = sandbox.quirks_seen();
    let calls = sandbox.requests_received();
    assert!(calls > 0);
    assert_eq!(seen.slashed, calls, "{seen:?}");
    assert_eq!(seen.gzip_accepted, calls, "{seen:?}");
    assert_eq!((seen.redirected, seen.not_utc), (0, 0), "{seen:?}");
    let reports = sandbox.counts()[&Operation::FlightCancellation];
    assert!(reports >= 3);
    assert_eq!(seen.flight_status_puts, reports, "{seen:?}");
}
