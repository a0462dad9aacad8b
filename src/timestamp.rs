//! An instant as the journal and the evidence write it: RFC 3339 in UTC, to the millisecond.
//! Parsed once where it is read, so a report or a verifier never re-parses text and a journal
//! line with a malformed time is refused where it is read, not wherever it is first used.

use std::fmt;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// For records made in tests, where the time is not what is tested.
    #[cfg(test)]
    pub(crate) const EPOCH: Timestamp = Timestamp(DateTime::UNIX_EPOCH);

    pub(crate) fn now() -> Timestamp {
        Timestamp::from(Utc::now())
    }

    /// Milliseconds since the Unix epoch (the timeline's scale).
    pub(crate) fn millis(&self) -> i64 {
        self.0.timestamp_millis()
    }

    pub(crate) fn as_datetime(&self) -> DateTime<Utc> {
        self.0
    }

    /// Any RFC 3339 time, in any offset; kept in UTC.
    pub(crate) fn parse(text: &str) -> Result<Timestamp, chrono::ParseError> {
        DateTime::parse_from_rfc3339(text).map(|t| Timestamp::from(t.with_timezone(&Utc)))
    }
}

impl From<DateTime<Utc>> for Timestamp {
    /// Cut to the millisecond: what is written is what is read back.
    fn from(instant: DateTime<Utc>) -> Timestamp {
        let millis = instant.timestamp_millis();
        Timestamp(DateTime::from_timestamp_millis(millis).unwrap_or(instant))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Timestamp::parse(&text)
            .map_err(|e| serde::de::Error::custom(format!("not an RFC 3339 time ({e}): {text:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_to_the_millisecond_in_utc_and_read_back_equal() {
        let t = Timestamp::parse("2027-01-01T01:00:00.123456+01:00").unwrap();
        assert_eq!(t.to_string(), "2027-01-01T00:00:00.123Z");
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), t);
    }

    #[test]
    fn a_time_that_is_not_rfc_3339_is_refused_naming_the_text() {
        let error = serde_json::from_str::<Timestamp>(r#""yesterday""#).unwrap_err();
        assert!(error.to_string().contains("\"yesterday\""), "{error}");
        assert!(serde_json::from_str::<Timestamp>(r#""""#).is_err());
    }
}
