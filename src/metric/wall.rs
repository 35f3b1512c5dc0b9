//! `wall`: the measured command's wall-clock time, from just before its
//! spawn to its exit (a load of fixed work: from its start to its end).

use super::{BuiltinMetric, RunKind, RunRecord};

pub struct Wall;

impl BuiltinMetric for Wall {
    fn name(&self) -> &'static str {
        "wall"
    }

    fn unit(&self) -> &'static str {
        "s"
    }

    fn cumulative(&self) -> bool {
        false
    }

    fn by_default(&self) -> bool {
        true
    }

    fn value(&self, run: &RunRecord) -> Option<f64> {
        let ns = run.wall_ns.filter(|_| run.kind == RunKind::Timing)?;
        Some(ns as f64 / 1e9)
    }
}
