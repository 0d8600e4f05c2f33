//! curl and wget: URLs are destinations, and the options that write downloads, logs and
//! cookies, upload files (`-T`, `-d @file`, `--post-file`: exfiltration) are given their roles;
//! curl's connection overrides (`--resolve`, `--connect-to`, proxies, `--doh-url`) connect to
//! the address they name, and a config file (`-K`, wget's `-i`) connects where nobody can read. Both tables are partial: an option not
//! listed is not read. curl's long names are read exactly (curl also takes abbreviations);
//! wget's by GNU rules (its switches take `=on`/`=off`), which is safe with a partial table because every listed option exists in
//! wget, so the program's candidates for an abbreviation include this table's.

use super::spec::{f, gnu, o, v, Grammar, Longs, Order, Parsed};
use super::{Role, Unread};

use Role::{Connects, Inert, NamesFiles, Reads, Writes};

pub(crate) const CURL: Grammar = Grammar {
    options: &[
        v("o", "output", Writes),
        f("O", "remote-name"),
        f("", "remote-name-all"),
        f("J", "remote-header-name"),
        v("", "output-dir", Writes),
        f("", "create-dirs"),
        v("T", "upload-file", Reads),
        v("d", "data", Inert),
        v("", "data-ascii", Inert),
        v("", "data-binary", Inert),
        v("", "data-raw", Inert),
        v("", "data-urlencode", Inert),
        v("", "json", Inert),
        v("F", "form", Inert),
        v("", "form-string", Inert),
        v("K", "config", NamesFiles),
        v("b", "cookie", Inert),
        v("c", "cookie-jar", Writes),
        v("D", "dump-header", Writes),
        v("", "trace", Writes),
        v("", "trace-ascii", Writes),
        v("", "stderr", Writes),
        v("", "libcurl", Writes),
        v("w", "write-out", Inert),
        v("E", "cert", Reads),
        v("", "key", Reads),
        v("", "cacert", Reads),
        v("", "capath", Reads),
        v("", "netrc-file", Reads),
        v("u", "user", Inert),
        v("H", "header", Inert),
        v("x", "proxy", Connects),
        v("", "url", Connects),
        v("X", "request", Inert),
        v("A", "user-agent", Inert),
        v("e", "referer", Inert),
        v("m", "max-time", Inert),
        v("", "connect-timeout", Inert),
        v("", "retry", Inert),
        v("r", "range", Inert),
        v("C", "continue-at", Inert),
        // Where the connection goes instead of the URL's host ([`super::routes`]).
        v("", "resolve", Connects),
        v("", "connect-to", Connects),
        v("", "preproxy", Connects),
        v("", "proxy1.0", Connects),
        v("", "socks4", Connects),
        v("", "socks4a", Connects),
        v("", "socks5", Connects),
        v("", "socks5-hostname", Connects),
        v("", "doh-url", Connects),
        v("", "unix-socket", Connects),
        v("", "limit-rate", Inert),
        v("", "max-filesize", Inert),
        f("L", "location"),
        f("s", "silent"),
        f("S", "show-error"),
        f("f", "fail"),
        f("", "fail-with-body"),
        f("i", "include"),
        f("I", "head"),
        f("v", "verbose"),
        f("k", "insecure"),
        f("g", "globoff"),
        f("G", "get"),
        f("#", "progress-bar"),
        f("N", "no-buffer"),
        f("", "compressed"),
        f("", "http1.1"),
        f("", "http2"),
        f("4", "ipv4"),
        f("6", "ipv6"),
        f("Z", "parallel"),
        f("h", "help"),
        f("V", "version"),
    ],
    longs: Longs::ExactNoEquals,
    order: Order::Permute,
    digits: false,
    operands: curl_operands,
};

