//! The alerts' runbook, built into the binary: served at `/runbook` on the admin listener (each
//! alert's `runbook_url` points at its section there) and printed by `portcullis runbook ALERT`.

/// docs/runbook.md as it was when this binary was built.
const RUNBOOK: &str = include_str!("../../docs/runbook.md");

/// One `## ` section of the runbook: its heading and its text (heading line included).
struct Section<'a> {
    heading: &'a str,
    text: &'a str,
}

/// The runbook cut at its `## ` headings; the text before the first one is the introduction.
fn sections() -> (&'static str, Vec<Section<'static>>) {
    let mut starts: Vec<usize> = RUNBOOK.match_indices("\n## ").map(|(i, _)| i + 1).collect();
    let intro = &RUNBOOK[..starts.first().copied().unwrap_or(RUNBOOK.len())];
    starts.push(RUNBOOK.len());
    let found = starts
        .windows(2)
        .map(|w| {
            let text = &RUNBOOK[w[0]..w[1]];
            let heading = text.lines().next().unwrap_or_default().trim_start_matches("## ").trim();
            Section { heading, text }
        })
        .collect();
    (intro, found)
}

/// The anchor GitHub gives a heading, for the headings the runbook has (letters, digits, spaces
/// and hyphens): lower case, spaces as hyphens, everything else dropped.
pub fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            ' ' => Some('-'),
            _ => None,
        })
        .collect()
}

/// The section for an alert (or any heading), matched case-insensitively by name or anchor;
/// `None` names the alerts there are.
pub fn section(name: &str) -> Result<&'static str, String> {
    let (_, all) = sections();
    let wanted = anchor(name);
    all.iter().find(|s| anchor(s.heading) == wanted).map(|s| s.text).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|s| s.heading).collect();
        format!("no runbook section named {name:?}; there are: {}", names.join(", "))
    })
}

/// The whole runbook's text, for `portcullis runbook` with no alert named.
pub fn text() -> &'static str {
    RUNBOOK
}

/// The runbook as one HTML page: the text as written (preformatted, escaped), one `<section>` per
/// heading with the anchor `runbook_url` names, and nothing that runs or loads.
pub fn html() -> String {
    let (intro, all) = sections();
    let mut page = String::with_capacity(RUNBOOK.len() + 4096);
    page.push_str(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>portcullis runbook</title></head>\
         <body><pre>",
    );
    escape_into(&mut page, intro);
    page.push_str("</pre>");
    for s in &all {
        page.push_str(&format!("<section id=\"{}\"><pre>", anchor(s.heading)));
        escape_into(&mut page, s.text);
        page.push_str("</pre></section>");
    }
    page.push_str("</body></html>\n");
    page
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alert_in_the_shipped_rules_has_a_section_at_the_anchor_its_runbook_url_names() {
        let rules = include_str!("../../dashboards/alerts.yaml");
        let page = html();
        let mut seen = 0;
        for line in rules.lines().filter(|l| l.trim_start().starts_with("runbook_url:")) {
            let (_, after) =
                line.split_once("/runbook#").unwrap_or_else(|| panic!("not an admin /runbook link: {line}"));
            let fragment: String = after.chars().take_while(char::is_ascii_alphanumeric).collect();
            assert!(page.contains(&format!("<section id=\"{fragment}\">")), "no section for #{fragment}");
            assert!(section(&fragment).is_ok(), "`portcullis runbook {fragment}` finds nothing");
            seen += 1;
        }
        assert!(seen >= 11, "only {seen} runbook_url lines were read");
    }

    #[test]
    fn a_section_is_found_by_alert_name_in_any_case_and_an_unknown_name_lists_the_alerts() {
        assert!(section("PortcullisCheckerDown").unwrap().starts_with("## PortcullisCheckerDown"));
        assert_eq!(section("portcullischeckerdown").unwrap(), section("PortcullisCheckerDown").unwrap());
        let missing = section("PortcullisNoSuchAlert").unwrap_err();
        assert!(
            missing.contains("PortcullisDown") && missing.contains("PortcullisUpstreamFailing"),
            "{missing}"
        );
    }

    #[test]
    fn the_page_escapes_the_text_so_markdown_with_angle_brackets_cannot_become_markup() {
        let page = html();
        assert_eq!(page.matches("<pre>").count(), page.matches("</pre>").count());
        assert!(!page.contains("<script") && !page.contains("<img"), "only the page's own tags");
        assert!(RUNBOOK.contains('<') == page.contains("&lt;"));
        let mut out = String::new();
        escape_into(&mut out, "<script>a & \"b\"</script>");
        assert_eq!(out, "&lt;script&gt;a &amp; &quot;b&quot;&lt;/script&gt;");
    }
}
