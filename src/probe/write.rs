//! Writes what a probe proved as a `ppcert.toml`: the user's own settings kept, the dialect and
//! every proven capture added, each with a comment saying what it was inferred from.

use std::fmt::Write as _;

use crate::config::FileConfig;
use crate::dialect;

use super::Prober;

fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// The config text: `file` (the user's settings) plus what `prober` learned.
/// `remote` is the target's base URL when it is not the embedded sandbox.
pub fn config_text(file: &FileConfig, prober: &Prober, remote: Option<&str>, when: &str) -> String {
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
    names.sort();
    names.dedup();
    for name in names {
        let own = file.endpoints.get(&name).cloned().unwrap_or_default();
        let fields = [
            ("method", &own.method),
            ("path", &own.path),
            ("body", &own.body),
        ];
        if fields.iter().any(|(_, v)| v.is_some()) {
            let _ = writeln!(out, "\n[endpoints.{name}]");
            for (key, value) in fields {
                if let Some(value) = value {
                    let _ = writeln!(out, "{key} = {}", quoted(value));
                }
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
        for (key, path) in &own.capture {
            if !learned.iter().any(|((_, k), _)| k == key) {
                let _ = writeln!(out, "{key} = {}", quoted(path));
            }
        }
        for ((_, key), proven) in learned {
            let _ = writeln!(out, "# inferred: {}", proven.inferred_from);
            let _ = writeln!(out, "{key} = {}", quoted(&proven.path));
        }
    }
}
