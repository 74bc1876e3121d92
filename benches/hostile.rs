//! Placeholder: filled in by the hostile benchmark work.
fn main() {}
