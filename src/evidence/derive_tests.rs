//! The tests of derive.rs: differences named by their path, lists compared item by item.

use serde_json::Value;

use crate::evidence::differences::Differences;

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

/// Two lists compared an item at a time as two files give them (neither held) name what
/// comparing them whole names: differing items, lists of other lengths (their openings shown,
/// short ones whole), empty lists, and more differences than are named.
#[test]
fn lists_streamed_an_item_at_a_time_name_what_the_whole_comparison_names() {
    use crate::evidence::differences::ListDiff;
    let streamed = |recorded: &[Value], derived: &[Value]| {
        let mut list = ListDiff::new("steps");
        for i in 0..recorded.len().max(derived.len()) {
            match (recorded.get(i), derived.get(i)) {
                (Some(a), Some(b)) => list.both(a, b),
                (Some(a), None) => list.recorded_only(a),
                (None, Some(b)) => list.derived_only(b),
                (None, None) => unreachable!(),
            }
        }
        let mut diff = Differences::default();
        diff.push("before".into());
        list.finish(&mut diff);
        diff.finish()
    };
    let whole = |recorded: &[Value], derived: &[Value]| {
        let mut diff = Differences::default();
        diff.push("before".into());
        diff.compare_as_json("steps", &recorded, &derived);
        diff.finish()
    };
    let step = |n: usize| serde_json::json!({"flow": format!("lifecycle#{n}"), "status": "passed", "reason": null, "step_index": n});
    let many: Vec<Value> = (0..30).map(step).collect();
    let mut edited = many.clone();
    for item in &mut edited {
        item["status"] = "failed".into();
    }
    let small = [serde_json::json!(1), serde_json::json!(2)];
    let cases: [(&[Value], &[Value]); 8] = [
        (&many, &many),
        (&many, &edited),
        (&many, &many[..29]),
        (&many[..1], &many),
        (&[], &many),
        (&many, &[]),
        (&small, &small[..1]),
        (&[], &[]),
    ];
    for (recorded, derived) in cases {
        let named = whole(recorded, derived);
        assert_eq!(streamed(recorded, derived), named, "{named:?}");
    }
    assert_eq!(
        whole(&many, &edited).len(),
        21,
        "20 named, the rest counted"
    );
    assert_eq!(
        whole(&small, &small[..1])[1],
        "steps: evidence.json says [1,2], the journal gives [1]"
    );
}
