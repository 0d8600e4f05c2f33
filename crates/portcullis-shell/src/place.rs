//! Where a path word points: normalised as the kernel walks it, from a working directory that
//! is tracked through the line.
//!
//! A word is placed against a [`Base`]: a known absolute directory (after `cd /usr`, or the
//! tool's configured working directory), the tool's start directory when nobody said where that
//! is, or nowhere known (after `cd "$X"`, `popd` with an unknown stack). The answer is a
//! [`Place`]:
//!
//! | word | base | place |
//! | --- | --- | --- |
//! | `//etc/./hostname` | any | `Abs("/etc/hostname")` |
//! | `../etc/hostname` | `Dir("/usr")` | `Abs("/etc/hostname")` |
//! | `src/main.rs` | `Start(".")` | `InStart("src/main.rs")` |
//! | `../x` | `Start(".")` | `Anywhere` (climbs out of a directory nobody placed) |
//! | `x` | `Unknown` | `Anywhere` |
//! | `~/.ssh/id_rsa` | any | `Home(".ssh/id_rsa")`, or `Abs` when `HOME` is known |
//! | `~root/x` | any | `Abs("/root/x")` |
//! | `~alice/x` | any | `Anywhere` (the password database says where) |
//!
//! `..` is taken lexically here. Where a directory on the way is a symlink the kernel goes
//! elsewhere (`link/..` is the parent of the link's target), so every place also has its
//! [`spell`]ing: the word joined to the directory it is opened from, `..` and links untouched,
//! which the rule engine resolves through the jail's component walk as open(2) will
//! (`portcullis_rules::jail`). A program's own `chdir(2)` (`git -C`, `tar -C`, `make
//! --directory=`) is physical ([`enter_dir`]); bash's `cd` is logical, and falls back to the
//! physical directory when the logical one cannot be entered ([`cd_dirs`]).

/// The directory relative words are resolved against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// A known absolute directory, normalised (`/usr`, `/`).
    Dir(String),
    /// The directory the tool runs in, when the configuration does not say which it is, or a
    /// directory below it (`Start(".")` is the start directory, `Start("src")` below it).
    Start(String),
    /// Not known: any relative word may be anywhere.
    Unknown,
}

impl Base {
    /// The tool's start directory itself.
    pub fn start() -> Base {
        Base::Start(".".into())
    }
}

/// Where a path word points.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Place {
    /// An absolute, normalised path (`/etc/hostname`, `/`).
    Abs(String),
    /// Relative to the tool's unplaced start directory, never climbing out of it (`.` for the
    /// directory itself).
    InStart(String),
    /// Below the executing user's home directory, whose location is not known (`.` for home).
    Home(String),
    /// Anywhere at all: rules on an absolute tree may be inside it.
    Anywhere,
}

impl Place {
    /// The absolute path, when known.
    pub fn absolute(&self) -> Option<&str> {
        match self {
            Place::Abs(p) => Some(p),
            _ => None,
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Abs(p) => f.write_str(p),
            Place::InStart(p) => write!(f, "./{p}"),
            Place::Home(p) if p == "." => f.write_str("~"),
            Place::Home(p) => write!(f, "~/{p}"),
            Place::Anywhere => f.write_str("(anywhere)"),
        }
    }
}

/// Places `word` (already quote-removed) against `base`. `home` is `HOME` as the executor has it,
/// when known. Words holding an expansion the analysis could not resolve (`$X/…`) are
/// [`Place::Anywhere`]; so is an empty word (which names nothing, but must not name `.`).
pub fn place(word: &str, base: &Base, home: Option<&str>) -> Place {
    if word.is_empty() || word.contains('$') || word.contains('`') {
        return Place::Anywhere;
    }
    if let Some(rest) = word.strip_prefix('~') {
        let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
        return match user {
            "" => match home {
                Some(h) if h.starts_with('/') => Place::Abs(normalize_abs(&format!("{h}/{tail}"))),
                _ => match climb(".", tail) {
                    Some(p) => Place::Home(p),
                    // `~/..` holds every home directory, and more.
                    None => Place::Anywhere,
                },
            },
            "root" => Place::Abs(normalize_abs(&format!("/root/{tail}"))),
            // `~+` and `~-` are $PWD and $OLDPWD; `~alice` is wherever passwd says.
            _ => Place::Anywhere,
        };
    }
    if word.starts_with('/') {
        return Place::Abs(normalize_abs(word));
    }
    match base {
        Base::Dir(dir) => Place::Abs(normalize_abs(&format!("{dir}/{word}"))),
        Base::Start(below) => match climb(below, word) {
            Some(p) => Place::InStart(p),
            None => Place::Anywhere,
        },
        Base::Unknown => Place::Anywhere,
    }
}

