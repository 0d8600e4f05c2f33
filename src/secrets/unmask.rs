//! Arguments → values: a sentinel becomes its secret's value only in a call bound for a
//! destination that secret may reach; a sentinel bound anywhere else, or a value itself in any
//! argument, is the gate's refusal ([`Held::refusal`]).

use std::collections::BTreeSet;

use serde_json::Value;

use super::Held;
use crate::call::{ToolCall, Transport};
use crate::config::secrets::Allowed;
use crate::rules::kinds::{KindSpec, ToolKinds};

/// The gate's refusal of a call that would carry a secret where it may not go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub rule: String,
    /// Names the secret and the destination, never the value.
    pub reason: String,
}

/// Which secrets some strings carry: as a spelling of the value, and as a sentinel.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub values: BTreeSet<usize>,
    pub sentinels: BTreeSet<usize>,
}

impl Held {
    /// Every string and key of `v`, searched for values and sentinels.
    pub fn scan(&self, v: &Value, found: &mut Found) {
        match v {
            Value::String(s) => self.scan_str(s, found),
            Value::Array(items) => items.iter().for_each(|i| self.scan(i, found)),
            Value::Object(map) => {
                for (k, val) in map {
                    self.scan_str(k, found);
                    self.scan(val, found);
                }
            }
            _ => {}
        }
    }

    fn scan_str(&self, s: &str, found: &mut Found) {
        found.values.extend(self.values.find_iter(s).map(|m| self.owner[m.pattern().as_usize()]));
        found.sentinels.extend(self.sentinels.find_iter(s).map(|m| m.pattern().as_usize()));
    }

    /// Where `call` sends what it carries, as a URL, when the proxy knows: a plain HTTP tool's
    /// upstream base and path, a fetch tool's URL argument.
    pub fn destination(&self, call: &ToolCall, kinds: &ToolKinds, args: &Value) -> Option<String> {
        match call.transport {
            Transport::Http => {
                let base = self.http_bases.get(&*call.upstream)?;
                Some(format!("{}/{}", base.trim_end_matches('/'), call.name))
            }
            _ => match kinds.kind_of(&call.qualified) {
                KindSpec::Fetch { url } => args.pointer(url).and_then(Value::as_str).map(str::to_owned),
                _ => None,
            },
        }
    }

    /// True when secret `i` may go to the tool `qualified` or the URL `url`.
    pub fn allows(&self, i: usize, qualified: &str, url: Option<&str>) -> bool {
        self.secrets[i].to.iter().any(|a| match a {
            Allowed::Tool(glob) => glob.matches(qualified),
            Allowed::Url(prefix) => url.is_some_and(|u| prefix.admits(u)),
        })
    }

    /// The gate's refusal of `call`, when its arguments carry a held value (in any spelling
    /// results are masked in), or a sentinel bound where its secret may not go. Arguments that
    /// are not JSON are searched as text.
    pub fn refusal(&self, call: &ToolCall, kinds: &ToolKinds) -> Option<Refused> {
        let text = call.args.as_deref().map(|a| a.get()).unwrap_or("null");
        let args = serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_owned()));
        let mut found = Found::default();
        self.scan(&args, &mut found);
        // What else of the call a model or a log line reads: its name, the task it says it is on.
        self.scan_str(&call.qualified, &mut found);
        for task in [call.task.as_deref(), call.user_words()].into_iter().flatten() {
            self.scan_str(task, &mut found);
        }
        if found.values.is_empty() && found.sentinels.is_empty() {
            return None;
        }
        let url = self.destination(call, kinds, &args);
        let place = match &url {
            Some(u) => format!("{} ({})", call.qualified, describe_url(u)),
            None => call.qualified.clone(),
        };
        let (rule, reason) = if let Some(&i) = found.values.iter().next() {
            (
                format!("secret {}", self.name(i)),
                format!(
                    "its arguments carry the value of the held secret {:?} itself, bound for {place}: \
                     a held value never leaves in an argument (send its sentinel {} where it may go)",
                    self.name(i),
                    self.sentinel(i)
                ),
            )
        } else {
            let i = *found.sentinels.iter().find(|&&i| !self.allows(i, &call.qualified, url.as_deref()))?;
            (
                format!("secret {}", self.name(i)),
                format!(
                    "its arguments carry the held secret {:?} (as {}) to {place}, where that secret \
                     may not go",
                    self.name(i),
                    self.sentinel(i)
                ),
            )
        };
        // A destination spelled with the value in it is named by its sentinel.
        let reason = self.mask_str(&reason).unwrap_or(reason);
        Some(Refused { rule, reason })
    }

    /// `args` (JSON text of `call`'s arguments) with each sentinel of a secret allowed to go
    /// where `call` goes replaced by the value, every other byte as sent; `None` when nothing
    /// changes. A sentinel of a secret not allowed there stays (the gate refused such a call).
    pub fn unmask_args(&self, call: &ToolCall, kinds: &ToolKinds, args: &str) -> Option<String> {
        if !self.sentinels.is_match(args) && !args.contains('\\') {
            return None;
        }
        let value = serde_json::from_str::<Value>(args).ok()?;
        let url = self.destination(call, kinds, &value);
        let allowed = |i: usize| self.allows(i, &call.qualified, url.as_deref());
        rewrite_strings(args, &|s| self.unmask_str(s, &allowed))
    }

    /// `text` with the sentinels of secrets `allowed` admits replaced by their values.
    pub fn unmask_str(&self, text: &str, allowed: &dyn Fn(usize) -> bool) -> Option<String> {
        let mut out = String::new();
        let mut at = 0;
        for m in self.sentinels.find_iter(text) {
            let i = m.pattern().as_usize();
            if allowed(i) {
                out.push_str(&text[at..m.start()]);
                out.push_str(self.secrets[i].value.expose());
                at = m.end();
            }
        }
        if at == 0 {
            return None;
        }
        out.push_str(&text[at..]);
        Some(out)
    }
}

/// `scheme://host:port` of a URL as the fetcher reads it, or "an unreadable URL".
fn describe_url(url: &str) -> String {
    match crate::rules::destination::read_url(url) {
        crate::rules::destination::Reading::One(d) => d.to_string(),
        _ => "a URL the fetchers read differently or not at all".into(),
    }
}

/// The JSON text `text` with each string token (keys too) for which `f` gives a new value
/// re-encoded with it; every byte outside those tokens as it was. `None` when no token changed
/// or `text` is not JSON the walk understands.
///
/// The walk relies on JSON's grammar: outside a string no `"` appears, and inside one a `"`
/// ends it unless a `\` escapes it; so each token is found without a parser, decoded with
/// serde_json (escapes and all), and written back with serde_json's escaping.
pub fn rewrite_strings(text: &str, f: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < bytes.len() && bytes[j] != b'"' {
            j += if bytes[j] == b'\\' { 2 } else { 1 };
        }
        let token = text.get(i..=j)?;
        let decoded: String = serde_json::from_str(token).ok()?;
        if let Some(new) = f(&decoded) {
            out.push_str(&text[copied..i]);
            out.push_str(&serde_json::to_string(&new).ok()?);
            copied = j + 1;
        }
        i = j + 1;
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

#[cfg(test)]
#[path = "unmask_tests.rs"]
mod tests;
