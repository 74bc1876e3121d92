//! Pure, incremental Server-Sent Events parser (WHATWG event-stream rules). Bytes in, events out;
//! no I/O, no clock.
