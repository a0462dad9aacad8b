//! Issue 44's staging: JSON:API documents under their own media type, updates as JSON Patch,
//! claims as `multipart/form-data` with a PDF letter, all at once, certified with
//! wire-formats.md's config alone, its counts equal to the staging's; and the parts a config
//! gets wrong, named by file, line and field.

use ppcert::sandbox::{JSON_API, JSON_PATCH, SandboxOptions, Wire};
use serde_json::Value;

use crate::common::*;

const CONFIG: &str = "# ppcert.toml: a staging with its own wire formats";

fn wire_staging() -> SandboxOptions {
    SandboxOptions {
        wire: Wire {
            media_type: Some(JSON_API.into()),
            json_patch_updates: true,
            multipart_claims: true,
        },
        ..fast_options()
    }
}

fn exchanges_of<'a>(evidence: &'a Value, operation: &str) -> Vec<&'a Value> {
    let all = evidence["exchanges"].as_array().unwrap();
    all.iter().filter(|x| x["operation"] == operation).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staging_with_its_own_wire_formats_is_certified_from_the_docs_alone() {
    let sandbox = sandbox_with(wire_staging()).await;
    let config = toml_block(include_str!("../../docs/wire-formats.md"), CONFIG);
    let (evidence, _dir) = certified(&sandbox, &config).await;
    assert!(every_requirement_met(&evidence));
    // What was sent is on the record: the type, and the body as sent.
    for quote in exchanges_of(&evidence, "quote") {
        let request = &quote["request"];
        assert_eq!(request["headers"]["content-type"], JSON_API, "{quote}");
        assert_eq!(request["headers"]["accept"], JSON_API, "{quote}");
        assert_eq!(request["body"]["data"]["type"], "quotes", "{quote}");
    }
    for update in exchanges_of(&evidence, "update") {
        let request = &update["request"];
        assert_eq!(request["headers"]["content-type"], JSON_PATCH, "{update}");
        assert_eq!(request["body"][0]["op"], "replace", "{update}");
    }
    let claims = exchanges_of(&evidence, "claim");
    assert!(claims.len() >= 5);
    for claim in claims {
        let request = &claim["request"];
        let content_type = request["headers"]["content-type"].as_str().unwrap();
        assert!(
            content_type.starts_with("multipart/form-data; boundary="),
            "{claim}"
        );
        let parts = request["body"]["multipart/form-data"].as_array().unwrap();
        assert_eq!(parts[0]["name"], "claim");
        assert_eq!(parts[0]["body"]["data"]["type"], "claims");
        assert_eq!(parts[1]["name"], "document");
        assert_eq!(parts[1]["filename"], "withdrawal-letter.pdf");
        assert_eq!(parts[1]["content_type"], "application/pdf");
        assert!(parts[1]["size"].as_u64().unwrap() > 200, "{claim}");
        assert_eq!(parts[1]["sha256"].as_str().unwrap().len(), 64, "{claim}");
    }
}

/// The same config against the sandbox without those formats fails, so the run above passed
/// by speaking them: the default staging refuses a JSON:API media type.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plain_sandbox_refuses_the_wire_formats_config() {
    let sandbox = sandbox_with(fast_options()).await;
    let config = toml_block(include_str!("../../docs/wire-formats.md"), CONFIG);
    let (finished, _dir) = Run::against(&sandbox).config(&config).finish().await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    assert!(finished.stdout.contains("415"), "{}", finished.stdout);
}

