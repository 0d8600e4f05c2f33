use super::*;
use std::sync::Arc;

const B: Bounds = Bounds { per_session: 10_000, sources: 8 };

fn norm(s: &str) -> Vec<u8> {
    let mut v = Vec::new();
    shingle::normalise_into(s, &mut v);
    v
}

fn tagged(tool: &str) -> (Arc<str>, Arc<str>) {
    (tool.into(), "up".into())
}

fn text(tool: &str, s: &str) -> Print {
    let (t, u) = tagged(tool);
    Print::text(&t, &u, &norm(s), s.len())
}

fn token(tool: &str, kind: SourceKind, s: &str) -> Print {
    let (t, u) = tagged(tool);
    let n = norm(s);
    Print::tokens(&t, &u, kind, [(&n[..], s.len())])
}

#[test]
fn a_recorded_text_is_found_in_a_rewrapped_copy_and_not_in_other_text() {
    let mut ix = SessionIndex::default();
    let mail = "Dear Sam, the acquisition of Northwind closes on Friday at 4pm; keep it quiet until the press release.";
    ix.add(&text("mcp__mail__read_inbox", mail), B, usize::MAX);
    let copy = "FYI:\n  the ACQUISITION of northwind closes on friday\n at 4pm -- keep it quiet";
    assert_eq!(ix.find(&norm(copy)).map(|s| &*s.tool), Some("mcp__mail__read_inbox"));
    assert!(ix.find(&norm("the weather on friday at 4pm looks fine for a walk in the park")).is_none());
}

#[test]
fn a_token_is_found_inside_longer_text_and_a_short_one_is_not_kept() {
    let mut ix = SessionIndex::default();
    let kind = SourceKind::Secret("github_token".into());
    ix.add(&token("mcp__vault__get", kind.clone(), "ghp_abcdEFGH1234ijkl5678"), B, 10);
    assert_eq!(ix.find(&norm("token=GHP-ABCDefgh1234IJKL5678&x=1")).map(|s| s.kind.clone()), Some(kind));
    assert!(ix.find(&norm("ghp_abcdEFGH1234ijkl")).is_none(), "a prefix is not the token");
    assert!(token("t", SourceKind::Redacted, "short").is_empty());
}

#[test]
fn the_per_session_bound_overflows_and_keeps_what_it_holds() {
    let mut ix = SessionIndex::default();
    let small = Bounds { per_session: 3, sources: 8 };
    let long: String = (0..400).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect();
    ix.add(&text("mcp__files__read", &long), small, usize::MAX);
    assert!(ix.overflowed);
    assert_eq!(ix.len(), 3);
}

/// Red team R6-5: filler read first fills the session; a secret read after it pushes filler
/// out instead of being dropped, and the session knows it forgot the filler.
#[test]
fn a_secret_read_after_filler_evicts_filler_not_itself() {
    let mut ix = SessionIndex::default();
    let small = Bounds { per_session: 20, sources: 8 };
    let mut x: u64 = 7;
    let filler: String = (0..4000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            char::from(b'a' + ((x >> 33) % 26) as u8)
        })
        .collect();
    ix.add(&text("mcp__files__read", &filler), small, usize::MAX);
    assert_eq!(ix.len(), 20);
    let secret = "ghp_R8x2Lq9VmT4kWz7NcY3hPd6sFj1aBe5uGo0i";
    ix.add(&token("mcp__vault__get", SourceKind::Secret("github".into()), secret), small, 0);
    assert_eq!(ix.len(), 20, "the bound holds");
    assert!(ix.overflowed, "the session knows it forgot filler");
    assert_eq!(ix.find(&norm(secret)).map(|s| &*s.tool), Some("mcp__vault__get"));
}

#[test]
fn fine_grams_find_pieces_too_short_for_a_shingle() {
    let mut ix = SessionIndex::default();
    let mail = "The acquisition of Contoso closes on Friday at a price of 41.20 per share";
    ix.add(&text("mcp__mail__read", mail), B, usize::MAX);
    let mut hits = ByHash::default();
    ix.fine_hits(&norm("acquisition of Contoso cl"), &mut hits);
    assert!(!hits.is_empty(), "a 22-byte piece holds a kept fine gram");
    assert!(ix.find(&norm("acquisition of Contoso cl")).is_none(), "but no shingle");
    let mut none = ByHash::default();
    ix.fine_hits(&norm("the weather is lovely today, see you at lunch"), &mut none);
    assert!(none.is_empty());
}

proptest::proptest! {
    #[test]
    fn a_copy_is_found_however_it_is_rewrapped_punctuated_or_cased(
        t in "[a-z0-9]{47,300}",
        seps in proptest::collection::vec(0usize..5, 300),
        upper in proptest::bool::ANY,
    ) {
        let mut ix = SessionIndex::default();
        ix.add(&text("mcp__mail__read", &t), B, usize::MAX);
        let mut copy = String::from("see: ");
        for (c, sep) in t.chars().zip(seps.iter().cycle()) {
            copy.push(if upper { c.to_ascii_uppercase() } else { c });
            copy.push_str(["", " ", "\n  ", "-", ", "][*sep]);
        }
        proptest::prop_assert!(ix.find(&norm(&copy)).is_some(), "{copy}");
    }

    #[test]
    fn no_text_makes_recording_or_finding_panic(a in proptest::prelude::any::<String>(), b in proptest::prelude::any::<String>()) {
        let mut ix = SessionIndex::default();
        ix.add(&text("x", &a), B, usize::MAX);
        ix.add(&token("x", SourceKind::Redacted, &b), B, 10);
        let _ = ix.find(&norm(&b));
        let mut budget = 1 << 16;
        for d in super::super::decode::decodings(b.as_bytes(), &mut budget) {
            let mut n = Vec::new();
            shingle::normalise_bytes_into(&d, &mut n);
            let _ = ix.find(&n);
        }
    }
}

#[test]
fn sources_past_their_bound_overflow() {
    let mut ix = SessionIndex::default();
    let one = Bounds { per_session: 100, sources: 1 };
    ix.add(&token("a", SourceKind::Private, "aaaaaaaaaaaaaaa"), one, 10);
    assert!(!ix.overflowed);
    ix.add(&token("b", SourceKind::Private, "bbbbbbbbbbbbbbb"), one, 10);
    assert!(ix.overflowed);
}