/// The directory a `cd WORD` from `base` lands in (`cd` with no operand or `-` is not placed
/// here: the caller knows those). Logical, as bash's `cd` without `-P`.
pub fn change_dir(word: &str, base: &Base, home: Option<&str>) -> Base {
    match place(word, base, home) {
        Place::Abs(p) => Base::Dir(p),
        Place::InStart(p) => Base::Start(p),
        Place::Home(_) | Place::Anywhere => Base::Unknown,
    }
}

/// The absolute path the kernel walks for `word` opened from `base`: the directory joined to
/// the word with `..` and symlinks left for the walk, or `None` when the directory (or `HOME`)
/// is not known. `place` is this path's lexical normal form whenever both are known.
pub fn spell(word: &str, base: &Base, home: Option<&str>) -> Option<String> {
    if word.is_empty() || word.contains('$') || word.contains('`') {
        return None;
    }
    if let Some(rest) = word.strip_prefix('~') {
        let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
        return match (user, home) {
            ("", Some(h)) if h.starts_with('/') => Some(format!("{h}/{tail}")),
            ("root", _) => Some(format!("/root/{tail}")),
            _ => None,
        };
    }
    if word.starts_with('/') {
        return Some(word.to_string());
    }
    match base {
        Base::Dir(dir) => Some(format!("{dir}/{word}")),
        Base::Start(_) | Base::Unknown => None,
    }
}

/// The directory a program's own `chdir(WORD)` from `base` enters (`git -C`, `make -C`, `tar
/// --directory=`): physical, so a known directory is kept as spelled (`/w/link/..` is the parent
/// of the link's target, which only the walk knows).
pub fn enter_dir(word: &str, base: &Base, home: Option<&str>) -> Base {
    match spell(word, base, home) {
        Some(spelled) if climbs(&spelled) => Base::Dir(spelled),
        _ => change_dir(word, base, home),
    }
}

/// The directories bash's `cd WORD` from `base` may enter: the logical one (`link/..` is the
/// directory holding the link), and, when the word climbs with `..`, the physical one too —
/// bash enters the word as written when the logical directory does not exist, and `cd -P` or
/// `set -P` always does.
pub fn cd_dirs(word: &str, base: &Base, home: Option<&str>) -> Vec<Base> {
    let logical = change_dir(word, base, home);
    let physical = enter_dir(word, base, home);
    if physical == logical {
        vec![logical]
    } else {
        vec![logical, physical]
    }
}

/// Whether a path has a `..` component, the only one whose meaning a symlink changes.
fn climbs(path: &str) -> bool {
    path.split('/').any(|c| c == "..")
}

