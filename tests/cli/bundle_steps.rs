//! `verify` compares evidence.json's steps with the journal's one at a time, as both files
//! give them (neither held: a proxy session's are hundreds of thousands): an edited step is
//! named by its place and field, a step left out by the two lists' openings, as when the
//! whole lists were compared.

use crate::common::*;

#[tokio::test]
async fn a_step_edited_or_left_out_of_evidence_json_fails_verify_by_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["run", "--out", "b", "--seed", "3"];
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let bundle = dir.path().join("b");
    let path = bundle.join("evidence.json");
    let pristine = read_json(&path);
    assert!(pristine["steps"].as_array().unwrap().len() > 2);
    assert_eq!(pristine["steps"][1]["status"], "passed");
    let verify = || ppcert(dir.path(), &["verify", "b"], None);

    let mut edited = pristine.clone();
    edited["steps"][1]["status"] = "failed".into();
    std::fs::write(&path, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    rehash(&bundle, "evidence.json");
    let checked = verify().await;
    assert_eq!(checked.code, 1, "{}", checked.stdout);
    let named = r#"steps[1].status: evidence.json says "failed", the journal gives "passed""#;
    assert!(checked.stderr.contains(named), "{}", checked.stderr);

    let mut shorter = pristine.clone();
    shorter["steps"].as_array_mut().unwrap().pop();
    std::fs::write(&path, serde_json::to_string_pretty(&shorter).unwrap()).unwrap();
    rehash(&bundle, "evidence.json");
    let checked = verify().await;
    assert_eq!(checked.code, 1, "{}", checked.stdout);
    let opening =
        |list: &serde_json::Value| -> String { list.to_string().chars().take(80).collect() };
    let named = format!(
        "steps: evidence.json says {}…, the journal gives {}…",
        opening(&shorter["steps"]),
        opening(&pristine["steps"])
    );
    assert!(
        checked.stderr.contains(&named),
        "{named}\n{}",
        checked.stderr
    );
    assert!(!checked.stderr.contains("steps["), "{}", checked.stderr);

    std::fs::write(&path, serde_json::to_string_pretty(&pristine).unwrap()).unwrap();
    rehash(&bundle, "evidence.json");
    assert_eq!(verify().await.code, 0, "the record as written verifies");
}
