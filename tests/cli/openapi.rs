//! The sandbox's OpenAPI document: complete, usable by a fuzzer, and true to what the sandbox
//! answers.

use std::collections::{BTreeSet, HashMap};

use ppcert::sandbox::SandboxOptions;
use serde_json::Value;

use crate::common::*;

/// The document served at `root` (the server's root: the document is never under a prefix).
async fn document_at(root: &str) -> Value {
    let text = http_client()
        .get(format!("{root}/openapi.json"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).expect("valid JSON")
}

/// The document a fresh sandbox serves.
async fn served_document() -> Value {
    document_at(&sandbox().await.base_url()).await
}

/// Every operation object of the document.
fn operations(document: &Value) -> Vec<&Value> {
    document["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .collect()
}

#[tokio::test]
async fn openapi_document_is_openapi_3_1_covering_every_route() {
    let doc = served_document().await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    for (path, method) in [
        ("/quotes", "post"),
        ("/quotes/{id}", "delete"),
        ("/subscriptions", "post"),
        ("/subscriptions/{bookingNumber}", "patch"),
        ("/subscriptions/{bookingNumber}/contracts", "get"),
        ("/contracts/{contractId}/claims", "post"),
        ("/flight-cancellations", "post"),
    ] {
        assert!(
            doc["paths"][path][method]["responses"].is_object(),
            "{method} {path}"
        );
    }
    // Every $ref resolves.
    let text = doc.to_string();
    for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = piece.split('"').next().unwrap();
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "dangling $ref {name}"
        );
    }
}

/// The fuzzer in CI generates currencies from the document: it must list exactly the codes the
/// sandbox accepts, or schema-valid quotes get refused.
#[tokio::test]
async fn openapi_currencies_are_exactly_those_the_sandbox_accepts() {
    let doc = served_document().await;
    let listed: Vec<&str> = doc["components"]["schemas"]["Currency"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|code| code.as_str().unwrap())
        .collect();
    assert_eq!(listed, ppcert::models::money::currency_codes());
    for code in ["KES", "PHP", "EGP", "JPY", "KWD"] {
        assert!(listed.contains(&code), "{code} is an active ISO 4217 code");
    }
}

/// The fuzzer's stateful phase follows the links: each must name an operation of the document.
#[tokio::test]
async fn openapi_links_name_operations_of_the_document() {
    let doc = served_document().await;
    let operations = operations(&doc);
    let ids: Vec<&str> = operations
        .iter()
        .filter_map(|op| op["operationId"].as_str())
        .collect();
    let links: Vec<&str> = operations
        .iter()
        .flat_map(|op| op["responses"].as_object().unwrap().values())
        .filter_map(|response| response["links"].as_object())
        .flat_map(|links| links.values())
        .map(|link| link["operationId"].as_str().unwrap())
        .collect();
    assert!(links.len() >= 4, "links: {links:?}");
    for id in links {
        assert!(ids.contains(&id), "link to unknown operation {id}");
    }
}

#[tokio::test]
async fn openapi_example_quote_is_accepted_whenever_it_is_served() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    for _ in 0..2 {
        let doc = api.send("GET", "/openapi.json", None).await.body;
        let example = openapi_example_quote(&doc);
        assert!(example["data"]["trips"].is_array(), "{example}");
        let reply = api.post("/quotes", example).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        assert!(reply.body["data"]["id"].is_string());
        // A year later the same document must still offer a quote that is not in the past.
        sandbox.advance_clock(chrono::Duration::days(365));
    }
}

#[tokio::test]
async fn openapi_server_url_carries_the_path_prefix() {
    let sandbox = sandbox_with(SandboxOptions {
        path_prefix: Some("/partner-api/".into()),
        ..Default::default()
    })
    .await;
    assert!(sandbox.base_url().ends_with("/partner-api"));
    let root = sandbox.base_url().replace("/partner-api", "");
    let doc = document_at(&root).await;
    assert_eq!(doc["servers"][0]["url"], "/partner-api");
    let api = Api::new(&sandbox);
    let example = openapi_example_quote(&doc);
    assert_eq!(api.post("/quotes", example).await.status, 201);
}

/// Path template, method, and the answer's status (`None`: the request body).
type SchemaKey = (String, String, Option<u16>);

/// The operations of the served document, with a validator per documented JSON body.
struct Described {
    document: Value,
    validators: HashMap<SchemaKey, jsonschema::Validator>,
}

impl Described {
    fn new(document: Value) -> Described {
        Described {
            document,
            validators: HashMap::new(),
        }
    }

