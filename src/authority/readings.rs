//! Every record an upstream may read a call's arguments as: a JSON value whose type the
//! upstream's validator may coerce (`"11"` or `11.0` into the integer 11, `"true"` or `1` into
//! a boolean) is given to the policy once per reading, and a forbid that holds for any reading
//! denies. One record would have to pick a type, and a `forbid when { context.args.a == 11 }`
//! would be passed by sending `"11"` to an upstream that reads it as 11.
//!
//! What each JSON value is read as, positively (anything not listed has its literal reading
//! only):
//!
//! | JSON | readings |
//! | --- | --- |
//! | integer in i64 (`11`) | Long 11; also Bool for `0` / `1` |
//! | number with an integral value in i64 (`11.0`, `1.1e1`, `-0.0`) | Long (the only one: its text is never what a validator sees) |
//! | any other number (`11.5`, `1e20`) | its text: an ordering on it is an error, which denies |
//! | string | the string; also Long when [`integer_text`] reads it; also Bool when [`bool_text`] does |
//! | `true` / `false` | Bool; also Long 1 / 0 |
//! | `null` | an empty record (an ordering or attribute on it is an error) |
//! | array | a set of its elements' readings, one combination per reading (Cedar has no lists) |
//! | object | a record of its fields' readings, one combination per reading |
//!
//! The readings of a call are the combinations of its values' readings: at most
//! [`MAX_READINGS`], or the call is refused ([`Unjudged::Ambiguous`]) rather than judged in part.

use cedar_policy::RestrictedExpression;
use serde_json::Value;

use super::context::{Unjudged, MAX_DEPTH};

/// More combinations than this and the call is refused.
pub const MAX_READINGS: usize = 64;

/// Every record `args` may be read as, the literal reading first.
pub fn readings(args: &Value) -> Result<Vec<RestrictedExpression>, Unjudged> {
    tree(args, 0)?.into_iter().map(Read::expr).collect()
}

/// One reading of a value, kept as a tree until the combinations are chosen.
#[derive(Debug, Clone)]
enum Read {
    Long(i64),
    Bool(bool),
    Text(String),
    Set(Vec<Read>),
    Record(Vec<(String, Read)>),
}

impl Read {
    fn expr(self) -> Result<RestrictedExpression, Unjudged> {
        Ok(match self {
            Read::Long(i) => RestrictedExpression::new_long(i),
            Read::Bool(b) => RestrictedExpression::new_bool(b),
            Read::Text(s) => RestrictedExpression::new_string(s),
            Read::Set(items) => RestrictedExpression::new_set(
                items.into_iter().map(Read::expr).collect::<Result<Vec<_>, _>>()?,
            ),
            Read::Record(fields) => RestrictedExpression::new_record(
                fields.into_iter().map(|(k, v)| Ok((k, v.expr()?))).collect::<Result<Vec<_>, Unjudged>>()?,
            )
            .map_err(|e| Unjudged::Record(e.to_string()))?,
        })
    }
}

fn tree(v: &Value, depth: usize) -> Result<Vec<Read>, Unjudged> {
    if depth > MAX_DEPTH {
        return Err(Unjudged::TooDeep);
    }
    Ok(match v {
        Value::Null => vec![Read::Record(Vec::new())],
        Value::Bool(b) => vec![Read::Bool(*b), Read::Long(i64::from(*b))],
        Value::Number(n) => match n.as_i64().or_else(|| n.as_f64().and_then(integral)) {
            Some(i @ (0 | 1)) => vec![Read::Long(i), Read::Bool(i == 1)],
            Some(i) => vec![Read::Long(i)],
            None => vec![Read::Text(n.to_string())],
        },
        Value::String(s) => std::iter::once(Read::Text(s.clone()))
            .chain(integer_text(s).map(Read::Long))
            .chain(bool_text(s).map(Read::Bool))
            .collect(),
        Value::Array(items) => {
            let each = items.iter().map(|e| tree(e, depth + 1)).collect::<Result<Vec<_>, _>>()?;
            combine(each)?.into_iter().map(Read::Set).collect()
        }
        Value::Object(m) => {
            let each = m.values().map(|e| tree(e, depth + 1)).collect::<Result<Vec<_>, _>>()?;
            combine(each)?
                .into_iter()
                .map(|vals| Read::Record(m.keys().cloned().zip(vals).collect()))
                .collect()
        }
    })
}

