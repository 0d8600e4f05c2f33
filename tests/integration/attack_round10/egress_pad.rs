//! A host padded with the C0 separators U+001C–U+001F. Python counts them as whitespace
//! (`str.isspace`, so `strip()` and `split()` drop them: a tool that tidies its `host` argument,
//! or splits a command line, gets the bare host), and so does WHATWG at either end of a URL;
//! Rust's `char::is_whitespace`, which the egress scan trims and splits with, does not — and a
//! host with a separator stuck to it is read as nothing.

use serde_json::json;

use crate::support::{config, proxy, proxy_url, py_client, text_of, Peer};

/// Python's reading of `s` tidied as a tool would (`s.strip()`).
fn stripped_by_python(s: &str) -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.argv[1].strip())", s])
        .output()
        .expect("python3 runs");
    String::from_utf8_lossy(&out.stdout).trim_end_matches('\n').to_owned()
}

fn rig(peer: &Peer) -> portcullis::config::Config {
    config(&[("py", &peer.url())], "posture: auto\npermissions: { allow: [\"mcp__*\"] }\n")
}

#[tokio::test]
async fn metadata_padded_with_ascii_whitespace_is_refused_to_any_tool() {
    let peer = Peer::python("legacy");
    let p = proxy(&rig(&peer)).await;
    for s in ["169.254.169.254", " 169.254.169.254\t", "\u{b}metadata.google.internal\u{c}"] {
        let arg = json!({ "message": s }).to_string();
        let out = py_client(&proxy_url(&p, "py"), "legacy", &["call", "echo", &arg]).await;
        assert!(text_of(&out[0]).contains("egress: metadata"), "{s:?}: {}", out[0]);
    }
    assert!(peer.tools_run().is_empty(), "{:?}", peer.tools_run());
    p.shutdown().await;
}

#[tokio::test]
async fn metadata_padded_with_c0_separators_is_refused_to_any_tool() {
    let peer = Peer::python("legacy");
    let p = proxy(&rig(&peer)).await;
    let mut forwarded = Vec::new();
    for s in ["\u{1f}169.254.169.254", "169.254.169.254\u{1c}", "\u{1e}metadata.google.internal"] {
        assert!(
            ["169.254.169.254", "metadata.google.internal"].contains(&stripped_by_python(s).as_str()),
            "{s:?}"
        );
        let arg = json!({ "message": s }).to_string();
        let out = py_client(&proxy_url(&p, "py"), "legacy", &["call", "echo", &arg]).await;
        if !text_of(&out[0]).contains("egress: metadata") {
            forwarded.push(s);
        }
    }
    assert!(forwarded.is_empty(), "forwarded: {forwarded:?}; the tool ran {:?}", peer.tools_run());
    p.shutdown().await;
}
