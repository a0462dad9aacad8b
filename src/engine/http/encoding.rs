//! Compressed answers: what every API call asks for (`Accept-Encoding`) and how an answer's
//! `Content-Encoding` is undone before it is read or recorded. ppcert decodes itself rather
//! than letting reqwest do it, because reqwest drops the `Content-Encoding` header it decoded
//! (the evidence notes the encoding) and the proxy must forward the bytes as they came.

use std::io::Read;

/// Sent on every API call: the encodings ppcert can undo.
pub(crate) const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// Why an answer's body could not be decoded; never holds the body itself (it is binary).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecodeError {
    #[error(
        "the answer is encoded with `{0}`, which ppcert does not decode (it asks for gzip, deflate or br)"
    )]
    Unsupported(String),
    #[error(
        "the answer says Content-Encoding `{encoding}` but its body is not valid {encoding}: {why}"
    )]
    Corrupt { encoding: String, why: String },
    #[error("the answer decodes to more than {mib} MiB, not read further")]
    TooLarge { mib: usize },
}

/// The body with every encoding `content_encoding` lists undone (the last applied first), and
/// the encoding as recorded (`None` for an identity answer). The decoded size is capped at
/// `limit`: a small compressed answer must not fill the memory.
pub(crate) fn decode(
    content_encoding: Option<&str>,
    bytes: Vec<u8>,
    limit: usize,
) -> Result<(Vec<u8>, Option<String>), DecodeError> {
    let Some(header) = content_encoding.map(str::trim).filter(|h| !h.is_empty()) else {
        return Ok((bytes, None));
    };
    let codings: Vec<String> = header
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    if codings.is_empty() {
        return Ok((bytes, None));
    }
    let mut body = bytes;
    for coding in codings.iter().rev() {
        body = decode_one(coding, &body, limit)?;
    }
    Ok((body, Some(codings.join(", "))))
}

fn decode_one(coding: &str, bytes: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    let corrupt = |why: std::io::Error| DecodeError::Corrupt {
        encoding: coding.to_string(),
        why: why.to_string(),
    };
    match coding {
        "gzip" | "x-gzip" => read_capped(flate2::read::MultiGzDecoder::new(bytes), limit),
        // RFC 9110's deflate is zlib-wrapped; some servers send raw deflate anyway.
        "deflate" => read_capped(flate2::read::ZlibDecoder::new(bytes), limit)
            .or_else(|_| read_capped(flate2::read::DeflateDecoder::new(bytes), limit)),
        "br" => read_capped(brotli_decompressor::Decompressor::new(bytes, 4096), limit),
        other => return Err(DecodeError::Unsupported(other.to_string())),
    }
    .map_err(|e| match e {
        Capped::TooLarge => DecodeError::TooLarge { mib: limit >> 20 },
        Capped::Io(e) => corrupt(e),
    })
}

enum Capped {
    TooLarge,
    Io(std::io::Error),
}

fn read_capped(reader: impl Read, limit: usize) -> Result<Vec<u8>, Capped> {
    let mut out = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(Capped::Io)?;
    if out.len() > limit {
        return Err(Capped::TooLarge);
    }
    if out.is_empty() {
        // A compressed stream always decodes to something or fails; an empty one is no stream.
        return Err(Capped::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "empty stream",
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn gzip_and_deflate_are_undone_and_named() {
        let (body, encoding) = decode(Some("gzip"), gzip(b"{\"id\":1}"), 1 << 20).unwrap();
        assert_eq!(
            (body.as_slice(), encoding.as_deref()),
            (&b"{\"id\":1}"[..], Some("gzip"))
        );
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zlib.write_all(b"hello").unwrap();
        let (body, _) = decode(Some("deflate"), zlib.finish().unwrap(), 1 << 20).unwrap();
        assert_eq!(body, b"hello");
        assert_eq!(
            decode(Some("identity"), b"x".to_vec(), 10).unwrap(),
            (b"x".to_vec(), None)
        );
    }

    #[test]
    fn a_body_that_is_not_what_it_claims_is_an_error_without_the_body() {
        let error = decode(Some("gzip"), b"{\"id\": \"qt_1\"}".to_vec(), 1 << 20).unwrap_err();
        assert!(matches!(error, DecodeError::Corrupt { .. }), "{error}");
        assert!(!error.to_string().contains("qt_1"), "{error}");
        let error = decode(Some("zstd"), b"x".to_vec(), 10).unwrap_err();
        assert_eq!(error, DecodeError::Unsupported("zstd".into()));
    }

    #[test]
    fn a_bomb_stops_at_the_limit() {
        let error = decode(Some("gzip"), gzip(&vec![0u8; 4 << 20]), 1 << 20).unwrap_err();
        assert_eq!(error, DecodeError::TooLarge { mib: 1 });
    }
}
