//! IBAN-like accounts in text: two letters, two check digits, 11 to 30 letters and digits
//! (upper case, optionally in groups split by single spaces), proven by the ISO 13616 mod-97 checksum, so a
//! random id is not taken for an account.

/// The shortest (Norway, 15) and longest (34) IBANs.
const MIN: usize = 15;
const MAX: usize = 34;

/// Every IBAN in `s`, without spaces. Linear: each start reads at most a fixed
/// number of bytes, and starts are word beginnings.
pub fn find(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 4 <= b.len() {
        let at_word = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        let head = b[i].is_ascii_uppercase()
            && b[i + 1].is_ascii_uppercase()
            && b[i + 2].is_ascii_digit()
            && b[i + 3].is_ascii_digit();
        if at_word && head {
            let (chars, used) = run(&b[i..]);
            if let Some(n) = (MIN..=chars.len()).rev().find(|&n| valid(&chars[..n])) {
                out.push(String::from_utf8_lossy(&chars[..n]).into_owned());
                i += used;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The account's characters from the start of `b` (single spaces dropped), at most
/// [`MAX`], and how many bytes they took.
fn run(b: &[u8]) -> (Vec<u8>, usize) {
    let mut chars = Vec::with_capacity(MAX);
    let mut i = 0;
    while i < b.len() && chars.len() < MAX {
        match b[i] {
            c if c.is_ascii_uppercase() || c.is_ascii_digit() => chars.push(c),
            b' ' if b.get(i + 1).is_some_and(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                && !chars.is_empty() => {}
            _ => break,
        }
        i += 1;
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
