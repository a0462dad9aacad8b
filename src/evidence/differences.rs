//! Where `evidence.json` differs from the record computed again from the journal, named by
//! its place in the file: the first [`NAMED`] named, the rest counted. Lists are compared an
//! item at a time, from memory or as two files give them ([`ListDiff`]), naming what comparing
//! them whole as JSON would.

use serde::Serialize;
use serde_json::Value;

/// At most this many differences are named; the rest are counted.
const NAMED: usize = 20;

/// How many characters of a value a difference shows.
const SHOWN: usize = 80;

/// Collects differences, naming the first [`NAMED`] and counting the rest.
#[derive(Default)]
pub(crate) struct Differences {
    named: Vec<String>,
    more: usize,
}

impl Differences {
    pub(crate) fn push(&mut self, difference: String) {
        if self.named.len() < NAMED {
            self.named.push(difference);
        } else {
            self.more += 1;
        }
    }

    /// Names where `recorded` and `derived` differ, down to the first differing leaf.
    pub(crate) fn compare(&mut self, path: &str, recorded: &Value, derived: &Value) {
        match (recorded, derived) {
            (Value::Object(a), Value::Object(b)) => {
                let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                for key in keys {
                    let (x, y) = (a.get(key), b.get(key));
                    let (x, y) = (x.unwrap_or(&Value::Null), y.unwrap_or(&Value::Null));
                    self.compare(&format!("{path}.{key}"), x, y);
                }
            }
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    self.compare(&format!("{path}[{i}]"), x, y);
                }
            }
            (a, b) if a != b => self.push(format!(
                "{path}: evidence.json says {}, the journal gives {}",
                short(&a.to_string()),
                short(&b.to_string())
            )),
            _ => {}
        }
    }

    pub(crate) fn compare_as_json<T: Serialize>(&mut self, path: &str, recorded: &T, derived: &T) {
        let as_json = |value: &T| serde_json::to_value(value).unwrap_or(Value::Null);
        self.compare(path, &as_json(recorded), &as_json(derived));
    }

    /// As [`Differences::compare_as_json`] of two lists, naming the same differences, with
    /// only the items that differ turned into JSON (a run's steps are thousands).
    pub(crate) fn compare_lists<T: Serialize + PartialEq>(
        &mut self,
        path: &str,
        recorded: &[T],
        derived: &[T],
    ) {
        if recorded.len() != derived.len() {
            return self.compare_as_json(path, &recorded, &derived);
        }
        for (i, (a, b)) in recorded.iter().zip(derived).enumerate() {
            if a != b {
                self.compare_as_json(&format!("{path}[{i}]"), a, b);
            }
        }
    }

    /// Takes in what `other` collected, as if pushed here one by one.
    fn absorb(&mut self, other: Differences) {
        other.named.into_iter().for_each(|d| self.push(d));
        self.more += other.more;
    }

    pub(crate) fn finish(mut self) -> Vec<String> {
        if self.more > 0 {
            self.named
                .push(format!("… and {} more differences", self.more));
        }
        self.named
    }
}

/// The first [`SHOWN`] characters of `text`, marked when cut.
fn short(text: &str) -> String {
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Two lists compared an item at a time as they are read, neither held: what
/// [`Differences::compare_lists`] names of them whole. The items' differences wait until the
/// lengths are known (lists of other lengths are one difference, their openings shown).
pub(crate) struct ListDiff {
    path: &'static str,
    items: Differences,
    recorded: Opening,
    derived: Opening,
}

impl ListDiff {
    pub(crate) fn new(path: &'static str) -> ListDiff {
        ListDiff {
            path,
            items: Differences::default(),
            recorded: Opening::default(),
            derived: Opening::default(),
        }
    }

    /// The next item of each list.
    pub(crate) fn both<T: Serialize + PartialEq>(&mut self, recorded: &T, derived: &T) {
        if recorded != derived {
            let path = format!("{}[{}]", self.path, self.recorded.items);
            self.items.compare_as_json(&path, recorded, derived);
        }
        self.recorded.add(recorded);
        self.derived.add(derived);
    }

    /// An item of the recorded list past the derived list's end.
    pub(crate) fn recorded_only<T: Serialize>(&mut self, recorded: &T) {
        self.recorded.add(recorded);
    }

    /// An item of the derived list past the recorded list's end.
    pub(crate) fn derived_only<T: Serialize>(&mut self, derived: &T) {
        self.derived.add(derived);
    }

    /// Both lists read: their differences, into `into`.
    pub(crate) fn finish(self, into: &mut Differences) {
        if self.recorded.items == self.derived.items {
            return into.absorb(self.items);
        }
        into.push(format!(
            "{}: evidence.json says {}, the journal gives {}",
            self.path,
            short(&self.recorded.text()),
            short(&self.derived.text())
        ));
    }
}

/// How many items a list has, and its JSON text as far as [`short`] shows it.
#[derive(Default)]
struct Opening {
    items: usize,
    text: String,
    chars: usize,
}

impl Opening {
    fn add<T: Serialize>(&mut self, item: &T) {
        self.items += 1;
        if self.chars > SHOWN {
            return; // already cut where the difference shows it
        }
        let item = serde_json::to_value(item)
            .unwrap_or(Value::Null)
            .to_string();
        self.text.push(if self.items == 1 { '[' } else { ',' });
        self.text.push_str(&item);
        self.chars += 1 + item.chars().count();
    }

    /// The list's text as `Value::to_string` writes it, or as much of it as is shown.
    fn text(mut self) -> String {
        match (self.items, self.chars > SHOWN) {
            (0, _) => "[]".into(),
            (_, true) => self.text,
            (_, false) => {
                self.text.push(']');
                self.text
            }
        }
    }
}
