//! What a cluster run submits, whatever the scheduler: a build per variant
//! that is not prebuilt, a training (and final build) per variant that
//! needs a profile, after its build, and the bench blocks after them all.

use crate::experiment::{Cluster, Experiment};

/// The phases of a cluster run, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phases {
    /// Variants built by a job of their own.
    pub builds: Vec<String>,
    /// Variants trained after their build (a subset of `builds`).
    pub trains: Vec<String>,
    /// Bench blocks, 0 to `blocks - 1`.
    pub blocks: u32,
}

/// The phases of `e` on `cluster`; `build` false submits the bench alone.
pub fn phases(e: &Experiment, cluster: &Cluster, build: bool) -> Phases {
    let variants: Vec<_> = if build {
        e.variants.iter().filter(|v| v.prebuilt.is_none()).collect()
    } else {
        Vec::new()
    };
    Phases {
        builds: variants.iter().map(|v| v.name.clone()).collect(),
        trains: variants
            .iter()
            .filter(|v| v.needs_profile())
            .map(|v| v.name.clone())
            .collect(),
        blocks: cluster.nodes,
    }
}
