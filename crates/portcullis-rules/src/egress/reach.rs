//! Which tools reach outward: positively, from what config says a tool is (a fetch tool, a
//! configured sink) or what a shell line is proven to do (a command that connects), never from
//! the spelling of a tool's name.

use std::ops::ControlFlow;

use serde_json::Value;

use super::scan::{Found, What};
use super::Egress;
use crate::destination::{read_url, Host};
use crate::kinds::{KindSpec, ToolKinds};

/// How far a call may send what its arguments name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// It connects where its arguments say: every default holds.
    Outward(Outward),
    /// Nothing says what it does (an MCP or plain HTTP tool no config marks, a shell line that
    /// connects nowhere): cloud metadata is refused, other destinations are its business.
    Unmarked,
    /// A file tool: its arguments are paths and contents; only configured entries are met.
    Local,
}

/// Why a tool reaches outward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outward {
    /// Config says it is a fetch tool (`kind: fetch`, Claude Code's `WebFetch`).
    Fetch,
    /// A command of the shell line connects: the destinations it connects to.
    Shell(Vec<Found>),
    /// `egress.sinks:` names it (the glob).
    Sink(String),
    /// A redirect in a plain HTTP tool's answer, which the client follows.
    Redirect,
}

impl Reach {
    /// The reach of a call to `qualified` on `upstream` with `args`; `connections` are a shell
    /// line's when the rules already analysed it (else the line is analysed here).
    pub fn of(
        kinds: &ToolKinds,
        egress: &Egress,
        upstream: &str,
        qualified: &str,
        args: &Value,
        connections: Option<&[String]>,
    ) -> Reach {
        if let Some(s) = egress.sink(upstream, qualified) {
            return Reach::Outward(Outward::Sink(s.tools.as_str().to_owned()));
        }
        match kinds.kind_of(qualified) {
            KindSpec::Fetch { .. } => Reach::Outward(Outward::Fetch),
            KindSpec::File { .. } => Reach::Local,
            KindSpec::Shell { .. } => match connections {
                Some(known) => shell_reach(known),
                None => match kinds.classify(qualified, args) {
                    crate::kinds::Subject::Shell { command, shell, .. } => {
                        let analysis = portcullis_shell::analyze_in(&command, shell);
                        let start = portcullis_shell::place::Base::start();
                        let effects = portcullis_shell::effects::effects(&analysis, &start, None);
                        let network: Vec<String> = effects.into_iter().flat_map(|fx| fx.network).collect();
                        shell_reach(&network)
                    }
                    _ => Reach::Unmarked,
                },
            },
            KindSpec::Resource { .. } | KindSpec::Generic => Reach::Unmarked,
        }
    }

    /// For a reason: "a fetch tool", "`curl` (which connects)", "a configured sink".
    pub fn describe(&self) -> String {
        match self {
            Reach::Outward(Outward::Fetch) => "a fetch tool".into(),
            Reach::Outward(Outward::Shell(_)) => "a shell command that connects".into(),
            Reach::Outward(Outward::Sink(glob)) => format!("a sink (egress.sinks: {glob})"),
            Reach::Outward(Outward::Redirect) => "a redirect the client follows".into(),
            Reach::Unmarked => "a tool".into(),
            Reach::Local => "a file tool".into(),
        }
    }
}

/// A shell line reaches outward when the effect model finds a command that connects; what it
/// connects to (decoded by the shell analysis: `curl $'\x68ttp://…'`) is judged too.
fn shell_reach(network: &[String]) -> Reach {
    match network.is_empty() {
        true => Reach::Unmarked,
        false => Reach::Outward(Outward::Shell(network.iter().flat_map(|n| connection(n)).collect())),
    }
}

/// The network destinations of one word the effect model says a command connects to:
/// `/dev/tcp/HOST/PORT`, a URL, a bare host as curl reads it (`user@host`, `host:path` for scp
/// and rsync), or — a word of a command no grammar read, or a script — every URL and host in
/// it (`$(curl -s https://x/)`, `IO::Socket::INET->new("127.0.0.1:6379")`).
fn connection(n: &str) -> Vec<Found> {
    let found = |what| Found { pointer: "(the command's connection)".into(), what, loose: false };
    if let Some(rest) = n.strip_prefix("/dev/tcp/").or_else(|| n.strip_prefix("/dev/udp/")) {
        let host = rest.split('/').next().unwrap_or(rest);
        let host = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            Some(inner) => Host::from_bracketed(inner),
            None => host.parse::<std::net::Ipv6Addr>().map(Host::V6).or_else(|_| Host::from_name(host)),
        };
        return host.ok().map(|h| found(What::Host(h))).into_iter().collect();
    }
    if n == portcullis_shell::grammar::DESTINATIONS_IN_A_FILE {
        let why = "the command reads where it connects from a file".to_owned();
        return vec![found(What::Url {
            text: n.to_owned(),
            reading: crate::destination::Reading::Unparsable(why),
        })];
    }
    let mut all = Vec::new();
    if super::scan::starts_url(n) && !n.contains(char::is_whitespace) {
        all.push(found(What::Url { text: n.to_owned(), reading: read_url(n) }));
    } else if let Some(host) = remote_host(n) {
        // `host:path` (scp, rsync, git over ssh): the host is before the first colon.
        let reading = read_url(host);
        if !reading.destinations().is_empty() {
            all.push(found(What::Url { text: n.to_owned(), reading }));
        }
    }
    // And what the scan finds in it, a whole word read loosely (`localhost`).
    let _ = super::scan::text(n, &|| "(the command's connection)".to_owned(), &mut |f: Found| {
        all.push(f);
        ControlFlow::<()>::Continue(())
    });
    all
}

/// The host of a `[user@]host[:path]` word, when the word has that shape: host characters,
/// then nothing or one `:` that starts no second one (`IO::Socket` is code, not a host).
fn remote_host(n: &str) -> Option<&str> {
    if n.starts_with('[') {
        return Some(n);
    }
    let (host, path) = n.split_once(':').map_or((n, None), |(h, p)| (h, Some(p)));
    let host_chars = |b: u8| b.is_ascii_alphanumeric() || b"._-@%".contains(&b);
    let ok = !host.is_empty() && host.bytes().all(host_chars) && !path.is_some_and(|p| p.starts_with(':'));
    ok.then_some(host)
}