/// URLs connect; `-O` writes a file named after the URL in the working directory; data and
/// header values starting with `@` (form values with `@` or `<`) are files read and sent.
fn curl_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Connects);
    // A config file holds options this table never sees (`url =`, `connect-to =`): where the
    // command connects cannot be read.
    if p.has("config") {
        p.implicit(super::DESTINATIONS_IN_A_FILE, Connects);
    }
    for item in p.items.iter_mut() {
        let route = match item.option {
            Some("resolve") => super::routes::resolve(item.text),
            Some("connect-to") => super::routes::connect_to(item.text),
            _ => continue,
        };
        match route {
            Some(super::routes::Route::To(to)) => item.text = to,
            Some(super::routes::Route::Nowhere) => item.role = Inert,
            None => return Err(Unread::Unplaced(item.text.to_string())),
        }
    }
    // `file://` URLs are local files: read, or written by an upload (`-T secret file:///x`).
    let upload = p.has("upload-file");
    let globs = !p.has("globoff");
    for item in p.items.iter_mut().filter(|i| i.option.is_none() || i.option == Some("url")) {
        let Some(path) = local_file(item.text) else { continue };
        if globs && item.text.contains(['{', '[']) {
            return Err(Unread::Unplaced(item.text.to_string()));
        }
        item.text = path.map_err(|()| Unread::Unplaced(item.text.to_string()))?;
        item.role = if upload { Writes } else { Reads };
    }
    if p.has("remote-name") || p.has("remote-name-all") {
        p.implicit(".", Writes);
    }
    for item in p.items.iter_mut() {
        let file = match item.option {
            Some("data" | "data-ascii" | "data-binary" | "json" | "header" | "write-out") => {
                item.text.strip_prefix('@')
            }
            Some("data-urlencode") => match (item.text.find('='), item.text.find('@')) {
                (Some(eq), Some(at)) if eq < at => None,
                (_, Some(at)) => Some(&item.text[at + 1..]),
                _ => None,
            },
            Some("form") => item.text.split_once(['@', '<']).map(|(_, f)| f.split(';').next().unwrap_or(f)),
            // A cookie string has `=`; anything else is a cookie file.
            Some("cookie") if !item.text.contains('=') => Some(item.text),
            _ => None,
        };
        if let Some(file) = file {
            item.text = file;
            item.role = Reads;
        }
    }
    Ok(())
}

/// The path of a `file:` URL (scheme in any case): `Some(Ok(path))` for `file:///p` and
/// `file://localhost/p`, `Some(Err)` for any other host, `None` for other schemes.
fn local_file(url: &str) -> Option<Result<&str, ()>> {
    let scheme = url.get(..7)?;
    if !scheme.eq_ignore_ascii_case("file://") {
        return None;
    }
    let rest = &url[7..];
    let rest = match rest.get(..9) {
        Some(host) if host.eq_ignore_ascii_case("localhost") => &rest[9..],
        _ => rest,
    };
    Some(if rest.starts_with('/') { Ok(rest) } else { Err(()) })
}

pub(crate) const WGET: Grammar = gnu(
    &[
        v("O", "output-document", Writes),
        v("o", "output-file", Writes),
        v("a", "append-output", Writes),
        v("P", "directory-prefix", Writes),
        v("i", "input-file", NamesFiles),
        v("", "post-file", Reads),
        v("", "body-file", Reads),
        v("", "post-data", Inert),
        v("", "body-data", Inert),
        v("", "method", Inert),
        v("", "header", Inert),
        v("", "load-cookies", Reads),
        v("", "save-cookies", Writes),
        v("", "ca-certificate", Reads),
        v("", "certificate", Reads),
        v("", "private-key", Reads),
        v("U", "user-agent", Inert),
        v("", "user", Inert),
        v("", "password", Inert),
        v("T", "timeout", Inert),
        v("t", "tries", Inert),
        v("w", "wait", Inert),
        v("l", "level", Inert),
        v("A", "accept", Inert),
        v("R", "reject", Inert),
        v("", "limit-rate", Inert),
        v("", "cut-dirs", Inert),
        v("n", "no", Inert),
        o("r", "recursive", Inert),
        o("N", "timestamping", Inert),
        o("c", "continue", Inert),
        o("q", "quiet", Inert),
        o("v", "verbose", Inert),
        o("", "no-verbose", Inert),
        o("S", "server-response", Inert),
        o("", "spider", Inert),
        o("", "no-check-certificate", Inert),
        o("x", "force-directories", Inert),
        o("", "no-directories", Inert),
        o("", "no-host-directories", Inert),
        o("", "no-parent", Inert),
        o("", "no-clobber", Inert),
        o("k", "convert-links", Inert),
        o("p", "page-requisites", Inert),
        o("m", "mirror", Inert),
        o("", "content-disposition", Inert),
        f("h", "help"),
        f("V", "version"),
    ],
    wget_operands,
);

/// URLs connect, and what they fetch is written in the working directory (or `-P`'s) unless
/// `-O` names the file.
fn wget_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Connects);
    // `-i` reads the URLs to fetch from a file.
    if p.has("input-file") {
        p.implicit(super::DESTINATIONS_IN_A_FILE, Connects);
    }
    if !p.has("output-document") && !p.has("directory-prefix") && !p.has("spider") {
        p.implicit(".", Writes);
    }
    Ok(())
}
