//! Plain HTTP tool path normalisation: never panics, is idempotent, and what it forwards is read
//! the same by a server that percent-decodes once: no dot segment, no extra `/`, no `;`, NUL or
//! control appears after decoding — so the rule decided exactly the path the server runs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portcullis::proxy::route::path::normalise;

fn decode_once(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit() {
            let hex = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            out.push(hex(b[i + 1]) * 16 + hex(b[i + 2]));
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else { return };
    let raw = format!("/{raw}");
    let Ok(path) = normalise(&raw) else { return };
    assert!(path.starts_with('/'), "{raw:?} -> {path:?}");
    assert_eq!(normalise(&path).as_deref(), Ok(path.as_str()), "not idempotent: {raw:?}");
    let decoded = decode_once(&path);
    assert_eq!(
        decoded.iter().filter(|&&b| b == b'/').count(),
        path.matches('/').count(),
        "decoding makes a new segment: {raw:?} -> {path:?}"
    );
    for seg in decoded.split(|&b| b == b'/').skip(1) {
        assert!(seg != b"." && seg != b"..", "a dot segment survives decoding: {raw:?} -> {path:?}");
    }
    assert!(
        !decoded.iter().any(|&b| b == b';' || b == b'\\' || b < 0x20 || b == 0x7f),
        "a separator or control survives: {raw:?} -> {path:?}"
    );
});
