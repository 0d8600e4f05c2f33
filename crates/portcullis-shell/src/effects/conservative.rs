//! The conservative reading of a word nobody's grammar understood: every piece that could name
//! a path, as a program might take it.
//!
//! `--file=/etc/x` may hand `/etc/x` to the program; `-f/etc/x` may be `-f` with the glued value
//! `/etc/x`, or `-fo` with `/etc/x`… so every suffix after an option letter is a piece; `if=/x`
//! and `host:/x` name what follows the `=` or `:`; an operand is itself. Over-reading costs an
//! ask; under-reading lets a `File(…)` deny be walked around.

/// Every piece of `word` that could be a path.
pub(super) fn pieces(word: &str) -> impl Iterator<Item = &str> + '_ {
    let operand = (!word.starts_with('-') || word == "-").then_some(word);
    // `-abc/x`: a value may start after any option letter.
    let glued = word
        .strip_prefix('-')
        .filter(|rest| !rest.starts_with('-'))
        .into_iter()
        .flat_map(|rest| rest.char_indices().skip(1).map(move |(at, _)| &rest[at..]));
    let after_sep = word
        .match_indices(['=', ':', ','])
        .map(move |(at, sep)| &word[at + sep.len()..])
        .filter(|rest| !rest.is_empty());
    operand.into_iter().chain(glued).chain(after_sep).filter(|p| !p.is_empty() && *p != "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_that_could_be_a_path_is_read() {
        fn got(w: &str) -> Vec<&str> {
            pieces(w).collect()
        }
        assert_eq!(got("/etc/x"), ["/etc/x"]);
        assert_eq!(got("--file=/etc/x"), ["/etc/x"]);
        assert_eq!(got("-f/etc/x"), ["/etc/x", "etc/x", "tc/x", "c/x", "/x", "x"]);
        assert_eq!(got("if=/dev/sda"), ["if=/dev/sda", "/dev/sda"]);
        assert_eq!(got("host:/etc/x"), ["host:/etc/x", "/etc/x"]);
        assert_eq!(got("-"), Vec::<&str>::new());
        assert_eq!(got("-la"), ["a"]);
    }
}
