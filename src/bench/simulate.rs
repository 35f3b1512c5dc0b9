//! `afterburner explain --simulate`: one run of each command workload on
//! each variant under callgrind's cache and branch simulation, its files
//! kept in the run directory (`runs::simulation_dir`) for `explain` to
//! read. What callgrind simulates is a model of caches and a predictor,
//! not this CPU: the runs are not part of the bench and judge nothing.

use std::path::Path;

use anyhow::{bail, Context as _, Result};

use crate::context::Context;
use crate::experiment::{Bindings, Variant, Workload};
use crate::measure::{instructions, InstructionCounter, RunSetup};
use crate::process::{describe_status, quote_output, TimedIo};
use crate::toolchain::{tools, Stage};

/// Run every benchmark command workload (or only `only`) once on every
/// variant under the simulation, keeping the files in `run_dir`; returns
/// what was left out, one sentence each.
pub fn simulate(cx: &Context, run_dir: &Path, only: Option<&str>) -> Result<Vec<String>> {
    let e = &cx.experiment;
    let _lock = cx
        .workdir
        .lock("a simulation (explain --simulate) is running")?;
    tools::ensure(&[tools::VALGRIND])?;
    fs_err::create_dir_all(run_dir.join("logs"))?;
    let mut notes = Vec::new();
    for workload in e
        .workloads
        .iter()
        .filter(|w| w.role.benches() && only.is_none_or(|o| o == w.name))
    {
        let (true, Some(template)) = (e.target.services.is_empty(), &workload.run) else {
            notes.push(format!(
                "workload `{}` drives services: not simulated (only command workloads are)",
                workload.name
            ));
            continue;
        };
        for variant in &e.variants {
            let bindings = cx.bindings(variant, Stage::Final)?;
            let command = template.expand(&bindings)?;
            let run = One {
                cx,
                run_dir,
                workload,
                variant,
                bindings: &bindings,
                command: &command,
            };
            run.simulate()?;
        }
    }
    Ok(notes)
}

/// One simulated run: a workload's command on a variant.
struct One<'a> {
    cx: &'a Context,
    run_dir: &'a Path,
    workload: &'a Workload,
    variant: &'a Variant,
    /// The variant's placeholders, for the workload's steps.
    bindings: &'a Bindings,
    /// The workload's command, expanded for the variant.
    command: &'a str,
}

impl One<'_> {
    /// Run it under the simulation, its files kept; an error when it fails.
    fn simulate(&self) -> Result<()> {
        let (e, workload, variant, command) = (
            &self.cx.experiment,
            self.workload,
            self.variant,
            self.command,
        );
        let logs = self.run_dir.join("logs");
        let scratch = self.run_dir.join("scratch");
        let keep = crate::runs::simulation_dir(self.run_dir, &workload.name, &variant.name);
        let stem = format!("simulated-{}-{}", workload.name, variant.name);
        let io = TimedIo {
            stdout: logs.join(format!("{stem}.out")),
            stderr: logs.join(format!("{stem}.err")),
        };
        let setup = RunSetup {
            command,
            env: &variant.env,
            cwd: &e.dir,
            logs: &logs,
            scratch: &scratch,
            counter: InstructionCounter::Callgrind,
            keep: Some(&keep),
            metrics: &[],
        };
        crate::progress::info(format_args!(
            "simulating caches and branches: {} on {}",
            workload.name, variant.name
        ));
        // The workload's before and after steps, as in the bench.
        let steps = (e.dir.as_path(), logs.as_path(), stem.as_str());
        crate::served::workload_step(workload, false, self.bindings, &variant.env, steps)?;
        let counted = instructions::simulate(&setup, &io, workload.timeout).with_context(|| {
            format!(
                "simulating workload `{}` on variant `{}`",
                workload.name, variant.name
            )
        })?;
        crate::served::workload_step(workload, true, self.bindings, &variant.env, steps)?;
        if !counted.status.success() {
            bail!(
                "workload `{}` failed on variant `{}` under callgrind's simulation with {}\ncommand: {command}\n{}\nlogs: {}\nhint: the same command ran in the bench; run it by hand under `valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes` to see why",
                workload.name,
                variant.name,
                describe_status(counted.status),
                quote_output(&crate::workdir::tail(&io.stderr, 20)),
                io.stderr.display()
            );
        }
        Ok(())
    }
}
