//! The window every per-request figure counts: each service's counters
//! (CPU time and context switches, over all its processes and threads) read
//! at the edges of the window whose requests divide them — a load's
//! measured window (after its warmup), an SLA search's confirming run (not
//! its probes), a command workload's run — so start-up, warmup, probes and
//! shutdown are in neither the numerator nor the denominator.

use std::sync::Mutex;

use crate::load::Edge;
use crate::process::{TreeCounters, WindowUsage};
use crate::service::Services;

/// Each service's counters at one edge, by name (`None`: it was gone).
type Reading = Vec<(String, Option<TreeCounters>)>;

/// One copy's services and what their counters read at the window's edges.
pub(super) struct ServiceWindow<'a> {
    services: &'a Services,
    /// At the opening edge, and at the closing one.
    edges: Mutex<(Option<Reading>, Option<Reading>)>,
}

impl<'a> ServiceWindow<'a> {
    pub(super) fn new(services: &'a Services) -> Self {
        Self {
            services,
            edges: Mutex::new((None, None)),
        }
    }

    /// Read every service's counters now, as the window's `edge`.
    pub(super) fn edge(&self, edge: Edge) {
        let reading = self.services.counters();
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
    fn usage(&self) -> Option<Vec<(String, WindowUsage)>> {
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
            .map(|((name, start), (_, end))| {
                Some((name.clone(), end.as_ref()?.since(start.as_ref()?)))
            })
            .collect()
    }
}

/// Each service's use over its copies' windows, added up (in the services'
/// order); `None` when any copy's window was not read whole (a service died,
/// the load failed before its window opened): then no per-request figure
/// is better than one over another window.
pub(super) fn window_usage(windows: &[ServiceWindow]) -> Option<Vec<(String, WindowUsage)>> {
    let mut total: Vec<(String, WindowUsage)> = Vec::new();
    for window in windows {
        for (name, usage) in window.usage()? {
            match total.iter_mut().find(|(n, _)| *n == name) {
                Some((_, sum)) => *sum = *sum + usage,
                None => total.push((name, usage)),
            }
        }
    }
    (!total.is_empty()).then_some(total)
}
