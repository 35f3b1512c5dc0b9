//! benchpress's JSON (seed 004 shows it): one object per load workload
//! and variant, with the machine, its caches, each instance's final
//! achieved and requested rate and latency ("1" … "N"), and `overall` (the
//! rates summed, the latencies averaged, as benchpress sums them), so
//! dashboards fed by benchpress read afterburner's runs unchanged. The
//! file holds a JSON array of those objects.

use serde_json::{json, Map, Value};

use super::exporter::Exporter;
use crate::analysis::results::{Instance, Instances};
use crate::analysis::Results;
use crate::metric::LoadMetric;

pub struct Benchpress;

impl Exporter for Benchpress {
    fn name(&self) -> &'static str {
        "benchpress"
    }

    fn describe(&self) -> &'static str {
        "benchpress's result JSON, an object per load workload and variant (machines, metadata, metrics per instance and overall)"
    }

    fn render(&self, results: &Results) -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        for curves in &results.loads {
            let set = results
                .instances
                .iter()
                .find(|s| s.workload == curves.workload && s.variant == curves.variant)
                .cloned()
                .unwrap_or_else(|| single(results, &curves.workload, &curves.variant));
            out.push(object(results, &set));
        }
        let mut bytes = serde_json::to_vec_pretty(&out)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// A load of one instance, from its measurements and its last run's curve.
fn single(results: &Results, workload: &str, variant: &str) -> Instances {
    let mean = |metric: &str| results.mean(workload, variant, metric);
    let curves = results
        .loads
        .iter()
        .find(|l| l.workload == workload && l.variant == variant);
    let latency = curves
        .and_then(|c| c.percentiles.iter().find(|p| p.percentile >= 95.0 - 1e-9))
        .map_or(0.0, |p| p.ms);
    let requested: Vec<f64> = curves
        .map(|c| c.series.iter().filter_map(|s| s.requested_rps).collect())
        .unwrap_or_default();
    let achieved = mean(LoadMetric::SlaRate.name())
        .or_else(|| mean(LoadMetric::Throughput.name()))
        .unwrap_or(0.0);
    Instances {
        workload: workload.to_owned(),
        variant: variant.to_owned(),
        round: curves.map_or(0, |c| c.round),
        percentile: 95.0,
        target_latency_ms: None,
        instances: vec![Instance {
            index: 1,
            requested_rps: (!requested.is_empty())
                .then(|| requested.iter().sum::<f64>() / requested.len() as f64),
            achieved_rps: achieved,
            latency_ms: latency,
            requests: 0,
            healthy: true,
            note: None,
        }],
    }
}

/// Two decimals, as benchpress prints them.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn object(results: &Results, set: &Instances) -> Value {
    let env = &results.environment;
    let mut metrics = Map::new();
    for i in &set.instances {
        metrics.insert(
            i.index.to_string(),
            json!({
                "final_achieved_qps": round2(i.achieved_rps),
                "final_latency_msec": round2(i.latency_ms),
                "final_requested_qps": round2(i.requested_rps.unwrap_or(i.achieved_rps)),
            }),
        );
    }
    let n = set.instances.len().max(1) as f64;
    let sum = |f: &dyn Fn(&Instance) -> f64| set.instances.iter().map(f).sum::<f64>();
    metrics.insert(
        "overall".to_owned(),
        json!({
            "average_latency_msec": round2(sum(&|i| i.latency_ms) / n),
            "final_achieved_qps": round2(sum(&|i| i.achieved_rps)),
            "final_requested_qps": round2(sum(&|i| i.requested_rps.unwrap_or(i.achieved_rps))),
        }),
    );
    metrics.insert(
        "spawned_instances".to_owned(),
        json!(set.instances.len().to_string()),
    );
    metrics.insert(
        "successful_instances".to_owned(),
        json!(set.instances.iter().filter(|i| i.healthy).count()),
    );
    metrics.insert(
        "target_latency_msec".to_owned(),
        json!(set
            .target_latency_ms
            .map_or_else(String::new, |ms| format!("{ms}"))),
    );
    metrics.insert(
        "target_percentile".to_owned(),
        json!(set
            .target_latency_ms
            .map_or_else(String::new, |_| format!("{}p", set.percentile))),
    );
    let metadata: Map<String, Value> = env
        .caches
        .iter()
        .filter_map(|c| c.split_once(' '))
        .map(|(level, size)| (format!("{level} cache"), json!(size)))
        .collect();
    let distro = env.distro.clone().unwrap_or_default();
    json!({
        "benchmark_args": [],
        "benchmark_desc": format!("afterburner: workload `{}` of `{}` on variant `{}` (baseline `{}`), {} counted rounds", set.workload, results.target, set.variant, results.baseline, results.repetitions),
        "benchmark_hooks": [],
        "benchmark_name": format!("{}/{}/{}", results.target, set.workload, set.variant),
        "machines": [{
            "cpu_architecture": if env.x86_64_level.is_some() { "x86_64" } else { std::env::consts::ARCH },
            "cpu_model": env.cpu_model.clone().unwrap_or_default(),
            "hostname": env.hostname.clone().unwrap_or_default(),
            "kernel_version": env.kernel.clone().unwrap_or_default(),
            "mem_total_kib": format!("{} KiB", env.memory_bytes.unwrap_or(0) / 1024),
            "num_logical_cpus": env.logical_cpus.to_string(),
            "os_distro": distro.split_whitespace().next().unwrap_or_default().to_lowercase(),
            "os_release_name": distro,
        }],
        "metadata": metadata,
        "metrics": metrics,
        "run_id": results.run_id,
        "timestamp": unix_seconds(&env.captured_at),
    })
}

/// Seconds since the epoch of an RFC 3339 UTC time (`2026-11-25T08:52:38Z`);
/// 0 when it does not parse.
fn unix_seconds(text: &str) -> i64 {
    let digits = |r: std::ops::Range<usize>| text.get(r).and_then(|s| s.parse::<i64>().ok());
    let (Some(y), Some(m), Some(d), Some(hh), Some(mm), Some(ss)) = (
        digits(0..4),
        digits(5..7),
        digits(8..10),
        digits(11..13),
        digits(14..16),
        digits(17..19),
    ) else {
        return 0;
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + hh * 3600 + mm * 60 + ss
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_seconds_since_the_epoch() {
        // Seed 004's run: 1702590806 is 2023-12-14T21:53:26Z.
        assert_eq!(unix_seconds("2023-12-14T21:53:26Z"), 1_702_590_806);
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), 0);
        assert_eq!(unix_seconds("2024-02-29T12:00:00Z"), 1_709_208_000);
        assert_eq!(unix_seconds("garbage"), 0);
    }
}
