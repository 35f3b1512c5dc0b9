//! Server-side latency beside the client's (seed 003 reports such pairs):
//! the server's own mean time per command over each run (Redis `INFO
//! commandstats`), next to the latency the load client measured, which
//! adds the network, the queueing and the client itself.

use std::fmt::Write as _;

use crate::analysis::Results;
use crate::metric::{LoadMetric, MetricId};

/// The section of report.md; empty when no server kept its own time.
pub fn markdown(results: &Results) -> String {
    let mut rows = String::new();
    for m in results
        .measurements
        .iter()
        .filter(|m| m.metric.is(&MetricId::Load(LoadMetric::ServerMean)))
    {
        let server = m.summary.mean;
        let (p50, p99) = (
            results.mean(&m.workload, &m.variant, LoadMetric::P50.name()),
            results.mean(&m.workload, &m.variant, LoadMetric::P99.name()),
        );
        // The client's percentiles are in ms; the table is in µs.
        let show =
            |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{:.1}", v * 1000.0));
        let _ = writeln!(
            rows,
            "| {} | {} | {server:.2} | {} | {} | {} |",
            m.workload,
            m.variant,
            show(p50),
            show(p99),
            p50.map_or_else(
                || "–".to_owned(),
                |p| format!("{:.1}%", 100.0 * server / (p * 1000.0))
            ),
        );
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "## Server-side latency beside the client's\n\nThe server's own mean time per command over each run (Redis INFO commandstats, the difference before and after the load), and the latency the client measured (mean over runs of each run's percentile), in µs.\n\n| workload | variant | server mean | client p50 | client p99 | server share of p50 |\n|---|---|---:|---:|---:|---:|\n{rows}\n"
    )
}
