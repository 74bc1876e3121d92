//! Placeholder: filled in by the fidelity benchmark work.
fn main() {}
