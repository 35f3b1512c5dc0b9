//! CPU utilization during the load runs (the last counted run of each
//! load workload and variant), as `mpstat -u` reads it: the machine's mean
//! user, system, iowait, steal and idle shares, and how busy its busiest
//! and idlest intervals were.

use std::fmt::Write as _;

use crate::analysis::Results;
use crate::cpustat;

/// The "CPU utilization during the loads" section of report.md; empty
/// when no run kept its samples.
pub fn markdown(results: &Results) -> String {
    let rows: Vec<_> = results.loads.iter().filter(|l| !l.cpu.is_empty()).collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## CPU utilization during the loads\n\nThe whole machine's, from /proc/stat, per interval of the last counted run (services, load client and everything else together), in percent; busy = user + system + steal.\n\n| workload | variant | user | system | iowait | steal | idle | busy, lowest interval | busy, highest | CPUs |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for l in rows {
        let Some(m) = cpustat::mean(&l.cpu) else {
            continue;
        };
        let busy: Vec<f64> = l.cpu.iter().map(|r| r.total.busy()).collect();
        let low = busy.iter().copied().fold(f64::INFINITY, f64::min);
        let high = busy.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {low:.1} | {high:.1} | {} |",
            l.workload,
            l.variant,
            m.user,
            m.system,
            m.iowait,
            m.steal,
            m.idle,
            l.cpu[0].cpus.len()
        );
    }
    out.push('\n');
    out
}
