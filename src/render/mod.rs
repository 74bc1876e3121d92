//! Renderers: turn results into bytes for people and machines (terminal tables, markdown, JSON,
//! JUnit, HTML). Pure: data in, `String`/bytes out; the caller decides where they go.

pub mod diff;
pub mod html;
pub mod run_doc;
pub mod svg;
pub mod table;
pub mod timeline;
pub mod ttft_parts;
pub mod xml;
