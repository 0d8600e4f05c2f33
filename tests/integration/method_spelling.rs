//! A method spelled like a known one but not byte-equal is refused, never forwarded undecided.

use crate::support::*;

#[tokio::test]
async fn a_misspelt_tools_call_never_reaches_the_upstream() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], "permissions: { deny: [\"mcp__*\"] }\n")).await;
    let url = proxy_url(&p, "py");
    let session = open_legacy_session(&url).await;
    let before = peer.journal_http().len();
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
    let call = |method: &str| {
        serde_json::json!({"jsonrpc":"2.0","id":7,"method":method,"params":{"name":"echo","arguments":{"message":"hi"}}})
            .to_string()
    };
    for method in
        ["Tools/Call", "TOOLS/CALL", "tools/call ", "tools/call\u{0}", "tools/ca\u{200b}ll", "tооls/call"]
    {
        let (status, _, body) = post(&url, &headers, call(method)).await;
        assert_eq!(status, 400, "{method:?}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], -32600, "{body}");
        assert_eq!(v["id"], 7, "{body}");
    }
    let batch = format!("[{},{}]", call("tools/list"), call("Tools/Call"));
    let (status, _, body) = post(&url, &headers, batch).await;
    assert_eq!(status, 400, "a batch with one misspelt method: {body}");
    assert_eq!(peer.journal_http().len(), before, "the upstream saw none of them");
    assert!(peer.tools_run().is_empty());
    // The exact spelling is decided (and here denied) as usual.
    let (status, _, body) = post(&url, &headers, call("tools/call")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(rpc_body(&body)["result"]["isError"], true, "{body}");
}
