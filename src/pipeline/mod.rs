//! The phases in order — build, train, bench, report — each resuming from
//! what the earlier one left on disk.

use std::path::Path;

use anyhow::{bail, Context as _, Result};

use crate::build::{self, build_stage, BuildOutcome};
pub use crate::context::{Context, Options};
use crate::experiment::{Experiment, Variant, Workload};
use crate::profiles;
use crate::progress;
use crate::source;
use crate::toolchain::Stage;
use race::OnFailure;

mod calibrate;
pub mod demo;
mod plan;
mod race;
pub use calibrate::{calibrate, CalibrateOptions, DEFAULT_SUBSAMPLES};
pub use plan::{plan, PlanOptions};
pub use race::race;

/// Write a run's reports ([`crate::report::report`]) and record it in the
/// work directory's history: the work directory holds `runs/<id>/`, so a
/// run elsewhere has no history. Where this machine class was calibrated
/// (`afterburner calibrate`), the report cites it.
pub fn report(run_dir: &Path) -> Result<crate::analysis::Results> {
    let results = crate::report::report(run_dir)?;
    if let Some(workdir) = run_dir
        .parent()
        .and_then(Path::parent)
        .filter(|w| w.join("runs").is_dir())
    {
        crate::store::record(workdir, &results, run_dir)?;
        if let Some(line) = calibrate::citation(workdir, run_dir) {
            crate::stdout::line(format_args!("{line}"))?;
        }
    }
    Ok(results)
}

/// Install (as root, in one apt-get call) or name what the experiment
/// needs — the list `doctor` checks ([`crate::doctor::requirements`]) —
/// then check each optimization can run here, and that the services'
/// users exist (a package just installed may have created one).
fn ensure_tools(e: &Experiment, failures: &mut OnFailure) -> Result<()> {
    let env = crate::env::capture();
    crate::doctor::install(&env, crate::doctor::Scope::Experiment(e))?;
    for variant in &e.variants {
        let setup = crate::doctor::variant_setup(variant);
        let checked = variant
            .optimize
            .iter()
            // A brought profile was sampled elsewhere: what sampling needs
            // here (a PMU, an event) does not apply.
            .filter(|o| crate::profiles::source(variant).trains() || !o.needs_profile())
            .try_for_each(|o| o.check(&setup))
            .with_context(|| format!("variant `{}` ({})", variant.name, e.file.display()));
        failures.variant(variant, "cannot run here", checked)?;
    }
    for user in e.target.services.iter().filter_map(|s| s.user.as_ref()) {
        user.ids()?;
    }
    Ok(())
}

/// Build phase: fetch the source, then build every variant that needs no
/// profile, and the instrumented stage of those that do.
pub fn build(cx: &Context) -> Result<()> {
    build_with(cx, &mut OnFailure::Stop)
}

fn build_with(cx: &Context, failures: &mut OnFailure) -> Result<()> {
    let e = &cx.experiment;
    // Two builds in one work directory would delete each other's trees.
    let _lock = cx.workdir.lock("variants are being built")?;
    ensure_tools(e, failures)?;
    for l in &e.race.left_out {
        let at = l.line.map(|n| format!(":{n}")).unwrap_or_default();
        progress::info(format_args!(
            "left out of the race: {} ({}, {}{at})",
            l.candidate,
            l.reason,
            e.file.display()
        ));
    }
    progress::info(format_args!("fetching source of `{}`", e.target.name));
    let source_dir = source::fetch(&e.target.source, &cx.workdir.root)?;
    for variant in &e.variants {
        if failures.left(variant) {
            continue;
        }
        let built = build_variant(cx, variant, &source_dir);
        failures.variant(variant, "its build failed", built)?;
    }
    Ok(())
}

/// Build one variant: its final stage, or the instrumented stage of its
/// first profile that is not current (none where a donor's profile will be
/// shared).
fn build_variant(cx: &Context, variant: &Variant, source_dir: &Path) -> Result<()> {
    let e = &cx.experiment;
    if let Some(binaries) = &variant.prebuilt {
        for (name, path) in binaries {
            if !path.is_file() {
                bail!(
                    "variant `{}`: prebuilt binary `{name}` is not a file: {}\nhint: install it (e.g. the distro's package) or fix the path in {}",
                    variant.name,
                    path.display(),
                    e.file.display()
                );
            }
        }
        progress::info(format_args!("{}: prebuilt, nothing to build", variant.name));
    } else if !variant.needs_profile() {
        build_one(cx, variant, Stage::Final, source_dir)?;
    } else if let Some(round) = profiles::first_stale_round(cx, variant, source_dir)? {
        match (&variant.profile_donor, round) {
            (Some(donor), 0) => progress::info(format_args!(
                "building {}: its {} profile will be {donor}'s (the same instrumented build, trained by the same runs), nothing to build before training",
                variant.name,
                variant.rounds()[round].name()
            )),
            _ => build_one(cx, variant, Stage::Instrumented(round), source_dir)?,
        }
    } else if final_is_current(cx, variant, source_dir) {
        progress::info(format_args!(
            "building {} (final) … up to date",
            variant.name
        ));
    } else {
        // Every profile is current; the final build comes after training.
        progress::info(format_args!(
            "building {}: profiles up to date, the final build follows in training",
            variant.name
        ));
    }
    Ok(())
}

