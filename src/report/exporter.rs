//! What an export format is: a pure renderer of results into bytes, with
//! its name and a line saying what it writes (listed in `exporters!`).

use anyhow::Result;

use crate::analysis::Results;

/// A pure renderer of results into bytes; the caller decides where they go.
pub trait Exporter {
    /// The format's name in `--export NAME=FILE`.
    fn name(&self) -> &'static str;
    /// One line: what it writes.
    fn describe(&self) -> &'static str;
    fn render(&self, results: &Results) -> Result<Vec<u8>>;
}
