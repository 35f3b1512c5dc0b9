//! What a race (`afterburner race`) records in `meta.json`: its plan, and
//! the fixed design it stands in for. Why it stopped goes in the run's
//! `stopped`, as a sequential plan's does; who was dropped when is not
//! stored: it is a function of the records, replayed
//! ([`crate::stats::race::replay`]).

use serde::{Deserialize, Serialize};

use crate::stats::race::RacePlan;

/// A race as a run records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RaceMeta {
    /// When to look, at what level, and the margin of "same".
    pub plan: RacePlan,
    /// The time the rounds may take, in seconds (warmup included).
    pub budget_s: f64,
    /// The rounds of the fixed design (`[bench] repetitions`) that running
    /// every candidate to the end would have taken.
    pub full_rounds: u32,
    /// The candidates left out, with why: combinations of `[race]`'s axes
    /// that cannot be built, and candidates that cannot run here or whose
    /// build or training failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<crate::experiment::LeftOut>,
    /// `[race] screen = "instructions"`: the work screen before the first
    /// look (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<crate::stats::race::Screen>,
}
