//! Laundering on the development corpus: no line the analyzer proves read-only is judged as
//! possibly running a ruled program, and how many other lines are (a deny or ask on them asks)
//! is printed (`cargo test -p portcullis-rules launder_corpus -- --nocapture`).

use portcullis_corpus::{read as corpus, tsv_rows as rows};
use portcullis_shell::effects::effects;
use portcullis_shell::place::Base;
use portcullis_shell::{analyze, read_only, ReadOnly};

use super::launder::may_run;

/// Programs operators commonly deny or ask for.
const RULED: &[&str] = &["rm", "curl", "wget", "git", "sudo", "dd", "chmod", "ssh", "sh", "bash"];

fn laundering(line: &str) -> Option<(&'static str, String)> {
    let a = analyze(line);
    effects(&a, &Base::start(), None)
        .iter()
        .find_map(|fx| RULED.iter().find_map(|p| may_run(p, fx).map(|w| (*p, w.to_owned()))))
}

#[test]
fn no_proven_read_only_line_is_judged_as_running_a_ruled_program() {
    let readonly = rows(&corpus("shell-readonly.dev.tsv"));
    let (mut proven, mut flagged) = (0, Vec::new());
    for (line, label) in readonly.iter().filter(|(_, l)| l == "readonly") {
        let hit = laundering(line);
        if read_only(&analyze(line)) == ReadOnly::Proven {
            proven += 1;
            assert!(hit.is_none(), "{line:?} is proven read-only and judged as running {hit:?}");
        } else if let Some(hit) = hit {
            flagged.push(format!("{label}: {line:?} may run {hit:?}"));
        }
    }
    let all = readonly.iter().filter(|(_, l)| l == "readonly").count();
    println!(
        "laundering on the readonly corpus: 0/{proven} proven lines, {}/{} unproven lines may run one of {RULED:?}",
        flagged.len(),
        all - proven
    );
    for f in &flagged {
        println!("  {f}");
    }
}
