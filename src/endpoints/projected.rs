//! A template's context cut to the top-level names it reads. Turning the whole call context
//! (the booking, its travelers, flights and plans) into template values was the largest part
//! of building a call whose path reads only `quote.id`; a template without statements can
//! read nothing but the names it states, so it renders the same from the names alone.

use minijinja::{Environment, Value as Context};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// The top-level names the template reads, or `None` when it has statements (an `include`,
/// an `import` or a macro could read names this template does not state).
pub(super) fn names(env: &Environment<'static>, name: &str) -> Option<Vec<String>> {
    let template = env.get_template(name).ok()?;
    if template.source().contains("{%") {
        return None;
    }
    let mut names: Vec<String> = template.undeclared_variables(false).into_iter().collect();
    names.sort();
    Some(names)
}

/// The template context of `context`: only the entries `names` lists when given, in the
/// context's own order, converted exactly as the whole context would be.
pub(super) fn context(context: &Value, names: Option<&[String]>) -> Context {
    match (names, context.as_object()) {
        (Some(names), Some(entries)) => {
            Context::from(minijinja::value::Serde(Projected { entries, names }))
        }
        _ => Context::from(minijinja::value::Serde(context)),
    }
}

struct Projected<'a> {
    entries: &'a serde_json::Map<String, Value>,
    names: &'a [String],
}

impl Serialize for Projected<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.entries {
            if self.names.binary_search(key).is_ok() {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A path renders the same from the names it reads as from the whole context, and a
    /// template with statements keeps the whole context.
    #[test]
    fn a_template_renders_the_same_from_the_names_it_reads() {
        let mut env = crate::endpoints::template::environment(true);
        env.add_template_owned("plain", "/quotes/{{ quote.id }}/{{ booking.number }}")
            .unwrap();
        env.add_template_owned("missing", "/x/{{ contract.id }}")
            .unwrap();
        env.add_template_owned("statement", "{% if quote %}/q/{{ quote.id }}{% endif %}")
            .unwrap();
        let whole = json!({
            "quote": {"id": "q 1/2", "reference": "R"},
            "booking": {"number": "B1", "travelers": [{"name": "A"}]},
            "now": "2027-01-01T00:00:00Z",
        });
        for name in ["plain", "missing", "statement"] {
            let template = env.get_template(name).unwrap();
            let names = names(&env, name);
            assert_eq!(names.is_none(), name == "statement");
            let cut = template.render(context(&whole, names.as_deref()));
            let full = template.render(Context::from(minijinja::value::Serde(&whole)));
            match (cut, full) {
                (Ok(cut), Ok(full)) => assert_eq!(cut, full),
                (Err(cut), Err(full)) => assert_eq!(cut.to_string(), full.to_string()),
                (cut, full) => panic!("{name}: {cut:?} against {full:?}"),
            }
        }
        assert_eq!(names(&env, "plain").unwrap(), ["booking", "quote"]);
    }
}
