//! A misspelt name in a template is named, with what its mapping holds, by `validate`, `run`
//! and `probe` alike, before anything is sent: in a path, a body, a header, a
//! `captured.NAME` read, and a multipart part's body; piped to a filter or not.

use crate::common::*;

/// (the config, the misspelt name, what its mapping holds, the line it is on).
const TYPOS: [(&str, &str, &str, &str); 6] = [
    (
        "[endpoints.update]\npath = \"/subscriptions/{{ booking.numbr }}\"\n",
        "`booking.numbr`: no such attribute",
        "booking has client, currency, language, number",
        "ppcert.toml:2",
    ),
    (
        "[endpoints.flight_cancellation]\nbody = '{\"data\": {\"airline\": {{ flight.airline_iata | tojson }}}}'\n",
        "`flight.airline_iata`: no such attribute",
        "flight has airlineIata, arrivalAirportIata, arrivalDate",
        "ppcert.toml:2",
    ),
    (
        "[endpoints.quote.headers]\nX-Partner = \"{{ partner.id }}\"\n",
        "`partner.id`: no such attribute",
        "the context of quote has beneficiary, booking, captured",
        "ppcert.toml:2",
    ),
    (
        "[endpoints.read_contracts.capture]\netag = { header = \"ETag\" }\n\n[endpoints.update.headers]\nIf-Match = \"{{ captured.etgg }}\"\n",
        "`captured.etgg`: no such attribute",
        "captured has ",
        "ppcert.toml:5",
    ),
    (
        "[endpoints.quote]\nbody = '{\"data\": {\"currency\": \"{{ request.data.currencyy }}\"}}'\n",
        "`request.data.currencyy`: no such attribute",
        "request.data has currency, trips",
        "ppcert.toml:2",
    ),
    (
        "[[endpoints.claim.parts]]\nname = \"claim\"\nbody = '{{ request.data | tojson }}'\n\n[[endpoints.claim.parts]]\nname = \"note\"\ncontent_type = \"text/plain\"\nbody = \"{{ contract.idd }}\"\n",
        "`contract.idd`: no such attribute",
        "contract has id",
        "ppcert.toml:",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typo_is_named_with_its_mappings_keys_in_validate_run_and_probe() {
    let sandbox = sandbox_with(fast_options()).await;
    let base = sandbox.base_url();
    for (config, named, there, line) in TYPOS {
        let dir = dir_with_config(config);
        let validate = ppcert(dir.path(), &["validate"], None).await;
        let run = ppcert(
            dir.path(),
            &["run", "--base-url", &base],
            Some(sandbox.token()),
        )
        .await;
        let probe = ppcert(
            dir.path(),
            &["probe", "--base-url", &base],
            Some(sandbox.token()),
        )
        .await;
        for (command, finished) in [("validate", &validate), ("run", &run), ("probe", &probe)] {
            let said = format!(
                "{command} of\n{config}\n{}{}",
                finished.stdout, finished.stderr
            );
            assert_eq!(finished.code, 2, "{said}");
            assert!(finished.stderr.contains(named), "{said}");
            assert!(finished.stderr.contains(there), "{said}");
        }
        assert!(
            validate.stderr.contains(line),
            "{config}\n{}",
            validate.stderr
        );
    }
    assert_eq!(sandbox.requests_received(), 0, "nothing was sent");
}
