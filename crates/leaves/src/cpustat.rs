//! CPU utilization while a run goes on, as `mpstat -u -P ALL 1` shows it:
//! a sampler thread reads `/proc/stat` every interval and turns the ticks
//! each CPU spent into shares of the interval — user (with nice), system
//! (with irq and softirq), iowait, steal and idle, which add up to 100% —
//! per CPU and for the machine (seed 004 expects 60–75% busy during the
//! confirming run).

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Shares of one interval, in percent; they add up to 100.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
// Its name in results.schema.json, as before it was renamed.
#[schemars(rename = "Share")]
pub struct CpuShares {
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub steal: f64,
    pub idle: f64,
}

impl CpuShares {
    /// Everything but idle and iowait, in percent.
    pub fn busy(&self) -> f64 {
        self.user + self.system + self.steal
    }
}

/// One interval: the machine's shares and each CPU's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Row {
    /// End of the interval, seconds after sampling began.
    pub time_s: f64,
    pub total: CpuShares,
    /// By CPU number (`cpu0`, `cpu1`, …).
    pub cpus: Vec<CpuShares>,
}

/// The tick counters of one `cpu` line: user, nice, system, idle, iowait,
/// irq, softirq, steal (guest time is inside user already).
type Ticks = [u64; 8];

/// Every `cpu…` line of `/proc/stat`: the machine's first, then each CPU's.
fn parse(text: &str) -> Vec<Ticks> {
    text.lines()
        .filter(|l| l.starts_with("cpu"))
        .map(|l| {
            let mut ticks = [0; 8];
            for (slot, word) in ticks.iter_mut().zip(l.split_whitespace().skip(1)) {
                *slot = word.parse().unwrap_or(0);
            }
            ticks
        })
        .collect()
}

fn read() -> Vec<Ticks> {
    std::fs::read_to_string("/proc/stat")
        .map(|t| parse(&t))
        .unwrap_or_default()
}

/// The shares between two readings of one line.
fn share(before: &Ticks, after: &Ticks) -> CpuShares {
    let d: Vec<f64> = before
        .iter()
        .zip(after)
        .map(|(b, a)| a.saturating_sub(*b) as f64)
        .collect();
    let all: f64 = d.iter().sum();
    if all <= 0.0 {
        return CpuShares {
            idle: 100.0,
            ..CpuShares::default()
        };
    }
    let pct = |x: f64| 100.0 * x / all;
    CpuShares {
        user: pct(d[0] + d[1]),
        system: pct(d[2] + d[5] + d[6]),
        idle: pct(d[3]),
        iowait: pct(d[4]),
        steal: pct(d[7]),
    }
}

/// A sampler thread; [`Sampler::stop`] ends it and returns its rows. It
/// wakes once per interval (or when stopped), not more: it runs beside
/// what is being measured.
pub struct Sampler {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<Vec<Row>>,
}

impl Sampler {
    /// Sample every `interval` (at least 10 ms) from now on.
    pub fn start(interval: Duration) -> Sampler {
        let interval = interval.max(Duration::from_millis(10));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let began = Instant::now();
            let mut rows = Vec::new();
            let mut last = read();
            let mut next = began + interval;
            loop {
                let wait = next.saturating_duration_since(Instant::now());
                let done = !matches!(stopped.recv_timeout(wait), Err(RecvTimeoutError::Timeout));
                let now = read();
                if now.len() == last.len() && !now.is_empty() {
                    rows.push(Row {
                        time_s: began.elapsed().as_secs_f64(),
                        total: share(&last[0], &now[0]),
                        cpus: last[1..]
                            .iter()
                            .zip(&now[1..])
                            .map(|(b, a)| share(b, a))
                            .collect(),
                    });
                }
                last = now;
                if done || rows.len() >= MAX_ROWS {
                    return rows;
                }
                next += interval;
            }
        });
        Sampler { stop, thread }
    }

    /// Stop sampling (the interval under way becomes a last, shorter row).
    pub fn stop(self) -> Vec<Row> {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_default()
    }
}

/// Rows one sampler keeps at most (a week of seconds).
const MAX_ROWS: usize = 7 * 24 * 3600;

/// The mean of `rows`' machine-wide shares.
pub fn mean(rows: &[Row]) -> Option<CpuShares> {
    if rows.is_empty() {
        return None;
    }
    let n = rows.len() as f64;
    let sum = |f: fn(&CpuShares) -> f64| rows.iter().map(|r| f(&r.total)).sum::<f64>() / n;
    Some(CpuShares {
        user: sum(|s| s.user),
        system: sum(|s| s.system),
        iowait: sum(|s| s.iowait),
        steal: sum(|s| s.steal),
        idle: sum(|s| s.idle),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_an_interval_add_up_to_one_hundred() {
        let before =
            parse("cpu  100 0 50 800 10 0 0 0 0 0\ncpu0 50 0 25 400 5 0 0 0 0 0\nintr 1 2\n");
        let after = parse("cpu  160 20 70 900 20 5 5 0 0 0\ncpu0 80 10 35 450 10 2 3 0 0 0\n");
        assert_eq!(before.len(), 2);
        let s = share(&before[0], &after[0]);
        // 80 user+nice, 30 system+irq+softirq, 100 idle, 10 iowait of 220.
        assert!((s.user - 100.0 * 80.0 / 220.0).abs() < 1e-9, "{s:?}");
        assert!((s.system - 100.0 * 30.0 / 220.0).abs() < 1e-9, "{s:?}");
        let total = s.user + s.system + s.iowait + s.steal + s.idle;
        assert!((total - 100.0).abs() < 1e-9);
        assert!((s.busy() - 100.0 * 110.0 / 220.0).abs() < 1e-9);
        // No ticks at all (a reading too soon): idle, not a division by 0.
        assert!((share(&before[1], &before[1]).idle - 100.0).abs() < 1e-9);
    }

    #[test]
    fn a_sampler_on_this_machine_sees_every_cpu_and_whole_intervals() {
        let sampler = Sampler::start(Duration::from_millis(50));
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_millis(220) {
            std::hint::black_box(spin.elapsed());
        }
        let rows = sampler.stop();
        if rows.is_empty() {
            eprintln!("no /proc/stat here: nothing sampled");
            return;
        }
        assert!(rows.len() >= 3, "{} rows", rows.len());
        for r in &rows {
            let t = &r.total;
            assert!((t.user + t.system + t.iowait + t.steal + t.idle - 100.0).abs() < 1e-6);
            assert!(!r.cpus.is_empty());
        }
    }
}
