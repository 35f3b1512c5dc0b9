//! `user`: the measured command's CPU time in user mode (`wait4`), its
//! waited-for descendants included.

use super::{BuiltinMetric, RunKind, RunRecord};

pub struct User;

impl BuiltinMetric for User {
    fn name(&self) -> &'static str {
        "user"
    }

    fn unit(&self) -> &'static str {
        "s"
    }

    /// A total over the run. In a run of fixed duration (a command whose
    /// primary figure is a rate, pgbench -T) a faster build does more in
    /// it, so it is shown, not judged, and not the headline's work. Not per
    /// unit of the rate either: the command counts its rate over a window
    /// of its own (pgbench leaves out its connections) that its whole-life
    /// CPU (start-up, connecting, teardown) does not share, and a quotient
    /// of the two would mix windows.
    fn cumulative(&self) -> bool {
        true
    }

    fn by_default(&self) -> bool {
        true
    }

    fn value(&self, run: &RunRecord) -> Option<f64> {
        let ns = run.user_ns.filter(|_| run.kind == RunKind::Timing)?;
        Some(ns as f64 / 1e9)
    }
}
