//! The "Failed requests" section of report.md: per load workload and
//! variant, what its counted runs answered, failed (by kind) and left
//! unanswered ([`crate::analysis::failures`] tallies them).

use std::fmt::Write as _;

use crate::analysis::Results;

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
