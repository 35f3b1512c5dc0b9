//! The window every per-request figure counts: each service's counters
//! (CPU time and context switches, over all its processes and threads) read
//! at the edges of the window whose requests divide them — a load's
//! measured window (after its warmup), an SLA search's confirming run (not
//! its probes), a command workload's run — so start-up, warmup, probes and
//! shutdown are in neither the numerator nor the denominator. The
//! built-in metrics asked for that count services (page faults) are read
//! per process at the same edges.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::load::Edge;
use crate::metric::Builtin;
use crate::process::{TreeCounters, WindowUsage};
use crate::service::Services;

/// Each service's counters at one edge, by name (`None`: it was gone), and
/// each counted metric's count of each of its processes.
type Reading = Vec<(String, Option<TreeCounters>, Counts)>;

/// A count per process, for each counted metric.
type Counts = Vec<BTreeMap<libc::pid_t, u64>>;

/// What a service used inside a window: its CPU time and context
/// switches, and the count of each built-in metric counted per service.
#[derive(Debug, Clone, Default)]
pub(super) struct Used {
    pub usage: WindowUsage,
    pub counts: Vec<(Builtin, u64)>,
}

/// One copy's services and what their counters read at the window's edges.
pub(super) struct ServiceWindow<'a> {
    services: &'a Services,
    /// The built-in metrics counted per process.
    counted: Vec<Builtin>,
    /// At the opening edge, and at the closing one.
    edges: Mutex<(Option<Reading>, Option<Reading>)>,
}

impl<'a> ServiceWindow<'a> {
    /// A window of `services`, counting those of `metrics` that count
    /// services.
    pub(super) fn new(services: &'a Services, metrics: &[Builtin]) -> Self {
        Self {
            services,
            counted: metrics
                .iter()
                .copied()
                .filter(|b| b.per_service())
                .collect(),
            edges: Mutex::new((None, None)),
        }
    }

    /// Each counted metric's count of every process of each service now.
    fn counts(&self) -> Vec<Counts> {
        if self.counted.is_empty() {
            return Vec::new();
        }
        self.services
            .processes()
            .into_iter()
            .map(|(_, pids, _)| {
                self.counted
                    .iter()
                    .map(|b| {
                        pids.iter()
                            .filter_map(|pid| Some((*pid, b.of_process(*pid)?)))
                            .collect()
                    })
                    .collect()
            })
            .collect()
    }

    /// Read every service's counters now, as the window's `edge`.
    pub(super) fn edge(&self, edge: Edge) {
        let mut counts = self.counts().into_iter();
        let reading = self
            .services
            .counters()
            .into_iter()
            .map(|(name, counters)| (name, counters, counts.next().unwrap_or_default()))
            .collect();
        let mut edges = self
            .edges
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match edge {
            Edge::Opens => edges.0 = Some(reading),
            Edge::Closes => edges.1 = Some(reading),
        }
    }

    /// What each service used inside the window; `None` unless both edges
    /// were read and every service was there at both.
    fn usage(&self) -> Option<Vec<(String, Used)>> {
        let edges = self
            .edges
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (Some(start), Some(end)) = (&edges.0, &edges.1) else {
            return None;
        };
        start
            .iter()
            .zip(end)
            .map(|((name, start, before), (_, end, after))| {
                let usage = end.as_ref()?.since(start.as_ref()?);
                let counts = self
                    .counted
                    .iter()
                    .zip(before.iter().zip(after))
                    .map(|(b, (before, after))| (*b, grown(before, after)))
                    .collect();
                Some((name.clone(), Used { usage, counts }))
            })
            .collect()
    }
}

/// What processes counted from `before` to `after`: each process's growth
/// (all of one born since). A process gone by `after` takes its count
/// with it, so this is a floor.
fn grown(before: &BTreeMap<libc::pid_t, u64>, after: &BTreeMap<libc::pid_t, u64>) -> u64 {
    after
        .iter()
        .map(|(pid, n)| n.saturating_sub(before.get(pid).copied().unwrap_or(0)))
        .sum()
}

/// Each service's use over its copies' windows, added up (in the services'
/// order); `None` when any copy's window was not read whole (a service died,
/// the load failed before its window opened): then no per-request figure
/// is better than one over another window.
pub(super) fn window_usage(windows: &[ServiceWindow]) -> Option<Vec<(String, Used)>> {
    let mut total: Vec<(String, Used)> = Vec::new();
    for window in windows {
        for (name, used) in window.usage()? {
            match total.iter_mut().find(|(n, _)| *n == name) {
                Some((_, sum)) => {
                    sum.usage = sum.usage + used.usage;
                    for ((_, n), (_, more)) in sum.counts.iter_mut().zip(&used.counts) {
                        *n += more;
                    }
                }
                None => total.push((name, used)),
            }
        }
    }
    (!total.is_empty()).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process's growth counts, one born inside the window counts whole,
    /// one gone by its end counts nothing (a floor).
    #[test]
    fn a_windows_count_is_each_processes_growth() {
        let before = BTreeMap::from([(1, 100), (2, 50)]);
        let after = BTreeMap::from([(1, 130), (3, 7)]);
        assert_eq!(grown(&before, &after), 30 + 7);
        assert_eq!(grown(&after, &after), 0);
    }
}