/// Every choice of one reading per part, refused past [`MAX_READINGS`].
fn combine(parts: Vec<Vec<Read>>) -> Result<Vec<Vec<Read>>, Unjudged> {
    let mut out: Vec<Vec<Read>> = vec![Vec::new()];
    for choices in parts {
        if out.len().saturating_mul(choices.len()) > MAX_READINGS {
            return Err(Unjudged::Ambiguous(MAX_READINGS));
        }
        out = out
            .into_iter()
            .flat_map(|prefix| {
                choices.iter().map(move |c| {
                    let mut next = prefix.clone();
                    next.push(c.clone());
                    next
                })
            })
            .collect();
    }
    Ok(out)
}

/// The i64 a float holds exactly, when it holds one.
fn integral(f: f64) -> Option<i64> {
    // 2^63 is the first float past i64::MAX; -2^63 is i64::MIN exactly.
    let in_range = (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f);
    (f.is_finite() && f.fract() == 0.0 && in_range).then_some(f as i64)
}

/// The integer a validator's lax mode reads from text: surrounding whitespace, a sign, decimal
/// digits with `_` between them (Python's `int()`), a fraction or exponent whose value is
/// integral (`"11.0"`, `"1.1e1"`, pydantic's float-to-int), or a `0x` / `0o` / `0b` prefix (a
/// JavaScript `Number()`). ASCII digits only: digits of other scripts, which Python's `int()`
/// also reads, are not understood (docs/SECURITY.md).
pub fn integer_text(s: &str) -> Option<i64> {
    let t = s.trim();
    let (negative, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let radix = match body.get(..2).map(str::to_ascii_lowercase).as_deref() {
        Some("0x") => Some(16),
        Some("0o") => Some(8),
        Some("0b") => Some(2),
        _ => None,
    };
    let digits_ok = |d: &str, radix: u32| {
        !d.is_empty()
            && !d.starts_with('_')
            && !d.ends_with('_')
            && !d.contains("__")
            && d.chars().all(|c| c == '_' || c.is_digit(radix))
    };
    let magnitude = match radix {
        Some(r) => {
            let d = body[2..].trim_start_matches('_');
            if !digits_ok(d, r) {
                return None;
            }
            i64::from_str_radix(&d.replace('_', ""), r).ok()?
        }
        None => {
            let (mantissa, _) = body.split_once(['e', 'E']).unwrap_or((body, ""));
            let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            let whole_ok = digits_ok(whole, 10) || (whole.is_empty() && !frac.is_empty());
            let frac_ok = frac.is_empty() || digits_ok(frac, 10);
            if !whole_ok || !frac_ok || !body.bytes().all(|b| b.is_ascii_digit() || b"_.eE+-".contains(&b)) {
                return None;
            }
            match body.replace('_', "").parse::<i64>() {
                Ok(i) => i,
                Err(_) => integral(body.replace('_', "").parse::<f64>().ok()?)?,
            }
        }
    };
    Some(if negative { magnitude.checked_neg()? } else { magnitude })
}

/// The boolean a validator's lax mode reads from text (pydantic: `true`, `yes`, `on`, `1`,
/// `t`, `y` and their opposites, any case, surrounding whitespace ignored).
pub fn bool_text(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" | "t" | "y" => Some(true),
        "false" | "no" | "off" | "0" | "f" | "n" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
#[path = "readings_tests.rs"]
mod tests;
