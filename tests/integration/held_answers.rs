//! Answers are held only where something configured reads them (issue 29): a post rule scoped
//! to one tool still judges that tool's result on every stream kind and era, and the answers of
//! the tools it does not cover reach the agent as the upstream sent them, never shown to the
//! checker.

use crate::guardrails::{guarded, unsafe_if};
use crate::support::fake_checker::FakeChecker;
use crate::support::{proxy, proxy_url, py_client, text_of, Peer};

#[tokio::test]
async fn a_post_rule_scoped_to_one_tool_judges_it_on_every_stream_and_leaves_the_others_alone() {
    for (era, json_response) in [("modern", false), ("modern", true), ("legacy", false), ("legacy", true)] {
        let mut args = vec!["py_server.py", "--era", era];
        if json_response {
            args.push("--json-response");
        }
        let kind = format!("{era}, json_response={json_response}");
        let peer = Peer::start("python3", &args);
        let checker = FakeChecker::start(unsafe_if("TOPSECRET")).await;
        let rules = "[{ match: mcp__py__leak, phases: [post], mode: block }]";
        let p = proxy(&guarded(&peer, &checker, "", rules)).await;
        let out = py_client(
            &proxy_url(&p, "py"),
            era,
            &["call", "echo", r#"{"message":"TOPSECRET, uncovered"}"#, "call", "leak", "{}"],
        )
        .await;
        // The uncovered tool's answer: as the upstream sent it, never judged.
        assert_eq!(text_of(&out[0]), "TOPSECRET, uncovered", "{kind}: {}", out[0]);
        assert_ne!(out[0]["result"]["isError"], true, "{kind}");
        // The covered tool's answer: judged, and blocked.
        assert_eq!(out[1]["result"]["isError"], true, "{kind}: {}", out[1]);
        let shown = out[1].to_string();
        assert!(
            !shown.contains("the upstream secret is") && !shown.contains("structuredContent"),
            "{kind}: {shown}"
        );
        assert_eq!(checker.calls(), 1, "{kind}: only the covered result was shown to the checker");
    }
}
