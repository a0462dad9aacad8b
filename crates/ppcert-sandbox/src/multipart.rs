//! A `multipart/form-data` body (RFC 7578) read into its parts, for a staging whose claims
//! carry a document: each part's name, file name, media type and bytes.

/// One part as received.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

/// The boundary a `multipart/form-data` content type names, if it is one.
pub fn boundary(content_type: &str) -> Option<String> {
    let mut params = content_type.split(';');
    let essence = params.next()?.trim();
    if !essence.eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.find_map(|p| {
        let (key, value) = p.split_once('=')?;
        (key.trim().eq_ignore_ascii_case("boundary"))
            .then(|| value.trim().trim_matches('"').to_string())
    })
}

/// The parts of `body`, in order.
pub fn parse(body: &[u8], boundary: &str) -> Result<Vec<Part>, String> {
    let delimiter = format!("--{boundary}");
    let mut rest = body;
    let start = find(rest, delimiter.as_bytes()).ok_or("no boundary in the body")?;
    rest = &rest[start + delimiter.len()..];
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        rest = rest
            .strip_prefix(b"\r\n")
            .ok_or("a boundary line not ended by CRLF")?;
        let end = find(rest, format!("\r\n{delimiter}").as_bytes())
            .ok_or("a part not closed by a boundary")?;
        parts.push(part(&rest[..end])?);
        rest = &rest[end + 2 + delimiter.len()..];
    }
}

fn part(raw: &[u8]) -> Result<Part, String> {
    let split = find(raw, b"\r\n\r\n").ok_or("a part without a blank line after its headers")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut part = Part {
        name: String::new(),
        filename: None,
        content_type: None,
        bytes: raw[split + 4..].to_vec(),
    };
    for line in head.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        match name.trim().to_ascii_lowercase().as_str() {
            "content-disposition" => {
                part.name = param(value, "name").unwrap_or_default();
                part.filename = param(value, "filename");
            }
            "content-type" => part.content_type = Some(value.trim().to_string()),
            _ => {}
        }
    }
    if part.name.is_empty() {
        return Err("a part without a Content-Disposition name".into());
    }
    Ok(part)
}

/// A `Content-Disposition` parameter's value, quotes removed.
fn param(value: &str, key: &str) -> Option<String> {
    value.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case(key)).then(|| v.trim().trim_matches('"').to_string())
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_come_back_in_order_with_their_names_types_and_bytes() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"claim\"\r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n--XyZ\r\nContent-Disposition: form-data; name=\"document\"; filename=\"l.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\r\n\r\nx\r\n--XyZ--\r\n";
        let content_type = "multipart/form-data; boundary=\"XyZ\"";
        let parts = parse(body, &boundary(content_type).unwrap()).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].name, "claim");
        assert_eq!(parts[0].bytes, b"{\"a\":1}");
        assert_eq!(parts[1].filename.as_deref(), Some("l.pdf"));
        assert_eq!(parts[1].content_type.as_deref(), Some("application/pdf"));
        assert_eq!(parts[1].bytes, b"%PDF-1.4\r\n\r\nx");
        assert_eq!(boundary("application/json"), None);
        assert!(parse(b"--XyZ\r\nno blank line\r\n--XyZ--", "XyZ").is_err());
    }
}
