//! The generated document a multipart part can carry (`document = "withdrawal-letter"`): a
//! one-page PDF 1.4 letter naming the booking, the traveler and the date, as test data. Written
//! directly (five objects, one standard font, no embedding): a PDF crate would weigh more than
//! the format this needs.

use serde_json::Value;

/// The documents ppcert can generate, by the name a part gives.
pub(crate) const DOCUMENTS: [&str; 1] = ["withdrawal-letter"];

/// The withdrawal letter for the booking of `context` (its number, first traveler, and the
/// claim's day, else today).
pub(crate) fn withdrawal_letter(context: &Value) -> Vec<u8> {
    let booking = context["booking"]["number"].as_str().unwrap_or("unknown");
    let traveler = &context["booking"]["travelers"][0];
    let name = format!(
        "{} {}",
        traveler["firstName"].as_str().unwrap_or(""),
        traveler["lastName"].as_str().unwrap_or("")
    );
    let date = (context["claim_day"].as_str().map(str::to_string))
        .unwrap_or_else(|| chrono::Utc::now().format("%Y-%m-%d").to_string());
    let lines = [
        "Withdrawal letter".to_string(),
        format!("Booking: {booking}"),
        format!("Traveler: {}", name.trim()),
        format!("Date: {date}"),
        "I withdraw from this booking and claim the protection it was sold with.".to_string(),
    ];
    pdf(&lines)
}

/// A one-page A4 PDF with `lines` of Helvetica text.
fn pdf(lines: &[String]) -> Vec<u8> {
    let mut text = String::from("BT /F1 14 Tf 72 770 Td 20 TL\n");
    for line in lines {
        text.push_str(&format!("({}) Tj T*\n", escaped(line)));
    }
    text.push_str("ET");
    let content = latin1(&text);
    let mut objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] \
          /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
            .to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    ];
    let mut stream = format!("<< /Length {} >>\nstream\n", content.len()).into_bytes();
    stream.extend_from_slice(&content);
    stream.extend_from_slice(b"\nendstream");
    objects.push(stream);
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(object);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A PDF literal string's content: `\`, `(` and `)` escaped.
fn escaped(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('(', "\\(")
        .replace(')', "\\)")
}

/// WinAnsi bytes for Latin-1 text (what a generated name holds); anything else is `?`.
fn latin1(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What a PDF reader checks first: the header, every object where the cross-reference
    /// table says it is, the trailer's `startxref` pointing at the table, and the page's text.
    #[test]
    fn the_letter_is_a_one_page_pdf_whose_xref_table_points_at_its_objects() {
        let context = json!({
            "booking": {"number": "AB12345678", "travelers": [{"firstName": "Zoé", "lastName": "O(Brien)"}]},
            "claim_day": "2027-03-01",
        });
        let pdf = withdrawal_letter(&context);
        assert!(pdf.starts_with(b"%PDF-1.4\n"));
        assert!(pdf.ends_with(b"%%EOF\n"));
        let text = String::from_utf8_lossy(&pdf);
        let startxref: usize = text
            .rsplit("startxref\n")
            .next()
            .and_then(|t| t.lines().next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert!(pdf[startxref..].starts_with(b"xref\n0 6\n"));
        let table = String::from_utf8_lossy(&pdf[startxref..]);
        for (n, line) in table.lines().skip(3).take(5).enumerate() {
            let offset: usize = line[..10].parse().unwrap();
            let expected = format!("{} 0 obj", n + 1);
            assert!(pdf[offset..].starts_with(expected.as_bytes()), "{expected}");
        }
        assert!(text.contains("/Count 1"));
        for words in [
            "(Booking: AB12345678)",
            "(Date: 2027-03-01)",
            "O\\(Brien\\)",
        ] {
            assert!(text.contains(words), "{words}");
        }
        assert!(pdf.windows(3).any(|w| w == b"Zo\xe9"), "Latin-1 text");
    }
}
