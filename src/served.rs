//! Runs with services and load around them, for the bench and for
//! training alike: the target's services started around the run, and
//! `load` workloads driven by afterburner itself.
//! A run whose service died, or whose load got no answer at all, is
//! recorded as failed with the reason; the bench goes on.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use crate::experiment::{Bindings, Experiment, Load, Recorded, Service, Variant, Workload};
use crate::load;
use crate::measure::{
    self, log_stem, InstructionCounter, Metric, RunKind, RunRecord, RunSetup, RunSlot,
};
use crate::metric::{LoadMetric, MetricId, ServiceMetric, Tally};
use crate::process::{run_timed, TimedIo};
use crate::runs::{copy_stem, write_cpu};
use crate::service::{self, ServiceUsage};
use crate::toolchain::sampling::{Attach, Recording};

/// The directory of a run holding each variant's service state.
pub const STATE_DIR: &str = "state";

mod copies;
mod count;
pub mod remote;
mod window;

use copies::drive;
use count::{add_count, counter_prefix, drive_window};
use window::{window_usage, ServiceWindow, Used};

/// The metrics a load workload adds: throughput, latency percentiles
/// (timed-out requests in them at their deadline), the shares of
/// requests that failed or timed out, and the share of keys found where
/// its requests look keys up (memcached gets).
pub fn load_metrics(load: &Load) -> Vec<Metric> {
    let mut out = vec![
        LoadMetric::Throughput,
        LoadMetric::P50,
        LoadMetric::P90,
        LoadMetric::P99,
        LoadMetric::P999,
        LoadMetric::ErrorRate,
        LoadMetric::TimeoutRate,
    ];
    if load.model.sla.is_some() {
        out.push(LoadMetric::SlaRate);
    }
    if load
        .request
        .entries()
        .any(|(text, _)| load.driver.looks_up(text))
    {
        out.push(LoadMetric::HitRate);
    }
    if load.driver.keeps_server_time() {
        // The server's own time per command (Redis INFO commandstats),
        // beside the client's latency.
        out.push(LoadMetric::ServerMean);
    }
    out.into_iter().map(LoadMetric::metric).collect()
}

use crate::load::ERRORS_OF;

/// What the servers of every copy had counted so far, if they count.
fn server_times(load: &Load, bindings: &[Bindings]) -> Option<Vec<load::drivers::ServerTime>> {
    if !load.driver.keeps_server_time() {
        return None;
    }
    bindings
        .iter()
        .map(|b| {
            let address = load.address.expand(b).ok()?;
            load.driver.server_time(&address, Duration::from_secs(2))
        })
        .collect()
}

/// The metrics each service adds: its CPU time and context switches (totals
/// over the run, judged only when the run does a fixed amount of work), the
/// same per request answered (or per unit of a command's primary rate), and
/// its peak RSS.
pub fn service_metrics(e: &Experiment) -> Vec<Metric> {
    let counted = e.bench.metrics.iter().filter(|b| b.per_service());
    let metrics: Vec<ServiceMetric> = ServiceMetric::ALWAYS
        .into_iter()
        .chain(counted.map(|b| ServiceMetric::Counted(*b)))
        .collect();
    e.target
        .services
        .iter()
        .flat_map(|s| metrics.iter().map(|m| m.metric(&s.name)))
        .collect()
}

/// Whether a run of `workload` lasts a fixed time rather than doing a fixed
/// amount of work: a load with a duration (closed for a time, a rate, an
/// SLA search), or a command whose primary figure is a rate (pgbench `-T`
/// reporting tps: more transactions in the same ten seconds).
pub fn fixed_duration(workload: &Workload) -> bool {
    match workload.load.as_ref().map(|l| &l.model) {
        Some(model) => model.fixed_duration(),
        None => workload
            .figures
            .iter()
            .any(|f| f.primary && f.higher_is_better),
    }
}

/// The units of work a run did, for per-request figures: the requests its
/// load answered in the measured window, else (a command whose primary
/// figure is a rate per second) that rate times the run's wall time.
fn units_of_work(record: &RunRecord, workload: &Workload) -> Option<f64> {
    if let Some(requests) = Tally::Requests.value(record) {
        return (requests > 0.0).then_some(requests);
    }
    let rate = workload
        .figures
        .iter()
        .find(|f| f.primary && f.higher_is_better && f.unit.ends_with("/s"))?;
    let per_second = record.figures.get(&rate.name)?;
    let seconds = record.wall_ns? as f64 / 1e9;
    Some(per_second * seconds).filter(|w| *w > 0.0)
}

