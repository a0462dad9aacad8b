//! W3C Trace Context (`traceparent`): the identifier every request ppcert sends carries, so a
//! provider can find each exchange of a bundle in its own logs.
//!
//! One trace per call: every attempt of a call (its retries) shares the trace id and has a
//! span (parent) id of its own. Ids are random, never derived from the run's seed, so two runs
//! never send the same one.

use rand::RngExt;

/// The header's name, as HTTP/2 and the journal spell it.
pub(crate) const HEADER: &str = "traceparent";

/// The trace id of one call: 16 random bytes, never all zero (the spec's invalid value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceId([u8; 16]);

impl TraceId {
    pub(crate) fn random() -> TraceId {
        let mut rng = rand::rng();
        loop {
            let bytes: [u8; 16] = rng.random();
            if bytes != [0; 16] {
                return TraceId(bytes);
            }
        }
    }

    /// A `traceparent` value for one attempt: this trace, a fresh span id, sampled.
    pub(crate) fn attempt(&self) -> String {
        let mut rng = rand::rng();
        let span: [u8; 8] = loop {
            let bytes: [u8; 8] = rng.random();
            if bytes != [0; 8] {
                break bytes;
            }
        };
        format!("00-{}-{}-01", hex(&self.0), hex(&span))
    }
}

/// A fresh `traceparent` for a request that starts a trace of its own.
pub(crate) fn fresh() -> String {
    TraceId::random().attempt()
}

/// Adds a fresh `traceparent` to `headers` when they have none, so every call can be found in
/// the provider's logs.
pub(crate) fn fill(headers: &mut axum::http::HeaderMap) {
    if !headers.contains_key(HEADER) {
        let value = axum::http::HeaderValue::from_str(&fresh()).expect("hex is a header value");
        headers.insert(HEADER, value);
    }
}

fn hex(bytes: &[u8]) -> String {
    crate::digest::hex(bytes)
}

#[cfg(test)]
/// Whether `value` is a `traceparent` of version 00 as the W3C recommendation defines it:
/// lowercase hex fields of 2, 32, 16 and 2 digits, trace and parent ids not all zero.
pub(crate) fn is_valid(value: &str) -> bool {
    let fields: Vec<&str> = value.split('-').collect();
    let [version, trace, parent, flags] = fields.as_slice() else {
        return false;
    };
    let lower_hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let not_zero = |s: &str| s.bytes().any(|b| b != b'0');
    *version == "00"
        && lower_hex(version, 2)
        && lower_hex(trace, 32)
        && not_zero(trace)
        && lower_hex(parent, 16)
        && not_zero(parent)
        && lower_hex(flags, 2)
}

#[cfg(test)]
fn trace_id(value: &str) -> Option<&str> {
    is_valid(value).then(|| &value[3..35])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_of_a_call_share_the_trace_and_not_the_span() {
        let trace = TraceId::random();
        let (first, second) = (trace.attempt(), trace.attempt());
        assert!(is_valid(&first) && is_valid(&second), "{first} {second}");
        assert_eq!(trace_id(&first), trace_id(&second));
        assert_ne!(first, second);
        assert_ne!(trace_id(&fresh()), trace_id(&first));
    }

    #[test]
    fn only_the_recommendations_format_is_valid() {
        assert!(is_valid(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        ));
        for bad in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "",
        ] {
            assert!(!is_valid(bad), "{bad}");
        }
    }
}