#[tokio::test]
async fn parts_a_config_gets_wrong_are_named_by_file_line_and_field() {
    for (table, line, words) in [
        (
            "[[endpoints.claim.parts]]\nname = \"a\"\nbody = \"{}\"\ndocument = \"withdrawal-letter\"\n",
            "ppcert.toml:4",
            "endpoints.claim: parts[1].document: a part takes one of body, file or document, not body and document",
        ),
        (
            "[[endpoints.claim.parts]]\nname = \"a\"\nbody = \"{}\"\n\n[[endpoints.claim.parts]]\nname = \"b\"\ndocument = \"receipt\"\n",
            "ppcert.toml:7",
            "endpoints.claim: parts[2].document: `receipt` is no document ppcert generates (known: withdrawal-letter)",
        ),
        (
            "[[endpoints.claim.parts]]\nname = \"a\"\nfile = \"missing.pdf\"\n",
            "ppcert.toml:3",
            "endpoints.claim: parts[1].file: cannot read",
        ),
        (
            "[endpoints.claim]\nbody = \"{}\"\n\n[[endpoints.claim.parts]]\nname = \"a\"\nbody = \"{}\"\n",
            "ppcert.toml:2",
            "endpoints.claim: body and parts",
        ),
        (
            "[[endpoints.claim.parts]]\nname = \"a\"\nbody = \"{{ booking.numbr }}\"\n",
            "ppcert.toml:3",
            "booking.numbr",
        ),
    ] {
        let dir = dir_with_config(table);
        let validate = ppcert(dir.path(), &["validate"], None).await;
        assert_eq!(validate.code, 2, "{table}\n{}", validate.stderr);
        assert!(
            validate.stderr.contains(line),
            "{table}\n{}",
            validate.stderr
        );
        assert!(
            validate.stderr.contains(words),
            "{table}\n{}",
            validate.stderr
        );
    }
}

/// A part's file is the config's: found beside it from any directory, and sent as it is.
#[tokio::test]
async fn a_part_file_is_found_beside_the_config_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("conf")).unwrap();
    std::fs::write(dir.path().join("conf/proof.pdf"), b"%PDF-1.4\n%%EOF\n").unwrap();
    let table = "[[endpoints.claim.parts]]\nname = \"proof\"\nfile = \"proof.pdf\"\n";
    std::fs::write(dir.path().join("conf/ppcert.toml"), table).unwrap();
    let validate = ppcert(dir.path(), &["validate", "conf/ppcert.toml"], None).await;
    assert_eq!(validate.code, 0, "{}", validate.stderr);
    let big = std::fs::File::create(dir.path().join("conf/proof.pdf")).unwrap();
    big.set_len(6 * 1024 * 1024).unwrap();
    let validate = ppcert(dir.path(), &["validate", "conf/ppcert.toml"], None).await;
    assert_eq!(validate.code, 2, "{}", validate.stderr);
    assert!(
        validate.stderr.contains("a part carries at most 5242880"),
        "{}",
        validate.stderr
    );
}

/// A partner's client speaking those formats (ppcert's own, with the same config) is judged
/// through the proxy by the configured endpoints, not the spec's flat bodies: no failed check,
/// its multipart claims read, and the counts the staging's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_speaking_the_configured_formats_passes_through_the_proxy() {
    let sandbox = sandbox_with(wire_staging()).await;
    let config = toml_block(include_str!("../../docs/wire-formats.md"), CONFIG);
    let dir = dir_with_config(&config);
    let client = r#""$PPCERT_BIN" run --base-url "$PPCERT_PROXY_URL" --out inner --backoff-ms 1 --no-progress"#;
    let args = [
        "proxy",
        "--out",
        "b",
        "--base-url",
        &sandbox.base_url(),
        "--until-met",
        "--",
        "sh",
        "-c",
        client,
    ];
    let output = ppcert_command(dir.path(), &args, Some(sandbox.token()))
        .env("PPCERT_BIN", env!("CARGO_BIN_EXE_ppcert"))
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(std::time::Duration::from_secs(120), output)
        .await
        .expect("the proxy ends with its command")
        .unwrap();
    let finished = finished(output);
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let failed: Vec<String> = (evidence["exchanges"].as_array().unwrap().iter())
        .flat_map(|x| x["checks"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["passed"] == false && c["warning"] != true)
        .map(|c| c.to_string())
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    // Judged by the configured endpoint: the claims' parts were read, not refused as JSON.
    for claim in (evidence["exchanges"].as_array().unwrap().iter())
        .filter(|x| x["operation"] == "claim" && x["method"] == "POST")
    {
        let names: Vec<&str> = (claim["checks"].as_array().unwrap().iter())
            .filter(|c| c["passed"] == true)
            .filter_map(|c| c["name"].as_str())
            .collect();
        for name in [
            "request has the configured media type",
            "request has the configured endpoint's form",
            "request follows the spec's rules",
        ] {
            assert!(names.contains(&name), "{name}: {claim}");
        }
    }
    assert_eq!(evidence["verdict"], "passed", "{}", evidence["warnings"]);
    assert_eq!(evidence_counts(&evidence), sandbox_counts(&sandbox));
}
