//! Where the instructions went: from the callgrind files a bench kept for
//! each counted run ([`crate::runs::profile_files`]), the instructions per
//! function and per object of each variant, against the baseline's,
//! largest change first ([`diff`]), drawn as text, Markdown or HTML
//! ([`render`]).

pub mod binary;
pub mod bolt_stats;
pub mod coverage;
pub mod diff;
pub mod flame;
pub mod parse;
pub mod render;
pub mod simulation;
mod table;

use std::collections::BTreeMap;

use anyhow::{bail, Context as _, Result};

pub use diff::{Difference, FunctionChange, ObjectChange};
use parse::Profile;

use crate::measure::{InstructionCounter, RunKind};
use crate::runs::Recorded;

/// Every variant against the baseline, per workload, as far as the run
/// kept callgrind files.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The run directory's id.
    pub run_id: String,
    /// The baseline variant's name.
    pub baseline: String,
    /// One per benchmark workload and non-baseline variant that has kept
    /// files on both sides, in the run's order.
    pub differences: Vec<Difference>,
    /// What was left out and why, one sentence each.
    pub notes: Vec<String>,
    /// Each variant's binary facts, as the binaries are on disk now.
    pub binaries: Vec<binary::Facts>,
}

/// The explanation of a recorded run; `None` when it kept no callgrind
/// file at all (counted with perf, not counted, or recorded before
/// counted runs kept their files).
pub fn explain(recorded: &Recorded) -> Result<Option<Explanation>> {
    let meta = &recorded.meta;
    let Some(baseline) = meta.variants.first() else {
        return Ok(None);
    };
    let mut explanation = Explanation {
        run_id: meta.run_id.clone(),
        baseline: baseline.name.clone(),
        differences: Vec::new(),
        notes: Vec::new(),
        binaries: Vec::new(),
    };
    let mut kept_any = false;
    for workload in &meta.workloads {
        let read = read_workload(recorded, workload, &mut explanation.notes)?;
        kept_any |= !read.is_empty();
        // Per request only where every run knows its requests.
        let per_request = read
            .values()
            .flatten()
            .all(|(_, requests)| requests.is_some());
        let averaged: BTreeMap<&str, diff::Averaged> = read
            .into_iter()
            .map(|(variant, profiles)| {
                let divided: Vec<(Profile, f64)> = profiles
                    .into_iter()
                    .map(|(p, requests)| (p, requests.filter(|_| per_request).unwrap_or(1.0)))
                    .collect();
                (variant, diff::Averaged::of(&divided))
            })
            .collect();
        let Some(base) = averaged.get(baseline.name.as_str()) else {
            continue;
        };
        for variant in meta.variants.iter().skip(1) {
            if let Some(other) = averaged.get(variant.name.as_str()) {
                explanation.differences.push(Difference::between(
                    workload,
                    &variant.name,
                    (base, other),
                    per_request,
                ));
            }
        }
    }
    if kept_any {
        explanation.binaries = binary::read(meta);
    }
    Ok(kept_any.then_some(explanation))
}

/// One counted run's profile, and the requests it answered where a
/// service was counted over a load's window.
type Counted = (Profile, Option<f64>);

/// Each variant's profiles of `workload` (see [`read_profiles`]), by
/// variant name; what is missing or does not add up goes to `notes`.
fn read_workload<'a>(
    recorded: &'a Recorded,
    workload: &str,
    notes: &mut Vec<String>,
) -> Result<BTreeMap<&'a str, Vec<Counted>>> {
    let mut read = BTreeMap::new();
    for variant in &recorded.meta.variants {
        let profiles = read_profiles(recorded, workload, &variant.name)?;
        if profiles.is_empty() {
            notes.push(format!(
                "workload `{workload}` on variant `{}`: no counted run kept its callgrind files",
                variant.name
            ));
            continue;
        }
        if let Some((p, _)) = profiles.iter().find(|(p, _)| p.own_sum() != p.total) {
            notes.push(format!(
                "workload `{workload}` on variant `{}`: the functions add up to {} instructions, callgrind's total says {} (a file afterburner misread? please report it)",
                variant.name,
                p.own_sum(),
                p.total
            ));
        }
        read.insert(variant.name.as_str(), profiles);
    }
    Ok(read)
}

/// Like [`explain`], for `afterburner explain`: a run without kept files is
/// an error that says why and what to do.
pub fn explain_or_say_why(recorded: &Recorded) -> Result<Explanation> {
    if let Some(explanation) = explain(recorded)? {
        return Ok(explanation);
    }
    let meta = &recorded.meta;
    let counted = recorded
        .runs
        .iter()
        .any(|r| r.kind == RunKind::Instructions && r.success);
    let why = match (meta.instruction_counter, counted) {
        (_, false) => "counted no instructions (`instructions` is not among [bench] metrics, or every counted run failed)",
        (InstructionCounter::Perf, true) => "counted instructions with perf, which sees totals, not functions",
        (InstructionCounter::Callgrind, true) => "kept no callgrind files (it was recorded before counted runs kept them, or they were over the size cap)",
    };
    bail!(
        "run {} {why}: there is nothing to explain\nhint: run `afterburner bench` again with `instructions` in [bench] metrics on a machine where callgrind counts (no hardware counters, or perf unavailable); each counted run then keeps its callgrind files in {}",
        meta.run_id,
        recorded.dir.join(crate::runs::PROFILES_DIR).display()
    )
}

/// The profile of each successful counted run of `workload` on `variant`
/// that kept its files, its processes summed; with the requests it
/// answered, for a service counted over a load's window.
fn read_profiles(recorded: &Recorded, workload: &str, variant: &str) -> Result<Vec<Counted>> {
    let mut profiles = Vec::new();
    for run in recorded.runs.iter().filter(|r| {
        r.kind == RunKind::Instructions
            && r.success
            && !r.warmup
            && r.workload == workload
            && r.variant == variant
    }) {
        let files = crate::runs::profile_files(&recorded.dir, workload, variant, run.round)?;
        if files.is_empty() {
            continue;
        }
        let mut profile = Profile::default();
        for file in files {
            let text = fs_err::read_to_string(&file)?;
            let what = file.display().to_string();
            profile.add(parse::parse(&text, &what).with_context(|| {
                format!("reading callgrind's file of round {} of workload `{workload}` on variant `{variant}`", run.round + 1)
            })?);
        }
        // The figure is the files' total over the requests answered.
        let requests = crate::metric::MetricId::InstructionsPerRequest
            .value(run)
            .filter(|per| *per > 0.0)
            .map(|per| profile.total as f64 / per);
        profiles.push((profile, requests));
    }
    Ok(profiles)
}

/// An error naming the choices when `selection` names a variant that is
/// not compared (the baseline, or one the run lacks) or a workload the run
/// did not bench.
pub fn check_selection(meta: &crate::runs::BenchMeta, selection: &render::Selection) -> Result<()> {
    let variants: Vec<&str> = meta
        .variants
        .iter()
        .skip(1)
        .map(|v| v.name.as_str())
        .collect();
    if let Some(v) = selection.variant.filter(|v| !variants.contains(v)) {
        bail!(
            "run {} has no variant `{v}` to set against its baseline\nhint: --variant takes one of: {}",
            meta.run_id,
            variants.join(", ")
        );
    }
    if let Some(w) = selection
        .workload
        .filter(|w| !meta.workloads.iter().any(|m| m == w))
    {
        bail!(
            "run {} benched no workload `{w}`\nhint: --workload takes one of: {}",
            meta.run_id,
            meta.workloads.join(", ")
        );
    }
    Ok(())
}
