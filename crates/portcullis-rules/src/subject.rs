//! What a call touches, as its kind reads it: the [`Subject`] Layer 1 decides on (a shell
//! command, a file and how it is accessed, a URL, a resource's readings, generic arguments).
//! Kinds ([`crate::kinds`]) and resource URIs ([`crate::resource`]) both produce it.

use std::sync::Arc;

use portcullis_shell::secrets;
use portcullis_shell::Dialect;

use crate::allowlist::Allowlist;

/// File access a file-kind tool performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// Reads the files a tool's glob names: Claude Code's `Glob` and `Grep`, whose path the
    /// hook makes the glob they expand (`/work/repo/**/*.rs`; a bare `**` for a whole tree).
    /// `*` matches hidden names too and `**` walks hidden directories, as ripgrep's do.
    Search,
}

impl Access {
    /// Whether the access reads (`Read` rules match it).
    pub fn reads(self) -> bool {
        matches!(self, Access::Read | Access::Search)
    }

    /// The secret reading `path` (absolute, as the jail resolved it) may reveal, by the one
    /// secret policy every file reader shares ([`portcullis_shell::secrets`]). `cwd` is the
    /// working directory when known (the jail's root): a tree strictly below it can be proven.
    /// Writes reveal nothing.
    pub fn secret(self, path: &str, cwd: Option<&str>) -> Option<secrets::Secret> {
        let globbing = match self {
            Access::Read => secrets::Globbing::Literal,
            Access::Search => secrets::Globbing::Tool,
            Access::Write => return None,
        };
        let place = portcullis_shell::place::Place::Abs(portcullis_shell::place::normalize_abs(path));
        let cx = secrets::Context { globbing, cwd, home: None };
        secrets::judge(&place, secrets::Reading::File, &cx).err()
    }
}

/// A call's meaningful argument, read by its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Shell {
        command: String,
        allowlist: Option<Arc<Allowlist>>,
        /// The shell that runs `command`.
        shell: Dialect,
        /// The directory the command runs in, when the call says (used only when absolute).
        cwd: Option<String>,
    },
    File {
        path: String,
        access: Access,
    },
    Fetch {
        url: String,
    },
    /// Any other tool: its arguments as canonical JSON (sorted keys), for `Tool(glob)` rules.
    Generic {
        args: String,
    },
    /// A subject a server may read more than one way (a resource URI): every reading is
    /// judged and the worst decides.
    Readings(Vec<Subject>),
    /// A resource URI no reading places (a file URI naming another host): refused.
    Unplaced {
        reason: String,
    },
    /// The kind's argument is missing or not a string: the call cannot be judged.
    Malformed {
        kind: &'static str,
        pointer: String,
    },
}
