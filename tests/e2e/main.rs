//! End-to-end tests: drive the real `ladder` binary the way a user does, against the embedded
//! simulator on 127.0.0.1 (random ports). One test binary for everything (fast linking).

mod support;

mod action;
mod adhoc;
mod agents;
mod apis;
mod capacity_verdict;
mod check;
mod check_azure;
mod ci_contract;
#[cfg(unix)]
mod closed_stdout;
mod codex_config;
mod cost;
mod crash;
mod diff_gate;
mod embeddings;
mod evidence;
mod failfast;
mod faults;
#[cfg(unix)]
mod fdlimit;
mod home;
mod hosted_gateway;
mod hostile;
mod interrupt;
mod itl_gate;
mod k8s;
mod keepalive;
mod knee;
mod logs;
mod makefile;
mod merge;
mod no_stream;
mod one_truth;
mod openai_reasoning;
mod otlp;
mod pairs;
mod partial_diff;
mod plan;
mod pooled;
mod prompt_cache;
mod readme_ci;
mod reasoning;
mod recipes;
mod reference;
mod refine;
mod replay;
mod report;
mod responses;
mod run_sim;
mod schema;
mod search;
mod secrets;
mod shards;
mod snapshots;
mod telemetry;
mod throughput_gate;
mod timeouts;
mod tls;
mod trend;
mod truth;
mod ttfc;
mod validate;
mod workloads;
