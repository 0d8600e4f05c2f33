//! The shell analyzer and read-only proof: never panic on any line, and a line proven read-only
//! has no write redirection and no opacity the proof should have refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portcullis::shell::{analyze, read_only, ReadOnly};

fuzz_target!(
    // brush-parser panics on some inputs; the analyzer contains those (`shell::guard::contain`,
    // they become parse errors, never proofs). libfuzzer-sys's hook would abort on the contained
    // panic too, so put the default hook back: a panic that escapes still aborts the run.
    init: drop(std::panic::take_hook()),
    |data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else { return };
    let analysis = analyze(line);
    if read_only(&analysis) != ReadOnly::Proven {
        return;
    }
    assert!(analysis.parse_error.is_none(), "proven while not parsed: {line:?}");
    assert!(!analysis.commands.is_empty(), "proven with no command: {line:?}");
    for c in &analysis.commands {
        assert!(c.redirects.iter().all(|r| !r.writes_file()), "write redirection proven: {line:?}");
        assert!(!c.program.contains('\0'), "program with NUL proven: {line:?}");
        for w in c.args.iter().chain(std::iter::once(&c.program)) {
            assert!(!w.contains('\0'), "word with NUL proven: {line:?}");
        }
    }
});
