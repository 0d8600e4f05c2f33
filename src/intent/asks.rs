//! Where the user's words **ask** for a send, as opposed to merely mentioning a destination.
//!
//! A task names the attacker's address as easily as a friend's: "never send anything to
//! eve@eve.example, she is a scammer", or a pasted phishing mail "reply with your statement to
//! eve@eve.example" (red team R9-3). A destination excuses a flow only where the task reads,
//! positively, as a request to send there; everything this reader does not understand names
//! nothing (the flow is judged as if nobody had named it — stricter, never looser).
//!
//! What is understood, and nothing else:
//! - **Reported speech is not the user's voice.** A quotation (`"…"`, `'…'`, `“…”`, `‘…’`,
//!   `«…»`, `` `…` ``, a fenced block, a line starting with `>`) that holds more than one word is
//!   blanked: whatever it asks, someone else wrote it. A quotation of a single word
//!   (`'sarah.connor@gmail.com'`) is a name and stays. A quotation never closed blanks the rest.
//! - **A sentence with a negation asks for nothing** (`not`, `never`, `n't`, `without`,
//!   `except`, …), and **a task with a warning asks for no send at all** (`scam`, `phishing`,
//!   `fraud`, `suspicious`, …, even inside a quotation). Closed lists, read as reasons to drop:
//!   a word missing from them can cost the user an excuse they meant, not grant one they did
//!   not (a sentence that negates with a word not listed still has to read as a request).
//! - **A request clause** starts, after courtesy and sequence words (`please`, `then`, `also`,
//!   `could you`, numbering), with a verb of sending from a closed list (`send`, `email`,
//!   `share`, `invite`, `add`, `pay`, `upload`, …). A clause is cut at `;`, at `then`, and at a
//!   comma followed by `and`/`but`/`or`; a cut-off clause that starts with an article, a
//!   pronoun, a preposition or a destination continues the request (`…, and the slides to B`).
//! - **A recipient position** in a request clause is right after the verb, or after `to`,
//!   `with`, `at`, `for`, `cc`, `bcc`; it runs over destinations, names and list words (`,`,
//!   `and`, `or`), and ends at any other word. `from`, `of`, `about` are never recipient
//!   positions ("forward the mail from eve@… to bob@…" names bob only).
//! - **An identification** right after a request sentence: `Her email address is 'x@y'`
//!   (`her`/`his`/`their`/`its`/`…'s`, then `email`/`e-mail`/`mail`/`address`, `is`).
//!
//! What stays beyond any reader of free text: text the user pastes without quoting it is their
//! words as far as anyone but the user can tell. A front that pastes (a mail client's "ask about
//! this message") records the destinations the user asks for as a list instead
//! (`POST /sessions/{id}/task` with `sends_to`), and free text then names nothing.

/// Words a request clause may start with before its verb.
const LEAD: &[&str] = &[
    "please",
    "pls",
    "then",
    "and",
    "also",
    "kindly",
    "now",
    "next",
    "finally",
    "lastly",
    "first",
    "firstly",
    "second",
    "secondly",
    "third",
    "afterwards",
    "so",
    "just",
    "could",
    "can",
    "would",
    "will",
    "you",
    "i",
    "i'd",
    "id",
    "want",
    "need",
    "like",
    "to",
    "go",
    "ahead",
    "make",
    "sure",
    "remember",
    "if",
    "-",
    "*",
    "•",
];

/// The most lead words a request clause starts with ("1. And then could you please also …").
const MAX_LEAD: usize = 8;

/// Verbs of sending: a clause that starts with one asks for a send.
const SEND: &[&str] = &[
    "send", "resend", "email", "e-mail", "mail", "forward", "fwd", "share", "invite", "add", "reply",
    "respond", "cc", "bcc", "copy", "transfer", "pay", "wire", "post", "upload", "submit", "message", "text",
    "notify", "contact", "write", "create", "schedule", "book", "reserve", "organize", "organise", "arrange",
    "include", "grant", "give", "deliver", "publish", "invite", "sync",
];

/// Words after which a destination is a recipient.
const TO: &[&str] = &["to", "with", "at", "for", "cc", "bcc", "cc:", "bcc:", "to:"];

/// List words inside a recipient run.
const LIST: &[&str] = &[",", "and", "or", "&", "plus", "also", "too"];

/// Words that open a continuation of the request after a cut.
const CONTINUE: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "it", "them", "my", "our", "his", "her", "their",
    "its", "to", "with", "cc", "bcc", "also",
];

/// A sentence holding one of these asks for nothing.
const NEGATION: &[&str] = &[
    "not",
    "no",
    "never",
    "nothing",
    "none",
    "nobody",
    "nowhere",
    "neither",
    "nor",
    "cannot",
    "dont",
    "without",
    "except",
    "excluding",
    "unless",
    "instead",
    "avoid",
    "stop",
    "beware",
    "careful",
    "refuse",
    "reject",
    "block",
    "ignore",
    "wait",
    "blocklist",
    "blacklist",
    "denylist",
    "blocked",
    "blocking",
    "junk",
    "mute",
    "muted",
    "banned",
    "unsubscribe",
];

