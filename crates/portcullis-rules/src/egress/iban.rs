//! IBAN-like accounts in text: two letters, two check digits, 11 to 30 letters and digits,
//! proven by the ISO 13616 mod-97 checksum, so a random id is not taken for an account. Read as
//! the payment libraries read one (python-stdnum upper-cases and drops spaces, `-` and `.`;
//! schwifty drops whitespace): any case, and groups split by runs of up to three spaces, tabs,
//! `-` or `.` — the head too (`DE 89 3704 …`; red team R10-8).

/// The shortest (Norway, 15) and longest (34) IBANs.
const MIN: usize = 15;
const MAX: usize = 34;

/// Separators an account's groups may be split by, and how many in a row.
const SEPARATORS: &[u8] = b" \t-.";
const MAX_SEPARATORS: usize = 3;

/// Every IBAN in `s`, upper case, without separators. Linear: each start reads at most a fixed
/// number of bytes, and starts are word beginnings of two letters.
pub fn find(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 4 <= b.len() {
        let at_word = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if at_word && b[i].is_ascii_alphabetic() && b[i + 1].is_ascii_alphabetic() {
            // The head first (a word costs four characters), then the whole run.
            let (head, _) = run(&b[i..], 4);
            let head = head.len() == 4 && head[2].is_ascii_digit() && head[3].is_ascii_digit();
            let (chars, used) = if head { run(&b[i..], MAX) } else { (Vec::new(), 0) };
            if let Some(n) = head.then(|| account_len(&chars)).flatten() {
                out.push(String::from_utf8_lossy(&chars[..n]).into_owned());
                i += used;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// How long the account at the start of `chars` is: the length the IBAN registry gives its
/// country (so a run that goes on into the next words, `… 0130 00 today`, is cut where the
/// account ends), or for a country the registry does not list the longest checksum-valid run.
fn account_len(chars: &[u8]) -> Option<usize> {
    let country = [chars[0], chars[1]];
    match LENGTHS.iter().find(|(c, _)| c.as_bytes() == country) {
        Some(&(_, n)) => (chars.len() >= n && valid(&chars[..n])).then_some(n),
        None => (MIN..=chars.len()).rev().find(|&n| valid(&chars[..n])),
    }
}

/// The SWIFT IBAN registry's length per country.
const LENGTHS: &[(&str, usize)] = &[
    ("AD", 24),
    ("AE", 23),
    ("AL", 28),
    ("AT", 20),
    ("AZ", 28),
    ("BA", 20),
    ("BE", 16),
    ("BG", 22),
    ("BH", 22),
    ("BI", 27),
    ("BR", 29),
    ("BY", 28),
    ("CH", 21),
    ("CR", 22),
    ("CY", 28),
    ("CZ", 24),
    ("DE", 22),
    ("DJ", 27),
    ("DK", 18),
    ("DO", 28),
    ("EE", 20),
    ("EG", 29),
    ("ES", 24),
    ("FI", 18),
    ("FK", 18),
    ("FO", 18),
    ("FR", 27),
    ("GB", 22),
    ("GE", 22),
    ("GI", 23),
    ("GL", 18),
    ("GR", 27),
    ("GT", 28),
    ("HR", 21),
    ("HU", 28),
    ("IE", 22),
    ("IL", 23),
    ("IQ", 23),
    ("IS", 26),
    ("IT", 27),
    ("JO", 30),
    ("KW", 30),
    ("KZ", 20),
    ("LB", 28),
    ("LC", 32),
    ("LI", 21),
    ("LT", 20),
    ("LU", 20),
    ("LV", 21),
    ("LY", 25),
    ("MC", 27),
    ("MD", 24),
    ("ME", 22),
    ("MK", 19),
    ("MN", 20),
    ("MR", 27),
    ("MT", 31),
    ("MU", 30),
    ("NI", 28),
    ("NL", 18),
    ("NO", 15),
    ("OM", 23),
    ("PK", 24),
    ("PL", 28),
    ("PS", 29),
    ("PT", 25),
    ("QA", 29),
    ("RO", 24),
    ("RS", 22),
    ("RU", 33),
    ("SA", 24),
    ("SC", 31),
    ("SD", 18),
    ("SE", 24),
    ("SI", 19),
    ("SK", 24),
    ("SM", 27),
    ("SO", 23),
    ("ST", 25),
    ("SV", 28),
    ("TL", 23),
    ("TN", 24),
    ("TR", 26),
    ("UA", 29),
    ("VA", 22),
    ("VG", 24),
    ("XK", 20),
    ("YE", 30),
];

/// Whether `b` may hold the head of an account as [`find`] reads one: two letters, then (past
/// separators) two digits. A superset of where `find` starts, for the egress pre-filter.
pub fn may_start(b: &[u8]) -> bool {
    (0..b.len().saturating_sub(3)).any(|i| {
        b[i].is_ascii_alphabetic() && b[i + 1].is_ascii_alphabetic() && {
            let rest = &b[i + 2..];
            let skip = rest.iter().take(MAX_SEPARATORS).take_while(|c| SEPARATORS.contains(c)).count();
            rest.len() >= skip + 2 && rest[skip].is_ascii_digit() && rest[skip + 1].is_ascii_digit()
        }
    })
}

/// The account's characters from the start of `b` (upper-cased; separator runs between them
/// dropped), at most `max`, and how many bytes they took.
fn run(b: &[u8], max: usize) -> (Vec<u8>, usize) {
    let mut chars = Vec::with_capacity(max);
    let mut i = 0;
    while i < b.len() && chars.len() < max {
        let c = b[i];
        if c.is_ascii_alphanumeric() {
            chars.push(c.to_ascii_uppercase());
            i += 1;
            continue;
        }
        let gap = b[i..].iter().take(MAX_SEPARATORS + 1).take_while(|c| SEPARATORS.contains(c)).count();
        let resumes = b.get(i + gap).is_some_and(u8::is_ascii_alphanumeric);
        if chars.is_empty() || gap == 0 || gap > MAX_SEPARATORS || !resumes {
            break;
        }
        i += gap;
    }
    (chars, i)
}

/// ISO 13616: move the first four characters to the end, letters to 10..35, the number mod 97
/// is 1.
pub fn valid(account: &[u8]) -> bool {
    if !(MIN..=MAX).contains(&account.len()) || !account[2..4].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let rotated = account[4..].iter().chain(&account[..4]);
    let mut rem: u32 = 0;
    for &c in rotated {
        let v = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'A'..=b'Z' => u32::from(c - b'A') + 10,
            _ => return false,
        };
        rem = if v >= 10 { (rem * 100 + v) % 97 } else { (rem * 10 + v) % 97 };
    }
    rem == 1
}
