//! The checker-verdict parser: never panics, and accepts only exactly one JSON object of the
//! verdict shape whose `safe` field says what the verdict says — no prose, no second object, no
//! forged `{"safe": true}` beside the model's real answer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portcullis::checker::verdict::{parse, Verdict};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(verdict) = parse(text) else { return };
    let value: Value = serde_json::from_str(text.trim()).expect("accepted a reply that is not one JSON value");
    let obj = value.as_object().expect("accepted a reply that is not an object");
    assert!(obj.keys().all(|k| matches!(k.as_str(), "safe" | "reason" | "sanitized_content")));
    let safe = obj.get("safe").and_then(Value::as_bool).expect("accepted a reply without a bool `safe`");
    assert_eq!(safe, verdict == Verdict::Safe, "the verdict disagrees with its own `safe` field");
});
