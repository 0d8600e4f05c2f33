//! Table-driven tests for the secret shapes: each positive next to the near miss that must not
//! fire. Credentials are generated at run time so the repository holds nothing a secret scanner
//! would (rightly) flag.

use super::super::run_one;
use super::scan;

fn spans(text: &str) -> Vec<(&'static str, std::ops::Range<usize>)> {
    run_one(text, scan).into_iter().map(|f| (f.detector, f.span)).collect()
}

/// Deterministic mixed-case alphanumerics (xorshift), so samples look random but are stable.
pub(crate) fn random_token(seed: u64, len: usize, alphabet: &[u8]) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(alphabet[(state % alphabet.len() as u64) as usize])
        })
        .collect()
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn pem_body(seed: u64) -> String {
    (0..4).map(|i| random_token(seed + i, 64, BASE64)).collect::<Vec<_>>().join("\n")
}

fn jwt(seed: u64) -> String {
    // {"alg":"HS256","typ":"JWT"} . {"sub":"1234567890"} . signature
    format!(
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{}",
        random_token(seed, 43, b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    )
}

/// (text, detector, the secret inside the text). Shared with the robustness tests.
pub(crate) fn positives() -> Vec<(String, &'static str, String)> {
    let mut rows = Vec::new();
    let mut add = |text: String, detector: &'static str, secret: String| rows.push((text, detector, secret));

    let id = format!("AKIA{}", random_token(1, 16, UPPER_DIGITS));
    add(format!("export AWS_ACCESS_KEY_ID={id}"), "aws_access_key_id", id.clone());
    let aws_secret = random_token(2, 40, BASE64);
    add(format!("{id},{aws_secret}\n"), "aws_secret_access_key", aws_secret.clone());
    add(format!("aws_secret_access_key = {aws_secret}"), "aws_secret_access_key", aws_secret);
    let ghp = format!("ghp_{}", random_token(3, 36, ALNUM));
    add(format!("git clone https://{ghp}@github.com/o/r"), "github_token", ghp);
    let pat = format!("github_pat_{}_{}", random_token(4, 22, ALNUM), random_token(5, 59, ALNUM));
    add(format!("GH_TOKEN={pat}"), "github_token", pat);
    let slack = format!("xoxb-123456789012-1234567890123-{}", random_token(6, 24, ALNUM));
    add(format!("slack token: {slack}"), "slack_token", slack);
    let hook = format!("hooks.slack.com/services/T01ABCDEF/B02GHIJKL/{}", random_token(7, 24, ALNUM));
    add(format!("POST https://{hook}"), "slack_webhook", hook);
    let stripe = format!("sk_live_{}", random_token(8, 24, ALNUM));
    add(format!("Stripe.api_key = '{stripe}'"), "stripe_secret_key", stripe);
    let ant = format!("sk-ant-api03-{}", random_token(9, 95, ALNUM));
    add(format!("ANTHROPIC_API_KEY={ant}"), "anthropic_api_key", ant);
    let openai = format!("sk-proj-{}", random_token(10, 64, ALNUM));
    add(format!("{{\"headers\": {{\"x\": \"{openai}\"}}}}"), "openai_api_key", openai);
    let legacy = format!("sk-{}", random_token(11, 48, ALNUM));
    add(format!("key is {legacy}."), "openai_api_key", legacy);
    let google = format!("AIza{}", random_token(12, 35, ALNUM));
    add(format!("maps?key={google}&q=x"), "google_api_key", google);
    let pem = format!("-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----", pem_body(13));
    add(format!("id_rsa:\n{pem}\n"), "private_key", pem.clone());
    let escaped = pem.replace('\n', "\\n");
    add(format!("{{\"content\": \"{escaped}\"}}"), "private_key", escaped);
    let token = jwt(14);
    add(format!("session={token}; Path=/"), "jwt", token);
    let bearer = random_token(15, 32, ALNUM);
    add(format!("curl -H \"Authorization: Bearer {bearer}\" https://api"), "authorization_header", bearer);
    add(
        "DATABASE_URL=postgres://admin:S3cr3tPassw0rd@db.internal:5432/app".into(),
        "url_credentials",
        "S3cr3tPassw0rd".into(),
    );
    let password = "k9#Lm2$vQx7p".to_string();
    add(format!("DB_PASSWORD={password}"), "credential_assignment", password);
    let api_key = random_token(16, 32, ALNUM);
    add(format!("{{\"api_key\": \"{api_key}\"}}"), "credential_assignment", api_key);
    let client = random_token(17, 40, ALNUM);
    add(format!("  clientSecret: {client}\n"), "credential_assignment", client);
    let escaped_json = random_token(18, 24, ALNUM);
    add(format!("{{\\\"password\\\": \\\"{escaped_json}\\\"}}"), "credential_assignment", escaped_json);
    rows
}

#[test]
fn every_credential_shape_is_found_with_its_exact_span() {
    for (text, detector, secret) in positives() {
        let found = spans(&text);
        assert!(
            found.iter().any(|(d, span)| *d == detector && text[span.clone()] == secret),
            "{detector} not found with the right span in {text:?}: {found:?}"
        );
    }
}

#[test]
fn near_misses_are_not_secrets() {
    let long_b64 = random_token(20, 40, BASE64);
    let table: Vec<String> = vec![
        "aws docs: AKIAIOSFODNN7EXAMPLE".into(),
        format!("ghp_{}", random_token(21, 35, ALNUM)),
        "token: ghp_xxx".into(),
        "SLACK_TOKEN=xoxb-your-token-here-please".into(),
        format!("sk_test_{}", random_token(22, 24, ALNUM)),
        "pip install sk-learn; see sk-this-is-not-a-real-key-just-some-words".into(),
        format!("AIza{}", random_token(23, 36, ALNUM)),
        "if line.startswith('-----BEGIN RSA PRIVATE KEY-----'):".into(),
        format!("-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----", pem_body(24)),
        format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----", pem_body(25)),
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.short".into(),
        format!("eyJub3QiOiJhIGp3dCJ9.eyJzdWIiOiIxIn0.{}", random_token(26, 43, ALNUM)),
        "password = request.form".into(),
        "password: string;".into(),
        "password=${DB_PASSWORD}".into(),
        "password: settings.DB_PASSWORD".into(),
        "token=abc123".into(),
        "api_key: YOUR_API_KEY_HERE".into(),
        "max_tokens: 4096".into(),
        format!("nextPageToken: {}", random_token(27, 32, ALNUM)),
        "secret: true".into(),
        "token_type: bearer".into(),
        "compass=N45E123x99abc".into(),
        "Authorization: Bearer $TOKEN".into(),
        "version=1.2.3-beta4".into(),
        "postgres://postgres:postgres@localhost:5432/app".into(),
        "mysql://user:password@localhost/db".into(),
        "redis://:${REDIS_PASSWORD}@cache:6379".into(),
        "see https://example.com:8080/path@v2".into(),
        "password: correct-horse-battery-staple".into(),
        "api_key: test_key_1234567890abcdef".into(),
        format!("checksum {long_b64}"),
    ];
    for text in table {
        assert_eq!(spans(&text), vec![], "{text:?}");
    }
}

#[test]
fn a_vendor_token_in_an_assignment_is_reported_once_by_its_specific_detector() {
    let ghp = format!("ghp_{}", random_token(30, 36, ALNUM));
    let found = spans(&format!("token = {ghp}"));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "github_token");
}
