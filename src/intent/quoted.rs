//! Reported speech is not the user's voice: a quotation of more than one word is blanked before
//! the request reader reads a task ([`super::asks`]); a quotation of one word is a name and stays.

/// `text` with every quotation of more than one word blanked (see the module's doc).
pub fn unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('>') {
            out.push('\n');
            continue;
        }
        out.push_str(line);
    }
    let chars: Vec<char> = out.chars().collect();
    let mut kept = String::with_capacity(out.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i == 0 { None } else { Some(chars[i - 1]) };
        match closer_for(c, prev, chars.get(i + 1).copied()) {
            Some(close) => {
                let fence = c == '`' && chars[i..].starts_with(&['`', '`', '`']);
                let from = if fence { i + 3 } else { i + 1 };
                let end = find_close(&chars, from, close, fence);
                let inner: String = chars[from..end.unwrap_or(chars.len())].iter().collect();
                let one_word = !inner.trim().is_empty() && !inner.trim().contains(char::is_whitespace);
                if one_word && !fence {
                    kept.push(' ');
                    kept.push_str(inner.trim());
                    kept.push(' ');
                } else {
                    // Someone else's words: one word that is no destination, no verb, no list
                    // word (it ends a recipient run and asks for nothing).
                    kept.push_str(" quoted ");
                }
                i = match end {
                    Some(e) => e + if fence { 3 } else { 1 },
                    None => chars.len(),
                };
            }
            None => {
                kept.push(c);
                i += 1;
            }
        }
    }
    kept
}

/// The closing mark when `c` opens a quotation here.
fn closer_for(c: char, prev: Option<char>, next: Option<char>) -> Option<char> {
    let at_word_start = prev.is_none_or(|p| p.is_whitespace() || "([{<:;,".contains(p));
    match c {
        '"' => Some('"'),
        '“' => Some('”'),
        '‘' if at_word_start => Some('’'),
        '«' => Some('»'),
        '`' => Some('`'),
        '\'' if at_word_start && next.is_some_and(|n| !n.is_whitespace()) => Some('\''),
        _ => None,
    }
}

/// Where the quotation opened before `from` closes. A `'` closes only at a word's end (not
/// the apostrophe of "don't" inside the quotation).
fn find_close(chars: &[char], from: usize, close: char, fence: bool) -> Option<usize> {
    let mut j = from;
    while j < chars.len() {
        if fence {
            if chars[j..].starts_with(&['`', '`', '`']) {
                return Some(j);
            }
        } else if chars[j] == close || (close == '”' && chars[j] == '"') || (close == '’' && chars[j] == '\'')
        {
            let next = chars.get(j + 1).copied();
            let word_end = next.is_none_or(|n| !n.is_alphanumeric());
            if close != '\'' && close != '’' || word_end {
                return Some(j);
            }
        }
        j += 1;
    }
    None
}
