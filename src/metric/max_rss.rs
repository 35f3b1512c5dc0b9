//! `max_rss`: the measured command's peak resident set size (`wait4`'s
//! `ru_maxrss`: its largest process's).

use super::{BuiltinMetric, RunKind, RunRecord};

pub struct MaxRss;

impl BuiltinMetric for MaxRss {
    fn name(&self) -> &'static str {
        "max_rss"
    }

    fn unit(&self) -> &'static str {
        "KiB"
    }

    fn cumulative(&self) -> bool {
        false
    }

    fn by_default(&self) -> bool {
        true
    }

    fn value(&self, run: &RunRecord) -> Option<f64> {
        let kib = run.max_rss_kib.filter(|_| run.kind == RunKind::Timing)?;
        Some(kib as f64)
    }
}
