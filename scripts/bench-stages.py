#!/usr/bin/env python3
"""bench-stages: where one allowed pass-through call's instructions go, stage by stage.

usage: bench-stages.py N FILE...   (callgrind dumps of N requests: `scripts/bench-features
       --only bare --keep` leaves them in the kept work directory as bare/callgrind.out*)

Prints a Markdown table of inclusive instructions per request for each stage below, read from
the dumps' call graph: a stage is the sum of the inclusive costs of the functions that start it
(their own instructions and everything they call, recursion counted once). Functions are told
apart by name and by the file their record names, as `callgrind_annotate` does; generic
instantiations share a name (hyper's dispatcher serves both connections). Stages nest where the
code does (the Layer 1 decision holds the rules; every stage holds its own allocations and
copies): the allocator and `memcpy` rows are totals over all of them, not a further share.
"""

import collections
import re
import sys

# (stage, [(file regex, None, or "own", function regex)]): each function's inclusive cost is added
# ("own": its own instructions only, for a wrapper whose callees are other stages).
STAGES = [
    ("accept + hyper server: request head read and parsed",
     [(None, r"^<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::parse$"),
      (None, r"^hyper::server::conn::http1::Builder::serve_connection$"),
      (None, r"^portcullis::proxy::listener::accept")]),
    ("socket reads, both connections (hyper's buffers, tokio's readiness)",
     [(None, r"^hyper::proto::h1::io::Buffered<T,B>::poll_read_from_io$")]),
    ("request body read (bounded, collected)",
     [(None, r"^<http_body_util::combinators::collect::Collect<T> as core::future::future::Future>::poll$"),
      (None, r"^http_body_util::collected::Collected<B>::to_bytes$")]),
    ("tower layers on the way in (rescue, telemetry, Host check, auth, in-flight, route, body limit)",
     [(None, r"^<portcullis::proxy::error::Rescue<S> as tower_service::Service<R>>::call$"),
      (None, r"^<portcullis::proxy::route::RouteService<S> as tower_service::Service<.*>>::call$"),
      (None, r"^<portcullis::proxy::limit::BodyLimit<S> as tower_service::Service<.*>>::call$")]),
    ("gate entry: session key, exchange futures made and boxed (pre and post gate `call`)",
     [(None, r"^<portcullis::proxy::pre::PreGate<S> as tower_service::Service<.*>>::call$"),
      (None, r"^<portcullis::proxy::post::PostGate<S> as tower_service::Service<.*>>::call$")]),
    ("JSON-RPC parse and routing-header check",
     [(None, r"^portcullis_mcp::jsonrpc::parse$"), (None, r"^portcullis_mcp::era::check_request$"),
      (None, r"^portcullis(_mcp)?::(mcp::)?method::refusal$")]),
    ("the typed call: params read, qualified name, caller digest, decision id",
     [(None, r"^portcullis::gate::pre::one$")]),
    ("Layer 1 decision (the door: rules, breaker check, rate limits)",
     [(None, r"^portcullis::gate::pre::judge::judge::\{\{closure\}\}$")]),
    ("  of which the rules (`Guard::layer1`)", [(None, r"^portcullis::gate::guard::Guard::layer1$")]),
    ("  of which `Engine::decide`", [(None, r"^portcullis_rules::engine::Engine::decide$")]),
    ("decision recorded: breaker count, audit line (when an audit is on)",
     [(None, r"^portcullis::gate::pre::recorded$")]),
    ("metrics: outcome counter, latency histograms, rule hits, the telemetry layer's timer",
     [(None, r"^portcullis::telemetry::metrics::Metrics::(tool_call|upstream_latency|request)"),
      (None, r"^portcullis::telemetry::rule_metrics::RuleMetrics::hit$"),
      ("own", r"^<portcullis::proxy::telemetry::Timed<F> as core::future::future::Future>::poll$")]),
    ("upstream request built and sent (headers, pool checkout, hand-off to the connection)",
     # The upstream's future is the inner of two nested `Instrumented`s: callgrind names it `'2`.
     [(None, r"^<tracing::instrument::Instrumented<T> as core::future::future::Future>::poll'2$")]),
    ("  of which hyper's client (`send_request`)",
     [(None, r"^hyper_util::client::legacy::client::Client<C,B>::send_request::\{\{closure\}\}$")]),
    ("hyper client: request encoded, response head parsed",
     [(None, r"^<hyper::proto::h1::role::Client as hyper::proto::h1::Http1Transaction>::(encode|parse)$")]),
    ("response relay: post gate, response head encoded, writes flushed",
     [(None, r"^portcullis::proxy::post::mcp::\{\{closure\}\}$"),
      (None, r"^<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::encode$"),
      (None, r"^hyper::proto::h1::io::Buffered<T,B>::poll_flush$")]),
]
SELF_STAGES = [
    ("tokio: scheduling, wake-ups, timers, I/O readiness (own instructions)", r"^<?tokio::"),
    ("allocator: malloc, free, realloc (glibc, own instructions)",
     r"^(malloc|free|realloc|calloc|_int_malloc|_int_free|_int_realloc|malloc_consolidate|unlink_chunk.*|tcache.*|__libc_.*alloc|mi_.*|_rjem_.*)$"),
    ("memcpy / memmove (own instructions)", r"^__mem(cpy|move)"),
]
NAME = re.compile(r"^(c?fn|c?fl|c?fi|c?fe|fl|fi|fe)=\((\d+)\)(?: (.*))?$")


def load(paths):
    own = collections.Counter()
    calls = collections.defaultdict(collections.Counter)
    for path in paths:
        files, fns = {}, {}
        fl = fn = None
        cfl = cfn = None
        pending = False
        for line in open(path, errors="replace"):
            line = line.rstrip("\n")
            m = NAME.match(line)
            if m:
                kind, ident, name = m.groups()
                table = fns if kind.endswith("fn") else files
                if name is not None:
                    table[ident] = name
                value = table.get(ident, "")
                if kind == "fl":
                    fl = value
                elif kind == "fn":
                    fn = (fl, value)
                elif kind in ("cfl", "cfi"):
                    cfl = value
                elif kind == "cfn":
                    cfn = (cfl or fl, value)
                continue
            if line.startswith("calls="):
                pending = True
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                parts = line.split()
                if len(parts) < 2 or fn is None:
                    continue
                cost = int(parts[1])
                if pending:
                    if cfn != fn:
                        calls[fn][cfn] += cost
                    pending, cfl = False, None
                else:
                    own[fn] += cost
    return own, calls


def main():
    n = int(sys.argv[1])
    own, calls = load(sys.argv[2:])
    inclusive = {f: own[f] + sum(calls[f].values()) for f in set(own) | set(calls)}
    total = sum(own.values())
    print("| stage | instructions/req | share |")
    print("|---|---:|---:|")
    for stage, patterns in STAGES:
        cost = 0
        for f, p in patterns:
            table = own if f == "own" else inclusive
            cost += sum(
                v for (fl, name), v in table.items()
                if re.search(p, name) and (f in (None, "own") or re.search(f, fl or ""))
            )
        print(f"| {stage} | {cost / n:,.0f} | {100 * cost / total:.1f} % |")
    for stage, pattern in SELF_STAGES:
        cost = sum(v for (_, name), v in own.items() if re.search(pattern, name))
        print(f"| {stage} | {cost / n:,.0f} | {100 * cost / total:.1f} % |")
    print(f"| **all threads, per request** | **{total / n:,.0f}** | 100 % |")


if __name__ == "__main__":
    main()
