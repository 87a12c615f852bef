//! Tests of the process transport, with small shell and Python programs as
//! fake CLIs.

mod discover;
mod process;
mod reader;
mod support;
mod writer;
