//! Writes what a probe proved as a `ppcert.toml`: the user's own settings kept, the dialect and
//! every proven capture added, each with a comment saying what it was inferred from.

use std::fmt::Write as _;

use crate::config::FileConfig;
use crate::dialect;
use crate::endpoints::EndpointOverride;

use super::Prober;

fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// The config text: `file` (the user's settings) plus what `prober` learned.
/// `remote` is the target's base URL when it is not the embedded sandbox.
pub(crate) fn config_text(
    file: &FileConfig,
    prober: &Prober,
    remote: Option<&str>,
    when: &str,
) -> String {
    let against = remote.unwrap_or("the embedded sandbox");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Written by `ppcert probe` on {when} against {against}."
    );
    let _ = writeln!(
        out,
        "# Every capture below was proven against that server by a call that used the value."
    );
    let _ = writeln!(out, "# Next: `ppcert run` (it reads this file).\n");
    out.push_str("[target]\n");
    if let Some(url) = remote.or(file.target.base_url.as_deref()) {
        let _ = writeln!(out, "base_url = {}", quoted(url));
        let environment = file.target.environment.map_or("staging", |e| e.as_str());
        let _ = writeln!(out, "environment = {}", quoted(environment));
    }
    if let Some(why) = &prober.dialect_reason {
        let _ = writeln!(out, "# inferred: {why}");
    }
    if prober.dialect != dialect::DEFAULT || file.target.dialect.is_some() {
        let _ = writeln!(out, "dialect = {}", quoted(&prober.dialect));
    }
    if file.partner.name.is_some() || file.partner.flight_seller.is_some() {
        out.push_str("\n[partner]\n");
        if let Some(name) = &file.partner.name {
            let _ = writeln!(out, "name = {}", quoted(name));
        }
        if let Some(seller) = file.partner.flight_seller {
            let _ = writeln!(out, "flight_seller = {seller}");
        }
    }
    let run = &file.run;
    if run.concurrency.is_some() || run.timeout_secs.is_some() || run.retries.is_some() {
        out.push_str("\n[run]\n");
        for (key, value) in [
            ("concurrency", run.concurrency.map(u64::from)),
            ("timeout_secs", run.timeout_secs),
            ("retries", run.retries.map(u64::from)),
        ] {
            if let Some(value) = value {
                let _ = writeln!(out, "{key} = {value}");
            }
        }
    }
    write_endpoints(&mut out, file, prober);
    out
}

fn write_endpoints(out: &mut String, file: &FileConfig, prober: &Prober) {
    let mut names: Vec<String> = file.endpoints.keys().cloned().collect();
    names.extend(prober.proven.keys().map(|(op, _)| op.as_str().to_string()));
    names.extend(prober.proven_paths.keys().map(|op| op.as_str().to_string()));
    names.sort();
    names.dedup();
    for name in names {
        let own = file.endpoints.get(&name).cloned().unwrap_or_default();
        write_definition(out, &name, &own, prober);
        if !own.headers.is_empty() {
            let _ = writeln!(out, "\n[endpoints.{name}.headers]");
            for (key, value) in &own.headers {
                let _ = writeln!(out, "{} = {}", quoted(key), quoted(value));
            }
        }
        let learned: Vec<_> = prober
            .proven
            .iter()
            .filter(|((op, _), _)| op.as_str() == name)
            .collect();
        if own.capture.is_empty() && learned.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n[endpoints.{name}.capture]");
        for (key, capture) in &own.capture {
            if !learned.iter().any(|((_, k), _)| k == key) {
                let _ = writeln!(out, "{key} = {}", capture.to_toml());
            }
        }
        for ((_, key), proven) in learned {
            let _ = writeln!(out, "# inferred: {}", proven.inferred_from);
            let _ = writeln!(out, "{key} = {}", proven.path.to_toml());
        }
    }
}

/// The table's own fields: the user's, with a path the probe proved in place of theirs.
fn write_definition(out: &mut String, name: &str, own: &EndpointOverride, prober: &Prober) {
    let proven_path = prober
        .proven_paths
        .iter()
        .find(|(op, _)| op.as_str() == name)
        .map(|(_, p)| p);
    let path = proven_path.map(|p| p.path.to_string()).or(own.path.clone());
    let fields = [
        ("method", &own.method),
        ("path", &path),
        ("body", &own.body),
    ];
    if fields.iter().all(|(_, v)| v.is_none()) && own.expect.is_none() {
        return;
    }
    let _ = writeln!(out, "\n[endpoints.{name}]");
    for (key, value) in fields {
        if key == "path"
            && let Some(proven) = proven_path
        {
            let _ = writeln!(out, "# inferred: {}", proven.inferred_from);
        }
        if let Some(value) = value {
            let _ = writeln!(out, "{key} = {}", quoted(value));
        }
    }
    if let Some(expect) = &own.expect {
        let codes: Vec<String> = expect.iter().map(u16::to_string).collect();
        let _ = writeln!(out, "expect = [{}]", codes.join(", "));
    }
}
