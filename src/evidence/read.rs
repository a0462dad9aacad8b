//! Reading an `evidence.json` back without holding its exchanges: the record with its
//! `exchanges` skipped ([`head`]; its steps and bookings too with [`Skip::Bulk`]), and the
//! exchanges (and steps) one at a time ([`each_exchange`], [`each_item`]), each a pass over the
//! file through a buffer. A bundle of hundreds of thousands of exchanges is then verified,
//! compared and exported in the memory of one exchange, not of the file.

use std::cell::Cell;
use std::fmt;
use std::io::Read;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, de};

use super::model::{BookingRecord, Evidence, EvidenceError, SCHEMA_VERSION};
use crate::record::{Exchange, StepEvent};

/// What [`head`] leaves out of the record it reads (the syntax is still checked; the
/// exchanges' and steps' fields are checked when [`each_item`] reads them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Skip {
    /// Nothing: the record whole (outside [`head`]).
    Nothing,
    /// The exchanges.
    Exchanges,
    /// The exchanges, the steps and the bookings: what grows with the run, for the tools
    /// that compare or count them one at a time (`verify`, `export`, `diff`, `dossier`).
    Bulk,
}

thread_local! {
    /// What the running [`head`] skips.
    static SKIPPING: Cell<Skip> = const { Cell::new(Skip::Nothing) };
}

/// A list read whole, or skipped while [`head`] reads with `skip` or more.
fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
    skip: Skip,
) -> Result<Vec<T>, D::Error> {
    if SKIPPING.get() >= skip {
        IgnoredAny::deserialize(deserializer)?;
        return Ok(Vec::new());
    }
    Vec::deserialize(deserializer)
}

/// How `Evidence::exchanges` is read.
pub(super) fn exchanges<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<Exchange>, D::Error> {
    list(deserializer, Skip::Exchanges)
}

/// How `Evidence::steps` is read.
pub(super) fn steps<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<StepEvent>, D::Error> {
    list(deserializer, Skip::Bulk)
}

/// How `Evidence::bookings` is read.
pub(super) fn bookings<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<BookingRecord>, D::Error> {
    list(deserializer, Skip::Bulk)
}

/// Sets [`SKIPPING`] for as long as it lives, whatever ends the read.
struct Skipping;

impl Skipping {
    fn start(skip: Skip) -> Skipping {
        SKIPPING.set(skip);
        Skipping
    }
}

impl Drop for Skipping {
    fn drop(&mut self) {
        SKIPPING.set(Skip::Nothing);
    }
}

fn not_a_record(name: &str, error: serde_json::Error) -> EvidenceError {
    let name = name.to_string();
    if error.is_io() {
        return EvidenceError::Unreadable {
            name,
            error: error.into(),
        };
    }
    EvidenceError::NotARecord { name, error }
}

/// The record `reader` holds, what `skip` says left empty (read the exchanges and steps with
/// [`each_item`]); `name` says where it came from in errors.
pub(crate) fn head(name: &str, reader: impl Read, skip: Skip) -> Result<Evidence, EvidenceError> {
    let evidence: Evidence = {
        let _skipping = Skipping::start(skip.max(Skip::Exchanges));
        serde_json::from_reader(std::io::BufReader::new(reader))
            .map_err(|e| not_a_record(name, e))?
    };
    if evidence.schema_version != SCHEMA_VERSION {
        let found = evidence.schema_version;
        let name = name.to_string();
        return Err(EvidenceError::Schema { name, found });
    }
    Ok(evidence)
}

/// One step or one exchange of a record, as [`each_item`] reads them.
pub(crate) enum Recorded {
    Step(StepEvent),
    Exchange(Box<Exchange>),
}

/// Calls `each` with every exchange of the record `reader` holds, in order, one at a time;
/// `each` returns false to stop. How many were read.
pub(crate) fn each_exchange(
    name: &str,
    reader: impl Read,
    each: &mut dyn FnMut(Exchange) -> bool,
) -> Result<usize, EvidenceError> {
    each_item(name, reader, false, &mut |item| match item {
        Recorded::Exchange(exchange) => each(*exchange),
        Recorded::Step(_) => true,
    })
}

