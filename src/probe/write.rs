//! Writes what a probe proved as a `ppcert.toml`: the user's own file edited in place (every
//! table, key and comment it had is kept, including tables probe knows nothing of), with the
//! target, the dialect and every proven capture and path set, each with a comment saying what
//! it was inferred from.

use std::collections::BTreeMap;

use toml_edit::{DocumentMut, Item, Table, Value};

use crate::dialect;
use crate::endpoints::CaptureSpec;

use super::prober::Proven;
use crate::models::Operation;

/// What a probe learned that the written config records.
pub(crate) struct Learned<'a> {
    pub dialect: &'a str,
    pub dialect_reason: Option<&'a str>,
    pub proven: &'a BTreeMap<(Operation, String), Proven>,
    pub proven_paths: BTreeMap<Operation, Proven>,
    pub bundles_offered: Option<&'a [String]>,
}

/// The lines this writer puts on top; dropped from an input it wrote, so they never pile up.
const HEADER_MARKS: [&str; 3] = [
    "# Written by `ppcert probe`",
    "# Every capture below was proven",
    "# Next: `ppcert run`",
];

impl super::Prober {
    /// What the written config records.
    pub(crate) fn learned(&self) -> Learned<'_> {
        Learned {
            dialect: &self.dialect,
            dialect_reason: self.dialect_reason.as_deref(),
            proven: &self.proven,
            proven_paths: self.learned_paths(),
            bundles_offered: self.bundles_offered.as_deref(),
        }
    }
}

/// The config text: `original` (the user's file as written, if any) plus what `prober` learned.
/// `remote` is the target's base URL when it is not the embedded sandbox.
pub(crate) fn config_text(
    original: Option<&str>,
    learned: &Learned<'_>,
    remote: Option<&str>,
    when: &str,
) -> Result<String, String> {
    let kept: String = original
        .unwrap_or("")
        .lines()
        .filter(|line| !HEADER_MARKS.iter().any(|mark| line.starts_with(mark)))
        .map(|line| format!("{line}\n"))
        .collect();
    let mut doc: DocumentMut = kept
        .trim_start_matches('\n')
        .parse()
        .map_err(|e| format!("the input config does not parse: {e}"))?;
    set_target(&mut doc, learned, remote);
    set_bundle_hint(&mut doc, learned);
    set_endpoints(&mut doc, learned);
    let against = remote.unwrap_or("the embedded sandbox");
    Ok(format!(
        "{} on {when} against {against}.\n{} by a call that used the value.\n{} (it reads this file).\n\n{doc}",
        HEADER_MARKS[0], HEADER_MARKS[1], HEADER_MARKS[2]
    ))
}

/// `doc[name]` as a table, made (and made explicit) when missing.
fn table<'a>(parent: &'a mut Table, name: &str) -> &'a mut Table {
    let item = parent.entry(name).or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    if !item.is_table() {
        // An inline table (`target = { ... }`) is widened to a table, keeping its keys.
        let widened = item.clone().into_table().unwrap_or_default();
        *item = Item::Table(widened);
    }
    item.as_table_mut().expect("made a table above")
}

/// Sets `key = value` in `table` with a `# inferred:` comment above it.
fn set_inferred(table: &mut Table, key: &str, value: Value, why: Option<&str>) {
    table.insert(key, Item::Value(value));
    if let (Some(why), Some(mut key)) = (why, table.key_mut(key)) {
        let one_line = why.replace(['\n', '\r'], " ");
        key.leaf_decor_mut()
            .set_prefix(format!("# inferred: {one_line}\n"));
    }
}

fn set_target(doc: &mut DocumentMut, learned: &Learned<'_>, remote: Option<&str>) {
    let target = table(doc.as_table_mut(), "target");
    target.set_implicit(false);
    if let Some(url) = remote {
        target.insert("base_url", toml_edit::value(url));
        if !target.contains_key("environment") {
            target.insert("environment", toml_edit::value("staging"));
        }
    }
    if learned.dialect != dialect::DEFAULT || target.contains_key("dialect") {
        set_inferred(
            target,
            "dialect",
            learned.dialect.into(),
            learned.dialect_reason,
        );
    }
}

/// One bundle offered: it is written, so the run keeps using it should the staging offer more.
/// Several and none chosen: the choice is the partner's, so it is written as a comment naming
/// them, never guessed (and probe's output says so).
fn set_bundle_hint(doc: &mut DocumentMut, learned: &Learned<'_>) {
    let Some(offered) = learned.bundles_offered else {
        return;
    };
    let partner = table(doc.as_table_mut(), "partner");
    if partner.contains_key("bundle") || offered.is_empty() {
        return;
    }
    partner.set_implicit(false);
    if let [only] = offered {
        let why = "the quote answer offered this one bundle";
        set_inferred(partner, "bundle", only.as_str().into(), Some(why));
        return;
    }
    let decor = partner.decor_mut();
    let before = decor.suffix().and_then(|s| s.as_str()).unwrap_or("");
    let hint = format!(
        "{before}\n# the quote answer offers one entry per bundle: choose the one this partner sells\n# bundle = \"{}\"   # one of: {}",
        offered[0],
        offered.join(", ")
    );
    decor.set_suffix(hint);
}

