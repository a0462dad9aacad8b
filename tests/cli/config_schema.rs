//! `ppcert schema config`: the JSON Schema of `ppcert.toml` an editor checks the file with.
//! It agrees with `validate` both ways: every documented file passes both (tests/cli/docs.rs),
//! and each kind of mistake is refused by both.

use std::path::Path;

use serde_json::Value;

use crate::common::*;

/// The schema as `ppcert schema config` prints it.
pub(crate) async fn schema(dir: &Path) -> Value {
    let printed = ppcert(dir, &["schema", "config"], None).await;
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    serde_json::from_str(&printed.stdout).expect("the schema is JSON")
}

/// What the schema says is wrong with a TOML text (read as TOML first: a file that is not
/// TOML is no file for the schema).
pub(crate) fn errors(schema: &Value, text: &str) -> Vec<String> {
    let document: Value = toml::from_str(text).expect("TOML");
    let validator = jsonschema::validator_for(schema).expect("a valid JSON Schema");
    validator
        .iter_errors(&document)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[tokio::test]
async fn the_schema_refuses_what_validate_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema(dir.path()).await;
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    let wrong = [
        ("[target]\nenviroment = \"staging\"\n", "a misspelt key"),
        (
            "[target]\nenvironment = \"sandbox\"\n",
            "the sandbox named by hand",
        ),
        ("[run]\nretries = \"3\"\n", "a number as a string"),
        ("[run]\nconcurrency = 0\n", "below the flags' bounds"),
        ("[run]\ntimeout_secs = 3601\n", "above the flags' bounds"),
        (
            "[partner]\nflight_seller = \"yes\"\n",
            "a boolean as a string",
        ),
        (
            "[endpoints.quotes]\npath = \"/q\"\n",
            "an operation that does not exist",
        ),
        (
            "[endpoints.quote]\nverb = \"POST\"\n",
            "an unknown endpoint key",
        ),
        (
            "[endpoints.quote.wait]\nuntil = \"true\"\n",
            "a wait without every and timeout",
        ),
        (
            "[endpoints.quote.capture]\nid = { header = \"Location\", regex = \"x\" }\n",
            "a header capture's unknown key",
        ),
        (
            "[auth]\nclient_auth = \"digest\"\n",
            "an unknown client authentication",
        ),
        (
            "[webhooks]\nsecret = \"x\"\n",
            "a section that does not exist",
        ),
    ];
    for (index, (text, what)) in wrong.iter().enumerate() {
        assert!(
            !errors(&schema, text).is_empty(),
            "the schema takes {what}:\n{text}"
        );
        let file = dir.path().join(format!("wrong-{index}.toml"));
        std::fs::write(&file, text).unwrap();
        let validated = ppcert(dir.path(), &["validate", file.to_str().unwrap()], None).await;
        assert_eq!(
            validated.code, 2,
            "validate takes {what}:\n{text}{}",
            validated.stdout
        );
    }
    // Every key, at every depth, both take.
    let whole = "[target]\nbase_url = \"https://staging.example.com/api\"\nenvironment = \"production\"\n\
        dialect = \"provider-docs\"\nclient_pkcs12 = \"c.p12\"\nclient_pkcs12_password_env = \"P\"\n\
        [target.headers]\nX-Api-Version = \"2\"\n\
        [partner]\nname = \"Acme\"\nflight_seller = false\nbundle = \"Gold\"\n\
        [run]\nconcurrency = 1024\ntimeout_secs = 1\nretries = 0\n\
        [auth]\ntoken_url = \"https://auth.example.com/token\"\nclient_id = \"ppcert\"\n\
        client_secret_env = \"S\"\nscope = \"api\"\naudience = \"a\"\nclient_auth = \"post\"\ntimeout_secs = 5\n\
        [data]\nbooking_number_pattern = \"[A-Z]{2}[0-9]{8}\"\n\
        [endpoints.update]\nexpect = [200, 204]\n\
        [endpoints.read_contracts.wait]\nuntil = \"captured.contract_id is defined\"\nevery = \"1s\"\ntimeout = \"20s\"\n\
        [endpoints.read_contracts.capture]\netag = { header = \"ETag\", pattern = \"(.*)\" }\n\
        [endpoints.claim.confirm]\nread = \"read_contracts\"\nevery = \"1s\"\ntimeout = \"30s\"\n";
    assert_eq!(errors(&schema, whole), Vec::<String>::new());
    let file = dir.path().join("whole.toml");
    std::fs::write(&file, whole).unwrap();
    let validated = ppcert(dir.path(), &["validate", file.to_str().unwrap()], None).await;
    assert_eq!(
        validated.code, 0,
        "{}{}",
        validated.stdout, validated.stderr
    );
}

/// Every key name in `schema`, at any depth (the operation names of `[endpoints.NAME]` are
/// values of `propertyNames`, not keys).
fn keys(schema: &Value, found: &mut std::collections::BTreeSet<String>) {
    if let Some(object) = schema.as_object() {
        if let Some(Value::Object(properties)) = object.get("properties") {
            found.extend(properties.keys().cloned());
        }
        object.values().for_each(|v| keys(v, found));
    } else if let Some(items) = schema.as_array() {
        items.iter().for_each(|v| keys(v, found));
    }
}

/// docs/design.md's `ppcert.toml` contract names every key the schema (and so the parser)
/// takes: a key added to the types without a word in the contract fails here.
#[tokio::test]
async fn the_config_contract_names_every_key_of_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema(dir.path()).await;
    let mut found = std::collections::BTreeSet::new();
    keys(&schema, &mut found);
    assert!(found.len() > 30, "{found:?}");
    let design =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/design.md"))
            .unwrap();
    let contract = design
        .split("## `ppcert.toml`")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("design.md has a ppcert.toml section");
    // The words of its code spans: `[endpoints.NAME.wait]`, `{ header = NAME, … }`, `token_url`.
    let named: std::collections::BTreeSet<&str> = (contract.split('`').skip(1).step_by(2))
        .flat_map(|span| span.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .collect();
    let unnamed: Vec<&String> = (found.iter())
        .filter(|key| !named.contains(key.as_str()))
        .collect();
    assert!(
        unnamed.is_empty(),
        "design.md's ppcert.toml section does not name {unnamed:?}"
    );
}
