//! The one integration-test binary: portcullis against real MCP servers and clients.
//! Peers come from the registries (see tests/peers/README.md); every socket is 127.0.0.1:0.

// clippy.toml's disallowed methods are for the product: these tests set the variables a config
// names (admin tokens, checker keys) and a peer thread paces itself with a blocking sleep.
#![allow(clippy::disallowed_methods)]

mod admin_hosts;
mod always;
mod approvals;
mod ask_reviewer;
mod attack25;
mod attack_round11;
mod attack_round5;
mod attack_round6a;
mod attack_round6b;
mod attack_round7;
mod attack_round8;
mod attack_round9;
mod audit;
mod authority;
mod authority_cedar;
mod checker_offswitch;
mod checker_openai;
mod cli;
mod connect;
mod console;
mod contained_flags;
mod dashboards;
mod delegation;
mod egress;
mod elicitation;
mod escape;
mod eval;
mod eval_traces;
mod explain;
mod flows;
mod flows_task;
mod guardrails;
mod held_answers;
mod hook;
mod hook_codex;
mod host_origin;
mod hostile;
mod hostile_readers;
mod hostile_routes;
mod http_tools;
mod identity;
mod identity_jwt;
mod in_process;
mod lifecycle;
mod mcp_http;
mod method_spelling;
mod mrtr;
mod notify;
mod otel;
mod presets;
mod prometheus_e2e;
mod rate_limits;
mod real_checker;
mod replicas;
mod replicas_cache;
mod replicas_flows;
mod routes;
mod secrets;
mod shadow;
mod shell_differential;
mod stdio;
mod subagent;
mod support;
mod tiers;
mod tool_pins;
mod upstream_auth;
mod user_own_task;
mod user_task;
mod visibility;
mod wrap_env;