/// Whether a run of this workload can count instructions meaningfully:
/// the work must be a fixed amount, not a duration.
pub fn countable(load: Option<&Load>) -> bool {
    load.is_none_or(|l| !l.model.fixed_duration())
}

/// Whether instruction runs of this workload count: a fixed amount of work
/// with any counter, and under callgrind also a closed load of a set
/// duration, whose service is counted over the measured window and judged
/// per request ([`MetricId::InstructionsPerRequest`]).
pub fn counted(load: Option<&Load>, counter: InstructionCounter) -> bool {
    countable(load) || (counter == InstructionCounter::Callgrind && windowable(load))
}

/// A closed load (or one client's iterations), whose service can be
/// counted over its measured window: not a rate load (a server slowed 50×
/// by callgrind cannot keep a rate) nor an SLA search.
fn windowable(load: Option<&Load>) -> bool {
    load.is_some_and(|l| !l.model.open_loop())
}

/// What a served run needs to know.
pub struct Served<'a> {
    pub experiment: &'a Experiment,
    pub variant: &'a Variant,
    pub bindings: &'a Bindings,
    pub logs: &'a Path,
    pub scratch: &'a Path,
    /// The run directory, where counted runs keep their callgrind files.
    pub run_dir: &'a Path,
    pub counter: InstructionCounter,
    pub seed: u64,
    /// The bench's CPU split, if it pins.
    pub pinning: Option<&'a crate::pinning::Pinning>,
    /// Where the load runs when it has a node of its own.
    pub remote: Option<&'a remote::RemoteLoad>,
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
    let counting = slot.kind == RunKind::Instructions;
    let counter_out = s.scratch.join("counter");
    if counting {
        fs_err::create_dir_all(s.scratch)?;
    }
    let (prefix, windowed) = counter_prefix(slot, s, &counter_out, counting);
    // Counted services run with the counter's environment too.
    let mut env = s.variant.env.clone();
    if counting {
        env.extend(s.counter.env(&s.variant.env));
    }
    let copies = slot.workload.load.as_ref().map_or(1, |l| l.instances);
    let (started, all_bindings) = match start_copies(s, &env, prefix.as_deref(), &stem, copies) {
        Ok(started) => started,
        Err(error) if s.remote.is_some() => {
            // On a node of its own the load would only wait on nothing:
            // the block fails, naming the node.
            let path = &s.remote.expect("checked just above").path;
            return Err(error.context(format!(
                "the services did not become ready on {} ({}), where the load on {} was to reach them",
                path.service_node, path.service_address, path.load_node
            )));
        }
        Err(error) => {
            "service did not start".clone_into(&mut record.exit);
            record.error = Some(format!("{error:#}"));
            return Ok(record);
        }
    };
    let bindings = &all_bindings[0];
    let steps = (e.dir.as_path(), s.logs, stem.as_str());
    if let Err(error) = workload_step(slot.workload, false, bindings, &s.variant.env, steps) {
        for services in started {
            let _ = services.stop();
        }
        return Err(error);
    }
    // What the machine's CPUs did meanwhile, per interval.
    let sampler = crate::cpustat::Sampler::start(
        slot.workload
            .load
            .as_ref()
            .map_or(Duration::from_secs(1), |l| l.interval),
    );
    // Each copy's services' counters, read at the edges of the window its
    // per-request figures count.
    let windows: Vec<ServiceWindow> = started
        .iter()
        .map(|services| ServiceWindow::new(services, &e.bench.metrics))
        .collect();
    let work = if let Some(load) = &slot.workload.load {
        let copies = (all_bindings.as_slice(), windows.as_slice());
        if windowed {
            drive_window(load, copies, Some(&started), s, &stem, &mut record)
        } else if s.remote.is_some() {
            // A load on another node opens its window out of sight: its
            // warmup goes first, as a step of its own.
            drive_window(load, copies, None, s, &stem, &mut record)
        } else {
            drive(load, copies, s, &stem, &mut record)
        }
    } else {
        // A command's window is its run.
        windows[0].edge(load::Edge::Opens);
        let ran = run_command(slot, s, bindings, &io, &mut record);
        windows[0].edge(load::Edge::Closes);
        ran
    };
    let window = window_usage(&windows);
    drop(windows);
    let cpu = sampler.stop();
    write_cpu(s.logs, &stem, &cpu)?;
    let after = workload_step(slot.workload, true, bindings, &s.variant.env, steps);
    let stopped: Vec<_> = started.into_iter().map(service::Services::stop).collect();
    work?;
    after?;
    let mut usages = Vec::new();
    for result in stopped {
        match result {
            Ok(u) => usages.extend(u),
            Err(error) => {
                record.success = false;
                record.error = Some(format!("{error:#}"));
            }
        }
    }
    let work = units_of_work(&record, slot.workload);
    add_usages(&mut record, &usages, window.as_deref(), work);
    if counting {
        add_count(&mut record, s, slot.workload.load.as_ref(), windowed);
    }
    Ok(record)
}

