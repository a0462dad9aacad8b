//! One operation's answer shapes compared: a field that a capture or rule read (the journal
//! records the path each value came from) and that is now missing or retyped is a regression;
//! any other field added, removed or retyped is a change. Only the topmost path of a subtree
//! that came or went is named.

use std::collections::BTreeSet;

use super::profile::OpProfile;
use super::shape::{self, Shape};
use crate::evidence::baseline::{Finding, FindingKind};

/// The path holding `path` (`$.data` for `$.data.id` and `$.data[*]`), `None` for `$`.
fn parent(path: &str) -> Option<&str> {
    let cut = path.rfind(['.', '['])?;
    Some(&path[..cut])
}

/// Whether `path` is the topmost of those that differ: its parent is in `other` with a type
/// it had in `this` too (else the parent's finding says it).
fn topmost(path: &str, this: &Shape, other: &Shape) -> bool {
    match parent(path) {
        None => true,
        Some(up) => match (this.get(up), other.get(up)) {
            (Some(a), Some(b)) => !shape::retyped(a, b),
            _ => false,
        },
    }
}

fn field(kind: FindingKind, label: &str, path: &str, message: String) -> Finding {
    Finding {
        kind,
        subject: label.to_string(),
        path: Some(path.to_string()),
        before: None,
        after: None,
        message,
        consequences: Vec::new(),
    }
}

/// Reports each difference of `before`'s and `after`'s answers through `found` (true: a
/// regression).
pub(crate) fn fields(
    label: &str,
    before: &OpProfile,
    after: &OpProfile,
    mut found: impl FnMut(bool, Finding),
) {
    let read: BTreeSet<&str> = (before.reads.values())
        .flat_map(|r| r.paths.iter().map(String::as_str))
        .collect();
    let mut named = BTreeSet::new();
    if before.succeeded > 0 && after.succeeded > 0 {
        named = shapes(label, &before.shape, &after.shape, &read, &mut found);
    }
    for (name, was) in &before.reads {
        // A value whose field is already named missing or retyped is not named twice.
        if was.paths.iter().any(|p| named.contains(p.as_str())) {
            continue;
        }
        let now = after.reads.get(name);
        if was.found > 0 && now.is_some_and(|r| r.found == 0 && r.missing > 0) {
            let from = was.paths.iter().next().cloned();
            let message = format!(
                "{label}: the value `{name}` was read from every answer before, from none now{}",
                from.as_deref()
                    .map(|p| format!(" (it was read from {p})"))
                    .unwrap_or_default()
            );
            let mut f = field(FindingKind::ReadValueMissing, label, "", message);
            f.path = from;
            found(true, f);
        }
    }
}

/// Reports the fields that differ; the read fields it named.
fn shapes<'a>(
    label: &str,
    before: &'a Shape,
    after: &Shape,
    read: &BTreeSet<&str>,
    found: &mut impl FnMut(bool, Finding),
) -> BTreeSet<&'a str> {
    let mut named = BTreeSet::new();
    for (path, was) in before {
        if read.contains(path.as_str())
            && after.get(path).is_none_or(|now| shape::retyped(was, now))
        {
            named.insert(path.as_str());
        }
        let is_read = read.contains(path.as_str());
        match after.get(path) {
            None if is_read => {
                let message = format!(
                    "{label}: field {path}, which ppcert reads, is missing from the answers now"
                );
                found(
                    true,
                    field(FindingKind::ReadFieldMissing, label, path, message),
                );
            }
            None if topmost(path, before, after) => {
                let message = format!("{label}: field {path} is no longer in the answers");
                found(
                    false,
                    field(FindingKind::FieldRemoved, label, path, message),
                );
            }
            Some(now) if shape::retyped(was, now) => {
                let (kind, regression, reads) = if is_read {
                    (FindingKind::ReadFieldRetyped, true, ", which ppcert reads,")
                } else {
                    (FindingKind::FieldRetyped, false, "")
                };
                let message = format!(
                    "{label}: field {path}{reads} was {} before, {} now",
                    shape::words(was),
                    shape::words(now)
                );
                let mut f = field(kind, label, path, message);
                f.before = Some(shape::words(was));
                f.after = Some(shape::words(now));
                found(regression, f);
            }
            _ => {}
        }
    }
    for (path, now) in after {
        if !before.contains_key(path) && topmost(path, after, before) {
            let message = format!("{label}: new field {path} ({})", shape::words(now));
            let mut f = field(FindingKind::FieldAdded, label, path, message);
            f.after = Some(shape::words(now));
            found(false, f);
        }
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn profile(answers: &[serde_json::Value], read: &[&str]) -> OpProfile {
        let mut profile = OpProfile::default();
        for answer in answers {
            shape::add(&mut profile.shape, answer);
            profile.succeeded += 1;
        }
        let entry = profile.reads.entry("id".into()).or_default();
        entry.paths = read.iter().map(|p| p.to_string()).collect();
        entry.found = answers.len();
        profile
    }

    fn run(before: &OpProfile, after: &OpProfile) -> Vec<(bool, FindingKind, Option<String>)> {
        let mut out = Vec::new();
        fields("quote", before, after, |r, f| out.push((r, f.kind, f.path)));
        out
    }

    #[test]
    fn a_read_field_renamed_is_a_regression_an_unread_one_retyped_a_change() {
        let before = profile(
            &[json!({"data": {"id": "a", "price": {"amount": 1.5}}})],
            &["$.data.id"],
        );
        let renamed = profile(
            &[json!({"data": {"quoteId": "b", "price": {"amount": 2}}})],
            &[],
        );
        assert_eq!(
            run(&before, &renamed),
            vec![
                (
                    true,
                    FindingKind::ReadFieldMissing,
                    Some("$.data.id".into())
                ),
                (
                    false,
                    FindingKind::FieldAdded,
                    Some("$.data.quoteId".into())
                ),
            ]
        );
        let retyped = profile(
            &[json!({"data": {"id": "c", "price": {"amount": "2.00"}}})],
            &[],
        );
        assert_eq!(
            run(&before, &retyped),
            vec![(
                false,
                FindingKind::FieldRetyped,
                Some("$.data.price.amount".into())
            )]
        );
    }

    #[test]
    fn only_the_top_of_a_subtree_that_went_is_named() {
        let before = profile(
            &[json!({"data": {"id": "a", "extra": {"x": 1, "y": [1]}}})],
            &[],
        );
        let after = profile(&[json!({"data": {"id": "b"}})], &[]);
        assert_eq!(
            run(&before, &after),
            vec![(
                false,
                FindingKind::FieldRemoved,
                Some("$.data.extra".into())
            )]
        );
        assert!(run(&before, &before).is_empty());
    }
}
