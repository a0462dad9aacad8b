//! A recording that keeps nothing per exchange in memory (`ppcert proxy`, which may forward
//! hundreds of thousands of requests): the journal already holds every exchange and step, so
//! the slim record the evidence is built from is read back from it when the session ends.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use crate::journal::{Line, parse_line};
use crate::record::{Exchange, StepEvent};

/// The slim exchanges and the steps of the journal at `path`, in the order written, with the
/// exchanges the journal could not hold (`unwritten`, whole) put back in `seq` order.
pub(crate) fn read_back(
    path: &Path,
    unwritten: BTreeMap<u64, Exchange>,
) -> std::io::Result<(Vec<Exchange>, Vec<StepEvent>)> {
    let mut exchanges = Vec::new();
    let mut steps = Vec::new();
    let mut sandbox_marked = false;
    let file = std::fs::File::open(path)?;
    for line in std::io::BufReader::new(file).split(b'\n') {
        let line = line?;
        // The tag comes first in every line: other lines are not parsed at all.
        let wanted =
            line.starts_with(br#"{"type":"exchange""#) || line.starts_with(br#"{"type":"step","#);
        if !wanted {
            continue;
        }
        match parse_line(&String::from_utf8_lossy(&line)) {
            Ok(Line::Exchange(mut exchange)) => {
                let names_sandbox = (exchange.response.as_ref())
                    .is_some_and(|r| r.headers.contains_key(crate::sandbox::SANDBOX_HEADER));
                exchange.slim(names_sandbox && !sandbox_marked);
                sandbox_marked |= names_sandbox;
                exchanges.push(*exchange);
            }
            Ok(Line::Step(step)) => steps.push(StepEvent {
                state: None,
                ..step
            }),
            // A torn last line (the disk filled up): what it held is in `unwritten`.
            _ => {}
        }
    }
    if !unwritten.is_empty() {
        exchanges.extend(unwritten.into_values());
        exchanges.sort_by_key(|e| e.seq);
    }
    Ok((exchanges, steps))
}