/// A command workload against the started services: timed, or (when
/// they are counted) only run, since the services are what is counted.
fn run_command(
    slot: &RunSlot,
    s: &Served,
    bindings: &Bindings,
    io: &TimedIo,
    record: &mut RunRecord,
) -> Result<()> {
    let e = s.experiment;
    let template = slot
        .workload
        .run
        .as_ref()
        .context("invariant: a workload has run or load")?;
    let command = template.expand(bindings)?;
    if slot.kind == RunKind::Instructions {
        // The services are counted; the client only drives them.
        let mut c = measure::command_for(&command);
        c.envs(&s.variant.env).current_dir(&e.dir);
        let timed = run_timed(&mut c, io, slot.workload.timeout)?;
        record.success = timed.status.success();
        record.exit = crate::process::describe_status(timed.status);
    } else {
        let setup = RunSetup {
            command: &command,
            env: &s.variant.env,
            cwd: &e.dir,
            logs: s.logs,
            scratch: s.scratch,
            counter: s.counter,
            keep: None,
            metrics: &e.bench.metrics,
        };
        let measured = measure::measure(slot, &setup)?;
        *record = RunRecord {
            started_unix_ms: record.started_unix_ms,
            ..measured
        };
    }
    Ok(())
}

/// `instances` copies of the services, each with ports and state of its
/// own; when one fails to start, those started are stopped.
fn start_copies(
    s: &Served,
    env: &BTreeMap<String, String>,
    prefix: Option<&[String]>,
    stem: &str,
    copies: usize,
) -> Result<(Vec<service::Services>, Vec<Bindings>)> {
    let e = s.experiment;
    let mut started = Vec::new();
    let mut all_bindings = Vec::new();
    for copy in 0..copies {
        let mut own = s.bindings.clone();
        own.instance = Some(copy + 1);
        if copies > 1 {
            own.state_root = own.state_root.map(|r| r.join(format!("copy-{}", copy + 1)));
        }
        let bindings = with_ports(&own, e);
        let stem = copy_stem(stem, copy, copies);
        let services = bindings.and_then(|bindings| {
            let services = service::start(
                &e.target.services,
                &bindings,
                env,
                s.logs,
                &stem,
                &|_| prefix,
                s.pinning.map(|p| &p.services),
            )?;
            Ok((services, bindings))
        });
        match services {
            Ok((services, bindings)) => {
                started.push(services);
                all_bindings.push(bindings);
            }
            Err(error) => {
                for services in started {
                    let _ = services.stop();
                }
                return Err(error);
            }
        }
    }
    Ok((started, all_bindings))
}

/// A service's CPU time from start to stop (`wait4`), start-up, warmup and
/// shutdown included, in seconds: recorded, not a metric.
const LIFE_CPU: &str = "life_cpu";

/// A service's context switches from start to stop: recorded, not a metric.
const LIFE_SWITCHES: &str = "life_ctx_switches";

