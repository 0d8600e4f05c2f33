//! Session keying: the user-task table is keyed by the session key (the id alone for an
//! anonymous caller's `Mcp-Session-Id`), the flow index by the caller. Can another caller borrow
//! a session's named destinations?

use serde_json::json;

use super::Rig;
use crate::flows::MAIL;

const ALICE: &str = "Bearer rt11-anon-alice-6c1e0b";
const MALLORY: &str = "Bearer rt11-anon-mallory-2f9a7d";

#[tokio::test]
#[ignore = "open finding R11-8 (low): an anonymous caller presenting another anonymous caller's \
            `Mcp-Session-Id` on a plain HTTP tool gets that session's user task, and its named \
            destinations excuse the flows of its own (separately indexed) reads"]
async fn another_anonymous_caller_borrows_a_sessions_named_destinations_by_its_id() {
    let rig = Rig::start(false).await;
    let alice = [("authorization", ALICE), ("mcp-session-id", "s1")];
    let mallory = [("authorization", MALLORY), ("mcp-session-id", "s1")];
    rig.read(&alice).await;
    rig.read(&mallory).await;
    rig.task("s1", json!({ "task": "Send the deal note to bob@client.example" })).await;
    let args = json!({ "to": ["bob@client.example"], "text": MAIL }).to_string();
    let (status, _, body) = rig.call(&alice, "mail/send", &args).await;
    assert_eq!(status, 200, "the control: the task's own caller: {body}");
    let (status, _, body) = rig.call(&mallory, "mail/send", &args).await;
    assert_eq!(status, 403, "another caller, same id: {body}");
    assert_eq!(rig.sent(), 1, "{:?}", rig.t.seen.lock().unwrap());
}

#[tokio::test]
async fn a_session_id_an_anonymous_caller_picks_is_bound_to_it_and_escapes_the_fronts_key() {
    // `x-portcullis-session` is bound to the caller (`~digest/id`): neither the same id from
    // another caller nor a spelling of the bound key reaches the task the front wrote for it.
    let rig = Rig::start(false).await;
    let alice = [("authorization", ALICE), ("x-portcullis-session", "s1")];
    rig.read(&alice).await;
    rig.task("s1", json!({ "task": "Send the deal note to bob@client.example" })).await;
    let args = json!({ "to": ["bob@client.example"], "text": MAIL }).to_string();
    for headers in [
        [("authorization", MALLORY), ("x-portcullis-session", "s1")],
        [("authorization", MALLORY), ("mcp-session-id", "/s1")],
        [("authorization", MALLORY), ("mcp-session-id", "~s1")],
        [("authorization", ALICE), ("x-portcullis-session", "s1")],
    ] {
        rig.read(&headers).await;
        let (status, _, body) = rig.call(&headers, "mail/send", &args).await;
        assert_eq!(status, 403, "{headers:?}: {body}");
    }
    assert_eq!(rig.sent(), 0, "{:?}", rig.t.seen.lock().unwrap());
}