/// Whether the variant's build directory holds the final build its
/// current inputs would make.
fn final_is_current(cx: &Context, variant: &Variant, source_dir: &Path) -> bool {
    build::current(&cx.workdir, &variant.name, Stage::Final).is_some_and(|r| {
        build::stage_key(
            &cx.experiment,
            variant,
            Stage::Final,
            source_dir,
            &cx.workdir,
        )
        .is_ok_and(|k| k == r.key)
    })
}

fn build_one(cx: &Context, variant: &Variant, stage: Stage, source_dir: &Path) -> Result<()> {
    let source_dir = profiles::stage_source_dir(cx, variant, stage, source_dir)?;
    let step = progress::step(format!("building {} ({})", variant.name, stage.name()));
    let outcome = match build_stage(&cx.experiment, variant, stage, &source_dir, &cx.workdir) {
        Ok(outcome) => outcome,
        Err(error) => {
            step.finish("failed");
            return Err(error);
        }
    };
    match &outcome {
        BuildOutcome::Built(r, why) => {
            step.finish(format_args!("done in {:.1} s ({why})", r.seconds));
        }
        BuildOutcome::UpToDate(_) => step.finish("up to date"),
        BuildOutcome::Shared(_, donor) => step.finish(format_args!(
            "the same build as {donor}'s (it differs only in how it runs): its binaries"
        )),
    }
    Ok(())
}

/// Train phase: run the training workloads on each instrumented build, check
/// the profile, then build the optimized stage with it.
pub fn train(cx: &Context) -> Result<()> {
    train_with(cx, &mut OnFailure::Stop)
}

fn train_with(cx: &Context, failures: &mut OnFailure) -> Result<()> {
    let e = &cx.experiment;
    let trainers: Vec<&Workload> = e.workloads.iter().filter(|w| w.role.trains()).collect();
    let profiled: Vec<&Variant> = e.variants.iter().filter(|v| v.needs_profile()).collect();
    if profiled.is_empty() {
        return Ok(());
    }
    let _lock = cx.workdir.lock("variants are being trained and rebuilt")?;
    if trainers.is_empty() && crate::profiles::any_trains(&profiled) {
        bail!(
            "variants {} need a profile, but no workload trains\nhint: give a [[workload]] role = \"train\" or \"both\" in {}, or bring a profile (`profile =` on the variant)",
            profiled.iter().filter(|v| crate::profiles::source(v).trains()).map(|v| format!("`{}`", v.name)).collect::<Vec<_>>().join(", "),
            e.file.display()
        );
    }
    // `train` may run alone, and builds what the build phase did not.
    ensure_tools(e, failures)?;
    let source_dir = source::fetch(&e.target.source, &cx.workdir.root)?;
    for variant in profiled {
        if failures.left(variant) {
            continue;
        }
        let trained = train_variant(cx, variant, &source_dir);
        failures.variant(variant, "its training or final build failed", trained)?;
    }
    Ok(())
}

/// Make each of a variant's profiles current ([`profiles::make_current`]:
/// up to date, shared from its donor, or trained on this round's
/// instrumented build), then build its final stage with them.
fn train_variant(cx: &Context, variant: &Variant, source_dir: &Path) -> Result<()> {
    for round in 0..variant.rounds().len() {
        profiles::make_current(cx, variant, round, source_dir, &|| {
            // The build directory may hold another stage's build; this
            // round's instrumented build comes back first.
            build_one(cx, variant, Stage::Instrumented(round), source_dir)
        })?;
    }
    build_one(cx, variant, Stage::Final, source_dir)
}

/// The whole pipeline: build, train, bench, report. Returns the results.
pub fn run(cx: &Context) -> Result<crate::analysis::Results> {
    // One lock from the first build to the last run, shared by each phase.
    let lock = cx.workdir.lock("the pipeline is running")?;
    build(cx)?;
    train(cx)?;
    let results = bench_and_report(cx, false);
    drop(lock);
    results
}

/// Bench, then report; a bench stopped by Ctrl-C is still reported (as
/// partial) before its error is returned, and a bench in which no run
/// succeeded is an error after its report.
pub fn bench_and_report(cx: &Context, resume: bool) -> Result<crate::analysis::Results> {
    let run_dir = match crate::bench::bench(cx, resume) {
        Ok(dir) => dir,
        Err(error) => {
            if let Some(stopped) = error.downcast_ref::<crate::bench::Stopped>() {
                // What finished is on disk; a report of it is the best a
                // stopped bench can leave (none when no run finished).
                if let Err(why) = report(&stopped.run_dir) {
                    progress::warn(format_args!("no partial report: {why:#}"));
                }
            }
            return Err(error);
        }
    };
    let results = report(&run_dir)?;
    if results.runs.failed == results.runs.total {
        bail!(
            "every run of the bench failed ({} of {}); the report above has no measurement\nhint: see the warnings above, raw.jsonl and the logs in {}",
            results.runs.failed,
            results.runs.total,
            run_dir.join("logs").display()
        );
    }
    Ok(results)
}