/// Each service's peak RSS (the largest instance's, over its life, from
/// `wait4`), and its CPU time and context switches over the run's window
/// (summed over instances; see [`window`]), both per unit of work where the
/// run did some (CPU in µs per unit: on a saturated machine far steadier
/// than throughput), and the counts of the built-in metrics asked for that
/// count services. Without a whole window (a service gone at an edge) there
/// are no CPU and switch figures: a total over the service's life (its
/// start-up, the warmup) divided by the window's requests would mix two
/// windows.
fn add_usages(
    record: &mut RunRecord,
    usages: &[ServiceUsage],
    window: Option<&[(String, Used)]>,
    work: Option<f64>,
) {
    let figure = |service: &str, metric| MetricId::Service(service.to_owned(), metric).to_string();
    for u in usages {
        let rss = record
            .figures
            .entry(figure(&u.name, ServiceMetric::MaxRss))
            .or_default();
        *rss = rss.max(u.max_rss_kib as f64);
        // Start to stop (start-up and shutdown too): recorded, not judged.
        *record
            .figures
            .entry(format!("{}.{LIFE_CPU}", u.name))
            .or_default() += u.user_s + u.sys_s;
        *record
            .figures
            .entry(format!("{}.{LIFE_SWITCHES}", u.name))
            .or_default() += (u.voluntary_switches + u.involuntary_switches) as f64;
    }
    for (name, used) in window.unwrap_or_default() {
        let cpu = used.usage.cpu.as_secs_f64();
        let switches = used.usage.switches as f64;
        let mut figures = vec![
            (ServiceMetric::Cpu, cpu),
            (ServiceMetric::CtxSwitches, switches),
        ];
        if let Some(work) = work {
            figures.push((ServiceMetric::CpuPerRequest, cpu / work * 1e6));
            figures.push((ServiceMetric::CtxSwitchesPerRequest, switches / work));
        }
        for (metric, count) in &used.counts {
            figures.push((ServiceMetric::Counted(*metric), *count as f64));
        }
        for (metric, value) in figures {
            record.figures.insert(figure(name, metric), value);
        }
    }
}

/// How long a load step on another node may take: its warmup and
/// duration (ten minutes for a load of a set count), and two minutes for
/// srun to place it and the process to start.
fn step_timeout(load: &Load) -> Duration {
    let length = load.model.duration.unwrap_or(Duration::from_mins(10));
    load.warmup + length + Duration::from_mins(2)
}

/// `bindings` with a free port for every service of this run, and each
/// service's state directory under the variant's state root.
fn with_ports(bindings: &Bindings, e: &Experiment) -> Result<Bindings> {
    let mut bindings = bindings.clone();
    bindings.ports = service::ports(&e.target.services)?;
    bindings.port = e
        .target
        .services
        .first()
        .and_then(|f| bindings.ports.get(&f.name).copied());
    if let Some(root) = &bindings.state_root {
        bindings.states = e
            .target
            .services
            .iter()
            .map(|s| (s.name.clone(), root.join(&s.name)))
            .collect();
    }
    bindings.state = e
        .target
        .services
        .first()
        .and_then(|f| bindings.states.get(&f.name).cloned());
    Ok(bindings)
}

/// A workload's `before` or `after` step, if it has one.
pub fn workload_step(
    workload: &Workload,
    after: bool,
    bindings: &Bindings,
    env: &BTreeMap<String, String>,
    (dir, logs, stem): (&Path, &Path, &str),
) -> Result<()> {
    let (template, which) = if after {
        (workload.after.as_ref(), "after")
    } else {
        (workload.before.as_ref(), "before")
    };
    let Some(template) = template else {
        return Ok(());
    };
    let line = template.expand(bindings)?;
    crate::step::run(&crate::step::Step {
        what: format!("the `{which}` step of workload `{}`", workload.name),
        line: &line,
        env,
        cwd: dir,
        log: logs.join(format!("{stem}.{which}.log")),
        timeout: workload.timeout,
        user: None,
    })
}

/// How a training run is recorded.
pub struct Training<'a> {
    /// The training environment (where instrumented builds write).
    pub env: &'a BTreeMap<String, String>,
    /// The words training commands run under (`perf record` for sampled
    /// optimizations), and services too unless they are attached.
    pub prefix: &'a [String],
    /// Where a sampled round attaches `perf record -p` to each service
    /// over the workload's window (services with `record = "window"`).
    pub attach: Option<&'a Attach>,
    pub logs: &'a Path,
    /// With `train_stop = "dump"`: services dump their counters at the
    /// workload's end, before they are stopped.
    pub dumping: Option<&'a crate::capture::train::Dumping>,
}

