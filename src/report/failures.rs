//! Failed requests are results: per load workload and variant, the
//! requests its counted runs answered, failed (by kind: connection,
//! protocol, server, fatal) and left unanswered within the timeout, read
//! from the runs' figures. Their shares (`error_rate`, `timeout_rate`) are
//! judged with the other metrics; this table says what the failures were.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::Results;
use crate::load::ERRORS_OF;
use crate::measure::RunRecord;
use crate::runs::BenchMeta;

/// One load workload's requests on one variant, over its counted runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failures {
    pub workload: String,
    pub variant: String,
    /// Counted runs added up (warmup and failed runs left out).
    pub runs: usize,
    /// Requests answered successfully.
    pub answered: u64,
    /// Requests that failed: error replies, lost or refused connections.
    pub errors: u64,
    /// Requests unanswered within the load's timeout (in its latency at
    /// the timeout).
    pub timeouts: u64,
    /// The failed requests by kind (`connection`, `protocol`, `server`,
    /// `fatal`); kinds that did not occur are absent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_kind: BTreeMap<String, u64>,
}

impl Failures {
    /// Requests attempted: answered, failed and timed out.
    pub fn attempted(&self) -> u64 {
        self.answered + self.errors + self.timeouts
    }
}

/// Each load workload's requests per variant, from the counted runs'
/// figures (`requests`, `errors`, `timeouts`, `errors.KIND`).
pub fn tally(meta: &BenchMeta, runs: &[RunRecord]) -> Vec<Failures> {
    let mut out = Vec::new();
    for workload in &meta.workloads {
        for variant in &meta.variants {
            let counted = runs.iter().filter(|r| {
                r.success
                    && !r.warmup
                    && r.workload == *workload
                    && r.variant == variant.name
                    && r.figures.contains_key("errors")
            });
            let mut f = Failures {
                workload: workload.clone(),
                variant: variant.name.clone(),
                runs: 0,
                answered: 0,
                errors: 0,
                timeouts: 0,
                by_kind: BTreeMap::new(),
            };
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // counts
            let count = |v: f64| v.max(0.0).round() as u64;
            for r in counted {
                f.runs += 1;
                let figure = |name: &str| count(r.figures.get(name).copied().unwrap_or(0.0));
                f.answered += figure("requests");
                f.errors += figure("errors");
                f.timeouts += figure("timeouts");
                for (name, v) in &r.figures {
                    if let Some(kind) = name.strip_prefix(ERRORS_OF) {
                        *f.by_kind.entry(kind.to_owned()).or_default() += count(*v);
                    }
                }
            }
            if f.runs > 0 {
                out.push(f);
            }
        }
    }
    out
}

/// The section of report.md; empty when no load failed a request.
pub fn markdown(results: &Results) -> String {
    if results.failures.iter().all(|f| f.errors + f.timeouts == 0) {
        return String::new();
    }
    let mut out = String::from(
        "## Failed requests\n\nEvery counted run of each load added up. A timed-out request is in the latency percentiles at the load's timeout (as wrk2 and k6 count it), so failing the slowest requests never shortens the tail; `error_rate` and `timeout_rate` (shares of the requests attempted) are judged with the other metrics.\n\n| workload | variant | runs | attempted | answered | errors | timeouts | error rate | timeout rate | errors by kind |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for f in &results.failures {
        let share = |n: u64| {
            if f.attempted() == 0 {
                "–".to_owned()
            } else {
                format!("{:.2}%", 100.0 * n as f64 / f.attempted() as f64)
            }
        };
        let kinds: Vec<String> = f.by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            f.workload,
            f.variant,
            f.runs,
            f.attempted(),
            f.answered,
            f.errors,
            f.timeouts,
            share(f.errors),
            share(f.timeouts),
            if kinds.is_empty() {
                "–".to_owned()
            } else {
                kinds.join(", ")
            }
        );
    }
    out.push('\n');
    out
}
