//! A tool's name is text an operator reads (in an ask, a notification, the audit, `explain`):
//! one holding a control, format or separator character (an escape sequence, a line break, a bidi
//! override, a zero-width character: what [`crate::inert`] escapes) names no tool and only
//! disguises itself. MCP's guidance is letters, digits, `_`, `-` and `.`; names beyond it are
//! let through (servers use others), these never are: the call is refused as invalid before it
//! is decided, so it is never parked, announced or recorded under that name.

use crate::mcp::jsonrpc::CallParams;

/// Why `name` is not a tool's name, naming the first offending character (never quoting the
/// name), or `None` when it may be one. Printable ASCII is the fast path.
pub fn refusal(name: &str) -> Option<String> {
    if name.bytes().all(|b| (0x20..0x7F).contains(&b)) {
        return None;
    }
    let (at, c) = name.char_indices().find(|&(_, c)| crate::inert::escaped(c))?;
    Some(format!(
        "the tool name holds U+{:04X} at byte {at}, a control or format character: no tool is named so \
         (a tool's name is letters, digits, `_`, `-` and `.`)",
        c as u32
    ))
}

/// `tools/call` params whose name may be a tool's ([`refusal`] otherwise).
pub fn checked(params: CallParams<'_>) -> Result<CallParams<'_>, String> {
    match refusal(&params.name) {
        None => Ok(params),
        Some(why) => Err(format!("tools/call params: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_a_control_format_or_separator_character_are_refused_and_others_pass() {
        let refused = [
            ("write_note\u{1b}]8;;x\u{7}", "U+001B at byte 10"),
            ("write_\u{202e}dda", "U+202E at byte 6"),
            ("a\r\n  rule: forged", "U+000D at byte 1"),
            ("tab\tname", "U+0009"),
            ("del\u{7f}", "U+007F"),
            ("csi\u{9b}", "U+009B"),
            ("iso\u{2066}late", "U+2066"),
            ("zero\u{200b}width", "U+200B"),
            ("bom\u{feff}", "U+FEFF"),
            ("line\u{2028}", "U+2028"),
            ("tag\u{e0041}", "U+E0041"),
        ];
        for (name, why) in refused {
            let said = refusal(name).unwrap_or_else(|| panic!("{name:?} passed"));
            assert!(said.contains(why), "{said}");
            assert!(!said.contains(name), "the name is never quoted: {said}");
        }
        for name in ["write_note", "fs.read-file", "a b", "read:x/y", "書く", "naïve", "back\\slash", ""] {
            assert_eq!(refusal(name), None, "{name:?}");
        }
    }
}
