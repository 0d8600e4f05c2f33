//! Reading an argv the way getopt-style programs do, erring towards "this is an option".
//!
//! Every check here over-approximates: an argument after `--` or an option's value is still
//! inspected as if it were an option, and an abbreviated long option (`--out` for `--output`,
//! which GNU getopt and git accept) counts as the option it abbreviates. A file literally named
//! `-o` costs a checker call; a missed `-o` would be a write.

/// Short-option clusters: `-abc` (not `-`, not `--x`).
fn clusters(args: &[String]) -> impl Iterator<Item = &str> {
    args.iter()
        .map(String::as_str)
        .filter(|a| a.len() > 1 && a.starts_with('-') && !a.starts_with("--"))
        .map(|a| &a[1..])
}

/// The first short option among `chars` in any cluster.
pub(super) fn short(args: &[String], chars: &str) -> Option<char> {
    clusters(args).find_map(|c| c.chars().find(|ch| chars.contains(*ch)))
}

/// The first long option matching `names`: an abbreviation of a name (`--out` for `output`),
/// or, for a name ending in `*`, anything starting with it (`no-ignore*`).
pub(super) fn long<'a>(args: &'a [String], names: &[&str]) -> Option<&'a str> {
    args.iter().find_map(|a| {
        let given = a.strip_prefix("--")?;
        let given = given.split_once('=').map_or(given, |(k, _)| k);
        if given.is_empty() {
            return None;
        }
        let hit = names.iter().any(|name| match name.strip_suffix('*') {
            Some(family) => given.starts_with(family),
            None => name.starts_with(given),
        });
        hit.then_some(a.as_str())
    })
}

/// Reject any short option in `shorts` or long option in `longs`.
pub(super) fn deny(args: &[String], shorts: &str, longs: &[&str]) -> Result<(), String> {
    if let Some(c) = short(args, shorts) {
        return Err(format!("option -{c}"));
    }
    if let Some(l) = long(args, longs) {
        return Err(format!("option {l}"));
    }
    Ok(())
}

/// Operands: arguments that are not options nor values of the options named in `valued_short`
/// / `valued_long` (those given as `-x VALUE` / `--name VALUE`). Everything after `--` counts.
pub(super) fn operands<'a>(args: &'a [String], valued_short: &str, valued_long: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut iter = args.iter().map(String::as_str);
    while let Some(a) = iter.next() {
        if a == "--" {
            out.extend(iter.by_ref());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if !long.contains('=') && valued_long.contains(&long) {
                iter.next();
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            // In `-abc`, the first valued letter takes the rest, or the next argument.
            let cluster = &a[1..];
            if let Some((at, c)) = cluster.char_indices().find(|(_, c)| valued_short.contains(*c)) {
                if at + c.len_utf8() == cluster.len() {
                    iter.next();
                }
            }
            continue;
        }
        out.push(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn short_options_are_found_inside_clusters() {
        assert_eq!(short(&argv("-n -xo out"), "o"), Some('o'));
        assert_eq!(short(&argv("-ob64.txt"), "o"), Some('o'));
        assert_eq!(short(&argv("--output x"), "o"), None);
        assert_eq!(short(&argv("- file"), "o"), None);
    }

    #[test]
    fn long_options_match_their_abbreviations_and_families() {
        let names = ["output", "no-ignore*"];
        assert!(long(&argv("--output=x"), &names).is_some());
        assert!(long(&argv("--out x"), &names).is_some());
        assert!(long(&argv("--no-ignore-vcs"), &names).is_some());
        assert!(long(&argv("--outputs"), &names).is_none());
        assert!(long(&argv("--oneline"), &names).is_none());
        assert!(long(&argv("--"), &names).is_none());
    }

    #[test]
    fn operands_skip_option_values() {
        assert_eq!(operands(&argv("-f 2 -c in out"), "fsw", &[]), ["in", "out"]);
        assert_eq!(operands(&argv("-f2 in"), "fsw", &[]), ["in"]);
        assert_eq!(operands(&argv("--skip-fields 2 in"), "", &["skip-fields"]), ["in"]);
        assert_eq!(operands(&argv("-c -- -x y"), "", &[]), ["-x", "y"]);
    }
}
