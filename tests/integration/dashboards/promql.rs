//! A PromQL reader just deep enough to list the metrics, labels and groupings an expression
//! names (the dashboards and alert rules must query only what a running proxy exports).

pub(super) const AGGREGATIONS: &[&str] = &[
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
    "limitk",
    "limit_ratio",
];

pub(super) const FUNCTIONS: &[&str] = &[
    "abs",
    "absent",
    "absent_over_time",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "avg_over_time",
    "ceil",
    "changes",
    "clamp",
    "clamp_max",
    "clamp_min",
    "cos",
    "cosh",
    "count_over_time",
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "days_in_month",
    "deg",
    "delta",
    "deriv",
    "exp",
    "floor",
    "histogram_avg",
    "histogram_count",
    "histogram_fraction",
    "histogram_quantile",
    "histogram_stddev",
    "histogram_stdvar",
    "histogram_sum",
    "holt_winters",
    "hour",
    "idelta",
    "increase",
    "irate",
    "label_join",
    "label_replace",
    "last_over_time",
    "ln",
    "log10",
    "log2",
    "mad_over_time",
    "max_over_time",
    "min_over_time",
    "minute",
    "month",
    "pi",
    "predict_linear",
    "present_over_time",
    "quantile_over_time",
    "rad",
    "rate",
    "resets",
    "round",
    "scalar",
    "sgn",
    "sin",
    "sinh",
    "sort",
    "sort_desc",
    "sqrt",
    "stddev_over_time",
    "stdvar_over_time",
    "sum_over_time",
    "tan",
    "tanh",
    "time",
    "timestamp",
    "vector",
    "year",
];

pub(super) const KEYWORDS: &[&str] = &["and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"];
pub(super) const GROUPINGS: &[&str] = &["by", "without", "on", "ignoring", "group_left", "group_right"];

// ---------------------------------------------------------------- PromQL references

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Str(String),
    Num,
    LParen,
    RParen,
    LBrace,
    RBrace,
    Comma,
    /// `[5m]`, `[$__rate_interval]`, a subquery's `[1h:1m]`.
    Range,
    /// A Grafana variable outside a string (`$__range` inside a range is part of the range).
    Var,
    Op(String),
}

pub(super) fn lex(expr: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_start = |ch: char| ch.is_ascii_alphabetic() || ch == '_' || ch == ':';
    let ident_char = |ch: char| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':';
    while i < c.len() {
        let ch = c[i];
        match ch {
            _ if ch.is_whitespace() => i += 1,
            '#' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '(' | ')' | '{' | '}' | ',' => {
                out.push(match ch {
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    '{' => Tok::LBrace,
                    '}' => Tok::RBrace,
                    _ => Tok::Comma,
                });
                i += 1;
            }
            '[' => {
                let close = c[i..].iter().position(|&x| x == ']').ok_or("unclosed [")?;
                i += close + 1;
                out.push(Tok::Range);
            }
            '"' | '\'' | '`' => {
                let mut s = String::new();
                i += 1;
                loop {
                    let Some(&x) = c.get(i) else { return Err("unclosed string".into()) };
                    i += 1;
                    match x {
                        '\\' if ch != '`' => {
                            s.extend(c.get(i));
                            i += 1;
                        }
                        _ if x == ch => break,
                        _ => s.push(x),
                    }
                }
                out.push(Tok::Str(s));
            }
            '$' => {
                i += 1;
                if c.get(i) == Some(&'{') {
                    i += c[i..].iter().position(|&x| x == '}').ok_or("unclosed ${")? + 1;
                } else {
                    while i < c.len() && ident_char(c[i]) {
                        i += 1;
                    }
                }
                out.push(Tok::Var);
            }
            _ if ch.is_ascii_digit() || (ch == '.' && c.get(i + 1).is_some_and(char::is_ascii_digit)) => {
                while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '.') {
                    i += 1;
                }
                out.push(Tok::Num);
            }
            _ if ident_start(ch) => {
                let start = i;
                while i < c.len() && ident_char(c[i]) {
                    i += 1;
                }
                out.push(Tok::Ident(c[start..i].iter().collect()));
            }
            _ if "=!~<>+-*/%^".contains(ch) => {
                let start = i;
                while i < c.len() && "=!~<>".contains(c[i]) && (i == start || "=~".contains(c[i])) {
                    i += 1;
                }
                i = i.max(start + 1);
                out.push(Tok::Op(c[start..i].iter().collect()));
            }
            _ => return Err(format!("unexpected {ch:?}")),
        }
    }
    Ok(out)
}

/// A metric selector in an expression.
#[derive(Debug, Clone)]
pub(super) struct Ref {
    pub(super) metric: String,
    /// Index of the metric's token, to tell which aggregation covers it.
    pub(super) at: usize,
    /// `(label, op, value)`.
    pub(super) matchers: Vec<(String, String, String)>,
}

