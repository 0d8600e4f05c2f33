//! `portcullis connect --write` (issue 28.1): where an `--inline-token` lands, and with what mode,
//! when the client's file already exists or is a link a checkout planted.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

const TOKEN_ENV: &str = "PORTCULLIS_TEST_ROUND5_CONNECT";
const TOKEN: &str = "round5-connect-token-0b1c2d3e";

/// Runs `portcullis connect claude-code --write --agent dev --inline-token` in `project`.
fn connect_inline(project: &Path, config: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["connect", "claude-code", "--write", "--agent", "dev", "--inline-token", "--config"])
        .arg(config)
        .env(TOKEN_ENV, TOKEN)
        .current_dir(project)
        .output()
        .unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn an_inline_token_is_never_written_where_another_user_can_read_it() {
    let root = tempfile::tempdir().unwrap();
    let config = root.path().join("portcullis.yaml");
    std::fs::write(
        &config,
        format!(
            "listen: 127.0.0.1:8686\nupstreams:\n  fs: {{ url: \"http://127.0.0.1:9/mcp\" }}\n\
             agents:\n  dev: {{ token_env: {TOKEN_ENV} }}\n"
        ),
    )
    .unwrap();

    // A project whose .mcp.json exists with the usual 0644.
    let plain = root.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join(".mcp.json"), "{\"mcpServers\":{}}").unwrap();
    std::fs::set_permissions(plain.join(".mcp.json"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = connect_inline(&plain, &config);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(plain.join(".mcp.json")).unwrap();
    assert!(written.contains(TOKEN), "the premise: the token is in the file: {written}");

    // A checkout whose .mcp.json links to a world-writable file elsewhere (say, in /tmp).
    let shared = root.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::write(shared.join("x.json"), "{}").unwrap();
    std::fs::set_permissions(shared.join("x.json"), std::fs::Permissions::from_mode(0o666)).unwrap();
    let planted = root.path().join("planted");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::symlink(shared.join("x.json"), planted.join(".mcp.json")).unwrap();
    let out2 = connect_inline(&planted, &config);
    let leaked = std::fs::read_to_string(shared.join("x.json")).unwrap_or_default().contains(TOKEN);

    assert_eq!(
        mode(&plain.join(".mcp.json")) & 0o077,
        0,
        "the token is readable by others (mode {:o})",
        mode(&plain.join(".mcp.json"))
    );
    assert!(
        !leaked || mode(&shared.join("x.json")) & 0o077 == 0,
        "the token went through the link into a file mode {:o}: {}",
        mode(&shared.join("x.json")),
        String::from_utf8_lossy(&out2.stdout)
    );
}
