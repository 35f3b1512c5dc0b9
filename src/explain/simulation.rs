//! What `explain --simulate` found: per workload and variant, callgrind's
//! simulated branch mispredictions and cache misses, in all and in the
//! function with the most of each. A model (callgrind's caches, shaped
//! like this machine's, and a simple predictor), not this CPU's counters.

use anyhow::{Context as _, Result};

use super::parse::{self, FunctionKey, Profile, Simulated};
use crate::runs::Recorded;

/// The simulated runs of a run directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulation {
    /// The run directory's id.
    pub run_id: String,
    /// One per workload and variant that has a simulated run, in the
    /// run's order.
    pub runs: Vec<SimulatedRun>,
}

/// One simulated run: its totals and where the most of each happened.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedRun {
    /// The workload's name.
    pub workload: String,
    /// The variant's name.
    pub variant: String,
    /// Instructions executed.
    pub instructions: u64,
    /// The [`parse::SIMULATED`] events, in its order.
    pub events: Simulated,
    /// The function with the most mispredicted branches, and their number.
    pub most_mispredicted: Option<(FunctionKey, u64)>,
    /// The function with the most L1 misses (instruction and data), and
    /// their number.
    pub most_l1_misses: Option<(FunctionKey, u64)>,
}

impl SimulatedRun {
    /// Branches executed, conditional and indirect.
    pub fn branches(&self) -> u64 {
        self.events[0] + self.events[2]
    }

    /// Branches mispredicted, conditional and indirect.
    pub fn mispredicted(&self) -> u64 {
        mispredicted(&self.events)
    }

    /// L1 misses: instruction fetches, data reads and writes.
    pub fn l1_misses(&self) -> u64 {
        l1_misses(&self.events)
    }

    /// Last-level cache misses: instruction fetches, data reads and writes.
    pub fn ll_misses(&self) -> u64 {
        self.events[7] + self.events[8] + self.events[9]
    }
}

fn mispredicted(events: &Simulated) -> u64 {
    events[1] + events[3]
}

fn l1_misses(events: &Simulated) -> u64 {
    events[4] + events[5] + events[6]
}

/// The simulated runs kept in a recorded run's directory (none before
/// `explain --simulate`).
pub fn read(recorded: &Recorded) -> Result<Simulation> {
    let meta = &recorded.meta;
    let mut runs = Vec::new();
    for workload in &meta.workloads {
        for variant in &meta.variants {
            let files = crate::runs::simulation_files(&recorded.dir, workload, &variant.name)?;
            if files.is_empty() {
                continue;
            }
            let mut profile = Profile::default();
            for file in files {
                let text = fs_err::read_to_string(&file)?;
                profile.add(
                    parse::parse(&text, &file.display().to_string()).with_context(|| {
                        format!(
                            "reading the simulated run of workload `{workload}` on variant `{}`",
                            variant.name
                        )
                    })?,
                );
            }
            let most = |of: fn(&Simulated) -> u64| {
                profile
                    .functions
                    .iter()
                    .map(|(key, cost)| (key, of(&cost.simulated)))
                    .filter(|(_, n)| *n > 0)
                    .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
                    .map(|(key, n)| (key.clone(), n))
            };
            runs.push(SimulatedRun {
                workload: workload.clone(),
                variant: variant.name.clone(),
                instructions: profile.total,
                events: profile.simulated_total,
                most_mispredicted: most(mispredicted),
                most_l1_misses: most(l1_misses),
            });
        }
    }
    Ok(Simulation {
        run_id: meta.run_id.clone(),
        runs,
    })
}
