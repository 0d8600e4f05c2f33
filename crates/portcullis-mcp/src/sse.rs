//! Server-Sent Events framing, incremental and byte-preserving.
//!
//! The framer cuts a byte stream into whole events without copying what it does not need: each
//! event keeps its exact original bytes, so events that are not inspected are relayed unchanged.
//! It follows the WHATWG rules: lines end in CRLF, LF or CR; a blank line ends an event; lines
//! starting with `:` are comments; `data:` lines join with `\n`; one leading space after the colon
//! is dropped. A CR at the very end of the buffer may be half of a CRLF, so it waits for the next
//! chunk (or the end of the stream).

use bytes::{Bytes, BytesMut};

/// One whole event as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The exact bytes, from the first line through the blank line that ended it.
    pub raw: Bytes,
    /// The joined `data` field, if the event had any `data` line.
    pub data: Option<String>,
}

/// The stream broke the framing rules portcullis is willing to follow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("an SSE event exceeded {0} bytes without ending")]
    TooLarge(usize),
}

/// Incremental SSE framer.
#[derive(Debug)]
pub struct Framer {
    buf: BytesMut,
    /// Bytes of `buf` already scanned for line ends (all inside the current, unfinished event).
    scanned: usize,
    /// Where the current line starts.
    line_start: usize,
    max_event: usize,
    /// The stream ended: a final CR is a line end, not half of a CRLF.
    eof: bool,
}

impl Framer {
    pub fn new(max_event: usize) -> Self {
        Framer { buf: BytesMut::new(), scanned: 0, line_start: 0, max_event, eof: false }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// Marks the end of the stream; call [`next_event`](Self::next_event) again for the events
    /// that a final CR completes, then [`finish`](Self::finish).
    pub fn end(&mut self) {
        self.eof = true;
    }

    /// True when no partial event is buffered.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The next whole event, if the buffer holds one.
    pub fn next_event(&mut self) -> Result<Option<Event>, FrameError> {
        loop {
            let Some((line_end, next)) = self.find_line_end(self.eof) else {
                if self.buf.len() > self.max_event {
                    return Err(FrameError::TooLarge(self.max_event));
                }
                return Ok(None);
            };
            let blank = line_end == self.line_start;
            self.line_start = next;
            self.scanned = next;
            if blank {
                // Whole but too large: refused the same as when it arrives in pieces.
                if next > self.max_event {
                    return Err(FrameError::TooLarge(self.max_event));
                }
                return Ok(Some(self.take(next)));
            }
        }
    }

    /// At end of stream: whatever partial event is left, as raw bytes (a stream may end without
    /// the final blank line; browsers drop such an event, and so does inspection, but the bytes
    /// are still relayed so nothing is lost).
    pub fn finish(&mut self) -> Option<Bytes> {
        if self.buf.is_empty() {
            return None;
        }
        self.scanned = 0;
        self.line_start = 0;
        Some(self.buf.split().freeze())
    }

    /// Finds the end of the line starting at `line_start`: (end of content, start of next line).
    fn find_line_end(&self, at_eof: bool) -> Option<(usize, usize)> {
        let bytes = &self.buf[..];
        let mut i = self.scanned.max(self.line_start);
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => return Some((i, i + 1)),
                b'\r' => {
                    if i + 1 < bytes.len() {
                        let next = if bytes[i + 1] == b'\n' { i + 2 } else { i + 1 };
                        return Some((i, next));
                    }
                    return at_eof.then_some((i, i + 1));
                }
                _ => i += 1,
            }
        }
        None
    }

    fn take(&mut self, end: usize) -> Event {
        let raw = self.buf.split_to(end).freeze();
        self.scanned = 0;
        self.line_start = 0;
        let data = data_of(&raw);
        Event { raw, data }
    }
}

