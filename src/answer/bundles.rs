//! Multi-bundle quote answers: the provider documents a quote answer as `{"data": [ ... ]}`, one
//! entry per bundle (Silver, Gold, ...), each with its own id, reference, price and T&C
//! `documents`. A flow reads the entry of the bundle its partner sells (`[partner] bundle`);
//! one entry needs no choice; several without a choice is an error naming them.

use serde_json::{Value, json};

use crate::record::TermsLink;

/// The entry a flow reads, and what the evidence says of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chosen {
    /// The bundle's name; `None` when the entry does not name one.
    pub name: Option<String>,
    /// Where the entry is (`$.data[1]`).
    pub at: String,
    /// The answer as the captures read it: `{"data": ENTRY}`.
    pub view: Value,
    pub documents: Vec<TermsLink>,
}

/// Keys a bundle's technical name is found under, in order.
const NAME_KEYS: [&str; 5] = ["bundle", "name", "bundleName", "technicalName", "code"];

/// The entries of a multi-bundle answer: `data` (or the body itself) as an array of objects.
pub(crate) fn entries(body: &Value) -> Option<(&[Value], &'static str)> {
    let (items, root) = match body.get("data") {
        Some(Value::Array(items)) => (items, "$.data"),
        Some(_) => return None,
        None => match body {
            Value::Array(items) => (items, "$"),
            _ => return None,
        },
    };
    items
        .iter()
        .all(Value::is_object)
        .then_some((items.as_slice(), root))
}

/// The bundle's technical name of one entry: a name key (a string, or an object's `name`),
/// else the one bundle all of its documents name.
pub(crate) fn bundle_name(entry: &Value) -> Option<String> {
    let named = NAME_KEYS.iter().find_map(|key| match entry.get(*key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Object(o) => o
            .get("name")
            .or_else(|| o.get("technicalName"))
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    });
    named.or_else(|| {
        let mut named: Vec<&str> = documents_of(entry)
            .iter()
            .filter_map(|d| d.get("bundles"))
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        named.dedup();
        (named.len() == 1).then(|| named[0].to_string())
    })
}

fn documents_of(entry: &Value) -> &[Value] {
    entry
        .get("documents")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The T&C links an entry offers for `name` (documents naming no bundle are for every one).
fn terms(entry: &Value, name: Option<&str>) -> Vec<TermsLink> {
    let text = |d: &Value, key: &str| d.get(key).and_then(Value::as_str).map(str::to_string);
    documents_of(entry)
        .iter()
        .filter(|d| {
            let listed = d.get("bundles").and_then(Value::as_array);
            match (listed, name) {
                (Some(list), Some(name)) if !list.is_empty() => list
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|b| b.eq_ignore_ascii_case(name)),
                _ => true,
            }
        })
        .filter_map(|d| {
            Some(TermsLink {
                url: text(d, "url")?,
                language: text(d, "language"),
                product_type: text(d, "productType"),
            })
        })
        .collect()
}

/// The names of every entry, for messages (`#2` for an entry without one).
pub(crate) fn names(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .enumerate()
        .map(|(i, e)| bundle_name(e).unwrap_or_else(|| format!("#{}", i + 1)))
        .collect()
}

/// Why no entry could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BundleError {
    #[error("the quote answer lists no bundle (`data` is an empty array)")]
    Empty,
    #[error(
        "the quote answer offers {} bundles ({}): set `[partner] bundle = \"NAME\"` in ppcert.toml to the one this partner sells",
        .found.len(), .found.join(", ")
    )]
    Ambiguous { found: Vec<String> },
    #[error(
        "the quote answer offers no bundle `{wanted}` (it offers {}): check `[partner] bundle` in ppcert.toml",
        .found.join(", ")
    )]
    Missing { wanted: String, found: Vec<String> },
}

/// The entry of a multi-bundle answer a flow reads; `Ok(None)` when the answer is not one.
pub(crate) fn choose(body: &Value, wanted: Option<&str>) -> Result<Option<Chosen>, BundleError> {
    let Some((items, root)) = entries(body) else {
        return Ok(None);
    };
    let index = match (items.len(), wanted) {
        (0, _) => return Err(BundleError::Empty),
        (_, Some(wanted)) => items
            .iter()
            .position(|e| bundle_name(e).is_some_and(|n| n.eq_ignore_ascii_case(wanted)))
            .ok_or_else(|| BundleError::Missing {
                wanted: wanted.to_string(),
                found: names(items),
            })?,
        (1, None) => 0,
        (_, None) => {
            return Err(BundleError::Ambiguous {
                found: names(items),
            });
        }
    };
    let entry = &items[index];
    let name = bundle_name(entry);
    Ok(Some(Chosen {
        documents: terms(entry, name.as_deref()),
        name,
        at: format!("{root}[{index}]"),
        view: json!({ "data": entry }),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> Value {
        json!({"data": [
            {"id": "q1", "reference": "R-SILVER", "bundle": "Silver",
             "documents": [{"bundles": ["Silver"], "language": "en", "productType": "WITHDRAWAL", "url": "https://t/s.pdf"}]},
            {"id": "q2", "reference": "R-GOLD", "name": "Gold",
             "documents": [{"bundles": ["Silver", "Gold"], "language": "en", "productType": "WITHDRAWAL", "url": "https://t/w.pdf"},
                           {"bundles": ["Gold"], "language": "fr", "productType": "FLIGHT_DISRUPTION", "url": "https://t/g.pdf"}]}
        ]})
    }

    #[test]
    fn the_chosen_bundle_is_read_whatever_its_case_with_its_own_terms() {
        let chosen = choose(&answer(), Some("gold")).unwrap().unwrap();
        assert_eq!(chosen.name.as_deref(), Some("Gold"));
        assert_eq!(chosen.at, "$.data[1]");
        assert_eq!(chosen.view["data"]["reference"], "R-GOLD");
        let urls: Vec<_> = chosen.documents.iter().map(|d| d.url.as_str()).collect();
        assert_eq!(urls, ["https://t/w.pdf", "https://t/g.pdf"]);
    }

    #[test]
    fn several_bundles_without_a_choice_or_an_unknown_one_name_what_was_offered() {
        let error = choose(&answer(), None).unwrap_err();
        assert!(
            error.to_string().contains("2 bundles (Silver, Gold)"),
            "{error}"
        );
        let error = choose(&answer(), Some("Platinum")).unwrap_err();
        assert!(
            error.to_string().contains("no bundle `Platinum`"),
            "{error}"
        );
    }

    #[test]
    fn one_entry_needs_no_choice_and_a_plain_answer_is_not_bundled() {
        let one = json!({"data": [{"id": "q", "reference": "R", "documents": [{"bundles": ["Silver"], "url": "u"}]}]});
        let chosen = choose(&one, None).unwrap().unwrap();
        assert_eq!(chosen.name.as_deref(), Some("Silver"));
        assert_eq!(
            choose(&json!({"data": {"id": "q"}}), Some("Gold")),
            Ok(None)
        );
        assert_eq!(choose(&json!({"data": []}), None), Err(BundleError::Empty));
    }
}