    /// The path template and operation that `method path` calls.
    fn operation(&self, method: &str, path: &str) -> Option<(String, &Value)> {
        let segments: Vec<&str> = path.split('/').collect();
        self.document["paths"]
            .as_object()?
            .iter()
            .find(|(template, _)| {
                let parts: Vec<&str> = template.split('/').collect();
                parts.len() == segments.len()
                    && parts
                        .iter()
                        .zip(&segments)
                        .all(|(p, s)| p == s || (p.starts_with('{') && !s.is_empty()))
            })
            .and_then(|(template, item)| {
                let operation = item.get(method.to_lowercase())?;
                Some((template.clone(), operation))
            })
    }

    /// Checks one recorded exchange; returns the operation's id. A request the provider
    /// accepted must match the documented request body too.
    fn check(&mut self, exchange: &Value) -> Result<String, String> {
        let method = exchange["method"].as_str().unwrap();
        let url = reqwest::Url::parse(exchange["url"].as_str().unwrap()).unwrap();
        let response = &exchange["response"];
        let status = response["status"]
            .as_u64()
            .ok_or("no response was recorded")? as u16;
        let (template, operation) = self
            .operation(method, url.path())
            .ok_or("the document has no such operation")?;
        let id = operation["operationId"].as_str().unwrap().to_string();
        let request_schema =
            operation["requestBody"]["content"]["application/json"]["schema"].clone();
        let documented = operation["responses"][status.to_string()].clone();
        if !documented.is_object() {
            return Err(format!("status {status} is not documented for {id}"));
        }
        if status < 300 && request_schema.is_object() {
            let key = (template.clone(), method.to_string(), None);
            self.validate(key, &request_schema, &exchange["request"]["body"])
                .map_err(|e| format!("{id} request: {e}"))?;
        }
        let schema = &documented["content"]["application/json"]["schema"];
        if !schema.is_object() {
            return match &response["body"] {
                Value::Null => Ok(id),
                Value::String(text) if text.is_empty() => Ok(id),
                body => Err(format!(
                    "{id} {status} is documented without a body, got {body}"
                )),
            };
        }
        let content_type = response["headers"]["content-type"].as_str().unwrap_or("");
        if !content_type.starts_with("application/json") {
            return Err(format!(
                "content-type `{content_type}`, documented application/json"
            ));
        }
        let key = (template, method.to_string(), Some(status));
        self.validate(key, schema, &response["body"])
            .map_err(|e| format!("{id} {status}: {e}"))?;
        Ok(id)
    }

    fn validate(&mut self, key: SchemaKey, schema: &Value, body: &Value) -> Result<(), String> {
        let components = &self.document["components"];
        let validator = self.validators.entry(key).or_insert_with(|| {
            let mut schema = schema.clone();
            // The schemas refer to #/components/schemas/…: give them the components.
            schema["components"] = components.clone();
            jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .expect("the document's schema compiles")
        });
        let errors: Vec<String> = validator
            .iter_errors(body)
            .map(|e| format!("at `{}`: {e}", e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!("{}\n{body}", errors.join("; ")))
        }
    }
}

/// The fuzzer in CI cannot reach subscriptions, updates and claims with valid data (they need
/// ids from earlier answers inside request bodies), so ppcert's own runs check their answers:
/// in every shipped scenario each answer's status is documented for its operation and its body
/// matches that status's schema; every request the sandbox accepted matches the documented
/// request body, so the document never forbids what ppcert sends and the provider takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_exchange_in_the_shipped_scenarios_matches_the_served_document() {
    // Every sandbox serves the same schemas (only the example's dates differ): one will do.
    let mut described = Described::new(served_document().await);
    let mut answered = BTreeSet::new();
    for scenario in [
        "certification",
        "multi-planning",
        "change-for-any-reason",
        "conformance",
    ] {
        let sandbox = sandbox_with(SandboxOptions { ..fast_options() }).await;
        let (finished, evidence, _dir) = run_against(&sandbox, scenario, &[]).await;
        assert_eq!(finished.code, 0, "{scenario}: {}", finished.stderr);
        for exchange in evidence["exchanges"].as_array().unwrap() {
            match described.check(exchange) {
                Ok(id) => {
                    answered.insert((id, exchange["response"]["status"].as_u64().unwrap()));
                }
                Err(problem) => panic!(
                    "{scenario}: {} {}: {problem}",
                    exchange["method"], exchange["url"]
                ),
            }
        }
    }
    let succeeded: BTreeSet<&str> = answered
        .iter()
        .filter(|(_, status)| *status < 300)
        .map(|(id, _)| id.as_str())
        .collect();
    let mut operations: BTreeSet<&str> = operations(&described.document)
        .iter()
        .filter_map(|operation| operation["operationId"].as_str())
        .collect();
    // The document describes itself too; ppcert never calls that.
    operations.remove("openapi");
    assert_eq!(succeeded, operations);
    for refusal in [400, 401, 404, 409] {
        assert!(
            answered.iter().any(|(_, status)| *status == refusal),
            "no {refusal} was checked: {answered:?}"
        );
    }
}
