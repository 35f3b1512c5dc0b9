//! Runs that need more than one command: the target's services started
//! around the run, and `load` workloads driven by afterburner itself.
//! A run whose service died, or whose load got no answer at all, is
//! recorded as failed with the reason; the bench goes on.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result};

use crate::experiment::{Bindings, Experiment, Load, LoadModel, Variant, Workload};
use crate::load::{self, series_csv, sla, Outcome};
use crate::measure::{
    self, log_stem, nanos, InstructionCounter, Metric, RunKind, RunRecord, RunSetup, RunSlot,
};
use crate::process::{run_timed, TimedIo};
use crate::service::{self, ServiceUsage};
use crate::stats::Precision;

/// The metrics a load workload adds: throughput and latency percentiles.
pub fn load_metrics(load: &Load) -> Vec<Metric> {
    let metric = |name: &str, unit: &str, lower: bool| Metric {
        name: name.to_owned(),
        unit: unit.to_owned(),
        lower_is_better: lower,
        precision: Precision::Noisy,
    };
    let mut out = vec![
        metric("throughput", "req/s", false),
        metric("p50", "ms", true),
        metric("p90", "ms", true),
        metric("p99", "ms", true),
        metric("p99.9", "ms", true),
    ];
    if matches!(load.model, LoadModel::Sla { .. }) {
        out.push(metric("sla_rate", "req/s", false));
    }
    out
}

/// The metrics each service adds: its CPU time, peak RSS and context switches.
pub fn service_metrics(e: &Experiment) -> Vec<Metric> {
    e.target
        .services
        .iter()
        .flat_map(|s| {
            [
                ("cpu", "s"),
                ("max_rss", "KiB"),
                ("ctx_switches", "switches"),
            ]
            .map(|(m, unit)| Metric {
                name: format!("{}.{m}", s.name),
                unit: unit.to_owned(),
                lower_is_better: true,
                precision: Precision::Noisy,
            })
        })
        .collect()
}

/// Whether a run of this workload can count instructions meaningfully:
/// the work must be a fixed amount, not a duration.
pub fn countable(load: Option<&Load>) -> bool {
    match load.map(|l| &l.model) {
        None | Some(LoadModel::Run(load::Model::Iterations { .. })) => true,
        Some(LoadModel::Run(load::Model::Closed { requests, .. })) => requests.is_some(),
        Some(_) => false,
    }
}

/// What a served run needs to know.
pub struct Served<'a> {
    pub experiment: &'a Experiment,
    pub variant: &'a Variant,
    pub bindings: &'a Bindings,
    pub logs: &'a Path,
    pub scratch: &'a Path,
    pub counter: InstructionCounter,
    pub seed: u64,
}

/// Start the services, run the command or the load, stop the services.
pub fn measure_served(slot: &RunSlot, s: &Served) -> Result<RunRecord> {
    let e = s.experiment;
    let stem = log_stem(slot);
    let io = TimedIo {
        stdout: s.logs.join(format!("{stem}.out")),
        stderr: s.logs.join(format!("{stem}.err")),
    };
    let mut record = RunRecord::blank(slot, &io);
    let mut bindings = s.bindings.clone();
    bindings.ports = service::ports(&e.target.services)?;
    bindings.port = e
        .target
        .services
        .first()
        .and_then(|f| bindings.ports.get(&f.name).copied());
    let counting = slot.kind == RunKind::Instructions;
    let counter_out = s.scratch.join("counter");
    if counting {
        fs_err::create_dir_all(s.scratch)?;
    }
    let prefix = counting.then(|| s.counter.prefix(&counter_out));
    let services = match service::start(
        &e.target.services,
        &bindings,
        &s.variant.env,
        s.logs,
        &stem,
        prefix.as_deref(),
    ) {
        Ok(services) => services,
        Err(error) => {
            "service did not start".clone_into(&mut record.exit);
            record.error = Some(format!("{error:#}"));
            return Ok(record);
        }
    };
    let work = if let Some(load) = &slot.workload.load {
        drive(load, &bindings, s, &stem, &mut record)
    } else {
        let template = slot
            .workload
            .run
            .as_ref()
            .context("invariant: a workload has run or load")?;
        let command = template.expand(&bindings)?;
        if counting {
            // The services are counted; the client only drives them.
            let mut c = measure::command_for(&command);
            c.envs(&s.variant.env).current_dir(&e.dir);
            let timed = run_timed(&mut c, &io, slot.workload.timeout)?;
            record.success = timed.status.success();
            record.exit = crate::process::describe_status(timed.status);
            Ok(())
        } else {
            let setup = RunSetup {
                command: &command,
                env: &s.variant.env,
                cwd: &e.dir,
                logs: s.logs,
                scratch: s.scratch,
                counter: s.counter,
            };
            let measured = measure::measure(slot, &setup)?;
            record = RunRecord {
                started_unix_ms: record.started_unix_ms,
                ..measured
            };
            Ok(())
        }
    };
    let stopped = services.stop();
    work?;
    match stopped {
        Ok(usages) => add_usages(&mut record, &usages),
        Err(error) => {
            record.success = false;
            record.error = Some(format!("{error:#}"));
        }
    }
    if counting {
        record.instruction_source = Some(s.counter.name().to_owned());
        record.instructions = s.counter.collect(s.scratch)?;
    }
    Ok(record)
}

