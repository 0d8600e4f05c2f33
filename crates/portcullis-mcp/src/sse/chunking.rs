//! The framer fed arbitrary chunkings: any split of any stream yields the same events, the
//! same leftover, and every byte exactly once.

use super::{Event, FrameError, Framer};
use proptest::prelude::*;

/// The events, the leftover at the end, or the error, for `stream` cut at `cuts`.
fn frame(stream: &[u8], cuts: &[usize], max: usize) -> Result<(Vec<Event>, Option<Vec<u8>>), FrameError> {
    let mut f = Framer::new(max);
    let mut events = Vec::new();
    let mut at = 0;
    for &c in cuts.iter().chain([&stream.len()]) {
        let c = c.clamp(at, stream.len());
        f.push(&stream[at..c]);
        at = c;
        while let Some(ev) = f.next_event()? {
            events.push(ev);
        }
    }
    f.end();
    while let Some(ev) = f.next_event()? {
        events.push(ev);
    }
    Ok((events, f.finish().map(|b| b.to_vec())))
}

/// Streams built from the pieces SSE framing turns on, including a multi-byte character.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(&b"\n"[..]),
        Just(&b"\r"[..]),
        Just(&b"\r\n"[..]),
        Just(&b":"[..]),
        Just(&b": keep-alive"[..]),
        Just(&b"data:"[..]),
        Just(&b"data: "[..]),
        Just(&b"data"[..]),
        Just(&b"id: 7"[..]),
        Just(&b"retry: 3000"[..]),
        Just(&b"event: message"[..]),
        Just("é日".as_bytes()),
        Just(&b"{\"id\":1}"[..]),
        Just(&b" "[..]),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|ps| ps.concat())
}

fn cuts() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(0usize..200, 0..20).prop_map(|mut v| {
        v.sort_unstable();
        v
    })
}

proptest! {
    #[test]
    fn any_chunking_yields_the_events_of_one_chunk_and_every_byte_once(s in stream(), c in cuts()) {
        let whole = frame(&s, &[], usize::MAX).unwrap();
        let cut = frame(&s, &c, usize::MAX).unwrap();
        prop_assert_eq!(&cut, &whole);
        let mut relayed: Vec<u8> = whole.0.iter().flat_map(|e| e.raw.to_vec()).collect();
        relayed.extend(whole.1.unwrap_or_default());
        prop_assert_eq!(relayed, s);
    }

    #[test]
    fn an_event_over_the_limit_is_refused_however_it_is_cut(s in stream(), c in cuts(), max in 1usize..64) {
        let whole = frame(&s, &[], max);
        let cut = frame(&s, &c, max);
        // Either both refuse, or both yield the same events of at most `max` bytes each.
        match (&whole, &cut) {
            (Ok(w), Ok(k)) => {
                prop_assert_eq!(w, k);
                prop_assert!(w.0.iter().all(|e| e.raw.len() <= max));
            }
            (Err(_), Err(_)) => {}
            _ => prop_assert!(false, "whole {:?}, cut {:?}", whole.is_ok(), cut.is_ok()),
        }
    }
}
