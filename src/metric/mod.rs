//! What a run is judged on: a metric is one value of one type,
//! [`MetricId`] — a built-in metric of the registry below (each a file of
//! its own implementing [`BuiltinMetric`]), a load's ([`LoadMetric`]), a
//! service's ([`ServiceMetric`]), a service's instructions per request, or
//! a workload's named figure — that knows its unit, direction, precision,
//! whether it is a total over the run, and how to read its value from a
//! run. A metric's name is compared as a string here only.
//!
//! To add a built-in metric: write `metric/<name>.rs` with a unit struct
//! implementing [`BuiltinMetric`] — its word, unit, direction, whether it
//! is a total, and where its value comes from (a measured command's
//! `wait4` accounting in [`BuiltinMetric::of_command`], a service's
//! processes' counters over the load's window in
//! [`BuiltinMetric::of_process`]) — then add `<name>::<Struct> as
//! <CONSTANT>` to the `metrics!` list below. `[bench] metrics`, its hint,
//! the measured runs, the service windows, results and reports then know
//! it.

mod record;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use record::{RunKind, RunRecord};

use crate::process::Usage;
use crate::stats::Precision;

/// Declares each built-in metric's module, lists them and names each one a
/// constant of [`Builtin`]: the one list.
macro_rules! metrics {
    ($($module:ident :: $metric:ident as $constant:ident),* $(,)?) => {
        $(mod $module;)*

        /// Every built-in metric, in the order hints list them.
        pub const BUILTINS: &[Builtin] = &[$(Builtin(&$module::$metric)),*];

        impl Builtin {
            $(
                #[doc = concat!("The `", stringify!($module), "` metric.")]
                pub const $constant: Builtin = Builtin(&$module::$metric);
            )*
        }
    };
}

metrics! {
    wall::Wall as WALL,
    user::User as USER,
    sys::Sys as SYS,
    max_rss::MaxRss as MAX_RSS,
    instructions::Instructions as INSTRUCTIONS,
    page_faults::PageFaults as PAGE_FAULTS,
}

/// A metric every run can be asked for (`[bench] metrics = [...]`).
pub trait BuiltinMetric: Sync {
    /// The word in `[bench] metrics` and in results.
    fn name(&self) -> &'static str;

    /// The unit of its values.
    fn unit(&self) -> &'static str;

    fn lower_is_better(&self) -> bool {
        true
    }

    /// How its comparisons are judged; `counted` is the instruction
    /// counter's precision.
    fn precision(&self, counted: Precision) -> Precision {
        let _ = counted;
        Precision::Noisy
    }

    /// A total over the run (see [`Metric::cumulative`]).
    fn cumulative(&self) -> bool;

    /// Asked for where `[bench]` names no metrics.
    fn by_default(&self) -> bool {
        false
    }

    /// A measured command's value from the kernel's accounting of it
    /// (`wait4`), kept as the run's figure of this name; `None` where the
    /// record has a field of its own for it.
    fn of_command(&self, usage: &Usage) -> Option<f64> {
        let _ = usage;
        None
    }

    /// A count the kernel keeps for one process, read for each service's
    /// processes at the edges of the run's window; the window's difference
    /// is the service's figure `SERVICE.<name>`. `None`: not counted per
    /// service.
    fn of_process(&self, pid: libc::pid_t) -> Option<u64> {
        let _ = pid;
        None
    }

    /// Whether services are counted by [`BuiltinMetric::of_process`].
    fn per_service(&self) -> bool {
        false
    }

    /// Its value in `run`, if the run measured it: by default the timing
    /// run's figure of its name (where [`BuiltinMetric::of_command`] keeps it).
    fn value(&self, run: &RunRecord) -> Option<f64> {
        if run.kind != RunKind::Timing {
            return None;
        }
        run.figures.get(self.name()).copied()
    }
}

