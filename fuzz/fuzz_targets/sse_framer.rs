//! The SSE framer: never panics, loses no byte, and cuts the same events however the stream is
//! chunked (a hostile upstream chooses the chunking; an event the proxy frames differently from
//! the client is an event it might not inspect).
#![no_main]

use libfuzzer_sys::fuzz_target;
use portcullis::mcp::sse::{Event, Framer};

const MAX: usize = 4096;

/// Every event and the leftover bytes, or None if the framer refused the stream (too large).
fn frame(chunks: &[&[u8]]) -> Option<(Vec<Event>, Vec<u8>)> {
    let mut f = Framer::new(MAX);
    let mut events = Vec::new();
    for c in chunks {
        f.push(c);
        while let Some(e) = f.next_event().ok()? {
            events.push(e);
        }
    }
    f.end();
    while let Some(e) = f.next_event().ok()? {
        events.push(e);
    }
    let rest = f.finish().map(|b| b.to_vec()).unwrap_or_default();
    Some((events, rest))
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    // The first byte seeds the chunk sizes; the rest is the stream.
    let (seed, stream) = (data[0], &data[1..]);
    let whole = frame(&[stream]);
    let mut chunks = Vec::new();
    let mut at = 0;
    let mut step = seed as usize % 7 + 1;
    while at < stream.len() {
        let end = (at + step).min(stream.len());
        chunks.push(&stream[at..end]);
        at = end;
        step = (step * 5 + seed as usize) % 11 + 1;
    }
    let chunked = frame(&chunks);
    if let (Some((we, wr)), Some((ce, cr))) = (&whole, &chunked) {
        assert_eq!(we, ce, "events differ by chunking");
        assert_eq!(wr, cr, "leftover differs by chunking");
        let mut all: Vec<u8> = we.iter().flat_map(|e| e.raw.iter().copied()).collect();
        all.extend_from_slice(wr);
        assert_eq!(all, stream, "bytes lost or reordered");
    }
});