/// A sentence ending in one of these and a colon introduces someone else's words (R11-3).
const SPEECH: &[&str] = &[
    "says",
    "said",
    "asks",
    "asked",
    "writes",
    "wrote",
    "reads",
    "read",
    "states",
    "stated",
    "tells",
    "told",
    "wants",
    "wanted",
    "demands",
    "claims",
    "instructs",
    "this",
];

/// A task holding one of these (a warning about somebody) asks for no send at all.
const WARNING: &[&str] = &[
    "phishing",
    "phish",
    "phishy",
    "scam",
    "scams",
    "scammer",
    "scammers",
    "scammy",
    "fraud",
    "fraudulent",
    "fraudster",
    "spam",
    "spammer",
    "suspicious",
    "malicious",
    "fake",
    "impostor",
    "imposter",
    "attacker",
    "hacker",
    "hacked",
    "dangerous",
    "untrusted",
    "compromised",
];

/// One word of a sentence: as written (what a run is read from) and lower-cased (what the
/// lists match).
#[derive(Debug)]
struct Word {
    raw: String,
    low: String,
}

impl Word {
    fn is(&self, list: &[&str]) -> bool {
        list.contains(&self.low.as_str())
    }
}

/// The pieces of `task` that sit in a recipient position of a request: each to be read for
/// destinations whole.
pub fn recipients(task: &str) -> Vec<String> {
    let plain = super::quoted::unquoted(task);
    // A warning anywhere, even inside a quotation: the task is about somebody to beware of.
    if words(task).iter().any(|w| bare(w).is_some_and(|b| WARNING.contains(&b))) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut asked_before = false;
    let mut reported = false;
    for (sentence, end) in sentences(&plain) {
        let words = words(sentence);
        // After "The mail says:" the next sentence is the mail's, not the user's.
        let quoting = reported;
        reported = end == Some(':') && words.last().is_some_and(|w| w.is(SPEECH));
        if quoting || words.iter().any(drops) {
            asked_before = false;
            continue;
        }
        if asked_before {
            if let Some(run) = identification(&words) {
                out.push(run);
                asked_before = false;
                continue;
            }
        }
        request_runs(&words, &mut out);
        asked_before = clauses(&words).iter().any(|c| verb_at(c).is_some());
    }
    out
}

/// Recipient runs of every request clause of one sentence.
fn request_runs(words: &[Word], out: &mut Vec<String>) {
    let mut open = false;
    for (k, clause) in clauses(words).into_iter().enumerate() {
        // A verb after `and`/`then` starts a request only where the sentence is one already:
        // "this mail wants me to log in and send my statement to eve@…" reports (R11-3).
        let joined = k > 0 && clause.first().is_some_and(|w| w.is(&["and", "then"]));
        let start = match verb_at(clause).filter(|_| !joined || open) {
            Some(after_verb) => {
                open = true;
                after_verb
            }
            None if open && clause.iter().find(|w| !w.is(&["and", "but", "or"])).is_some_and(continues) => 0,
            None => {
                open = false;
                continue;
            }
        };
        runs(clause, start, out);
    }
}

/// Collects the recipient runs of `clause` from `start`: right after the verb (`start > 0`)
/// is a recipient position ("email bob@…", "add also …"), as is a continuation's first word
/// when it is a destination.
fn runs(clause: &[Word], start: usize, out: &mut Vec<String>) {
    let mut i = start;
    let mut after_marker = start > 0 || clause.first().is_some_and(|w| is_destinationish(&w.raw));
    while i < clause.len() {
        if clause[i].is(TO) {
            after_marker = true;
            i += 1;
            continue;
        }
        if !after_marker {
            i += 1;
            continue;
        }
        let begin = i;
        while i < clause.len() && in_run(&clause[i]) && !clause[i].is(TO) {
            i += 1;
        }
        if i > begin {
            // Right after the verb stands what is sent as often as whom to: there only a mailbox
            // or a URL with its scheme names a destination ("share README.md with …": R11-5).
            let direct = begin == start && start > 0;
            let run: Vec<&str> = clause[begin..i]
                .iter()
                .map(|w| w.raw.as_str())
                .filter(|w| !direct || w.contains('@') || w.contains("://"))
                .collect();
            out.push(run.join(" "));
        } else {
            i += 1;
        }
        after_marker = false;
    }
}

/// `Her email address is x@y`: the destination it identifies, as a run.
fn identification(words: &[Word]) -> Option<String> {
    let is = words.iter().position(|w| w.low == "is")?;
    let (head, tail) = (&words[..is], &words[is + 1..]);
    let owner = head.first()?;
    let possessive = owner.is(&["her", "his", "their", "its"]) || owner.low.ends_with("'s");
    let noun = head.len() >= 2 && head[1..].iter().all(|w| w.is(&["email", "e-mail", "mail", "address"]));
    if !possessive || !noun || tail.is_empty() || !tail.iter().all(in_run) {
        return None;
    }
    let run: Vec<&str> = tail.iter().map(|w| w.raw.as_str()).collect();
    Some(run.join(" "))
}

