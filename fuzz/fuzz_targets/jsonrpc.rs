//! The JSON-RPC envelope parser: never panics, and what it reads is what a last-key-wins JSON
//! parser (most servers) reads — so a duplicate `id` or `method` can never make the proxy decide
//! one message while the server runs another.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portcullis::mcp::jsonrpc::{parse, Message, Payload};
use serde_json::Value;

fn agrees(m: &Message<'_>, v: &Value) {
    let obj = v.as_object().expect("a parsed message is a JSON object");
    match m.id {
        Some(id) => {
            let mine: Value = serde_json::from_str(id.get()).expect("an id is JSON");
            assert_eq!(obj.get("id"), Some(&mine), "id read differently");
        }
        None => assert!(obj.get("id").is_none_or(Value::is_null), "id missed"),
    }
    match m.method() {
        Some(method) => assert_eq!(obj.get("method").and_then(Value::as_str), Some(method)),
        None => assert!(obj.get("method").is_none_or(Value::is_null), "method missed"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(payload) = parse(data) else { return };
    // JSON text that is not a serde value (a number past f64, a lone surrogate escape) is
    // judged where it matters: arguments the gate reads are denied when unreadable (found here).
    let Ok(value) = serde_json::from_slice::<Value>(data) else { return };
    match payload {
        Payload::Single(m) => agrees(&m, &value),
        Payload::Batch(ms) => {
            let items = value.as_array().expect("a batch is an array");
            assert_eq!(items.len(), ms.len());
            for (m, v) in ms.iter().zip(items) {
                agrees(m, v);
            }
        }
    }
});