/// A built-in metric: a handle on its [`BuiltinMetric`], compared,
/// printed and (de)serialized by its name.
#[derive(Clone, Copy)]
pub struct Builtin(&'static dyn BuiltinMetric);

crate::named_handle!(Builtin, BuiltinMetric, name, |name| {
    Builtin::from_name(name).ok_or_else(|| {
        format!(
            "unknown metric `{name}`; known metrics: {}",
            Builtin::names()
        )
    })
});

impl Builtin {
    /// The built-in metric named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        BUILTINS.iter().find(|b| b.name() == name).copied()
    }

    /// Every built-in metric's name, for hints: `wall, user, …`.
    pub fn names() -> String {
        BUILTINS
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The metrics asked for where `[bench]` names none.
    pub fn defaults() -> Vec<Builtin> {
        BUILTINS
            .iter()
            .copied()
            .filter(|b| b.by_default())
            .collect()
    }

    /// Whether `name` is this metric's.
    pub fn is(self, name: &str) -> bool {
        self.name() == name
    }

    /// What results record of it; `counted` is the instruction counter's
    /// precision.
    pub fn metric(self, counted: Precision) -> Metric {
        Metric {
            name: self.name().to_owned(),
            unit: self.unit().to_owned(),
            lower_is_better: self.lower_is_better(),
            precision: self.precision(counted),
            primary: false,
            cumulative: self.cumulative(),
        }
    }
}

/// A metric of a `load` workload, from the load's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadMetric {
    /// Successful requests per second.
    Throughput,
    /// Latency percentiles, in ms (a timed-out request at its deadline).
    P50,
    P90,
    P99,
    P999,
    /// Shares of the requests attempted that failed or timed out.
    ErrorRate,
    TimeoutRate,
    /// The highest rate an SLA search found within its bound.
    SlaRate,
    /// The share of looked-up keys found (memcached gets).
    HitRate,
    /// The server's own mean time per command (Redis INFO commandstats).
    ServerMean,
}

impl LoadMetric {
    /// The metric a load model's runs are judged by first.
    pub fn headline(headline: crate::load::models::Headline) -> LoadMetric {
        use crate::load::models::Headline;
        match headline {
            Headline::Throughput => LoadMetric::Throughput,
            Headline::P99 => LoadMetric::P99,
            Headline::SlaRate => LoadMetric::SlaRate,
        }
    }

    pub const ALL: [LoadMetric; 10] = [
        LoadMetric::Throughput,
        LoadMetric::P50,
        LoadMetric::P90,
        LoadMetric::P99,
        LoadMetric::P999,
        LoadMetric::ErrorRate,
        LoadMetric::TimeoutRate,
        LoadMetric::SlaRate,
        LoadMetric::HitRate,
        LoadMetric::ServerMean,
    ];

    /// Its name in results and the figure a load's run records.
    pub fn name(self) -> &'static str {
        match self {
            LoadMetric::Throughput => "throughput",
            LoadMetric::P50 => "p50",
            LoadMetric::P90 => "p90",
            LoadMetric::P99 => "p99",
            LoadMetric::P999 => "p99.9",
            LoadMetric::ErrorRate => "error_rate",
            LoadMetric::TimeoutRate => "timeout_rate",
            LoadMetric::SlaRate => "sla_rate",
            LoadMetric::HitRate => "hit_rate",
            LoadMetric::ServerMean => "server_mean",
        }
    }

    /// What results record of it.
    pub fn metric(self) -> Metric {
        let (unit, lower_is_better, precision) = match self {
            LoadMetric::Throughput | LoadMetric::SlaRate => ("req/s", false, Precision::Noisy),
            LoadMetric::P50 | LoadMetric::P90 | LoadMetric::P99 | LoadMetric::P999 => {
                ("ms", true, Precision::Noisy)
            }
            LoadMetric::ErrorRate | LoadMetric::TimeoutRate => ("share", true, Precision::Share),
            LoadMetric::HitRate => ("share", false, Precision::Noisy),
            LoadMetric::ServerMean => ("µs", true, Precision::Noisy),
        };
        Metric {
            name: self.name().to_owned(),
            unit: unit.to_owned(),
            lower_is_better,
            precision,
            primary: false,
            cumulative: false,
        }
    }
}

