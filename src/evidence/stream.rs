//! Writing `evidence.json` for a run whose memory keeps exchanges slim: every field as the
//! evidence holds it, but each exchange read back whole from the journal, one at a time, so
//! the file is the same as if the whole record had been in memory; for a record left in the
//! journal (a proxy session's), its steps and exchanges too. And putting back whole the few
//! exchanges a report shows.

use std::collections::{HashMap, HashSet};

use serde::ser::{Error as _, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use super::Evidence;
use crate::journal::Archive;
use crate::record::Exchange;

/// The evidence, serialised exactly as `Evidence` derives it, exchanges from the archive.
pub(crate) struct Streamed<'a> {
    pub evidence: &'a Evidence,
    pub archive: &'a Archive,
}

impl Serialize for Streamed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let e = self.evidence;
        let fields = 10
            + usize::from(e.webhooks.is_some())
            + usize::from(!e.token_requests.is_empty())
            + usize::from(e.baseline.is_some())
            + usize::from(e.command.is_some())
            + usize::from(e.unrecognised.is_some())
            + usize::from(e.resilience.is_some());
        let mut out = serializer.serialize_struct("Evidence", fields)?;
        out.serialize_field("schema_version", &e.schema_version)?;
        out.serialize_field("tool", &e.tool)?;
        out.serialize_field("run", &e.run)?;
        out.serialize_field("verdict", &e.verdict)?;
        out.serialize_field("requirements", &e.requirements)?;
        out.serialize_field("bookings", &e.bookings)?;
        out.serialize_field("flows", &e.flows)?;
        if e.in_journal.is_some() {
            out.serialize_field("steps", &FromJournal(e, Part::Steps))?;
            out.serialize_field("exchanges", &FromJournal(e, Part::Exchanges))?;
            out.serialize_field("warnings", &FromJournal(e, Part::Warnings))?;
        } else {
            out.serialize_field("steps", &e.steps)?;
            out.serialize_field(
                "exchanges",
                &Whole {
                    memory: &e.exchanges,
                    archive: self.archive,
                },
            )?;
            out.serialize_field("warnings", &e.warnings)?;
        }
        if let Some(webhooks) = &e.webhooks {
            out.serialize_field("webhooks", webhooks)?;
        }
        if !e.token_requests.is_empty() {
            out.serialize_field("token_requests", &e.token_requests)?;
        }
        if let Some(baseline) = &e.baseline {
            out.serialize_field("baseline", baseline)?;
        }
        if let Some(command) = &e.command {
            out.serialize_field("command", command)?;
        }
        if let Some(unrecognised) = &e.unrecognised {
            out.serialize_field("unrecognised", unrecognised)?;
        }
        if let Some(resilience) = &e.resilience {
            out.serialize_field("resilience", resilience)?;
        }
        out.end()
    }
}

/// A part of a record left in the journal ([`super::model::InJournal`]), read from there as it is
/// written: the steps, the exchanges, or the warnings (those memory kept, then the rest of the
/// checks' warnings the exchanges give).
struct FromJournal<'a>(&'a Evidence, Part);

enum Part {
    Steps,
    Exchanges,
    Warnings,
}

impl Serialize for FromJournal<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        match self.1 {
            Part::Steps => sequence(serializer, |each| e.for_each_step(each)),
            Part::Exchanges => sequence(serializer, |each| e.for_each_exchange(each)),
            Part::Warnings => sequence::<S, str>(serializer, |each| {
                e.warnings.iter().try_for_each(|w| each(w))?;
                let Some(counted) = e.in_journal.as_ref().filter(|c| c.more_warnings > 0) else {
                    return Ok(());
                };
                let mut kept = counted.warnings_kept;
                e.for_each_exchange(|exchange| {
                    for warning in super::check_warnings(exchange) {
                        match kept.checked_sub(1) {
                            Some(left) => kept = left,
                            None => each(&warning)?,
                        }
                    }
                    Ok(())
                })
            }),
        }
    }
}

/// Serialises as a sequence what `walk` hands over one at a time, stopping at the first error
/// of either writing or reading.
fn sequence<S: Serializer, T: Serialize + ?Sized>(
    serializer: S,
    walk: impl FnOnce(&mut dyn FnMut(&T) -> std::io::Result<()>) -> std::io::Result<()>,
) -> Result<S::Ok, S::Error> {
    let mut out = serializer.serialize_seq(None)?;
    let mut failed = None;
    let read = walk(&mut |item| {
        out.serialize_element(item).map_err(|e| {
            failed = Some(e);
            std::io::Error::other("writing stopped")
        })
    });
    if let Some(e) = failed {
        return Err(e);
    }
    read.map_err(|e| S::Error::custom(format!("reading the journal: {e}")))?;
    out.end()
}

/// The exchanges in memory, each replaced by its journal line unless memory kept it whole.
#[derive(Clone, Copy)]
struct Whole<'a> {
    memory: &'a [Exchange],
    archive: &'a Archive,
}