/// One training run of a workload on an instrumented variant: the target's
/// services (if any) started with the training environment (so they write
/// profiles), the command or load, then a clean stop so the profiles are
/// flushed. A sampled round records each service over the window only:
/// from after it is ready and the load's warmup is done to the workload's
/// end (or from start to stop, `record = "life"`).
/// Returns the seconds it took.
pub fn train_served(
    e: &Experiment,
    bindings: &Bindings,
    workload: &Workload,
    t: &Training,
) -> Result<f64> {
    let started = Instant::now();
    let bindings = with_ports(bindings, e)?;
    let stem = format!("train-{}", workload.name);
    let attached = |s: &Service| t.attach.is_some() && s.record == Recorded::Window;
    let under = |s: &Service| (!t.prefix.is_empty() && !attached(s)).then_some(t.prefix);
    let (env, logs) = (t.env, t.logs);
    let service_env = t.dumping.map(|d| d.service_env(env));
    let services = service::start(
        &e.target.services,
        &bindings,
        service_env.as_ref().unwrap_or(env),
        logs,
        &stem,
        &under,
        None,
    )?;
    let window = Window {
        services: &services,
        attach: t.attach,
        attached: &attached,
        e,
        workload,
        env,
        steps: (e.dir.as_path(), logs, stem.as_str()),
    };
    let work = (|| -> Result<()> {
        workload_step(workload, false, &bindings, env, window.steps)?;
        if let Some(load) = &workload.load {
            return train_load(load, &bindings, &window);
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
        let mut command = measure::prefixed_command(t.prefix, &line);
        command.envs(env).current_dir(&e.dir);
        let recordings = window.open()?;
        let timed = run_timed(&mut command, &io, workload.timeout.saturating_mul(10));
        window.close(recordings)?;
        let timed = timed?;
        workload_step(workload, true, &bindings, env, window.steps)?;
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
    let dumped = match (&work, t.dumping) {
        (Ok(()), Some(dumping)) => services
            .processes()
            .iter()
            .try_for_each(|(name, pids, _)| dumping.dump_service(name, pids).map(|_| ())),
        _ => Ok(()),
    };
    let stopped = services.stop();
    work?;
    dumped?;
    stopped?;
    Ok(started.elapsed().as_secs_f64())
}

/// The recordings of a training workload's window.
struct Window<'a> {
    services: &'a service::Services,
    attach: Option<&'a Attach>,
    attached: &'a dyn Fn(&Service) -> bool,
    e: &'a Experiment,
    workload: &'a Workload,
    env: &'a BTreeMap<String, String>,
    steps: (&'a Path, &'a Path, &'a str),
}

impl Window<'_> {
    /// Attach `perf record -p` to every process of each attached service.
    fn open(&self) -> Result<Vec<Recording>> {
        let Some(attach) = self.attach else {
            return Ok(Vec::new());
        };
        let (_, logs, stem) = self.steps;
        let mut recordings = Vec::new();
        for (service, (name, pids, binary)) in
            self.e.target.services.iter().zip(self.services.processes())
        {
            if (self.attached)(service) {
                let log = logs.join(format!("{stem}-{name}.perf.log"));
                let mut tried = attach.attach(&name, &pids, binary.clone(), &log);
                // A process that exited between the listing and perf's
                // attaching (a warmup connection's worker) fails perf:
                // list them again.
                for _ in 0..3 {
                    if tried.is_ok() {
                        break;
                    }
                    let again = self.services.processes();
                    let pids = again
                        .iter()
                        .find(|(n, _, _)| *n == name)
                        .map_or_else(|| pids.clone(), |(_, p, _)| p.clone());
                    tried = attach.attach(&name, &pids, binary.clone(), &log);
                }
                recordings.push(tried?);
            }
        }
        Ok(recordings)
    }

    /// Stop the recordings (the window's end); an empty one is an error
    /// naming the workload and the binary.
    fn close(&self, recordings: Vec<Recording>) -> Result<()> {
        let mut first = None;
        for recording in recordings {
            if let Err(error) = recording.finish(&self.workload.name) {
                first.get_or_insert(error);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// A training load: its warmup alone where services are recorded over the
/// window, then the recordings, the load, and the recordings' end.
fn train_load(load: &Load, bindings: &Bindings, window: &Window) -> Result<()> {
    let address = load.address.expand(bindings)?;
    let mut spec = load.spec(address, 1, &window.e.dir);
    spec.model = load.model.pacing.for_training(&load.model);
    if window.attach.is_some() && !spec.warmup.is_zero() {
        load::run(&spec.clone().warmup_only()).context("the load's warmup")?;
        spec.warmup = Duration::ZERO;
    }
    let recordings = window.open()?;
    let outcome = load::run(&spec);
    window.close(recordings)?;
    let outcome = outcome?;
    workload_step(window.workload, true, bindings, window.env, window.steps)?;
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::copies::{failure_figures, hit_rate};
    use super::*;

    fn summary(hits: Option<u64>, misses: Option<u64>) -> load::Summary {
        let mut s: load::Summary = serde_json::from_value(serde_json::json!({
            "requests": 10, "errors": 0, "timeouts": 0, "duration_s": 1.0,
            "requested_rps": null, "achieved_rps": 10.0,
            "latency_ms": {"min": 0.1, "mean": 0.1, "p50": 0.1, "p90": 0.1,
                           "p95": 0.1, "p99": 0.1, "p999": 0.1, "max": 0.1},
            "percentiles": [], "first_error": null
        }))
        .unwrap();
        s.hits = hits;
        s.misses = misses;
        s
    }

    /// A bench of memcached gets recorded `hit_rate` as a figure but never
    /// declared it, so no report showed it: a load that looks keys up
    /// (any request of its mix) declares it, higher is better and noisy;
    /// one that looks nothing up does not.
    #[test]
    fn a_load_that_looks_keys_up_declares_its_hit_rate() {
        let experiment = |request: &str| {
            let text = format!(
                "[target]\nname = \"mc\"\nsource = {{ path = \"src\" }}\nbuild = \"make\"\nbinaries = {{ memcached = \"memcached\" }}\n\n[[target.service]]\nname = \"mc\"\nstart = \"{{bin.memcached}} -p {{port}}\"\nready = \"memcached\"\n\n[[variant]]\nname = \"base\"\n\n[[workload]]\nname = \"w\"\n[workload.load]\ndriver = \"memcached\"\n{request}\nclients = 2\nrequests = 100\n"
            );
            crate::experiment::load_str(Path::new("/exp/a.toml"), &text, false).unwrap()
        };
        let hit_rate_of = |request: &str| {
            let e = experiment(request);
            let load = e.workloads[0].load.as_ref().unwrap();
            load_metrics(load)
                .into_iter()
                .find(|m| m.is(&MetricId::Load(LoadMetric::HitRate)))
        };
        let declared = hit_rate_of(
            r#"request = ["set k:{k} v", "get k:{k}"]
mix = [1, 9]
vars = { k = "uniform:1:10" }"#,
        )
        .expect("a mix with gets has a hit rate");
        assert!(!declared.lower_is_better, "{declared:?}");
        assert_eq!(declared.precision, crate::stats::Precision::Noisy);
        assert!(hit_rate_of("request = \"gats 60 k:1 k:2\"").is_some());
        assert!(hit_rate_of("request = \"set k:1 v\"").is_none());
    }

    /// Instances' hit rate is over all their keys, not a mean of rates.
    #[test]
    fn hit_rate_adds_the_instances_keys() {
        let copies = [summary(Some(9), Some(1)), summary(Some(0), Some(30))];
        assert_eq!(hit_rate(copies.iter()), Some(9.0 / 40.0));
        let none = [summary(None, None)];
        assert_eq!(hit_rate(none.iter()), None);
    }

    /// Failed requests are figures of the run: each share over all the
    /// instances' attempted requests (answered, failed and timed out), and
    /// each kind of error counted.
    #[test]
    #[allow(clippy::float_cmp)] // shares of small counts, exact in binary or computed alike
    fn failure_shares_are_over_the_requests_attempted() {
        let mut a = summary(None, None);
        (a.requests, a.errors, a.timeouts) = (80, 10, 10);
        a.errors_by_kind = serde_json::from_value(serde_json::json!(
            {"connection": 4, "server": 6}
        ))
        .unwrap();
        let mut b = summary(None, None);
        (b.requests, b.timeouts) = (100, 0);
        let f = failure_figures([a, b].iter());
        let (error_rate, timeout_rate) =
            (LoadMetric::ErrorRate.name(), LoadMetric::TimeoutRate.name());
        assert_eq!(f[error_rate], 0.05);
        assert_eq!(f[timeout_rate], 0.05);
        assert_eq!(f["errors.connection"], 4.0);
        assert_eq!(f["errors.server"], 6.0);
        assert_eq!(f.len(), 4, "{f:?}");
        let clean = failure_figures([summary(None, None)].iter());
        assert_eq!((clean[error_rate], clean[timeout_rate]), (0.0, 0.0));
        let mut nothing = summary(None, None);
        nothing.requests = 0;
        assert!(failure_figures([nothing].iter()).is_empty());
    }
}
