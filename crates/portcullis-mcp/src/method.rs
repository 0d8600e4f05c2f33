//! Method spelling: the gate decides `tools/call` by its exact name, so a method that a lenient
//! server could read as a known one — `Tools/Call`, `tools/call\u0000`, ` tools/call`,
//! `tools/ca\u200bll` — must never be forwarded undecided. Both transports (the HTTP gate and
//! the stdio relay) call [`misspelt`] on every request and notification before deciding it.

/// The methods of every MCP era the gate knows (client → server and server → client).
pub const KNOWN: &[&str] = &[
    "initialize",
    "ping",
    "tools/call",
    "tools/list",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/get",
    "prompts/list",
    "completion/complete",
    "logging/setLevel",
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "server/discover",
    "subscriptions/listen",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "notifications/roots/list_changed",
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/prompts/list_changed",
    "notifications/elicitation/complete",
    "notifications/tasks/status",
];

/// Why `method` may not be forwarded, or `None` when it is either exactly a known method or
/// plainly another one. Refused: anything outside printable ASCII (whitespace, NUL, controls,
/// and every Unicode look-alike or invisible character — MCP names none), and a name equal to a
/// known method but for ASCII case.
pub fn misspelt(method: &str) -> Option<String> {
    if !method.bytes().all(|b| b.is_ascii_graphic()) {
        return Some(format!(
            "method {method:?} is not printable ASCII (whitespace, control or non-ASCII characters); it was not sent"
        ));
    }
    if KNOWN.contains(&method) {
        return None;
    }
    KNOWN.iter().find(|k| k.eq_ignore_ascii_case(method)).map(|known| {
        format!("method {method:?} differs from {known:?} only in case; methods are case-sensitive, it was not sent")
    })
}

/// The refusal for a payload holding a misspelt method, if any: the JSON-RPC error to answer
/// (with the message's id when the payload is one message; a batch is refused whole).
pub fn refusal(payload: &super::jsonrpc::Payload<'_>) -> Option<Vec<u8>> {
    use super::jsonrpc::{code, error_response, Payload};
    let messages = match payload {
        Payload::Single(m) => std::slice::from_ref(m),
        Payload::Batch(b) => b.as_slice(),
    };
    let (msg, why) = messages.iter().find_map(|m| m.method().and_then(misspelt).map(|w| (m, w)))?;
    let id = matches!(payload, Payload::Single(_)).then_some(msg.id).flatten();
    Some(error_response(id, code::INVALID_REQUEST, &why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_of_known_methods_are_refused_and_exact_or_other_names_are_not() {
        for (method, refused) in [
            ("tools/call", false),
            ("logging/setLevel", false),
            ("notifications/initialized", false),
            ("x-vendor/thing", false),
            ("tools/callx", false),
            ("Tools/Call", true),
            ("TOOLS/CALL", true),
            ("tools/Call", true),
            ("Initialize", true),
            ("logging/setlevel", true),
            ("resources/READ", true),
            ("Subscriptions/Listen", true),
            ("tools/call ", true),
            (" tools/call", true),
            ("tools/call\0", true),
            ("tools/call\n", true),
            ("tools/ca\u{200b}ll", true),
            ("tools/cal\u{13de}", true),
            ("tооls/call", true),
            ("tools\u{ff0f}call", true),
            ("", false),
        ] {
            assert_eq!(misspelt(method).is_some(), refused, "{method:?}");
        }
    }
}
