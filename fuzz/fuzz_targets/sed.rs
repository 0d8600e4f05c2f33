//! sed scripts: whatever the read-only proof accepts, GNU sed itself accepts under `--sandbox`
//! (which refuses `e`, `w`, `W`, `r`, `R`, `s///e` and `s///w` as it compiles the script). A
//! proven script that the sandbox refuses would run a command or touch a file: a bypass.
#![no_main]

use std::process::Command;

use libfuzzer_sys::fuzz_target;
use portcullis::shell::{analyze, read_only, ReadOnly};

fuzz_target!(|data: &[u8]| {
    let Ok(script) = std::str::from_utf8(data) else { return };
    if script.contains('\0') || script.len() > 512 {
        return;
    }
    let quoted = format!("'{}'", script.replace('\'', r"'\''"));
    let line = format!("sed -n -e {quoted} /dev/null");
    if read_only(&analyze(&line)) != ReadOnly::Proven {
        return;
    }
    let out = Command::new("sed")
        .args(["--sandbox", "-n", "-e", script, "/dev/null"])
        .env_clear()
        .env("LC_ALL", "C")
        .output()
        .expect("GNU sed runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("sandbox"), "proven read-only, but sed's sandbox refuses it: {script:?}: {err}");
});
