//! `[race]`: its settings, and the candidates of its axes. The axes are a
//! matrix's (`compiler`, `optimize`, `params.KEY`, `env.KEY`, with `name`
//! and `exclude`), and each combination is validated alone, like a variant
//! written by hand; but one that cannot be built — a technique its
//! compiler lacks, two techniques that each make the compiler's profile —
//! is left out with the reason instead of refusing the file. A word or a
//! compiler nobody knows is still an error: a typo is not a left-out.

use std::time::Duration;

use toml::Spanned;

use super::super::raw::{RawMatrix, RawRace, RawVariant};
use super::super::{LeftOut, Race, Variant};
use super::{Cx, MAX_SEQUENTIAL_ROUNDS};
use crate::experiment::ExperimentError;
use crate::toolchain::Optimization;

impl Cx<'_> {
    /// `[race]`: its budget, looks and margin, each checked. `max`
    /// defaults to the file's `repetitions` (or at least `min`), so a race
    /// never runs more rounds than the full design it stands in for unless
    /// the file asks.
    pub(super) fn race(&self, raw: &RawRace, repetitions: u32) -> Result<Race, ExperimentError> {
        let default = Race::defaults(repetitions);
        let budget = self.duration(raw.budget.as_ref(), default.budget)?;
        if budget.is_zero() || budget > Duration::from_hours(7 * 24) {
            let span = raw.budget.as_ref().map(Spanned::span).unwrap_or_default();
            return Err(self.invalid(
                span,
                "budget must be more than 0 and at most 7 days",
                "write budget = \"30m\"",
            ));
        }
        let min = raw.min.as_ref().map_or(default.min, |m| *m.get_ref());
        if min < 2 {
            let span = raw.min.as_ref().map(Spanned::span).unwrap_or_default();
            return Err(self.invalid(
                span,
                format!("min = {min} is too few rounds for a first look"),
                "set min = 2 or more: a look compares rounds, and one round has no spread",
            ));
        }
        let max = raw
            .max
            .as_ref()
            .map_or(default.max.max(min), |m| *m.get_ref());
        if max < min || max > MAX_SEQUENTIAL_ROUNDS {
            let span = raw.max.as_ref().map(Spanned::span).unwrap_or_default();
            return Err(self.invalid(
                span,
                format!("max = {max} must lie between min ({min}) and {MAX_SEQUENTIAL_ROUNDS}"),
                format!("set max = {} or more", min.max(repetitions)),
            ));
        }
        let equivalence = raw
            .equivalence
            .as_ref()
            .map_or(default.equivalence, |e| *e.get_ref());
        if !(equivalence > 0.0 && equivalence <= 0.2) {
            let span = raw
                .equivalence
                .as_ref()
                .map(Spanned::span)
                .unwrap_or_default();
            return Err(self.invalid(
                span,
                format!("equivalence = {equivalence} is not a margin from 0 to 0.2"),
                "write equivalence = 0.02 for ±2%",
            ));
        }
        Ok(Race {
            budget,
            min,
            max,
            equivalence,
            left_out: Vec::new(),
            screen: self.race_screen(raw)?,
            keep_baseline: raw.keep_baseline.unwrap_or(false),
        })
    }

    /// `name`, `exclude`, `cflags` and `ldflags` shape the axes' candidates:
    /// without an axis they would be silently ignored.
    pub(super) fn race_axes_given(&self, raw: &RawRace) -> Result<(), ExperimentError> {
        if raw.axes().is_some() {
            return Ok(());
        }
        let given = [
            ("name", raw.name.as_ref().map(Spanned::span)),
            ("exclude", raw.exclude.first().map(Spanned::span)),
            ("cflags", raw.cflags.as_ref().map(Spanned::span)),
            ("ldflags", raw.ldflags.as_ref().map(Spanned::span)),
        ];
        match given.into_iter().find(|(_, s)| s.is_some()) {
            Some((key, Some(span))) => Err(self.invalid(
                span,
                format!("[race] {key} applies to the candidates of its axes, and it has none"),
                "give an axis (compiler = [...], optimize = [...], params.KEY = [...] or env.KEY = [...]) or remove it",
            )),
            _ => Ok(()),
        }
    }

    /// The candidates of `[race]`'s axes that `validate` accepts alone,
    /// and those it refuses, left out with its reason.
    pub(super) fn race_candidates(
        &self,
        axes: &RawMatrix,
        validate: impl Fn(&[RawVariant]) -> Result<Vec<Variant>, ExperimentError>,
    ) -> Result<(Vec<RawVariant>, Vec<LeftOut>), ExperimentError> {
        for compiler in &axes.compiler {
            self.compiler(compiler)?;
        }
        for stack in &axes.optimize {
            for word in stack.get_ref().words() {
                if let Err(hint) = Optimization::from_name(&word) {
                    return Err(self.invalid(
                        stack.span(),
                        format!(
                            "unknown optimization `{word}` in stack `{}`",
                            stack.get_ref().label()
                        ),
                        format!(
                            "{hint}; a stack is words joined by `+` (\"pgo+lto\"), or \"none\""
                        ),
                    ));
                }
            }
        }
        let mut kept = Vec::new();
        let mut left_out = Vec::new();
        for candidate in self.expand(axes)? {
            match validate(std::slice::from_ref(&candidate)) {
                Ok(_) => kept.push(candidate),
                Err(ExperimentError::Invalid {
                    line,
                    message,
                    hint,
                    ..
                }) => left_out.push(LeftOut {
                    candidate: candidate.name.get_ref().clone(),
                    reason: message,
                    hint,
                    line: Some(line),
                }),
                Err(other) => return Err(other),
            }
        }
        if kept.is_empty() {
            let span = axes
                .compiler
                .first()
                .map(Spanned::span)
                .or_else(|| axes.optimize.first().map(Spanned::span))
                .unwrap_or_default();
            let reasons: Vec<String> = left_out
                .iter()
                .map(|l| format!("{}: {}", l.candidate, l.reason))
                .collect();
            return Err(self.invalid(
                span,
                format!(
                    "every combination of [race]'s axes is left out ({})",
                    reasons.join("; ")
                ),
                "give the axes at least one combination that builds here",
            ));
        }
        Ok((kept, left_out))
    }
}
