//! `afterburner calibrate`: this machine's error rate on the user's own
//! workloads. The baseline's binaries run as two variants, A and its twin
//! A′ (a variant that differs only in its name shares the build, so
//! nothing is rebuilt), interleaved by the bench's own plan and runner
//! until the budget ends; the records are judged in trials by the code that
//! judges a report (`analysis::calibration`), written to `calibration.json`
//! beside them, kept in `history.db`, and printed as a table.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};

use super::{build, train, Context};
use crate::analysis::calibration::{calibrate as judge, Plan};
use crate::metric::Builtin;
use crate::progress;
use crate::runs::Calibration;

/// Most counted rounds a calibration runs, whatever its budget.
pub const MAX_ROUNDS: u32 = 1000;

/// Random subsets of the file's repetitions judged besides the disjoint
/// trials, unless asked otherwise.
pub const DEFAULT_SUBSAMPLES: u32 = 100;

/// What `afterburner calibrate` was asked for.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// The time the A/A rounds may take (warmup included; building not).
    pub budget: Duration,
    /// Random subsets of the file's repetitions to judge.
    pub subsamples: u32,
}

/// The name A′ runs under in the A/A bench's records.
pub fn twin_name(baseline: &str) -> String {
    format!("{baseline}.aa")
}

/// Calibrate: build the baseline (its twin shares the build), run the A/A
/// rounds within the budget, judge them, keep and print the findings.
pub fn calibrate(cx: &Context, options: &CalibrateOptions) -> Result<Calibration> {
    let lock = cx.workdir.lock("a calibration is running")?;
    let trial_rounds = cx.experiment.bench.repetitions;
    let aa = a_a(cx)?;
    build(&aa)?;
    train(&aa)?;
    progress::info(format_args!(
        "calibrating: `{}` against itself (`{}`), rounds until {:.0} s are spent, judged in trials of the file's {trial_rounds} repetitions",
        aa.experiment.variants[0].name,
        aa.experiment.variants[1].name,
        options.budget.as_secs_f64()
    ));
    let run_dir = crate::bench::calibration_bench(&aa, options.budget)?;
    let recorded = crate::runs::read(&run_dir)?;
    let plan = Plan {
        budget_s: options.budget.as_secs_f64(),
        trial_rounds,
        subsamples: options.subsamples,
    };
    let calibration = judge(&recorded.meta, &recorded.runs, &plan);
    let path = crate::runs::write_calibration(&run_dir, &calibration)?;
    crate::store::record_calibration(&cx.workdir.root, &calibration, &run_dir)?;
    drop(lock);
    crate::stdout::print(format_args!(
        "{}",
        crate::report::calibration::render(&calibration)
    ))?;
    crate::stdout::line(format_args!("calibration: {}", path.display()))?;
    Ok(calibration)
}

/// The A/A experiment: the baseline and its twin, every bench workload,
/// the noisy metrics (an exact count's spread is measured by every bench
/// that counts it), rounds up to [`MAX_ROUNDS`] for the budget to end.
fn a_a(cx: &Context) -> Result<Context> {
    let mut aa = cx.clone();
    let e = &mut aa.experiment;
    let Some(baseline) = e.variants.first().cloned() else {
        bail!(
            "{} has no variant to calibrate\nhint: add a [[variant]] (the first is the baseline)",
            e.file.display()
        );
    };
    if !e.workloads.iter().any(|w| w.role.benches()) {
        bail!(
            "{} has no bench workload to calibrate\nhint: give a [[workload]] role = \"bench\" or \"both\"",
            e.file.display()
        );
    }
    let mut twin = baseline.clone();
    twin.name = twin_name(&baseline.name);
    e.variants = vec![baseline, twin];
    e.bench.metrics.retain(|m| *m != Builtin::INSTRUCTIONS);
    e.bench.primary_instructions = false;
    e.bench.sequential = None;
    e.bench.race = None;
    e.bench.repetitions = MAX_ROUNDS;
    Ok(aa)
}

/// The line citing the newest calibration of the run's target on its
/// machine class, where the work directory holding `run_dir` has one.
pub fn citation(workdir: &Path, run_dir: &Path) -> Option<String> {
    let meta = crate::runs::read_meta(run_dir).ok()?;
    let class = meta.environment.machine_class();
    let dir = crate::store::latest_calibration(workdir, &meta.target, &class).ok()??;
    let calibration = crate::runs::read_calibration(&dir).ok()?;
    Some(crate::report::calibration::cite(&calibration))
}
