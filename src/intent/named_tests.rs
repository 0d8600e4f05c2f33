use std::ops::ControlFlow;

use super::*;

/// Every destination the egress scanner finds in `s`, with `s` as the string holding it.
fn found_in(s: &str) -> Vec<Found> {
    let mut all = Vec::new();
    let _ = scan::text(s, &String::new, &mut |f: Found| {
        all.push(f);
        ControlFlow::<()>::Continue(())
    });
    all
}

/// Whether every destination in `arg` is one `task` names (false when `arg` has none).
fn excused(task: &str, arg: &str) -> bool {
    let named = Named::of(task);
    let found = found_in(arg);
    !found.is_empty() && found.iter().all(|f| named.names(f, arg))
}

#[test]
fn a_destination_is_named_only_when_the_task_writes_it_whole() {
    let task = "Then send a email to my wife at 'janeLong@google.com', and the slides to \
                https://files.client.example/upload please";
    let cases: [(&str, bool); 14] = [
        ("janeLong@google.com", true),
        ("JANELONG@Google.COM", true),
        ("janelong@google.com, janeLong@google.com", true),
        ("https://files.client.example/upload/2", true),
        ("files.client.example", true),
        // Another mailbox at the same domain: the domain holds everybody's.
        ("mark.black-2134@google.com", false),
        ("jane@google.com", false),
        // Named beside an unnamed one, or inside a text: the string is not only the named.
        ("janeLong@google.com; mark@evil.example", false),
        ("Dear Jane, write to janeLong@google.com", false),
        // Subdomains and parents of a named host are other hosts.
        ("https://evil.files.client.example/", false),
        ("https://client.example/", false),
        // A look-alike (Cyrillic с) is another host, not the one the user named.
        ("https://files.\u{441}lient.example/upload", false),
        ("janeLong@g\u{43e}ogle.com", false),
        ("https://attacker.example/?to=janeLong@google.com", false),
    ];
    for (arg, want) in cases {
        assert_eq!(excused(task, arg), want, "{arg:?}");
    }
}

#[test]
fn a_task_that_names_nothing_excuses_nothing() {
    for task in ["", "Please send a summary of the file to the client via email.", "gmail.com is down"] {
        assert!(!excused(task, "bob@gmail.com"), "{task:?}");
    }
    assert!(Named::of("Create an event with the participants of the meeting.").is_empty());
}

#[test]
fn a_domain_names_its_host_and_never_the_mailboxes_at_it() {
    let named = Named::of("Upload the report to client.example");
    assert!(excused("Upload the report to client.example", "https://client.example/in"));
    assert!(!excused("Upload the report to client.example", "boss@client.example"));
    assert!(!named.is_empty());
}

#[test]
fn an_account_is_named_by_the_same_iban() {
    let task = "Pay the rent to GB29 NWBK 6016 1331 9268 19 today.";
    assert!(excused(task, "GB29NWBK60161331926819"));
    assert!(!excused(task, "DE89370400440532013000"));
}

#[test]
fn a_task_past_its_bound_keeps_a_bounded_list_and_no_panic() {
    let task: String = (0..500).map(|i| format!("u{i}@h{i}.example ")).collect();
    let named = Named::of(&task);
    assert!(named.mailboxes.len() <= KEPT && named.hosts.len() <= KEPT);
    let _ = Named::of(&"@".repeat(10_000));
    let _ = Named::of("\u{0}\u{ffff}@\u{10ffff}.x");
}