/// Splits raw event bytes into lines (without terminators).
pub fn lines(raw: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = raw;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.iter().position(|&b| b == b'\n' || b == b'\r').unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match (rest.get(end), rest.get(end + 1)) {
            (Some(b'\r'), Some(b'\n')) => 2,
            (Some(_), _) => 1,
            (None, _) => 0,
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// Field name and value of one line; `None` for comments and blank lines.
fn field(line: &[u8]) -> Option<(&[u8], &[u8])> {
    if line.is_empty() || line[0] == b':' {
        return None;
    }
    match line.iter().position(|&b| b == b':') {
        Some(c) => {
            let value = &line[c + 1..];
            Some((&line[..c], value.strip_prefix(b" ").unwrap_or(value)))
        }
        None => Some((line, &[])),
    }
}

/// The fields an event may hold. A line naming any other is read differently by different
/// clients — a `data` line behind a byte-order mark is dropped as an unknown field by one
/// (httpx-sse) and read as data by another (WHATWG decoders strip a leading BOM, and
/// eventsource-parser also its Latin-1 spelling) — so nobody can say what such an event carries.
const FIELDS: [&[u8]; 4] = [b"data", b"event", b"id", b"retry"];

/// The event's `data`: its `data` lines joined. An event holding a line that names a field
/// outside [`FIELDS`] is given its whole text instead, which is never a JSON-RPC message: the
/// gate withholds it as malformed rather than relay it unread.
fn data_of(raw: &[u8]) -> Option<String> {
    if lines(raw).filter_map(field).any(|(name, _)| !FIELDS.contains(&name)) {
        return Some(String::from_utf8_lossy(raw).into_owned());
    }
    let mut data: Option<Vec<u8>> = None;
    for line in lines(raw) {
        if let Some((b"data", value)) = field(line) {
            match data.as_mut() {
                Some(d) => {
                    d.push(b'\n');
                    d.extend_from_slice(value);
                }
                None => data = Some(value.to_vec()),
            }
        }
    }
    data.map(|d| String::from_utf8(d).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Rebuilds an event with new data: every non-data line (comments, `event`, `id`, `retry`) is kept
/// verbatim and in order; the data lines are replaced by the new data at the first one's place.
pub fn replace_data(raw: &[u8], new_data: &str) -> Bytes {
    let mut out = Vec::with_capacity(raw.len() + new_data.len());
    let mut wrote = false;
    for line in lines(raw) {
        if line.is_empty() {
            continue;
        }
        if let Some((b"data", _)) = field(line) {
            if !wrote {
                for part in new_data.split('\n') {
                    out.extend_from_slice(b"data: ");
                    out.extend_from_slice(part.as_bytes());
                    out.push(b'\n');
                }
                wrote = true;
            }
            continue;
        }
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    if !wrote {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(new_data.as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    Bytes::from(out)
}

/// A fresh `message` event carrying `data`.
pub fn message_event(data: &str) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 24);
    out.extend_from_slice(b"event: message\n");
    for part in data.split('\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(part.as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    Bytes::from(out)
}

#[cfg(test)]
mod chunking;

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> (Vec<Event>, Option<Bytes>) {
        let mut f = Framer::new(1 << 20);
        let mut out = Vec::new();
        for c in chunks {
            f.push(c);
            while let Some(e) = f.next_event().unwrap() {
                out.push(e);
            }
        }
        f.end();
        while let Some(e) = f.next_event().unwrap() {
            out.push(e);
        }
        (out, f.finish())
    }

    #[test]
    fn frames_events_across_line_ending_styles() {
        let table: &[(&[u8], &[Option<&str>])] = &[
            (b"data: a\n\n", &[Some("a")]),
            (b"data: a\r\n\r\n", &[Some("a")]),
            (b"data: a\r\rdata: b\r\r", &[Some("a"), Some("b")]),
            (b"event: message\nid: 1\ndata: {\"x\":1}\n\n", &[Some("{\"x\":1}")]),
            (b"data: one\ndata: two\n\n", &[Some("one\ntwo")]),
            (b"data:\ndata: x\n\n", &[Some("\nx")]),
            (b": keepalive comment\n\n", &[None]),
            (b"id: prime\ndata:\n\n", &[Some("")]),
            (b"retry: 1000\n\ndata:x\n\n", &[None, Some("x")]),
            (b"data:  two spaces\n\n", &[Some(" two spaces")]),
        ];
        for (input, want) in table {
            let (events, rest) = all(&[input]);
            let got: Vec<_> = events.iter().map(|e| e.data.as_deref()).collect();
            assert_eq!(&got, want, "{:?}", String::from_utf8_lossy(input));
            assert_eq!(rest, None);
            let joined: Vec<u8> = events.iter().flat_map(|e| e.raw.to_vec()).collect();
            assert_eq!(&joined, input, "raw bytes are preserved");
        }
    }

    #[test]
    fn any_chunking_gives_the_same_events() {
        let input: &[u8] =
            b"event: message\r\nid: 7\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: c\r\n\r\ndata: z\r\r";
        let (whole, _) = all(&[input]);
        for split in 0..input.len() {
            let (a, b) = input.split_at(split);
            let (events, rest) = all(&[a, b]);
            assert_eq!(events, whole, "split at {split}");
            assert_eq!(rest, None);
        }
        for size in 1..4 {
            let chunks: Vec<&[u8]> = input.chunks(size).collect();
            assert_eq!(all(&chunks).0, whole);
        }
    }

    #[test]
    fn an_event_naming_a_field_no_reader_agrees_on_has_its_whole_text_as_data() {
        let table: &[&[u8]] = &[
            b"\xef\xbb\xbfdata: {\"id\":1}\n\n",
            b"\xc3\xaf\xc2\xbb\xc2\xbfdata: {\"id\":1}\n\n",
            b"event: message\nDATA: {\"id\":1}\n\n",
            b"data: {}\ndata : {\"id\":1}\n\n",
            b"retry: 5\nx-vendor: 1\n\n",
        ];
        for input in table {
            let (events, _) = all(&[input]);
            let data = events[0].data.as_deref().unwrap_or_default();
            assert!(serde_json::from_str::<serde_json::Value>(data).is_err(), "{data:?}");
            assert_eq!(data, String::from_utf8_lossy(input), "the whole event");
        }
        let (fine, _) = all(&[b": comment\nevent: message\nid: 3\nretry: 10\ndata: {}\n\n"]);
        assert_eq!(fine[0].data.as_deref(), Some("{}"));
    }

    #[test]
    fn a_trailing_partial_event_is_returned_at_the_end() {
        let (events, rest) = all(&[b"data: a\n\ndata: unfinished"]);
        assert_eq!(events.len(), 1);
        assert_eq!(rest.as_deref(), Some(&b"data: unfinished"[..]));
    }

    #[test]
    fn oversized_events_are_an_error_not_unbounded_memory() {
        let mut f = Framer::new(16);
        f.push(b"data: 0123456789abcdefghij");
        assert_eq!(f.next_event(), Err(FrameError::TooLarge(16)));
    }

    #[test]
    fn replacing_data_keeps_other_fields_in_order() {
        let raw = b"event: message\r\nid: 9\r\ndata: {\"old\":\r\ndata: 1}\r\nretry: 5\r\n\r\n";
        let out = replace_data(raw, "{\"new\":2}");
        assert_eq!(&out[..], b"event: message\nid: 9\ndata: {\"new\":2}\nretry: 5\n\n");
        let (events, _) = all(&[&out]);
        assert_eq!(events[0].data.as_deref(), Some("{\"new\":2}"));
    }
}