/// A metric of each service of the target, recorded as the figure
/// `SERVICE.<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceMetric {
    /// CPU time (user + system) over the run's window, in s: a total.
    Cpu,
    /// The same per request answered (or unit of a command's rate), in µs.
    CpuPerRequest,
    /// Peak RSS of its largest instance over its life, in KiB.
    MaxRss,
    /// Context switches over the run's window: a total.
    CtxSwitches,
    /// The same per request answered.
    CtxSwitchesPerRequest,
    /// A built-in metric counted per process ([`BuiltinMetric::of_process`])
    /// over the run's window: a total.
    Counted(Builtin),
}

impl ServiceMetric {
    /// Those every service has, in the order results list them.
    pub const ALWAYS: [ServiceMetric; 5] = [
        ServiceMetric::Cpu,
        ServiceMetric::CpuPerRequest,
        ServiceMetric::MaxRss,
        ServiceMetric::CtxSwitches,
        ServiceMetric::CtxSwitchesPerRequest,
    ];

    /// The part of its name after the service's.
    pub fn name(self) -> &'static str {
        match self {
            ServiceMetric::Cpu => "cpu",
            ServiceMetric::CpuPerRequest => "cpu_per_request",
            ServiceMetric::MaxRss => "max_rss",
            ServiceMetric::CtxSwitches => "ctx_switches",
            ServiceMetric::CtxSwitchesPerRequest => "ctx_switches_per_request",
            ServiceMetric::Counted(b) => b.name(),
        }
    }

    /// What results record of it for `service`.
    pub fn metric(self, service: &str) -> Metric {
        let (unit, cumulative) = match self {
            ServiceMetric::Cpu => ("s", true),
            ServiceMetric::CpuPerRequest => ("µs", false),
            ServiceMetric::MaxRss => ("KiB", false),
            ServiceMetric::CtxSwitches => ("switches", true),
            ServiceMetric::CtxSwitchesPerRequest => ("switches", false),
            ServiceMetric::Counted(b) => (b.unit(), true),
        };
        Metric {
            name: MetricId::Service(service.to_owned(), self).to_string(),
            unit: unit.to_owned(),
            lower_is_better: true,
            precision: Precision::Noisy,
            primary: false,
            cumulative,
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::ALWAYS
            .into_iter()
            .find(|m| m.name() == name)
            .or_else(|| {
                Builtin::from_name(name)
                    .filter(|b| b.per_service())
                    .map(ServiceMetric::Counted)
            })
    }
}

/// A figure a load's run records that is no metric of its own: what its
/// metrics are counted from, and what the report's failed requests add up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tally {
    /// The requests answered in the load's measured window: what every
    /// per-request figure divides by.
    Requests,
    /// The requests that failed, and those left unanswered within the
    /// timeout (their shares are the metrics `error_rate`, `timeout_rate`).
    Errors,
    Timeouts,
}

impl Tally {
    /// The figure's name in a run's record.
    pub fn name(self) -> &'static str {
        match self {
            Tally::Requests => "requests",
            Tally::Errors => "errors",
            Tally::Timeouts => "timeouts",
        }
    }

    /// Its count in `run`, if the run recorded it.
    pub fn value(self, run: &RunRecord) -> Option<f64> {
        run.figures.get(self.name()).copied()
    }
}

/// A metric, by what it is. Its name (`Display`, and `FromStr` back) is
/// what results, `raw.jsonl` and reports write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricId {
    Builtin(Builtin),
    Load(LoadMetric),
    /// A service's (by its name).
    Service(String, ServiceMetric),
    /// A service's instructions per request answered, counted over a
    /// load's measured window (callgrind).
    InstructionsPerRequest,
    /// A figure the workload declares (`[[workload.figures]]`), by name.
    Figure(String),
}

