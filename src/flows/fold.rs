//! The one normaliser of the flow index, used on what is recorded and on what is checked alike:
//! every character is read as a reader would read it — compatibility forms folded (NFKD:
//! fullwidth `Ａ`, mathematical `𝐀`, ligatures, superscripts), lowercased, then reduced to its
//! Unicode confusables skeleton (UTS #39: Cyrillic `а` and Greek `ο` are Latin `a` and `o`,
//! `rn` and `m` alike) — and only letters and digits are kept, lowercased.
//!
//! Both sides fold the same way, so a look-alike copy meets the original's fingerprints; the
//! price is that texts differing only in look-alike letters count as the same text, which is what
//! a reader sees. Marks (accents) are dropped with punctuation: `café` is `cafe`.

use std::sync::OnceLock;

use unicode_normalization::UnicodeNormalization;
use unicode_security::skeleton;

/// Keeps the letters and digits of `c`, lowercased.
fn keep(c: char, out: &mut Vec<u8>) {
    let mut buf = [0u8; 4];
    for l in c.to_lowercase() {
        if l.is_alphanumeric() {
            out.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
        }
    }
}

/// One character folded the slow way: compatibility decomposition, lowercase, skeleton.
fn fold_slow(c: char, out: &mut Vec<u8>) {
    let mut buf = [0u8; 4];
    for d in std::iter::once(c).nfkd() {
        for l in d.to_lowercase() {
            for s in skeleton(l.encode_utf8(&mut buf)) {
                keep(s, out);
            }
        }
    }
}

/// The folding of each ASCII character, computed once (the common case is a table read).
fn ascii() -> &'static [Box<[u8]>; 128] {
    static TABLE: OnceLock<[Box<[u8]>; 128]> = OnceLock::new();
    TABLE.get_or_init(|| {
        std::array::from_fn(|i| {
            let mut out = Vec::new();
            fold_slow(char::from(i as u8), &mut out);
            out.into_boxed_slice()
        })
    })
}

/// Appends the normalised form of `text` to `out`.
pub fn normalise_into(text: &str, out: &mut Vec<u8>) {
    let table = ascii();
    for c in text.chars() {
        match c.is_ascii() {
            true => out.extend_from_slice(&table[c as usize]),
            false => fold_slow(c, out),
        }
    }
}

/// [`normalise_into`] over bytes that may not be UTF-8 (a decoded blob): what is not UTF-8 is
/// read as Latin-1 would not help anyone, so invalid sequences are skipped.
pub fn normalise_bytes_into(bytes: &[u8], out: &mut Vec<u8>) {
    for chunk in bytes.utf8_chunks() {
        normalise_into(chunk.valid(), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        let mut v = Vec::new();
        normalise_into(s, &mut v);
        String::from_utf8(v).expect("the fold is UTF-8")
    }

    #[test]
    fn look_alike_spellings_fold_to_the_plain_one() {
        let plain = "The acquisition of Contoso closes on Friday";
        let cases = [
            ("cyrillic", "Thе асquіsіtіоn оf Соntоsо сlоsеs оn Frіdаy"),
            ("fullwidth", "Ｔｈｅ ａｃｑｕｉｓｉｔｉｏｎ ｏｆ Ｃｏｎｔｏｓｏ ｃｌｏｓｅｓ ｏｎ Ｆｒｉｄａｙ"),
            ("mathematical bold", "𝐓𝐡𝐞 𝐚𝐜𝐪𝐮𝐢𝐬𝐢𝐭𝐢𝐨𝐧 𝐨𝐟 𝐂𝐨𝐧𝐭𝐨𝐬𝐨 𝐜𝐥𝐨𝐬𝐞𝐬 𝐨𝐧 𝐅𝐫𝐢𝐝𝐚𝐲"),
            ("upper case", "THE ACQUISITION OF CONTOSO CLOSES ON FRIDAY"),
            ("greek omicron", "The acquisitiοn οf Cοntοsο clοses οn Friday"),
            ("zero-width joiners", "The\u{200d} acq\u{200b}uisition of Con\u{2060}toso closes on Friday"),
        ];
        for (name, copy) in cases {
            assert_eq!(norm(copy), norm(plain), "{name}");
        }
    }

    #[test]
    fn the_fold_keeps_letters_and_digits_only() {
        let cases = [
            ("Hello, World!", norm("helloworld")),
            ("  a\tb\nC  ", "abc".into()),
            ("x-1_2.3", norm("x123")),
            ("café", "cafe".into()),
            ("", "".into()),
        ];
        for (input, want) in cases {
            assert_eq!(norm(input), want, "{input:?}");
        }
        assert_ne!(norm("41.20"), norm("41.30"), "digits stay digits");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_skipped_not_a_panic() {
        let mut v = Vec::new();
        normalise_bytes_into(b"ab\xffcd\xc3", &mut v);
        assert_eq!(v, norm("abcd").as_bytes());
    }
}
