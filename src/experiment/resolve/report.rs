//! `[report]`: checked when the experiment loads, and read again on its
//! own when a run's report is drawn (the run's variants, not the file's,
//! are then what `gain_reference` and `[[report.gain]]` must name).

use std::path::Path;

use toml::Spanned;

use super::super::raw::{RawGain, RawReport, RawReportOnly};
use super::Cx;
use crate::experiment::{ExperimentError, GainGroup, ReportSettings};

/// The variants a `[report]` may name: the run's (the baseline first) and
/// the variants with `recordings`, by the name the file gives them.
struct Names<'a> {
    variants: Vec<&'a str>,
    recorded: &'a [&'a str],
}

impl Names<'_> {
    fn others(&self) -> String {
        self.variants
            .iter()
            .skip(1)
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Cx<'_> {
    /// `[report]` checked against `variants`, the baseline first, and the
    /// names of the variants with `recordings` (`recorded`).
    pub(super) fn report<'a>(
        &self,
        raw: &RawReport,
        variants: impl Iterator<Item = &'a str>,
        recorded: &[&str],
    ) -> Result<ReportSettings, ExperimentError> {
        let names = Names {
            variants: variants.collect(),
            recorded,
        };
        let gain_reference = raw
            .gain_reference
            .as_ref()
            .map(|r| self.gain_reference(r, &names))
            .transpose()?;
        let gains = raw
            .gain
            .iter()
            .map(|g| self.gain_group(g, &names))
            .collect::<Result<_, _>>()?;
        Ok(ReportSettings {
            gain_reference,
            gains,
        })
    }

    fn gain_reference(
        &self,
        reference: &Spanned<String>,
        names: &Names,
    ) -> Result<String, ExperimentError> {
        let name = reference.get_ref().as_str();
        match names.variants.iter().position(|n| *n == name) {
            Some(0) => Err(self.invalid(
                reference.span(),
                format!(
                    "gain_reference = \"{name}\" is the baseline: its gain over itself is zero, so no share of it can be measured"
                ),
                format!(
                    "name the variant whose gain the others are measured against (one of {}), or remove gain_reference",
                    names.others()
                ),
            )),
            Some(_) => Ok(name.to_owned()),
            None => Err(self.invalid(
                reference.span(),
                format!("gain_reference = \"{name}\" names no variant"),
                if names.variants.len() > 1 {
                    format!("name one of the variants other than the baseline: {}", names.others())
                } else {
                    "define a [[variant]] to measure the others against, besides the baseline".to_owned()
                },
            )),
        }
    }

    /// One `[[report.gain]]`: base and reference two different variants
    /// (one recording of a variant cannot stand for the others), each
    /// measured variant one of the run's or one with `recordings`, neither
    /// the base nor the reference.
    fn gain_group(
        &self,
        raw: &Spanned<RawGain>,
        names: &Names,
    ) -> Result<GainGroup, ExperimentError> {
        let g = raw.get_ref();
        let all = || {
            format!(
                "one of {}",
                names
                    .variants
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        for (key, name) in [("base", &g.base), ("reference", &g.reference)] {
            if !names.variants.contains(&name.get_ref().as_str()) {
                return Err(self.invalid(
                    name.span(),
                    format!(
                        "[[report.gain]] {key} = \"{}\" names no variant",
                        name.get_ref()
                    ),
                    format!("name {}", all()),
                ));
            }
        }
        if g.base.get_ref() == g.reference.get_ref() {
            return Err(self.invalid(
                g.reference.span(),
                format!(
                    "[[report.gain]] reference = \"{}\" is its base: its gain over itself is zero, so no share of it can be measured",
                    g.reference.get_ref()
                ),
                "name the variant whose gain over the base the others are measured against (the same compiler's pgo)",
            ));
        }
        if g.variants.is_empty() {
            return Err(self.invalid(
                raw.span(),
                "[[report.gain]] measures no variant: `variants` is empty",
                "list the variants to measure, e.g. variants = [\"gcc-autofdo\"]",
            ));
        }
        for v in &g.variants {
            let name = v.get_ref().as_str();
            let known = names.variants.contains(&name) || names.recorded.contains(&name);
            if !known || name == g.base.get_ref() || name == g.reference.get_ref() {
                return Err(self.invalid(
                    v.span(),
                    if known {
                        format!("[[report.gain]] measures `{name}`, its own base or reference")
                    } else {
                        format!("[[report.gain]] variants: \"{name}\" names no variant")
                    },
                    format!(
                        "name variants other than the base and the reference: {}",
                        all()
                    ),
                ));
            }
        }
        Ok(GainGroup {
            base: g.base.get_ref().clone(),
            reference: g.reference.get_ref().clone(),
            variants: g.variants.iter().map(|v| v.get_ref().clone()).collect(),
        })
    }
}

/// The `[report]` table of the experiment file at `path`, checked against
/// a run's `variants` (the baseline first) and the names of its variants
/// with `recordings` (`recorded`), the rest of the file unread: how
/// `afterburner report` redraws a run with what the file asks now.
pub fn report_settings<'a>(
    path: &Path,
    variants: impl Iterator<Item = &'a str>,
    recorded: &[&str],
) -> Result<ReportSettings, ExperimentError> {
    let text = fs_err::read_to_string(path).map_err(|source| ExperimentError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    let raw: RawReportOnly = toml::from_str(&text).map_err(|e| ExperimentError::Parse {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    Cx { path, text: &text }.report(&raw.report, variants, recorded)
}