impl MetricId {
    pub const WALL: MetricId = MetricId::Builtin(Builtin::WALL);
    pub const INSTRUCTIONS: MetricId = MetricId::Builtin(Builtin::INSTRUCTIONS);

    /// The metric named `name`: a built-in, a load's, a service's
    /// (`SERVICE.<metric>`), else a figure's.
    pub fn parse(name: &str) -> Self {
        if let Some(b) = Builtin::from_name(name) {
            return MetricId::Builtin(b);
        }
        if let Some(m) = LoadMetric::ALL.into_iter().find(|m| m.name() == name) {
            return MetricId::Load(m);
        }
        if name == INSTRUCTIONS_PER_REQUEST {
            return MetricId::InstructionsPerRequest;
        }
        if let Some((service, metric)) = name
            .rsplit_once('.')
            .and_then(|(s, m)| Some((s, ServiceMetric::from_name(m)?)))
        {
            return MetricId::Service(service.to_owned(), metric);
        }
        MetricId::Figure(name.to_owned())
    }

    /// Whether `name` names this metric.
    pub fn is(&self, name: &str) -> bool {
        *self == MetricId::parse(name)
    }

    /// Whether it counts executed work: instructions, or a service's per
    /// request.
    pub fn counts_work(&self) -> bool {
        matches!(self, MetricId::InstructionsPerRequest) || *self == MetricId::INSTRUCTIONS
    }

    /// Its value in `run`, if the run measured it.
    pub fn value(&self, run: &RunRecord) -> Option<f64> {
        match self {
            MetricId::Builtin(b) => b.value(run),
            // Counted over a load's window in an instruction run.
            MetricId::InstructionsPerRequest => run.figures.get(INSTRUCTIONS_PER_REQUEST).copied(),
            MetricId::Load(_) | MetricId::Service(..) | MetricId::Figure(_) => {
                if run.kind != RunKind::Timing {
                    return None;
                }
                run.figures.get(&self.to_string()).copied()
            }
        }
    }

    /// A service's instructions per request, as results record it;
    /// `counted` is the counter's precision.
    pub fn instructions_per_request(counted: Precision) -> Metric {
        Metric {
            name: INSTRUCTIONS_PER_REQUEST.to_owned(),
            unit: Builtin::INSTRUCTIONS.unit().to_owned(),
            lower_is_better: true,
            precision: counted,
            primary: false,
            cumulative: false,
        }
    }
}

const INSTRUCTIONS_PER_REQUEST: &str = "instructions_per_request";

impl fmt::Display for MetricId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricId::Builtin(b) => f.write_str(b.name()),
            MetricId::Load(m) => f.write_str(m.name()),
            MetricId::Service(service, m) => write!(f, "{service}.{}", m.name()),
            MetricId::InstructionsPerRequest => f.write_str(INSTRUCTIONS_PER_REQUEST),
            MetricId::Figure(name) => f.write_str(name),
        }
    }
}

/// What a metric is: its name, unit, direction and precision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Metric {
    /// `wall`, `user`, `sys`, `max_rss`, `instructions`, or a figure's name.
    pub name: String,
    /// Unit of the values: "s", "KiB", "instructions", or the figure's.
    pub unit: String,
    pub lower_is_better: bool,
    pub precision: Precision,
    /// A figure declared `primary = true`: its workload's headline metric.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub primary: bool,
    /// A total over the run (a service's CPU seconds or context switches, a
    /// command's user and system time and instructions): meaningful only
    /// when the run did a fixed amount of work. In a run of fixed duration
    /// it is shown but not judged; a service's per-request twin is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cumulative: bool,
}

impl Metric {
    /// The metric this is.
    pub fn id(&self) -> MetricId {
        MetricId::parse(&self.name)
    }

    /// Whether this is `id`.
    pub fn is(&self, id: &MetricId) -> bool {
        id.is(&self.name)
    }

