//! `[report]`: checked when the experiment loads, and read again on its
//! own when a run's report is drawn (the run's variants, not the file's,
//! are then what `gain_reference` must name).

use std::path::Path;

use super::super::raw::{RawReport, RawReportOnly};
use super::Cx;
use crate::experiment::{ExperimentError, ReportSettings};

impl Cx<'_> {
    /// `[report]` checked against `variants`, the baseline first.
    pub(super) fn report<'a>(
        &self,
        raw: &RawReport,
        variants: impl Iterator<Item = &'a str>,
    ) -> Result<ReportSettings, ExperimentError> {
        let Some(reference) = &raw.gain_reference else {
            return Ok(ReportSettings::default());
        };
        let names: Vec<&str> = variants.collect();
        let name = reference.get_ref().as_str();
        let others = || {
            names
                .iter()
                .skip(1)
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match names.iter().position(|n| *n == name) {
            Some(0) => Err(self.invalid(
                reference.span(),
                format!(
                    "gain_reference = \"{name}\" is the baseline: its gain over itself is zero, so no share of it can be measured"
                ),
                format!(
                    "name the variant whose gain the others are measured against (one of {}), or remove gain_reference",
                    others()
                ),
            )),
            Some(_) => Ok(ReportSettings {
                gain_reference: Some(name.to_owned()),
            }),
            None => Err(self.invalid(
                reference.span(),
                format!("gain_reference = \"{name}\" names no variant"),
                if names.len() > 1 {
                    format!("name one of the variants other than the baseline: {}", others())
                } else {
                    "define a [[variant]] to measure the others against, besides the baseline".to_owned()
                },
            )),
        }
    }
}

/// The `[report]` table of the experiment file at `path`, checked against
/// a run's `variants` (the baseline first), the rest of the file unread:
/// how `afterburner report` redraws a run with what the file asks now.
pub fn report_settings<'a>(
    path: &Path,
    variants: impl Iterator<Item = &'a str>,
) -> Result<ReportSettings, ExperimentError> {
    let text = fs_err::read_to_string(path).map_err(|source| ExperimentError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    let raw: RawReportOnly = toml::from_str(&text).map_err(|e| ExperimentError::Parse {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    Cx { path, text: &text }.report(&raw.report, variants)
}
