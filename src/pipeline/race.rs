//! `afterburner race`'s pipeline: build and train as for `run`, but a
//! candidate that cannot run here (a technique this machine lacks), or
//! whose build or training fails, is left out with the reason and the
//! race goes on with the others — they still answer its question. Then
//! the race's rounds and the report.

use anyhow::{bail, Result};

use super::{bench_and_report, build_with, train_with, Context};
use crate::experiment::{LeftOut, Variant};
use crate::progress;

/// What a phase does when one variant fails: stop (every command but a
/// race), or leave the variant out and go on.
pub(super) enum OnFailure {
    Stop,
    LeaveOut(Vec<LeftOut>),
}

impl OnFailure {
    /// Whether `variant` was left out already.
    pub(super) fn left(&self, variant: &Variant) -> bool {
        match self {
            OnFailure::Stop => false,
            OnFailure::LeaveOut(left) => left.iter().any(|l| l.candidate == variant.name),
        }
    }

    /// What became of `variant`'s step (`what` says which failed): its
    /// error stops the phase, or leaves it out.
    pub(super) fn variant(
        &mut self,
        variant: &Variant,
        what: &str,
        result: Result<()>,
    ) -> Result<()> {
        let Err(error) = result else {
            return Ok(());
        };
        if self.left(variant) {
            return Ok(());
        }
        // Ctrl-C stops the race; it is no candidate's failure.
        let OnFailure::LeaveOut(left) = self else {
            return Err(error);
        };
        if crate::interrupt::requested() {
            return Err(error);
        }
        let text = format!("{error:#}");
        let reason = text.lines().next().unwrap_or_default().to_owned();
        let hint = text
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("full log: ")
                    .map(|p| format!("its log: {p}"))
            })
            .or_else(|| {
                text.lines()
                    .find_map(|l| l.trim().strip_prefix("hint: ").map(str::to_owned))
            })
            .unwrap_or_else(|| "see the error above".to_owned());
        progress::warn(format_args!(
            "left out of the race: {} ({what}: {reason}; {hint})",
            variant.name
        ));
        left.push(LeftOut {
            candidate: variant.name.clone(),
            reason: format!("{what}: {reason}"),
            hint,
            line: None,
        });
        Ok(())
    }
}

/// Build and train every candidate, leaving out those that fail, then
/// race the others and report.
pub fn race(mut cx: Context) -> Result<crate::analysis::Results> {
    // One lock from the first build to the last run.
    let lock = cx.workdir.lock("the race is running")?;
    let mut failures = OnFailure::LeaveOut(Vec::new());
    build_with(&cx, &mut failures)?;
    train_with(&cx, &mut failures)?;
    let OnFailure::LeaveOut(left) = failures else {
        unreachable!("a race leaves failures out")
    };
    let e = &mut cx.experiment;
    e.variants
        .retain(|v| !left.iter().any(|l| l.candidate == v.name));
    if e.variants.len() < 2 {
        bail!(
            "{}: a race needs two candidates, and {} of them were left out ({})\nhint: see the warnings above",
            e.file.display(),
            left.len(),
            left.iter()
                .map(|l| format!("{}: {}", l.candidate, l.reason))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    e.race.left_out.extend(left);
    let results = bench_and_report(&cx, false);
    drop(lock);
    results
}
