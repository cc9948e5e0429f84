//! Every integration test of retrygate, in one test binary: the crate and
//! the binary are linked once, not once per file. Each module is one
//! area (the file names say which). The memory tests
//! (`tests/*_memory.rs`) stay separate binaries: they read the process's
//! peak resident size, which other tests running beside them would raise.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a panic with its location"
)]

mod common;
mod fake_github;

mod agents_examples;
mod base_config;
mod binary_boundary;
mod changeset;
mod cli_conventions;
mod cli_errors;
mod conformance;
mod exemptions;
mod exit_boundary;
mod fuzz_rust;
mod gate;
mod gate_api;
mod gate_demo;
mod gate_schema;
mod github;
mod github_action;
mod github_cli;
mod github_fail_closed;
mod github_required_check;
mod github_review;
mod hostile_github;
mod hostile_input;
mod hostile_rust;
mod install_action;
mod knobs;
mod layering;
mod layers;
mod ledger;
mod ledger_artifact;
mod ledger_hook_bypasses;
mod ledger_hooks;
mod ops_evidence;
mod ops_moves;
mod ops_new_retry;
mod ops_transport;
mod own_workflows;
mod printer;
mod readme;
mod replay;
mod replay_clients;
mod replay_coverage;
mod replay_diff;
mod replay_schema;
mod rules;
mod rules_helpers;
mod rules_scale;
mod rules_sdk_shapes;
mod rules_values;
mod rust_analyzer;
mod rust_checks;
mod rust_crate_index;
mod rust_fixes;
mod rust_held_values;
mod rust_program;
mod rust_scale;
mod rust_timeouts;
mod scan_e2e;
mod test_code;
mod workflows_e2e;
