//! Writes what a probe proved as a `ppcert.toml`: the user's own file edited in place (every
//! table, key and comment it had is kept, including tables probe knows nothing of), with the
//! target, the dialect and every proven capture and path set, each with a comment saying what
//! it was inferred from; and the file written whole or not at all.

use std::collections::BTreeMap;
use std::path::Path;

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

/// The target flags given to probe, written into the config so that `run` with the file
/// alone reaches the same staging: paths made absolute (the config's own relative paths are
/// read from its folder, the flags' from where probe ran), `--header` over `[target.headers]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flags {
    pub cacert: Option<std::path::PathBuf>,
    pub cert: Option<std::path::PathBuf>,
    pub key: Option<std::path::PathBuf>,
    /// `--header "NAME: VALUE"` as given.
    pub headers: Vec<String>,
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
    flags: &Flags,
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
    set_flags(&mut doc, flags)?;
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

fn set_flags(doc: &mut DocumentMut, flags: &Flags) -> Result<(), String> {
    let target = table(doc.as_table_mut(), "target");
    for (key, path, flag) in [
        ("cacert", &flags.cacert, "--cacert"),
        ("client_cert", &flags.cert, "--cert"),
        ("client_key", &flags.key, "--key"),
    ] {
        let Some(path) = path else { continue };
        let absolute =
            std::path::absolute(path).map_err(|e| format!("{flag} {}: {e}", path.display()))?;
        let why = format!("given to probe as {flag}");
        set_inferred(
            target,
            key,
            absolute.display().to_string().into(),
            Some(&why),
        );
    }
    if flags.headers.is_empty() {
        return Ok(());
    }
    let headers = table(target, "headers");
    headers.set_implicit(false);
    for given in &flags.headers {
        let Some((name, value)) = given.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        let same: Vec<String> = (headers.iter())
            .map(|(k, _)| k.to_string())
            .filter(|k| k.eq_ignore_ascii_case(name))
            .collect();
        for key in same {
            headers.remove(&key);
        }
        // A credential given on the command line is never written in clear: the file reads
        // it from the environment, named after the header.
        let written = if crate::secret::names_a_credential(name) && !value.contains("{{") {
            format!("{{{{ env.{} }}}}", header_env(name))
        } else {
            value.to_string()
        };
        set_inferred(
            headers,
            name,
            written.into(),
            Some("given to probe as --header"),
        );
    }
    Ok(())
}

/// The environment variable a credential header given to probe is read from in the written
/// config: `PPCERT_HEADER_X_GATEWAY_KEY` for `X-Gateway-Key`.
pub(crate) fn header_env(name: &str) -> String {
    let upper: String = (name.chars())
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' => c.to_ascii_uppercase(),
            _ => '_',
        })
        .collect();
    format!("PPCERT_HEADER_{upper}")
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

/// Writes beside `path` then renames over it, so a failed write leaves no half file and a
/// link planted meanwhile is replaced, not followed.
pub(crate) fn write_new(path: &Path, text: &str, replace: bool) -> std::io::Result<()> {
    use std::io::Write as _;
    if !replace {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        return file.write_all(text.as_bytes());
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let partial = dir.join(format!(".{name}.{}.partial", std::process::id()));
    let result = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&partial)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .and_then(|()| std::fs::rename(&partial, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
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

    fn remote_text(original: Option<&str>, learned: &Learned<'_>, when: &str) -> String {
        let remote = Some("https://new.example");
        config_text(original, learned, &Flags::default(), remote, when).unwrap()
    }

    #[test]
    fn flags_are_written_absolute_over_the_files_headers_and_a_credential_from_the_environment() {
        let none = BTreeMap::new();
        let learned = Learned {
            dialect: "spec",
            dialect_reason: None,
            proven: &none,
            proven_paths: BTreeMap::new(),
            bundles_offered: None,
        };
        let flags = Flags {
            cacert: Some("certs/ca.pem".into()),
            cert: Some("certs/client.pem".into()),
            key: Some("certs/client.key".into()),
            headers: vec![
                "x-api-version: 3".into(),
                "X-Gateway-Key: s3cr3t-value".into(),
            ],
        };
        let original = "[target.headers]\nX-Api-Version = \"2\"\n";
        let text = config_text(Some(original), &learned, &flags, None, "now").unwrap();
        assert!(!text.contains("s3cr3t-value"), "{text}");
        let parsed: toml::Table = text.parse().unwrap();
        let target = &parsed["target"];
        let cacert = std::path::Path::new(target["cacert"].as_str().unwrap());
        assert!(
            cacert.is_absolute() && cacert.ends_with("certs/ca.pem"),
            "{text}"
        );
        assert!(
            target["client_key"]
                .as_str()
                .unwrap()
                .ends_with("client.key")
        );
        let headers = target["headers"].as_table().unwrap();
        assert_eq!(headers.len(), 2, "{text}");
        assert_eq!(headers["x-api-version"].as_str(), Some("3"), "{text}");
        assert_eq!(
            headers["X-Gateway-Key"].as_str(),
            Some("{{ env.PPCERT_HEADER_X_GATEWAY_KEY }}")
        );
    }

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
        let text = remote_text(Some(INPUT), &learned, "now");
        for kept in INPUT
            .lines()
            .filter(|l| !l.starts_with("base_url") && !l.starts_with("dialect"))
        {
            assert!(text.contains(kept), "lost {kept:?} in:\n{text}");
        }
        for written in [
            "base_url = \"https://new.example\"",
            "# inferred: subscription was refused\ndialect = \"provider-docs\"",
            "reference = \"$.result.quote_ref\"",
            "# inferred: proven: a subscription used it\n",
            "contract_id = { header = \"Location\"",
            "path = \"/quotes/{{ quote.id }}/\"",
            "# bundle = \"Silver\"   # one of: Silver, Gold",
        ] {
            assert!(text.contains(written), "no {written:?} in:\n{text}");
        }
        // Written again over itself, the header is not repeated and nothing is lost.
        let again = remote_text(Some(&text), &learned, "later");
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
            let text = config_text(original, &learned, &Flags::default(), None, "now").unwrap();
            let parsed: toml::Table = text.parse().unwrap();
            parsed["partner"]["bundle"].as_str().map(str::to_string)
        };
        assert_eq!(bundle(None).as_deref(), Some("Gold"));
        let chosen = "[partner]\nbundle = \"Silver\"\n";
        assert_eq!(bundle(Some(chosen)).as_deref(), Some("Silver"));
    }
}
