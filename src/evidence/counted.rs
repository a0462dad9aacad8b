//! What a row of the requirement ledger counts: an operation's successes, or (a `proxy
//! --faults` session's) the faults the partner's client handled. Written as the operation's
//! name or `resilience` in the `operation` field of each `requirements` row, so every reader
//! of the ledger (reports, JUnit, CTRF, drift, the attestation) takes the row as it is.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::models::Operation;

/// The name of the resilience row.
pub(crate) const RESILIENCE: &str = "resilience";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Counted {
    Operation(Operation),
    /// Every fault of the plan handled.
    Resilience,
}

impl Counted {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Counted::Operation(operation) => operation.as_str(),
            Counted::Resilience => RESILIENCE,
        }
    }

    /// The operation a row counts; `None` for the resilience row.
    pub(crate) fn operation(self) -> Option<Operation> {
        match self {
            Counted::Operation(operation) => Some(operation),
            Counted::Resilience => None,
        }
    }
}

impl From<Operation> for Counted {
    fn from(operation: Operation) -> Counted {
        Counted::Operation(operation)
    }
}

impl PartialEq<Operation> for Counted {
    fn eq(&self, other: &Operation) -> bool {
        *self == Counted::Operation(*other)
    }
}

impl fmt::Display for Counted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Counted {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Counted, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        if name == RESILIENCE {
            return Ok(Counted::Resilience);
        }
        Operation::parse(&name)
            .map(Counted::Operation)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown requirement `{name}`: an operation's name or `{RESILIENCE}`"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_back_as_written_and_refuses_an_unknown_name() {
        for counted in (Operation::ALL.into_iter().map(Counted::from)).chain([Counted::Resilience])
        {
            let text = serde_json::to_string(&counted).unwrap();
            assert_eq!(text, format!("\"{counted}\""));
            assert_eq!(serde_json::from_str::<Counted>(&text).unwrap(), counted);
        }
        let error = serde_json::from_str::<Counted>("\"bookings\"").unwrap_err();
        assert!(error.to_string().contains("unknown requirement `bookings`"));
    }
}
