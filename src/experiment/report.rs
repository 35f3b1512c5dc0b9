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
}
