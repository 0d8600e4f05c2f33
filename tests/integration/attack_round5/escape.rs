//! Out-of-workspace escapes (issue 26.6): the jail resolves symlinks in the proxy's process, so
//! a link to a per-process magic link (`/proc/self/cwd`) names one file to the proxy and
//! another to the tool. The peer is a naive stdio file tool (tests/peers/naive_files_stdio.py)
//! whose working directory is not the proxy's.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::support::{peers_dir, py_client_stdio, text_of};

/// A jail (`notes/inside.txt`, and `here` → `/proc/self/cwd`) and the tool's own directory
/// elsewhere (`notes/private.txt`); the proxy runs from the jail at strict, the tool from its
/// own directory. Reads each path of `paths(jail, tool_home)` through it.
async fn read_through_wrap(paths: impl Fn(&PathBuf, &PathBuf) -> Vec<String>) -> Vec<Value> {
    let jail = tempfile::tempdir().unwrap();
    let tool_home = tempfile::tempdir().unwrap();
    let (j, t) = (jail.path().canonicalize().unwrap(), tool_home.path().canonicalize().unwrap());
    std::fs::create_dir_all(j.join("notes")).unwrap();
    std::fs::write(j.join("notes/inside.txt"), "INSIDE-OK").unwrap();
    std::fs::create_dir_all(t.join("notes")).unwrap();
    std::fs::write(t.join("notes/private.txt"), "OUTSIDE-THE-JAIL").unwrap();
    // What a checkout (or an earlier allowed `ln -s`) may hold.
    std::os::unix::fs::symlink("/proc/self/cwd", j.join("here")).unwrap();

    let cfg = j.join("..").join(format!("{}.yaml", j.file_name().unwrap().to_string_lossy()));
    std::fs::write(
        &cfg,
        format!(
            "posture: strict\njail: {{ root: \"{}\" }}\n\
             tools: [{{ match: mcp__files__read_text, kind: file, path: /path, access: read }}]\n",
            j.display()
        ),
    )
    .unwrap();
    // The proxy runs from the workspace, as `cd project && portcullis wrap …` does; the tool
    // keeps its own working directory.
    let server = format!(
        "cd {} && exec {} wrap --config {} --name files -- python3 {} --chdir {}",
        j.display(),
        env!("CARGO_BIN_EXE_portcullis"),
        cfg.display(),
        peers_dir().join("naive_files_stdio.py").display(),
        t.display()
    );
    let argv = json!(["sh", "-c", server]).to_string();
    let steps: Vec<String> = paths(&j, &t).into_iter().map(|p| json!({"path": p}).to_string()).collect();
    let mut args: Vec<&str> = Vec::new();
    for s in &steps {
        args.extend(["call", "read_text", s]);
    }
    let out = py_client_stdio(&argv, &args).await;
    let _ = std::fs::remove_file(&cfg);
    assert_eq!(out.len(), steps.len(), "{out:?}");
    out
}

#[tokio::test]
async fn a_link_to_a_per_process_path_is_judged_as_the_tool_will_follow_it() {
    let out = read_through_wrap(|j, t| {
        vec![
            t.join("notes/private.txt").display().to_string(),
            j.join("notes/inside.txt").display().to_string(),
            j.join("here/notes/private.txt").display().to_string(),
        ]
    })
    .await;
    assert!(
        text_of(&out[0]).contains("outside"),
        "the control: a plain escape is asked (headless: refused): {}",
        out[0]
    );
    assert_eq!(text_of(&out[1]), "INSIDE-OK", "{}", out[1]);
    assert_ne!(text_of(&out[2]), "OUTSIDE-THE-JAIL", "the tool read outside the jail: {}", out[2]);
    assert!(text_of(&out[2]).contains("/proc"), "refused as a walk into /proc: {}", out[2]);
}

#[tokio::test]
async fn a_relative_path_is_judged_where_the_tool_will_open_it() {
    let out = read_through_wrap(|_, _| vec!["notes/private.txt".into(), "notes/inside.txt".into()]).await;
    assert_ne!(text_of(&out[0]), "OUTSIDE-THE-JAIL", "the tool read outside the jail: {}", out[0]);
    // The tool's directory is not known to the proxy: a relative path is refused, never guessed,
    // even where it would name a file inside the jail.
    for r in &out {
        assert!(text_of(r).contains("relative"), "refused as relative: {r}");
    }
}
