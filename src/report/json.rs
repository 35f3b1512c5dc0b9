//! `results.json`: the [`Results`] as pretty JSON.

use anyhow::Result;

use super::{Exporter, Results};

/// Renders results as JSON.
pub struct Json;

impl Exporter for Json {
    fn render(&self, results: &Results) -> Result<Vec<u8>> {
        let mut out = serde_json::to_vec_pretty(results)?;
        out.push(b'\n');
        Ok(out)
    }
}
