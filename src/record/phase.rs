//! Where an exchange stands in a write's life: the write itself, a write answered but whose
//! outcome is still to be confirmed (`pending`), or a read made only to confirm one
//! (`confirm`). Written as two flags, each left out when false, so older records read as sent.

use serde::{Deserialize, Serialize};

/// The name of the failed check a settling confirmation read carries when the outcome never
/// showed: the write is `unconfirmed`.
pub(crate) const UNCONFIRMED: &str = "unconfirmed";
/// The name of the check a settling confirmation read carries: failed when the outcome shown
/// is a failure (the write failed), passed when it is a success.
pub(crate) const CONFIRMED: &str = "confirmed";

/// An exchange's part in confirming a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "PhaseFlags", into = "PhaseFlags")]
pub(crate) enum Phase {
    /// A call whose answer says what happened (or a plain read).
    #[default]
    Sent,
    /// A write answered (a `202 Accepted`, or one whose endpoint has a `confirm` table)
    /// whose outcome is read afterwards: it counts only once a confirmation shows it.
    Pending,
    /// A read made to confirm a write's outcome: recorded, never counted as an operation.
    Confirm,
}

#[derive(Serialize, Deserialize)]
struct PhaseFlags {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pending: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    confirm: bool,
}

impl From<PhaseFlags> for Phase {
    fn from(flags: PhaseFlags) -> Phase {
        match (flags.confirm, flags.pending) {
            (true, _) => Phase::Confirm,
            (false, true) => Phase::Pending,
            (false, false) => Phase::Sent,
        }
    }
}

impl From<Phase> for PhaseFlags {
    fn from(phase: Phase) -> PhaseFlags {
        PhaseFlags {
            pending: phase == Phase::Pending,
            confirm: phase == Phase::Confirm,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_written_as_flags_and_absent_flags_read_as_sent() {
        #[derive(Serialize, Deserialize)]
        struct Line {
            #[serde(flatten)]
            phase: Phase,
        }
        let written = |phase| serde_json::to_string(&Line { phase }).unwrap();
        assert_eq!(written(Phase::Sent), "{}");
        assert_eq!(written(Phase::Pending), r#"{"pending":true}"#);
        assert_eq!(written(Phase::Confirm), r#"{"confirm":true}"#);
        let read = |text: &str| serde_json::from_str::<Line>(text).unwrap().phase;
        assert_eq!(read("{}"), Phase::Sent);
        assert_eq!(read(r#"{"confirm":true}"#), Phase::Confirm);
        assert_eq!(read(r#"{"pending":true}"#), Phase::Pending);
    }
}
