//! `instructions`: the instructions the measured command (or a served
//! run's services) executed in user space, counted by perf stat where
//! counters exist, else callgrind, in runs of their own.

use super::{BuiltinMetric, RunRecord};
use crate::stats::Precision;

pub struct Instructions;

impl BuiltinMetric for Instructions {
    fn name(&self) -> &'static str {
        "instructions"
    }

    fn unit(&self) -> &'static str {
        "instructions"
    }

    /// Callgrind's counts are near-deterministic, perf's noisy.
    fn precision(&self, counted: Precision) -> Precision {
        counted
    }

    /// A total over the run, as `user` is.
    fn cumulative(&self) -> bool {
        true
    }

    fn value(&self, run: &RunRecord) -> Option<f64> {
        run.instructions.map(|n| n as f64)
    }
}