/// The index right after the clause's verb of sending, if it starts with one.
fn verb_at(clause: &[Word]) -> Option<usize> {
    // At most a few lead words: a clause of `and and and …` asks for nothing, and reading it
    // stays linear (red team R11-10: each `and` re-read the lead after it).
    let lead = clause
        .iter()
        .take(MAX_LEAD + 1)
        .take_while(|w| w.is(LEAD) || w.low == "," || is_number(&w.low))
        .count();
    if lead > MAX_LEAD {
        return None;
    }
    // The user speaks of themselves only to ask the agent ("I want you to", "I'd like you to"):
    // "If I send …", "Can I reply to …" ask nothing; `if` leads only as "if so" (R11-3).
    let lead_words = &clause[..lead];
    let i_without_you =
        lead_words.iter().any(|w| w.is(&["i", "i'd", "id"])) && !lead_words.iter().any(|w| w.low == "you");
    let bare_if = lead_words
        .iter()
        .enumerate()
        .any(|(k, w)| w.low == "if" && lead_words.get(k + 1).is_none_or(|n| n.low != "so"));
    if i_without_you || bare_if {
        return None;
    }
    clause.get(lead)?.is(SEND).then_some(lead + 1)
}

fn continues(w: &Word) -> bool {
    w.is(CONTINUE) || is_destinationish(&w.raw)
}

/// A word a recipient run may hold: a destination-like word, a name, an IBAN group, a list word.
fn in_run(w: &Word) -> bool {
    let raw = w.raw.as_str();
    w.is(LIST)
        || is_destinationish(raw)
        || raw.chars().next().is_some_and(char::is_uppercase) && raw.chars().all(char::is_alphanumeric)
}

/// Holds a character only destinations (and IBAN groups) hold in running text.
fn is_destinationish(w: &str) -> bool {
    w.contains(['@', '.', '/', ':']) || w.chars().any(|c| c.is_ascii_digit())
}

fn is_number(w: &str) -> bool {
    let digits = w.trim_end_matches(['.', ')']);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// The word without edge punctuation, when anything is left.
fn bare(w: &Word) -> Option<&str> {
    Some(w.low.trim_matches(|c: char| !c.is_alphanumeric())).filter(|b| !b.is_empty())
}

fn drops(w: &Word) -> bool {
    bare(w).is_some_and(|b| NEGATION.contains(&b)) || w.low.ends_with("n't") || w.low.ends_with("n’t")
}

/// Clauses of a sentence: cut at `;`, at `then`, and at a comma followed by and/but/or (the
/// cutting words stay at the next clause's start, where [`LEAD`] and [`CONTINUE`] read them).
fn clauses(words: &[Word]) -> Vec<&[Word]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, w) in words.iter().enumerate() {
        let comma_join = w.low == "," && words.get(i + 1).is_some_and(|n| n.is(&["and", "but", "or"]));
        let cut_here = w.low == ";" || comma_join;
        // "… and send it to …": a verb of sending after `and` starts a clause of its own.
        let and_verb = w.low == "and" && verb_at(&words[i..]).is_some();
        if cut_here || ((w.low == "then" || and_verb) && i > start) {
            out.push(&words[start..i]);
            start = if cut_here { i + 1 } else { i };
        }
    }
    out.push(&words[start..]);
    out
}

/// Words as written, with `,` and `;` as words of their own and edge punctuation trimmed (a
/// destination keeps its inner dots, `@`, `/`, `:`).
fn words(sentence: &str) -> Vec<Word> {
    let mut out = Vec::new();
    for raw in sentence.split_whitespace() {
        let core = raw
            .trim_end_matches([',', ';'])
            .trim_matches(|c: char| "()[]{}<>!?\"'“”‘’«»`".contains(c))
            .trim_end_matches(['.', ':']);
        if !core.is_empty() {
            // Lists are matched without the characters nobody sees ("noth\u{200b}ing": R11-9).
            let low: String =
                core.chars().filter(|&c| !crate::inert::escaped(c) || c.is_whitespace()).collect();
            out.push(Word { raw: core.to_owned(), low: low.to_lowercase() });
        }
        if let Some(mark) = raw.chars().last().filter(|c| matches!(c, ',' | ';')) {
            out.push(Word { raw: mark.to_string(), low: mark.to_string() });
        }
    }
    out
}

/// Sentences: cut at `.`, `!`, `?` before a space or the end, and at `:` before a space, and at
/// line breaks.
fn sentences(text: &str) -> Vec<(&str, Option<char>)> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let next_space = bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        if b == b'\n' || (matches!(b, b'.' | b'!' | b'?' | b':') && next_space) {
            out.push((&text[start..i], Some(char::from(b))));
            start = i + 1;
        }
    }
    out.push((&text[start..], None));
    out
}

#[cfg(test)]
#[path = "asks_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "asks_attack_tests.rs"]
mod attack_tests;
