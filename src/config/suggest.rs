//! "Did you mean": the known key closest to a misspelt one, for unknown-key problems.

/// The candidate closest to `word` by edit distance (a swap of two neighbours counts once), if
/// it is close enough to be a likely typo: at most one edit per three characters, at least one.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let bound = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= bound)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Adds a suggestion to serde's "unknown field `x`, expected one of `a`, `b`" (or "expected
/// `a`"); any other message is returned unchanged.
pub fn annotate(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else { return message.to_owned() };
    let Some((field, expected)) = rest.split_once('`') else { return message.to_owned() };
    let known = expected.split('`').skip(1).step_by(2);
    match closest(field, known) {
        Some(best) => format!("{message} — did you mean `{best}`?"),
        None => message.to_owned(),
    }
}

/// Optimal string alignment distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for (i, cell) in d.iter_mut().step_by(width).enumerate() {
        *cell = i;
    }
    for (j, cell) in d.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_the_key_meant_and_strangers_find_nothing() {
        let keys = ["listen", "permissions", "upstreams", "guardrails", "egress"];
        for (typo, meant) in [
            ("permisions", Some("permissions")),
            ("upstream", Some("upstreams")),
            ("gaurdrails", Some("guardrails")),
            ("lsiten", Some("listen")),
            ("egres", Some("egress")),
            ("colour", None),
            ("x", None),
        ] {
            assert_eq!(closest(typo, keys), meant, "{typo}");
        }
    }

    #[test]
    fn serde_unknown_field_messages_gain_a_suggestion_and_others_stay_as_they_are() {
        let m = "unknown field `tiemout`, expected one of `url`, `timeout`, `auth`";
        assert_eq!(annotate(m), format!("{m} — did you mean `timeout`?"));
        let far = "unknown field `zzz`, expected one of `url`, `auth`";
        assert_eq!(annotate(far), far);
        let single = "unknown field `urll`, expected `url`";
        assert_eq!(annotate(single), format!("{single} — did you mean `url`?"));
        assert_eq!(annotate("invalid type: string"), "invalid type: string");
        assert_eq!(annotate("unknown field `broken"), "unknown field `broken");
    }
}