    /// This metric's value in a run, if the run measured it.
    pub fn value(&self, run: &RunRecord) -> Option<f64> {
        self.id().value(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every metric's name parses back to the metric, so results written
    /// by name read back as the same metric.
    #[test]
    fn every_metric_name_parses_back_to_its_metric() {
        let mut ids: Vec<MetricId> = BUILTINS.iter().map(|b| MetricId::Builtin(*b)).collect();
        ids.extend(LoadMetric::ALL.map(MetricId::Load));
        for m in ServiceMetric::ALWAYS {
            ids.push(MetricId::Service("redis".to_owned(), m));
        }
        for b in BUILTINS.iter().filter(|b| b.per_service()) {
            ids.push(MetricId::Service(
                "db".to_owned(),
                ServiceMetric::Counted(*b),
            ));
        }
        ids.push(MetricId::InstructionsPerRequest);
        ids.push(MetricId::Figure("tps".to_owned()));
        for id in ids {
            assert_eq!(MetricId::parse(&id.to_string()), id, "{id}");
        }
        assert_eq!(
            MetricId::parse("errors.connection"),
            MetricId::Figure("errors.connection".to_owned())
        );
    }

    /// A command whose primary figure is a rate (pgbench -T) does more on a
    /// faster build in the same time: its totals are shown, not judged (nor
    /// the headline's work); its time and peak memory are judged.
    #[test]
    fn a_commands_cpu_and_instruction_totals_are_cumulative() {
        let metric = |b: Builtin| b.metric(Precision::Exact);
        for b in [Builtin::USER, Builtin::SYS, Builtin::INSTRUCTIONS] {
            assert!(metric(b).cumulative, "{b:?}");
        }
        for b in [Builtin::WALL, Builtin::MAX_RSS] {
            assert!(!metric(b).cumulative, "{b:?}");
        }
        assert_eq!(metric(Builtin::INSTRUCTIONS).precision, Precision::Exact);
        assert_eq!(metric(Builtin::WALL).precision, Precision::Noisy);
    }

    /// The defaults where `[bench]` names no metrics: time and memory, not
    /// the counts that need a counter or more than the kernel's accounting.
    #[test]
    fn the_default_metrics_are_time_and_memory() {
        assert_eq!(
            Builtin::defaults(),
            [Builtin::WALL, Builtin::USER, Builtin::SYS, Builtin::MAX_RSS]
        );
    }

    /// A run's built-in values come from its fields, timing runs only
    /// (instructions from either kind); a figure's from its figures.
    #[test]
    fn values_are_read_from_the_run_they_were_measured_in() {
        let mut run: RunRecord = serde_json::from_value(serde_json::json!({
            "round": 0, "warmup": false, "position": 0, "variant": "v",
            "workload": "w", "kind": "timing", "started_unix_ms": 0,
            "success": true, "exit": "exit code 0", "wall_ns": 1_500_000_000u64,
            "user_ns": null, "sys_ns": null, "max_rss_kib": 2048,
            "instructions": null, "instruction_source": null,
            "figures": {"tps": 7.0, "redis.cpu": 0.25},
            "stdout_log": "o", "stderr_log": "e"
        }))
        .unwrap();
        assert_eq!(MetricId::WALL.value(&run), Some(1.5));
        assert_eq!(
            MetricId::Builtin(Builtin::MAX_RSS).value(&run),
            Some(2048.0)
        );
        assert_eq!(MetricId::parse("tps").value(&run), Some(7.0));
        assert_eq!(MetricId::parse("redis.cpu").value(&run), Some(0.25));
        assert_eq!(MetricId::Builtin(Builtin::USER).value(&run), None);
        run.kind = RunKind::Instructions;
        run.instructions = Some(10);
        assert_eq!(MetricId::WALL.value(&run), None);
        assert_eq!(MetricId::INSTRUCTIONS.value(&run), Some(10.0));
        assert_eq!(MetricId::parse("tps").value(&run), None);
    }
}
