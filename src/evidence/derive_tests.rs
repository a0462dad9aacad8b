//! The tests of derive.rs: differences named by their path, lists compared item by item.

use serde_json::Value;

use crate::evidence::derive::Differences;

/// Lists compared item by item name exactly what comparing them whole as JSON names.
#[test]
fn lists_compared_item_by_item_name_what_the_whole_comparison_names() {
    let named = |recorded: &[Value], derived: &[Value]| {
        let (mut whole, mut items) = (Differences::default(), Differences::default());
        whole.compare_as_json("steps", &recorded, &derived);
        items.compare_lists("steps", recorded, derived);
        (whole.finish(), items.finish())
    };
    let a = [serde_json::json!({"s": 1}), serde_json::json!({"s": 2})];
    let b = [serde_json::json!({"s": 1}), serde_json::json!({"s": 3})];
    let (whole, items) = named(&a, &b);
    assert_eq!(
        whole,
        ["steps[1].s: evidence.json says 2, the journal gives 3"]
    );
    assert_eq!(items, whole);
    let (whole, items) = named(&a, &b[..1]);
    assert_eq!(whole.len(), 1);
    assert_eq!(items, whole);
    assert_eq!(named(&a, &a), (vec![], vec![]));
}

#[test]
fn differences_are_named_by_their_path_down_to_the_leaf() {
    let mut diff = Differences::default();
    diff.compare(
        "requirements",
        &serde_json::json!([{"operation": "quote", "met": true, "succeeded": 5}]),
        &serde_json::json!([{"operation": "quote", "met": false, "succeeded": 3}]),
    );
    assert_eq!(
        diff.finish(),
        vec![
            "requirements[0].met: evidence.json says true, the journal gives false",
            "requirements[0].succeeded: evidence.json says 5, the journal gives 3",
        ]
    );
}