/// The lexical normal form of an absolute path: `//` and `/./` collapse, `..` pops a component
/// (never above `/`), trailing `/` and `/.` go.
pub fn normalize_abs(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let mut out = String::with_capacity(path.len());
    for p in &parts {
        out.push('/');
        out.push_str(p);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// `rel` resolved below `from` (itself relative, `.` for the directory), or `None` when it
/// climbs above it.
fn climb(from: &str, rel: &str) -> Option<String> {
    // Most words are already a normal path below a normal directory (`src/main.rs`).
    let normal = |p: &str| !p.is_empty() && p.split('/').all(|c| !c.is_empty() && c != "." && c != "..");
    if normal(rel) {
        if from == "." {
            return Some(rel.to_string());
        }
        if normal(from) {
            return Some(format!("{from}/{rel}"));
        }
    }
    let mut parts: Vec<&str> = from.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    for c in rel.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(if parts.is_empty() { ".".to_string() } else { parts.join("/") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(d: &str) -> Base {
        Base::Dir(d.into())
    }

    #[test]
    fn words_are_placed_as_the_kernel_walks_them() {
        let abs = |s: &str| Place::Abs(s.into());
        let cases = [
            ("/etc/hostname", Base::start(), abs("/etc/hostname")),
            ("//etc/hostname", Base::start(), abs("/etc/hostname")),
            ("/etc/./hostname", Base::Unknown, abs("/etc/hostname")),
            ("/usr/../etc/hostname", Base::start(), abs("/etc/hostname")),
            ("/../../etc/", Base::start(), abs("/etc")),
            ("/etc/.", Base::start(), abs("/etc")),
            ("/", Base::start(), abs("/")),
            ("hostname", dir("/etc"), abs("/etc/hostname")),
            ("../etc/hostname", dir("/usr"), abs("/etc/hostname")),
            ("./a/../b", dir("/w"), abs("/w/b")),
            (".", dir("/w"), abs("/w")),
            ("src/main.rs", Base::start(), Place::InStart("src/main.rs".into())),
            ("./src/../README", Base::start(), Place::InStart("README".into())),
            (".", Base::start(), Place::InStart(".".into())),
            ("../x", Base::start(), Place::Anywhere),
            ("a/../../x", Base::start(), Place::Anywhere),
            ("x", Base::Unknown, Place::Anywhere),
            ("$HOME/x", dir("/w"), Place::Anywhere),
            ("", dir("/w"), Place::Anywhere),
            ("~/.ssh/id_rsa", Base::start(), Place::Home(".ssh/id_rsa".into())),
            ("~", Base::start(), Place::Home(".".into())),
            ("~/..", Base::start(), Place::Anywhere),
            ("~root/.ssh", Base::start(), abs("/root/.ssh")),
            ("~alice/x", Base::start(), Place::Anywhere),
            ("~+/x", Base::start(), Place::Anywhere),
        ];
        for (word, base, want) in cases {
            assert_eq!(place(word, &base, None), want, "{word} from {base:?}");
        }
    }

    #[test]
    fn a_known_home_places_tilde_absolutely() {
        assert_eq!(
            place("~/.aws/credentials", &Base::start(), Some("/home/u")),
            Place::Abs("/home/u/.aws/credentials".into())
        );
        assert_eq!(place("~/../root", &Base::start(), Some("/home/u")), Place::Abs("/home/root".into()));
    }

    #[test]
    fn cd_follows_known_directories_and_forgets_unknown_ones() {
        let b = change_dir("/usr", &Base::start(), None);
        assert_eq!(b, dir("/usr"));
        let b = change_dir("../etc", &b, None);
        assert_eq!(b, dir("/etc"));
        let src = change_dir("src", &Base::start(), None);
        assert_eq!(src, Base::Start("src".into()));
        assert_eq!(place("../README", &src, None), Place::InStart("README".into()));
        assert_eq!(place("../../x", &src, None), Place::Anywhere);
        assert_eq!(change_dir("..", &Base::start(), None), Base::Unknown);
        assert_eq!(change_dir(".", &Base::start(), None), Base::start());
        assert_eq!(change_dir("$D", &dir("/w"), None), Base::Unknown);
    }

    #[test]
    fn a_spelling_keeps_dot_dot_for_the_walk_and_is_unknown_where_the_directory_is() {
        let cases = [
            ("fd/../environ", dir("/w"), Some("/w/fd/../environ")),
            ("/etc/x", Base::Unknown, Some("/etc/x")),
            ("~root/x", Base::Unknown, Some("/root/x")),
            ("x", Base::start(), None),
            ("x", Base::Unknown, None),
            ("~/x", dir("/w"), None),
            ("$D/x", dir("/w"), None),
        ];
        for (word, base, want) in cases {
            assert_eq!(spell(word, &base, None).as_deref(), want, "{word} from {base:?}");
        }
        assert_eq!(spell("~/x", &Base::Unknown, Some("/home/u")).as_deref(), Some("/home/u/x"));
    }

    #[test]
    fn a_programs_chdir_is_physical_and_cd_may_be_either() {
        assert_eq!(enter_dir("link/..", &dir("/w"), None), dir("/w/link/.."));
        assert_eq!(enter_dir("sub", &dir("/w"), None), dir("/w/sub"));
        assert_eq!(enter_dir("sub", &Base::start(), None), Base::Start("sub".into()));
        assert_eq!(cd_dirs("sub", &dir("/w"), None), vec![dir("/w/sub")]);
        assert_eq!(cd_dirs("link/..", &dir("/w"), None), vec![dir("/w"), dir("/w/link/..")]);
        assert_eq!(cd_dirs("..", &dir("/w/link"), None), vec![dir("/w"), dir("/w/link/..")]);
    }

    proptest::proptest! {
        #[test]
        fn normal_forms_are_fixed_points_and_never_climb(s in "[/a.]{0,12}") {
            let n = normalize_abs(&format!("/{s}"));
            proptest::prop_assert!(n.starts_with('/'));
            proptest::prop_assert!(!n.split('/').any(|c| c == ".." || c == "."));
            proptest::prop_assert_eq!(normalize_abs(&n), n);
        }
    }
}
