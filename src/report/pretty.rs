//! A body as the reports show it: pretty JSON or its text, cut at a size with a note saying so.

use serde_json::Value;

use crate::record::Body;

/// Bodies longer than this are cut in the HTML report (evidence.json keeps them).
pub(crate) const BODY_SHOWN: usize = 16 * 1024;

/// Pretty JSON (or text), cut at [`BODY_SHOWN`] with a note saying so.
pub(crate) fn pretty_body(body: &Body, truncated: bool) -> (Option<String>, Option<String>) {
    pretty_json(body.json(), truncated)
}

/// [`pretty_body`] from the body's JSON text; also the templates' `pretty_body` filter.
pub(crate) fn pretty_json(json: &str, truncated: bool) -> (Option<String>, Option<String>) {
    let text = match serde_json::from_str(json).unwrap_or(Value::Null) {
        Value::Null => return (None, None),
        Value::String(s) => s,
        other => serde_json::to_string_pretty(&other).unwrap_or_default(),
    };
    let mut note = truncated
        .then(|| "the server sent more than ppcert keeps; this is the start of it".to_string());
    if text.len() > BODY_SHOWN {
        note = Some(format!(
            "cut at {} KiB of {} KiB; evidence.json has all that was kept",
            BODY_SHOWN / 1024,
            text.len() / 1024
        ));
        let cut = text.floor_char_boundary(BODY_SHOWN);
        return (Some(format!("{}\n…", &text[..cut])), note);
    }
    (Some(text), note)
}