/// As [`each_exchange`], and with `steps` every step too, in order (the file holds them
/// before the exchanges). How many exchanges were read.
pub(crate) fn each_item(
    name: &str,
    reader: impl Read,
    steps: bool,
    each: &mut dyn FnMut(Recorded) -> bool,
) -> Result<usize, EvidenceError> {
    let mut deserializer = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    let mut count = 0;
    let top = Top {
        each,
        steps,
        count: &mut count,
    };
    let read = top.deserialize(&mut deserializer);
    match read.and_then(|()| deserializer.end()) {
        Ok(()) => Ok(count),
        // `each` asked to stop: what it read is all that was wanted.
        Err(error) if error.to_string().starts_with(STOP) => Ok(count),
        Err(error) => Err(not_a_record(name, error)),
    }
}

/// The record's top level: every member skipped but `exchanges` (and `steps`, when wanted).
struct Top<'a> {
    each: &'a mut dyn FnMut(Recorded) -> bool,
    steps: bool,
    count: &'a mut usize,
}

/// The marker of a stop `each` asked for, carried through serde as an error.
const STOP: &str = "\u{0}stopped by the reader";

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an evidence record (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut steps = 0;
        while let Some(key) = map.next_key::<String>()? {
            let each = &mut *self.each;
            if key == "exchanges" {
                let count = &mut *self.count;
                let wrap = |exchange| Recorded::Exchange(Box::new(exchange));
                map.next_value_seed(Elements(each, count, wrap, "a list of exchanges"))?;
            } else if key == "steps" && self.steps {
                let wrap = Recorded::Step;
                map.next_value_seed(Elements(each, &mut steps, wrap, "a list of steps"))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// A list of exchanges or steps, an element at a time: each handed over as an item (the third
/// member makes it one) and counted; the fourth says what the list should be.
struct Elements<'a, T>(
    &'a mut dyn FnMut(Recorded) -> bool,
    &'a mut usize,
    fn(T) -> Recorded,
    &'static str,
);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Elements<'_, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Elements<'_, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.3)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Elements(each, count, wrap, _) = self;
        while let Some(element) = seq.next_element::<T>()? {
            *count += 1;
            if !each(wrap(element)) {
                return Err(de::Error::custom(STOP));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record with two exchanges, as `ppcert run` writes one.
    fn record() -> String {
        let exchange = |seq: u64| {
            serde_json::json!({
                "seq": seq, "flow": "f#1", "step": "quote", "operation": "quote",
                "attempt": 1, "method": "POST", "url": "http://127.0.0.1/quotes",
                "started_at": "2026-01-01T00:00:00Z", "duration_ms": 1,
                "request": {"headers": {}}, "response": null, "outcome": "error",
                "checks": [], "error": null, "expectation": "acceptance", "retried": false,
                "delivery": "answered"
            })
        };
        let mut evidence = serde_json::to_value(sample()).unwrap();
        evidence["exchanges"] = serde_json::json!([exchange(1), exchange(2)]);
        evidence.to_string()
    }

    fn sample() -> Evidence {
        let run = super::super::test_run();
        super::super::build(run, &[], Vec::new(), Vec::new(), &[], Vec::new())
    }

    #[test]
    fn the_head_skips_the_exchanges_and_each_exchange_reads_them_one_at_a_time() {
        let text = record();
        let head = head("evidence.json", text.as_bytes(), Skip::Exchanges).unwrap();
        assert!(head.exchanges.is_empty());
        assert_eq!(head.run.id, "r");
        let whole: Evidence = serde_json::from_str(&text).unwrap();
        assert_eq!(
            whole.exchanges.len(),
            2,
            "outside `head`, exchanges are read"
        );
        let mut seqs = Vec::new();
        let read = each_exchange("evidence.json", text.as_bytes(), &mut |x| {
            seqs.push(x.seq);
            true
        });
        assert_eq!((read.unwrap(), seqs), (2, vec![1, 2]));
        let mut first = Vec::new();
        let stopped = each_exchange("evidence.json", text.as_bytes(), &mut |x| {
            first.push(x.seq);
            false
        });
        assert_eq!((stopped.unwrap(), first), (1, vec![1]));
    }

    #[test]
    fn a_broken_exchange_is_named_by_its_line() {
        let text = record().replace("\"attempt\":1", "\"attempt\":\"one\"");
        assert!(
            head("evidence.json", text.as_bytes(), Skip::Bulk).is_ok(),
            "skipped"
        );
        let error = each_exchange("evidence.json", text.as_bytes(), &mut |_| true).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("evidence.json:1: invalid type"),
            "{error}"
        );
        let cut = &record()[..200];
        let error = head("evidence.json", cut.as_bytes(), Skip::Bulk).unwrap_err();
        assert!(error.to_string().contains("EOF"), "{error}");
    }
}
