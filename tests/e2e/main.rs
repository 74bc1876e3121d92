//! End-to-end tests: drive the real `ladder` binary the way a user does, against the embedded
//! simulator on 127.0.0.1 (random ports). One test binary for everything (fast linking).

mod support;

mod diff_gate;
mod run_sim;
mod secrets;
mod validate;