fn add_usages(record: &mut RunRecord, usages: &[ServiceUsage]) {
    for u in usages {
        record
            .figures
            .insert(format!("{}.cpu", u.name), u.user_s + u.sys_s);
        record
            .figures
            .insert(format!("{}.max_rss", u.name), u.max_rss_kib as f64);
        record.figures.insert(
            format!("{}.ctx_switches", u.name),
            (u.voluntary_switches + u.involuntary_switches) as f64,
        );
    }
}

/// Run the load; its summary and time series go beside the run's logs.
fn drive(
    load: &Load,
    bindings: &Bindings,
    s: &Served,
    stem: &str,
    record: &mut RunRecord,
) -> Result<()> {
    let address = load.address.expand(bindings)?;
    let spec = load.spec(address, s.seed ^ u64::from(record.round), &s.experiment.dir);
    let started = Instant::now();
    let (outcome, found): (Outcome, Option<sla::Found>) = match &load.model {
        LoadModel::Sla { sla: bound, .. } => match sla::search(&spec, bound, |_| {}) {
            Ok(found) => (found.confirm.clone(), Some(found)),
            Err(error) => {
                // No rate met the bound: this run failed, the bench goes on.
                record.wall_ns = Some(nanos(started.elapsed()));
                record.error = Some(format!("sla search: {error:#}"));
                return Ok(());
            }
        },
        LoadModel::Run(_) => (load::run(&spec)?, None),
    };
    record.wall_ns = Some(nanos(started.elapsed()));
    let json = match &found {
        Some(f) => serde_json::to_vec_pretty(f)?,
        None => serde_json::to_vec_pretty(&outcome)?,
    };
    fs_err::write(s.logs.join(format!("{stem}.load.json")), json)?;
    fs_err::write(
        s.logs.join(format!("{stem}.series.csv")),
        series_csv(&outcome.series),
    )?;
    let summary = &outcome.summary;
    let l = &summary.latency_ms;
    let figures: BTreeMap<String, f64> = [
        ("throughput", summary.achieved_rps),
        ("p50", l.p50),
        ("p90", l.p90),
        ("p99", l.p99),
        ("p99.9", l.p999),
        ("errors", summary.errors as f64),
        ("timeouts", summary.timeouts as f64),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .chain(found.as_ref().map(|f| ("sla_rate".to_owned(), f.rate_rps)))
    .collect();
    record.figures.extend(figures);
    record.exit = format!(
        "{} requests, {} errors, {} timeouts",
        summary.requests, summary.errors, summary.timeouts
    );
    if summary.requests == 0 {
        record.error = Some(format!(
            "no request was answered: {}",
            summary
                .first_error
                .as_deref()
                .unwrap_or("no reason recorded")
        ));
    } else {
        record.success = true;
    }
    Ok(())
}

/// One training run of a workload on an instrumented variant: services
/// started with the training environment (so they write profiles), the
/// command or load, then a clean stop so the profiles are flushed.
/// Returns the seconds it took.
pub fn train_served(
    e: &Experiment,
    bindings: &Bindings,
    env: &BTreeMap<String, String>,
    workload: &Workload,
    logs: &Path,
) -> Result<f64> {
    let started = Instant::now();
    let mut bindings = bindings.clone();
    bindings.ports = service::ports(&e.target.services)?;
    bindings.port = e
        .target
        .services
        .first()
        .and_then(|f| bindings.ports.get(&f.name).copied());
    let stem = format!("train-{}", workload.name);
    let services = service::start(&e.target.services, &bindings, env, logs, &stem, None)?;
    let work = (|| -> Result<()> {
        if let Some(load) = &workload.load {
            let address = load.address.expand(&bindings)?;
            let mut spec = load.spec(address, 1, &e.dir);
            if let LoadModel::Sla {
                clients, duration, ..
            } = &load.model
            {
                // Training needs traffic, not the search: a closed loop.
                spec.model = load::Model::Closed {
                    clients: *clients,
                    duration: Some(*duration),
                    requests: None,
                };
            }
            let outcome = load::run(&spec)?;
            if outcome.summary.requests == 0 {
                anyhow::bail!(
                    "no training request was answered: {}",
                    outcome
                        .summary
                        .first_error
                        .as_deref()
                        .unwrap_or("no reason recorded")
                );
            }
            return Ok(());
        }
        let template = workload
            .train_run
            .as_ref()
            .or(workload.run.as_ref())
            .context("invariant: a workload has run or load")?;
        let line = template.expand(&bindings)?;
        let io = TimedIo {
            stdout: logs.join(format!("{stem}.out")),
            stderr: logs.join(format!("{stem}.err")),
        };
        let mut command = measure::command_for(&line);
        command.envs(env).current_dir(&e.dir);
        let timed = run_timed(&mut command, &io, workload.timeout.saturating_mul(10))?;
        if !timed.status.success() {
            anyhow::bail!(
                "the training command failed with {}\ncommand: {line}\n{}\nlogs: {}",
                crate::process::describe_status(timed.status),
                crate::process::quote_output(&crate::workdir::tail(&io.stderr, 20)),
                io.stderr.display()
            );
        }
        Ok(())
    })();
    let stopped = services.stop();
    work?;
    stopped?;
    Ok(started.elapsed().as_secs_f64())
}