fn set_endpoints(doc: &mut DocumentMut, learned: &Learned<'_>) {
    if learned.proven.is_empty() && learned.proven_paths.is_empty() {
        return;
    }
    let endpoints = table(doc.as_table_mut(), "endpoints");
    for (op, proven) in &learned.proven_paths {
        if let CaptureSpec::Path(path) = &proven.path {
            let definition = table(endpoints, op.as_str());
            definition.set_implicit(false);
            let why = Some(proven.inferred_from.as_str());
            set_inferred(definition, "path", path.as_str().into(), why);
        }
    }
    for ((op, name), proven) in learned.proven {
        let capture = table(table(endpoints, op.as_str()), "capture");
        capture.set_implicit(false);
        let value = capture_value(&proven.path);
        set_inferred(capture, name, value, Some(proven.inferred_from.as_str()));
    }
}

/// A capture as `ppcert.toml` spells it: a string, or `{ header, pattern }`.
fn capture_value(spec: &CaptureSpec) -> Value {
    spec.to_toml()
        .parse()
        .unwrap_or_else(|_| spec.describe().as_str().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoints::HeaderCapture;

    const INPUT: &str = r#"# our staging, set up by Ana
[target]
base_url = "https://old.example"
dialect = "spec"   # as the provider said

[target.headers]
X-Api-Version = "2"
X-Gateway-Key = "{{ env.PPCERT_GATEWAY_KEY }}"

[auth]
command = "vault read -field=token secret/staging"

[partner]
name = "Acme"

[data]
booking_number_pattern = "[A-Z]{2}[0-9]{8}"

[endpoints.quote.capture]
price_delta = "$.data.delta"   # keep me

[something_new]
answer = 42
"#;

    fn proven(path: CaptureSpec) -> Proven {
        Proven {
            path,
            inferred_from: "proven: a subscription\nused it".into(),
        }
    }

    #[test]
    fn every_table_key_and_comment_of_the_input_is_kept_and_the_proofs_added() {
        let mut captures = BTreeMap::new();
        captures.insert(
            (Operation::Quote, "reference".to_string()),
            proven("$.result.quote_ref".into()),
        );
        let location = CaptureSpec::Header(HeaderCapture {
            header: "Location".into(),
            pattern: Some("/([^/]+)$".into()),
        });
        captures.insert(
            (Operation::Subscription, "contract_id".into()),
            proven(location),
        );
        let mut paths = BTreeMap::new();
        paths.insert(
            Operation::QuoteDeletion,
            proven("/quotes/{{ quote.id }}/".into()),
        );
        let offered = ["Silver".to_string(), "Gold".to_string()];
        let learned = Learned {
            dialect: "provider-docs",
            dialect_reason: Some("subscription was refused"),
            proven: &captures,
            proven_paths: paths,
            bundles_offered: Some(&offered),
        };
        let text = config_text(Some(INPUT), &learned, Some("https://new.example"), "now").unwrap();
        for kept in INPUT
            .lines()
            .filter(|l| !l.starts_with("base_url") && !l.starts_with("dialect"))
        {
            assert!(text.contains(kept), "lost {kept:?} in:\n{text}");
        }
        assert!(
            text.contains("base_url = \"https://new.example\""),
            "{text}"
        );
        assert!(
            text.contains("# inferred: subscription was refused\ndialect = \"provider-docs\""),
            "{text}"
        );
        assert!(
            text.contains("reference = \"$.result.quote_ref\""),
            "{text}"
        );
        assert!(
            text.contains("# inferred: proven: a subscription used it\n"),
            "{text}"
        );
        assert!(
            text.contains("contract_id = { header = \"Location\""),
            "{text}"
        );
        assert!(
            text.contains("path = \"/quotes/{{ quote.id }}/\""),
            "{text}"
        );
        assert!(
            text.contains("# bundle = \"Silver\"   # one of: Silver, Gold"),
            "{text}"
        );
        // Written again over itself, the header is not repeated and nothing is lost.
        let again =
            config_text(Some(&text), &learned, Some("https://new.example"), "later").unwrap();
        assert_eq!(
            again.matches("Written by `ppcert probe`").count(),
            1,
            "{again}"
        );
        assert_eq!(again.matches("[something_new]").count(), 1, "{again}");
        let parsed: toml::Table = again.parse().unwrap();
        assert_eq!(parsed["something_new"]["answer"].as_integer(), Some(42));
    }

    #[test]
    fn one_bundle_offered_is_written_and_a_chosen_one_kept() {
        let none = BTreeMap::new();
        let offered = ["Gold".to_string()];
        let learned = Learned {
            dialect: "spec",
            dialect_reason: None,
            proven: &none,
            proven_paths: BTreeMap::new(),
            bundles_offered: Some(&offered),
        };
        let bundle = |original: Option<&str>| {
            let text = config_text(original, &learned, None, "now").unwrap();
            let parsed: toml::Table = text.parse().unwrap();
            parsed["partner"]["bundle"].as_str().map(str::to_string)
        };
        assert_eq!(bundle(None).as_deref(), Some("Gold"));
        let chosen = "[partner]\nbundle = \"Silver\"\n";
        assert_eq!(bundle(Some(chosen)).as_deref(), Some("Silver"));
    }
}