/// Labels a clause needs, on every metric in `span` (`by`, `without`) or on some metric of the
/// expression (`on`, `ignoring`, `group_*`: `span` is `None`).
#[derive(Debug)]
pub(super) struct Grouping {
    pub(super) clause: String,
    pub(super) labels: Vec<String>,
    pub(super) span: Option<(usize, usize)>,
}

/// The index of the `)` matching the `(` at `open`.
pub(super) fn matching(toks: &[Tok], open: usize) -> Result<usize, String> {
    let mut depth = 0;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::LParen => depth += 1,
            Tok::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            _ => {}
        }
    }
    Err("unbalanced parentheses".into())
}

/// The label list of a grouping clause whose `(` is at `open`; returns it and its `)`.
pub(super) fn label_list(toks: &[Tok], open: usize) -> Result<(Vec<String>, usize), String> {
    let close = matching(toks, open)?;
    let mut labels = Vec::new();
    for t in &toks[open + 1..close] {
        match t {
            Tok::Ident(l) => labels.push(l.clone()),
            Tok::Comma => {}
            t => return Err(format!("unexpected {t:?} in a label list")),
        }
    }
    Ok((labels, close))
}

/// Every metric selector and grouping clause of a PromQL expression.
pub(super) fn references(expr: &str) -> Result<(Vec<Ref>, Vec<Grouping>), String> {
    let toks = lex(expr)?;
    let mut refs = Vec::new();
    let mut groups = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let Tok::Ident(id) = &toks[i] else {
            if toks[i] == Tok::LBrace {
                return Err("a selector without a metric name".into());
            }
            i += 1;
            continue;
        };
        let next_is_paren = toks.get(i + 1) == Some(&Tok::LParen);
        if GROUPINGS.contains(&id.as_str()) && next_is_paren {
            let (labels, close) = label_list(&toks, i + 1)?;
            if !matches!(id.as_str(), "by" | "without") {
                groups.push(Grouping { clause: id.clone(), labels, span: None });
            }
            i = close + 1;
        } else if next_is_paren {
            if !FUNCTIONS.contains(&id.as_str()) && !AGGREGATIONS.contains(&id.as_str()) {
                return Err(format!("unknown function {id}"));
            }
            i += 1;
        } else if KEYWORDS.contains(&id.as_str())
            || GROUPINGS.contains(&id.as_str())
            // `sum by (l) (…)`: the aggregation, its clause next.
            || (AGGREGATIONS.contains(&id.as_str())
                && matches!(toks.get(i + 1), Some(Tok::Ident(g)) if g == "by" || g == "without"))
        {
            i += 1;
        } else {
            let mut r = Ref { metric: id.clone(), at: i, matchers: Vec::new() };
            i += 1;
            if toks.get(i) == Some(&Tok::LBrace) {
                i += 1;
                loop {
                    match (toks.get(i), toks.get(i + 1), toks.get(i + 2)) {
                        (Some(Tok::RBrace), _, _) => break,
                        (Some(Tok::Comma), _, _) => i += 1,
                        (Some(Tok::Ident(l)), Some(Tok::Op(op)), Some(Tok::Str(v))) => {
                            r.matchers.push((l.clone(), op.clone(), v.clone()));
                            i += 3;
                        }
                        other => return Err(format!("bad matcher after {}: {other:?}", r.metric)),
                    }
                }
                i += 1;
            }
            refs.push(r);
        }
    }
    // Aggregations: `sum by (l) (expr)` or `sum (expr) by (l)`.
    for (i, t) in toks.iter().enumerate() {
        let Tok::Ident(id) = t else { continue };
        if !AGGREGATIONS.contains(&id.as_str()) {
            continue;
        }
        let mut labels = Vec::new();
        let mut clause = String::new();
        let mut open = i + 1;
        if let Some(Tok::Ident(g)) = toks.get(open) {
            if g == "by" || g == "without" {
                let (l, close) = label_list(&toks, open + 1)?;
                (labels, clause, open) = (l, g.clone(), close + 1);
            }
        }
        if toks.get(open) != Some(&Tok::LParen) {
            continue;
        }
        let close = matching(&toks, open)?;
        if let (Some(Tok::Ident(g)), Some(Tok::LParen)) = (toks.get(close + 1), toks.get(close + 2)) {
            if g == "by" || g == "without" {
                let (l, _) = label_list(&toks, close + 2)?;
                (labels, clause) = (l, g.clone());
            }
        }
        if !labels.is_empty() {
            groups.push(Grouping { clause: format!("{id} {clause}"), labels, span: Some((open, close)) });
        }
    }
    Ok((refs, groups))
}
