//! `[report]`: what the report shows.

use serde::Serialize;

/// `[report]`: how reports present a run. `afterburner report` reads it
/// again from the run's experiment file ([`report_settings`]), so a run
/// benched before the table was written gets what it asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReportSettings {
    /// `gain_reference`: the variant (never the baseline) whose gain over
    /// the baseline every other variant's gain is measured against, in the
    /// report's "Share of R's gain".
    pub gain_reference: Option<String>,
    /// `[[report.gain]]`: shares measured against a base and a reference
    /// of their own, for the variants each names.
    pub gains: Vec<GainGroup>,
}

/// One `[[report.gain]]`: `variants`' shares of `reference`'s gain over
/// `base` (each compiler against its own `-O2` and PGO).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GainGroup {
    pub base: String,
    pub reference: String,
    /// As the file names them: a variant with `recordings` by its own
    /// name, which stands for each of its recordings.
    pub variants: Vec<String>,
}

impl GainGroup {
    /// Whether the run's variant `name` (one of `of`'s recordings, where
    /// it is one) is one this group measures.
    pub fn measures(&self, name: &str, of: Option<&str>) -> bool {
        self.variants
            .iter()
            .any(|v| v == name || Some(v.as_str()) == of)
    }
}
