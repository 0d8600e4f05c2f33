//! Resource `blob`s a client would read as text: decoded as leniently as the clients decode them,
//! and rewritten where a client decodes them.

use serde_json::Value;

/// Whether a MIME type names text a client would show or hand to a model as text.
fn text_like(mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || essence.contains("json")
        || essence.contains("xml")
        || essence.contains("javascript")
        || essence.contains("ecmascript")
        || essence.contains("yaml")
        || essence.contains("toml")
        || essence.contains("csv")
        || essence.contains("x-sh")
        || essence == "application/x-www-form-urlencoded"
}

/// The text in a resource `blob`, when a client could read it as text: a text-like MIME type
/// (decoded lossily: a replacement character does not hide the words around it), or any other
/// or no MIME type whose bytes are UTF-8 (an `image/png` that is really prose is prose to
/// whoever decodes it). Decoding is as lenient as the clients' (Node's `Buffer.from(…,
/// 'base64')`, Python's `b64decode`): whitespace and stray characters are skipped, padding is
/// optional, the URL-safe alphabet is accepted; where they disagree (text after an inner `=`)
/// both readings are judged. A text blob that is not clean base64 is judged as the string it is too.
pub fn blob_text(blob: &str, mime: Option<&str>) -> Option<String> {
    let text_mime = mime.is_some_and(text_like);
    let mut readings = vec![lenient_b64(blob)];
    if let Some(at) = blob.trim_end().trim_end_matches('=').find('=') {
        readings.push(lenient_b64(&blob[..at]));
        readings.push(lenient_b64(&blob[at..]));
    }
    let mut out: Vec<String> = Vec::new();
    for bytes in readings.into_iter().flatten() {
        let text = match std::str::from_utf8(&bytes) {
            Ok(t) => t.to_owned(),
            Err(_) if text_mime => String::from_utf8_lossy(&bytes).into_owned(),
            Err(_) => continue,
        };
        if !out.contains(&text) {
            out.push(text);
        }
    }
    // Not base64 at all (characters no decoder reads): a client may show it as it is.
    let odd = blob.chars().any(|c| !(c.is_ascii_alphanumeric() || "+/-_=".contains(c) || c.is_whitespace()));
    if odd && text_mime {
        out.push(blob.to_owned());
    }
    match out.is_empty() {
        true if text_mime => Some(blob.to_owned()),
        true => None,
        false => Some(out.join("\n")),
    }
}

fn lenient_b64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let cleaned: String = s
        .chars()
        .filter_map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '+' | '/' => Some(c),
            '-' => Some('+'),
            '_' => Some('/'),
            _ => None,
        })
        .collect();
    // Up to 2 trailing bits of a short final group are ignored, as every lenient decoder does.
    let cut = match cleaned.len() % 4 {
        1 => cleaned.len() - 1,
        _ => cleaned.len(),
    };
    LENIENT.decode(&cleaned[..cut]).ok()
}

const LENIENT: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Applies `f` (as [`rewrite_strings`](super::rewrite_strings) does) to the decoded text of every resource `blob` that
/// [`blob_text`] reads as text, and re-encodes what `f` rewrote; `false` as soon as `f` does.
/// A local sanitize must reach the copy a client decodes, not only the base64 string.
/// Blobs are found in a tool result's embedded resources and a `resources/read` result's
/// `contents[]`.
pub fn rewrite_text_blobs(result: &mut Value, f: &mut dyn FnMut(&str) -> Option<Option<String>>) -> bool {
    use base64::Engine;
    let resources: Vec<&mut Value> = match (result.get("content").is_some(), result) {
        (true, Value::Object(m)) => m
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(|b| b.get_mut("resource"))
            .collect(),
        (false, Value::Object(m)) => {
            m.get_mut("contents").and_then(Value::as_array_mut).into_iter().flatten().collect()
        }
        _ => return true,
    };
    for r in resources {
        let Value::Object(r) = r else { continue };
        let Some(Value::String(blob)) = r.get("blob") else { continue };
        let Some(text) = blob_text(blob, r.get("mimeType").and_then(Value::as_str)) else { continue };
        match f(&text) {
            None => return false,
            Some(None) => {}
            Some(Some(new)) => {
                let encoded = base64::engine::general_purpose::STANDARD.encode(new.as_bytes());
                r.insert("blob".into(), Value::String(encoded));
            }
        }
    }
    true
}
