//! A command rule about an effect meets every command that has that effect among others: a
//! deny on `git fetch` holds for `git pull` (fetch, then merge) and `git remote update`.

use portcullis_shell::effects::{Canonical, CommandEffects};

use super::spec::CommandPattern;

/// Whether a prefix rule `git X rest…` meets a placed git command whose effects include `X`,
/// with `rest…` leading the words after the command's name.
pub(crate) fn git_effect_hit(pattern: &CommandPattern, fx: &CommandEffects) -> bool {
    let (CommandPattern::Prefix(p), Canonical::Placed) = (pattern, fx.canonical_from) else {
        return false;
    };
    let ([git, effect, rest @ ..], [program, words @ ..]) = (p.as_slice(), fx.canonical.as_slice()) else {
        return false;
    };
    if git != "git" || program != "git" {
        return false;
    }
    let (effects, named_by) = portcullis_shell::grammar::git_includes(words);
    let args = &words[named_by.min(words.len())..];
    effects.contains(&effect.as_str())
        && rest.len() <= args.len()
        && rest.iter().zip(args).all(|(r, a)| r == a)
}

#[cfg(test)]
mod tests {
    use portcullis_shell::effects::effects;
    use portcullis_shell::place::Base;

    use super::*;

    fn hit(rule: &str, line: &str) -> bool {
        let pattern = CommandPattern::Prefix(rule.split(' ').map(str::to_owned).collect());
        let a = portcullis_shell::analyze(line);
        effects(&a, &Base::start(), None).iter().any(|fx| git_effect_hit(&pattern, fx))
    }

    #[test]
    fn a_rule_on_an_effect_meets_the_commands_that_include_it() {
        let table = [
            ("git fetch", "git pull", true),
            ("git fetch", "git -C w pull --rebase origin main", true),
            ("git fetch origin", "git pull origin main", true),
            ("git fetch origin", "git pull upstream", false),
            ("git merge", "git pull", true),
            ("git fetch", "git remote update", true),
            ("git fetch", "git remote -v", false),
            ("git pull", "git fetch", false),
            ("git push", "git pull", false),
            ("git fetch", "git log pull", false),
        ];
        for (rule, line, expected) in table {
            assert_eq!(hit(rule, line), expected, "{rule} / {line}");
        }
    }
}
