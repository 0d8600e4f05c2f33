//! "Allow always" at the admin API: `GET /approvals/{id}/always` previews the exact allow rule
//! for parked call `id` and the unified diff of the rule file; `POST /approvals/{id}` with
//! `{"decision": "allow_always"}` (and, optionally, the preview's `"base"`, so a file changed
//! since is refused) writes it and allows the call once. The policy reload then reads the rule:
//! the next identical call is allowed without an ask. Needs `serve --permission-config FILE`
//! (the first such file is the one written); without it, 409. See docs/approvals.md.

use http::StatusCode;

use crate::approval::always::rule_for;
use crate::approval::always_file::{self, FileError};
use crate::approval::{Choice, Source};
use crate::proxy::{full, Resp};
use crate::runtime::Shared;

fn json(status: StatusCode, v: serde_json::Value) -> Resp {
    let mut resp = Resp::new(full(v.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    resp
}

fn refused(status: StatusCode, why: impl std::fmt::Display) -> Resp {
    json(status, serde_json::json!({"error": why.to_string()}))
}

/// The rule for parked call `id` and the file it goes to, or the answer saying why not.
async fn rule(id: u64, shared: &Shared) -> Result<(String, std::path::PathBuf), Resp> {
    let Some(file) = shared.approvals.rule_file() else {
        return Err(refused(
            StatusCode::CONFLICT,
            "allow always writes a rule into a rule file, and this proxy was started without one: \
             start serve with --permission-config FILE (allow once or for the session instead)",
        ));
    };
    let parked =
        shared.approvals.list_parked().await.map_err(|e| refused(StatusCode::SERVICE_UNAVAILABLE, e))?;
    let Some(view) = parked.into_iter().find(|v| v.id == id) else {
        return Err(refused(
            StatusCode::NOT_FOUND,
            format!("no parked call with id {id} (decided, timed out or withdrawn)"),
        ));
    };
    let source = match view.source.as_ref() {
        "floor" => Source::Floor,
        "configured" => Source::Configured,
        "checker" => Source::Checker,
        _ => Source::Flagged,
    };
    let kind = shared.guard.load().kinds().kind_of(&view.tool).clone();
    let rule =
        rule_for(&view.tool, &view.args, source, &kind).map_err(|e| refused(StatusCode::CONFLICT, e))?;
    Ok((rule, file.to_path_buf()))
}

fn file_refusal(e: FileError) -> Resp {
    match e {
        FileError::Read { .. } | FileError::Write { .. } => refused(StatusCode::INTERNAL_SERVER_ERROR, e),
        FileError::Parse { .. } | FileError::Changed { .. } => refused(StatusCode::CONFLICT, e),
    }
}

/// `GET /approvals/{id}/always` (`rest` is `{id}/always`).
pub(super) async fn preview(rest: &str, shared: &Shared) -> Resp {
    let Some(id) = rest.strip_suffix("/always").and_then(|i| i.parse::<u64>().ok()) else {
        return refused(StatusCode::NOT_FOUND, "GET /approvals/{id}/always");
    };
    let (rule, file) = match rule(id, shared).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    let name = file.display().to_string();
    let planned = std::fs::read_to_string(&file)
        .map_err(|source| FileError::Read { file: name.clone(), source })
        .and_then(|text| always_file::plan(&name, &text, &rule));
    match planned {
        Ok(edit) => json(
            StatusCode::OK,
            serde_json::json!({"id": id, "rule": rule, "file": name, "diff": edit.diff(&name), "base": edit.base}),
        ),
        Err(e) => file_refusal(e),
    }
}

/// `POST /approvals/{id}` whose body says `allow_always`: writes the rule, then allows the call
/// once. `None` for any other body (the caller decides it as before).
pub(super) async fn decide(id: u64, body: &[u8], shared: &Shared) -> Option<Resp> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        decision: String,
        base: Option<String>,
    }
    let b = serde_json::from_slice::<Body>(body).ok().filter(|b| b.decision == "allow_always")?;
    let (rule, file) = match rule(id, shared).await {
        Ok(r) => r,
        Err(resp) => return Some(resp),
    };
    // The write must be the one the operator was shown: the preview's `base` (the file's digest
    // then) is required, so a file changed since is refused rather than rewritten unseen.
    let Some(base) = b.base.as_deref() else {
        return Some(refused(
            StatusCode::BAD_REQUEST,
            "allow_always needs the `base` that GET /approvals/{id}/always returned (the file as previewed)",
        ));
    };
    let edit = match always_file::write(&file, &rule, Some(base)) {
        Ok(e) => e,
        Err(e) => return Some(file_refusal(e)),
    };
    let name = file.display().to_string();
    tracing::info!(id, rule = %rule, file = %name, "allow always: rule written");
    // The rule is in the file whatever became of the call meanwhile; say both.
    let call = match shared.approvals.decide_parked(id, Choice::AllowOnce).await {
        Ok(()) => serde_json::Value::from("allowed"),
        Err(e) => serde_json::Value::from(e.to_string()),
    };
    Some(json(
        StatusCode::OK,
        serde_json::json!({"id": id, "decision": "allow_always", "rule": rule, "file": name, "diff": edit.diff(&name), "call": call}),
    ))
}
