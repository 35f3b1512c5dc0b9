//! Failed requests are results: per load workload and variant, the
//! requests its counted runs answered, failed (by kind: connection,
//! protocol, server, fatal) and left unanswered within the timeout, read
//! from the runs' figures. Their shares (`error_rate`, `timeout_rate`) are
//! judged with the other metrics; this tally says what the failures were.

use std::collections::BTreeMap;

use super::results::Failures;
use crate::load::ERRORS_OF;
use crate::measure::RunRecord;
use crate::metric::Tally;
use crate::runs::BenchMeta;

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
                    && Tally::Errors.value(r).is_some()
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
                let figure = |tally: Tally| count(tally.value(r).unwrap_or(0.0));
                f.answered += figure(Tally::Requests);
                f.errors += figure(Tally::Errors);
                f.timeouts += figure(Tally::Timeouts);
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