/// Emits, from `memory[*next]` on, the exchanges memory kept whole, then the one the journal
/// line `line` stands for if it is next; stops at the first that must come from the journal.
fn emit_upto<Q: SerializeSeq>(
    Whole { memory, archive }: Whole<'_>,
    next: &mut usize,
    out: &mut Q,
    line: Option<&Exchange>,
) -> Result<(), Q::Error> {
    while let Some(kept) = memory.get(*next) {
        let from_journal = line.filter(|j| j.seq == kept.seq);
        if archive.kept_whole.contains(&kept.seq) {
            out.serialize_element(kept)?;
        } else if let Some(whole) = from_journal {
            out.serialize_element(whole)?;
            *next += 1;
            return Ok(());
        } else {
            return Ok(());
        }
        *next += 1;
    }
    Ok(())
}

impl Serialize for Whole<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_seq(Some(self.memory.len()))?;
        let mut next = 0;
        let mut failed = None;
        // Both lists run in seq order; the journal may hold exchanges memory dropped.
        let read = self.archive.exchanges(|line| {
            match emit_upto(*self, &mut next, &mut out, Some(&line)) {
                Ok(()) => Ok(true),
                Err(e) => {
                    failed = Some(e);
                    Ok(false)
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        read.map_err(|e| S::Error::custom(format!("reading the journal: {e}")))?;
        emit_upto(*self, &mut next, &mut out, None)?;
        if let Some(missing) = self.memory.get(next) {
            return Err(S::Error::custom(format!(
                "the journal lacks exchange {} of the record",
                missing.seq
            )));
        }
        out.end()
    }
}

/// Puts back whole, from the journal, the exchanges `wanted` by seq (those a report shows);
/// whether every exchange in memory is whole afterwards (then the record can be written from
/// memory, without reading the journal again).
pub(crate) fn hydrate(evidence: &mut Evidence, wanted: &HashSet<u64>) -> std::io::Result<bool> {
    let Some(archive) = evidence.archive.clone() else {
        return Ok(true);
    };
    let mut index: HashMap<u64, usize> = evidence
        .exchanges
        .iter()
        .enumerate()
        .filter(|(_, x)| wanted.contains(&x.seq) && !archive.kept_whole.contains(&x.seq))
        .map(|(i, x)| (x.seq, i))
        .collect();
    let slim = (evidence.exchanges.iter())
        .filter(|x| !archive.kept_whole.contains(&x.seq))
        .count();
    let mut put_back = 0;
    if !index.is_empty() {
        archive.exchanges(|exchange| {
            // Removed once put back: a seq the journal repeats is put back once.
            if let Some(i) = index.remove(&exchange.seq) {
                evidence.exchanges[i] = exchange;
                put_back += 1;
            }
            Ok(!index.is_empty())
        })?;
    }
    Ok(put_back == slim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Journal, Line};

    fn exchange(seq: u64) -> Exchange {
        serde_json::from_value(serde_json::json!({
            "seq": seq, "flow": "f#1", "step": "quote", "operation": "quote",
            "booking_number": null, "attempt": 1, "method": "POST", "url": "http://x/quotes",
            "started_at": "2027-01-01T00:00:00Z", "duration_ms": 3,
            "request": {"headers": {"content-type": "application/json"}, "body": {"data": {"n": seq}}},
            "response": {"status": 201, "headers": {"date": "today"}, "body": {"data": {"id": format!("q{seq}")}}},
            "outcome": "passed",
            "checks": [{"name": "status is 201", "passed": true, "detail": "201"}],
            "error": null,
        }))
        .unwrap()
    }

    #[test]
    fn the_streamed_record_equals_the_whole_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = Journal::open(dir.path(), false).unwrap();
        // Exchange 3's line never reached the journal; 5 is in the journal but not the record.
        for seq in [1, 2, 4, 5] {
            journal
                .append(&Line::Exchange(Box::new(exchange(seq))))
                .unwrap();
        }
        let archive = Archive {
            path: journal.path().to_path_buf(),
            kept_whole: [3].into_iter().collect(),
        };
        let whole: Vec<Exchange> = [1, 2, 3, 4].into_iter().map(exchange).collect();
        let mut memory = whole.clone();
        for x in memory.iter_mut().filter(|x| x.seq != 3) {
            *x = super::super::slim::slim_copy(x, false);
        }
        assert_ne!(memory[0], whole[0], "slim drops bodies");
        let streamed = serde_json::to_value(Whole {
            memory: &memory,
            archive: &archive,
        })
        .unwrap();
        assert_eq!(streamed, serde_json::to_value(&whole).unwrap());

        let missing = [exchange(1), exchange(6)];
        let error = serde_json::to_value(Whole {
            memory: &missing,
            archive: &archive,
        })
        .unwrap_err();
        assert!(error.to_string().contains("lacks exchange 6"), "{error}");
    }
}
