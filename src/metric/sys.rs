//! `sys`: the measured command's CPU time in kernel mode (`wait4`), its
//! waited-for descendants included.

use super::{BuiltinMetric, RunKind, RunRecord};

pub struct Sys;

impl BuiltinMetric for Sys {
    fn name(&self) -> &'static str {
        "sys"
    }

    fn unit(&self) -> &'static str {
        "s"
    }

    /// A total over the run, as `user` is.
    fn cumulative(&self) -> bool {
        true
    }

    fn by_default(&self) -> bool {
        true
    }

    fn value(&self, run: &RunRecord) -> Option<f64> {
        let ns = run.sys_ns.filter(|_| run.kind == RunKind::Timing)?;
        Some(ns as f64 / 1e9)
    }
}
