//! What a sampled recording of a running service cost and held: its
//! window's length, its samples (and so their rate) and the CPU time perf
//! itself used, read from perf's own `/proc/<pid>/stat` once it has
//! exited and before it is reaped. Written beside each recording
//! (`raw/<workload>/<service>.cost.json`), read back into results.json's
//! profiles: what a user weighs before sampling production.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units::grouped;

/// One recording's cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordingCost {
    /// The training workload whose window it covered.
    pub workload: String,
    /// The service recorded.
    pub service: String,
    /// The window's length, seconds.
    pub seconds: f64,
    /// Samples in the recording (every process of the service).
    pub samples: u64,
    /// CPU time perf record used (user and system, its threads included),
    /// seconds; absent where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf_cpu_seconds: Option<f64>,
}

impl RecordingCost {
    /// "12,345 samples in 5.0 s (2,469/s), perf 0.21 s of CPU (4.2% of one core)".
    pub fn describe(&self) -> String {
        describe(self.samples, self.seconds, self.perf_cpu_seconds)
    }
}

/// Several recordings' cost together (the rates over their summed time).
pub fn total(costs: &[RecordingCost]) -> Option<String> {
    if costs.is_empty() {
        return None;
    }
    let seconds: f64 = costs.iter().map(|c| c.seconds).sum();
    let samples: u64 = costs.iter().map(|c| c.samples).sum();
    let cpu: Option<f64> = costs.iter().map(|c| c.perf_cpu_seconds).sum();
    Some(describe(samples, seconds, cpu))
}

fn describe(samples: u64, seconds: f64, cpu: Option<f64>) -> String {
    let rate = if seconds > 0.0 {
        format!(" ({}/s)", grouped(samples as f64 / seconds))
    } else {
        String::new()
    };
    let cpu = cpu.map_or_else(String::new, |cpu| {
        let share = if seconds > 0.0 {
            format!(" ({:.1}% of one core)", 100.0 * cpu / seconds)
        } else {
            String::new()
        };
        format!(", perf {cpu:.2} s of CPU{share}")
    });
    format!(
        "{} samples in {seconds:.1} s{rate}{cpu}",
        grouped(samples as f64)
    )
}

/// The CPU time (user + system) of process `pid` so far, from
/// `/proc/<pid>/stat` (an exited process not yet reaped still has it).
pub fn cpu_time(pid: libc::pid_t) -> Option<Duration> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields after its
    // last ')' are numbered from 3 (state).
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    let total = ticks(14)? + ticks(15)?;
    // SAFETY: sysconf only reads a configuration value.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    (per_second > 0).then(|| Duration::from_secs_f64(total as f64 / per_second as f64))
}

/// Write `cost` beside its recording (`<recording>.cost.json`).
pub fn write(recording: &Path, cost: &RecordingCost) -> anyhow::Result<()> {
    fs_err::write(
        recording.with_extension("cost.json"),
        serde_json::to_vec_pretty(cost)?,
    )?;
    Ok(())
}

/// Every recording's cost under a round's `raw/` directory (one folder per
/// workload), by workload then service.
pub fn read_all(raw: &Path) -> Vec<RecordingCost> {
    let mut costs: Vec<RecordingCost> = fs_err::read_dir(raw)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|workload| fs_err::read_dir(workload.path()).ok())
        .flatten()
        .flatten()
        .map(|f| f.path())
        .filter(|p| p.to_string_lossy().ends_with(".cost.json"))
        .filter_map(|p| serde_json::from_slice(&fs_err::read(p).ok()?).ok())
        .collect();
    costs.sort_by(|a, b| (&a.workload, &a.service).cmp(&(&b.workload, &b.service)));
    costs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recordings_cost_reads_as_a_user_weighs_it() {
        let cost = RecordingCost {
            workload: "get".to_owned(),
            service: "redis".to_owned(),
            seconds: 5.0,
            samples: 12_345,
            perf_cpu_seconds: Some(0.21),
        };
        assert_eq!(
            cost.describe(),
            "12,345 samples in 5.0 s (2,469/s), perf 0.21 s of CPU (4.2% of one core)"
        );
        let other = RecordingCost {
            samples: 655,
            perf_cpu_seconds: None,
            ..cost.clone()
        };
        // One recording without perf's CPU time: the total has none.
        assert_eq!(
            total(&[cost, other]).unwrap(),
            "13,000 samples in 10.0 s (1,300/s)"
        );
        assert_eq!(total(&[]), None);
    }

    /// This process's own CPU time, read as perf's is: it grows with work.
    #[test]
    fn cpu_time_is_read_from_proc() {
        let pid = libc::pid_t::try_from(std::process::id()).unwrap();
        let before = cpu_time(pid).unwrap();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let after = cpu_time(pid).unwrap();
        assert!(after > before, "{before:?} then {after:?}");
    }

    #[test]
    fn costs_are_written_beside_recordings_and_read_back_in_order() {
        let raw = tempfile::tempdir().unwrap();
        for (workload, samples) in [("set", 2), ("get", 1)] {
            fs_err::create_dir_all(raw.path().join(workload)).unwrap();
            let recording = raw.path().join(workload).join("redis.perfdata");
            let cost = RecordingCost {
                workload: workload.to_owned(),
                service: "redis".to_owned(),
                seconds: 1.0,
                samples,
                perf_cpu_seconds: None,
            };
            write(&recording, &cost).unwrap();
        }
        let read: Vec<(String, u64)> = read_all(raw.path())
            .into_iter()
            .map(|c| (c.workload, c.samples))
            .collect();
        assert_eq!(read, [("get".to_owned(), 1), ("set".to_owned(), 2)]);
    }
}
