//! What the model is shown of content longer than `max_content_bytes`: windows of that size.
//!
//! The local detectors read all of the content however long it is; the model call is what the
//! cap bounds. Content up to the cap is one window. Longer content is cut into overlapping
//! windows (the overlap keeps a sentence cut at a boundary whole in one of them), each judged by
//! its own model call; past `max` windows the model sees the first `max - 1` and the last one —
//! padding usually sits between a payload and whichever end the attacker hopes is read — and the
//! bytes no window covers are reported as `unseen`, for the rule's failure mode to decide.

/// The windows of one piece of content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan<'a> {
    pub windows: Vec<&'a str>,
    /// Bytes of the content no window covers.
    pub unseen: usize,
}

fn floor(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// How densely content is assumed to tokenize when a window is cut to a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Density {
    /// 2 bytes a token: code and JSON tokenize densely, prose at about 4.
    Typical,
    /// 1 byte a token: the most a byte-level tokenizer makes of any bytes (digits one by one,
    /// characters it falls back to bytes for): a window cut to it fits whatever it holds.
    Worst,
}

/// The most content bytes one model call may carry when the model's context is
/// `context_tokens`: what is left after the reply (`reply_tokens`), the longest system prompt
/// (`prompt_bytes`, at a generous 3 bytes per token) and the fence, at a conservative 2 bytes per
/// token (code and JSON tokenize densely). `None` when nothing is left.
pub fn window_bytes(context_tokens: u32, reply_tokens: u32, prompt_bytes: usize) -> Option<usize> {
    fit(context_tokens, reply_tokens, prompt_bytes, Density::Typical)
}

/// [`window_bytes`] with the content's tokens counted at `density`.
pub fn fit(context_tokens: u32, reply_tokens: u32, prompt_bytes: usize, density: Density) -> Option<usize> {
    const FENCE_TOKENS: usize = 128;
    let prompt_tokens = prompt_bytes.div_ceil(3) + FENCE_TOKENS;
    let left = (context_tokens as usize).checked_sub(reply_tokens as usize + prompt_tokens)?;
    let per_token = match density {
        Density::Typical => 2,
        Density::Worst => 1,
    };
    (left >= 64).then_some(left * per_token)
}

/// Windows of at most `cap` bytes (a character longer than a tiny cap still makes a window),
/// at most `max` of them.
pub fn plan(text: &str, cap: usize, max: usize) -> Plan<'_> {
    let (cap, max) = (cap.max(1), max.max(1));
    if text.len() <= cap {
        return Plan { windows: vec![text], unseen: 0 };
    }
    let overlap = (cap / 8).min(4096);
    let step = cap - overlap;
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    loop {
        starts.push(at);
        if at + cap >= text.len() {
            break;
        }
        at += step;
    }
    if starts.len() > max {
        starts.truncate(max.saturating_sub(1).max(1));
        if max > 1 {
            starts.push(text.len() - cap);
        }
    }
    let mut windows = Vec::with_capacity(starts.len());
    let mut covered = 0;
    let mut reach = 0;
    for s in starts {
        let start = floor(text, s);
        let mut end = floor(text, start + cap);
        if end == start {
            end = ceil(text, start + 1);
        }
        covered += end.saturating_sub(start.max(reach));
        reach = reach.max(end);
        windows.push(&text[start..end]);
    }
    Plan { windows, unseen: text.len() - covered }
}

/// A window the model server said it cannot fit, cut in four for one more try.
pub fn quarters(text: &str) -> Vec<&str> {
    plan(text, text.len().div_ceil(4), 8).windows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_within_the_cap_is_one_window() {
        assert_eq!(plan("abc", 3, 4), Plan { windows: vec!["abc"], unseen: 0 });
        assert_eq!(plan("", 3, 4), Plan { windows: vec![""], unseen: 0 });
    }

    #[test]
    fn longer_content_is_covered_by_overlapping_windows_and_every_byte_is_seen() {
        let text: String = (0..1000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let p = plan(&text, 400, 4);
        assert_eq!(p.unseen, 0);
        assert!(p.windows.iter().all(|w| w.len() <= 400));
        assert!(text.starts_with(p.windows[0]) && text.ends_with(p.windows.last().unwrap()));
        let overlapping = p.windows.windows(2).all(|w| {
            let (a, b) = (w[0].as_ptr() as usize, w[1].as_ptr() as usize);
            b < a + w[0].len()
        });
        assert!(overlapping, "a sentence at a boundary is whole in one window");
    }

    #[test]
    fn past_the_window_count_the_head_and_the_tail_are_seen_and_the_middle_is_counted() {
        let text = "x".repeat(10_000);
        let p = plan(&text, 1000, 3);
        assert_eq!(p.windows.len(), 3);
        assert_eq!(p.windows.iter().map(|w| w.len()).sum::<usize>(), 3000);
        // Two head windows overlap by cap/8.
        assert_eq!(p.unseen, 10_000 - (1000 + 875 + 1000));
        let p = plan(&text, 1000, 1);
        assert_eq!((p.windows.len(), p.unseen), (1, 9000));
    }

    #[test]
    fn windows_cut_on_character_boundaries() {
        let text = "é".repeat(1000);
        for (cap, max) in [(3, 2000), (1, 5), (101, 3), (700, 4)] {
            let p = plan(&text, cap, max);
            assert!(p.windows.iter().all(|w| !w.is_empty() && w.len() <= cap.max(2)), "{cap}");
            let seen: usize = p.windows.iter().map(|w| w.len()).sum();
            assert!(seen + p.unseen >= text.len(), "{cap} {max}: {seen} + {}", p.unseen);
        }
        assert!(quarters(&text).concat().len() >= text.len());
    }
}
