//! A template that fails while a call is made names the key it was written under and the
//! misspelt name, whichever template it is (a confirmation's `read` included).

use std::collections::BTreeMap;

use serde_json::json;

use super::RenderError;
use super::confirm::ConfirmSpec;
use crate::dialect::spec_with;
use crate::endpoints::EndpointOverride;
use crate::models::Operation;

#[test]
fn a_typo_in_a_confirmation_read_names_the_key_and_the_name() {
    let table = EndpointOverride {
        confirm: Some(ConfirmSpec {
            read: Some("{{ captured.locaton }}".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let overrides = BTreeMap::from([("claim".to_string(), table)]);
    let endpoints = spec_with(&overrides).unwrap();
    let context = json!({"captured": {"location": "/operations/1"}});
    let error = endpoints
        .confirm_read(Operation::Claim, &context)
        .unwrap_err();
    assert!(
        matches!(
            error,
            RenderError::ConfirmRead {
                op: Operation::Claim,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.undefined_attribute().as_deref(),
        Some("captured.locaton")
    );
    assert!(
        error
            .to_string()
            .starts_with("endpoints.claim.confirm.read: "),
        "{error}"
    );
    let read = endpoints.confirm_read(Operation::Claim, &json!({"captured": {"locaton": "/x"}}));
    assert_eq!(read.unwrap(), "/x");
}
