//! Every store stops growing at its cap, however long the traffic goes on (docs/sandbox.md's
//! table): counted through `Sandbox::held`, never timed.

use ppcert_sandbox::SandboxOptions;

use ppcert_sandbox::testing::*;

/// Bookings with their contracts, and used or deleted quotes (four per booking held), stay
/// at their caps as bookings and deletions go on; open quotes and the expired ones remembered
/// stay at `max_open_quotes`.
#[tokio::test]
async fn bookings_contracts_and_quotes_stop_at_their_caps() {
    let sandbox = sandbox_with(SandboxOptions {
        max_open_quotes: 3,
        max_bookings: 2,
        ..SandboxOptions::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let mut most = ppcert_sandbox::Held::default();
    for i in 0..12 {
        api.subscribe(&format!("PP-BOUND-{i}")).await;
        let (id, _) = api.quote(1, 400.0).await;
        let deleted = api.send("DELETE", &format!("/quotes/{id}"), None).await;
        assert_eq!(deleted.status, 204, "{}", deleted.body);
        api.quote(1, 400.0).await;
        let held = sandbox.held();
        most.bookings = most.bookings.max(held.bookings);
        most.contracts = most.contracts.max(held.contracts);
        most.closed_quotes = most.closed_quotes.max(held.closed_quotes);
        most.open_quotes = most.open_quotes.max(held.open_quotes);
        most.expired_quotes = most.expired_quotes.max(held.expired_quotes);
        most.quotes = most.quotes.max(held.quotes);
        most.quote_references = most.quote_references.max(held.quote_references);
    }
    let held = sandbox.held();
    assert_eq!(held.bookings, 2, "{held:?}");
    assert_eq!(most.bookings, 2, "{most:?}");
    // One booking's contracts, as many as its products, times the bookings held.
    assert!(
        held.contracts > 0 && most.contracts <= held.contracts,
        "{most:?} {held:?}"
    );
    // 12 subscriptions and 12 deletions closed 24 quotes: 8 are kept.
    assert_eq!(held.closed_quotes, 8, "{held:?}");
    assert_eq!(most.closed_quotes, 8, "{most:?}");
    // 12 quotes left open: 3 kept, 9 expired by the limit, of which 3 remembered.
    assert_eq!((held.open_quotes, most.open_quotes), (3, 3), "{held:?}");
    assert_eq!(
        (held.expired_quotes, most.expired_quotes),
        (3, 3),
        "{held:?}"
    );
    assert_eq!(held.quotes, 3 + 8, "{held:?}");
    assert_eq!(held.quote_references, held.quotes, "{held:?}");
    assert!(most.quotes <= 3 + 8 + 2, "{most:?}");
}

/// One quote left unused kept every quote made after it in the expiry's queue for its 72 h:
/// the queue now stays within twice the open quotes' limit.
#[tokio::test]
async fn one_quote_left_open_does_not_hold_every_later_one() {
    let sandbox = sandbox_with(SandboxOptions {
        max_open_quotes: 3,
        ..SandboxOptions::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let (kept, _) = api.quote(1, 400.0).await;
    let mut most = 0;
    for _ in 0..40 {
        let (id, _) = api.quote(1, 400.0).await;
        let deleted = api.send("DELETE", &format!("/quotes/{id}"), None).await;
        assert_eq!(deleted.status, 204, "{}", deleted.body);
        most = most.max(sandbox.held().quotes_by_age);
    }
    assert!(most <= 2 * 3 + 1, "{most} entries for 1 open quote");
    // The open quote is still there, and still expires in its turn.
    let deleted = api.send("DELETE", &format!("/quotes/{kept}"), None).await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
}
