//! Placeholder: filled in by the parse benchmark work.
fn main() {}
