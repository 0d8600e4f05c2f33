//! One JSON text an upstream sent, its envelope parsed once. Adopting another stream's calls,
//! deciding whether the text waits on a check, and inspecting it all read the same parse; before,
//! each parsed the text again (up to four times per SSE event).

use serde_json::value::RawValue;

use crate::mcp::jsonrpc::Message;

/// The messages of one JSON text: one, or a batch array's elements, each with its own text.
#[derive(Debug)]
pub struct Envelope<'a> {
    text: &'a str,
    items: Items<'a>,
}

#[derive(Debug)]
enum Items<'a> {
    /// One message; `None` when it is not a well-formed JSON-RPC message.
    One(Option<Message<'a>>),
    /// A batch: each element's text and, when well-formed, its message.
    Batch(Vec<(&'a str, Option<Message<'a>>)>),
    /// An array that is not JSON.
    Broken,
}

impl<'a> Envelope<'a> {
    pub fn parse(text: &'a str) -> Envelope<'a> {
        let items = match text.trim_start().starts_with('[') {
            false => Items::One(serde_json::from_str::<Message<'a>>(text).ok()),
            true => match serde_json::from_str::<Vec<&'a RawValue>>(text) {
                Ok(raw) => Items::Batch(
                    raw.into_iter()
                        .map(|r| (r.get(), serde_json::from_str::<Message<'a>>(r.get()).ok()))
                        .collect(),
                ),
                Err(_) => Items::Broken,
            },
        };
        Envelope { text, items }
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    pub fn is_batch(&self) -> bool {
        !matches!(self.items, Items::One(_))
    }

    /// True when the text is blank (a keep-alive `data:` line, say).
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// True when every message in it parsed as a JSON-RPC message (a blank text holds none).
    /// What is not — a key named twice, trailing bytes, an array that is not JSON — a client's
    /// parser may still read (the SDKs keep a duplicate key's last value), so the gate cannot
    /// tell what it carries.
    pub fn well_formed(&self) -> bool {
        match &self.items {
            _ if self.is_blank() => true,
            Items::One(m) => m.is_some(),
            Items::Batch(v) => v.iter().all(|(_, m)| m.is_some()),
            Items::Broken => false,
        }
    }

    /// The message of a text that is not a batch, when it is well-formed.
    pub fn single(&self) -> Option<&Message<'a>> {
        match &self.items {
            Items::One(m) => m.as_ref(),
            _ => None,
        }
    }

    /// A batch's elements' texts and parses, in order; `None` for one message or a batch that
    /// is not JSON.
    pub fn batch(&self) -> Option<&[(&'a str, Option<Message<'a>>)]> {
        match &self.items {
            Items::Batch(v) => Some(v),
            _ => None,
        }
    }

    /// The ids of the responses in it (requests may reuse an id value: they answer nothing).
    pub fn response_ids(&self) -> impl Iterator<Item = &'a RawValue> + '_ {
        let (one, batch) = match &self.items {
            Items::One(m) => (m.as_ref(), &[][..]),
            Items::Batch(v) => (None, v.as_slice()),
            Items::Broken => (None, &[][..]),
        };
        one.into_iter()
            .chain(batch.iter().filter_map(|(_, m)| m.as_ref()))
            .filter(|m| m.method.is_none())
            .filter_map(|m| m.id)
    }
}

/// `text` with the JSON value `old` (a slice of `text`, as serde borrows it) replaced by `new`:
/// every other byte of the message stays as the upstream sent it. `None` when `old` is not a
/// slice of `text`.
pub fn splice(text: &str, old: &RawValue, new: &str) -> Option<String> {
    let start = (old.get().as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(old.get().len())?;
    if text.get(start..end)? != old.get() {
        return None;
    }
    let mut out = String::with_capacity(text.len() - old.get().len() + new.len());
    out.push_str(&text[..start]);
    out.push_str(new);
    out.push_str(&text[end..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_response_ids_of_one_message_and_of_a_batch_and_none_of_requests() {
        let ids = |t: &str| Envelope::parse(t).response_ids().map(|r| r.get().to_owned()).collect::<Vec<_>>();
        assert_eq!(ids(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#), ["4"]);
        assert_eq!(ids(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#), Vec::<String>::new());
        assert_eq!(
            ids(r#"[{"jsonrpc":"2.0","id":"a","result":{}}, {"id":5,"method":"x"}, 7, {"id":6,"error":{}}]"#),
            [r#""a""#, "6"]
        );
        assert!(ids("[not json").is_empty());
        assert!(Envelope::parse("[not json").batch().is_none());
    }

    #[test]
    fn a_splice_keeps_every_byte_but_the_replaced_value() {
        let text = r#"{ "id" : 1, "result" : {"a":1}, "extra":"é" }"#;
        let m: Message<'_> = serde_json::from_str(text).unwrap();
        let out = splice(text, m.result.unwrap(), r#"{"b":2}"#).unwrap();
        assert_eq!(out, r#"{ "id" : 1, "result" : {"b":2}, "extra":"é" }"#);
        let elsewhere = RawValue::from_string("{\"a\":1}".into()).unwrap();
        assert_eq!(splice(text, &elsewhere, "0"), None, "a value from another text is never spliced");
    }
}
