//! `[bench]` and `[race]`: how the bench phase repeats, judges and races.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// `[race]`: rounds run only the candidates still in the race; after each
/// scheduled look, one decided slower than the leader is dropped
/// ([`crate::stats::race`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Race {
    /// The time the rounds may take, warmup included.
    pub budget: Duration,
    /// Rounds before the first look (at least 2).
    pub min: u32,
    /// The most rounds (by default the file's `repetitions`).
    pub max: u32,
    /// Same as the leader within this margin, a fraction.
    pub equivalence: f64,
    /// `screen = "instructions"`: before the first look, a candidate with
    /// more than (1 + margin) × the fewest instructions is screened out
    /// (`None`: no screen).
    pub screen: Option<crate::stats::race::Screen>,
    /// Combinations of its axes that cannot be built, with the reason (a
    /// race adds the candidates whose build or training fails).
    pub left_out: Vec<LeftOut>,
    /// The baseline runs every round, after it is dropped too: each
    /// survivor's comparison against it then pairs every round (by
    /// default it stops when dropped, as every candidate does).
    pub keep_baseline: bool,
}

/// A combination of `[race]`'s axes left out of the race, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LeftOut {
    pub candidate: String,
    /// What the experiment's validation said of it.
    pub reason: String,
    /// What to do about it.
    pub hint: String,
    /// The line of the experiment file the reason points at; none for a
    /// candidate left out when it was built or trained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl Race {
    /// `[race]`'s defaults in a file of `repetitions` counted rounds: at
    /// most those rounds (at least `min`), so a race never costs more
    /// rounds than the full design it stands in for unless the file asks.
    #[must_use]
    pub fn defaults(repetitions: u32) -> Self {
        Race {
            budget: Duration::from_mins(30),
            min: 2,
            max: repetitions.max(2),
            equivalence: 0.02,
            left_out: Vec::new(),
            screen: None,
            keep_baseline: false,
        }
    }
}

/// How the bench phase repeats and judges.
#[derive(Debug, Clone, Serialize)]
pub struct Bench {
    /// Counted repetitions per variant and workload; with a sequential
    /// plan, the most rounds.
    pub repetitions: u32,
    /// `repetitions = "auto"`: rounds go on until every primary comparison
    /// is decided or the budget ends.
    pub sequential: Option<Sequential>,
    /// Uncounted (but recorded) runs per variant and workload, before the counted ones.
    pub warmup: u32,
    /// The built-in metrics asked for.
    pub metrics: Vec<crate::metric::Builtin>,
    /// Confidence level of intervals and tests, e.g. 0.95.
    pub confidence: f64,
    /// Equivalence margin, a fraction (0.01 = ±1%): an interval of the
    /// ratio wholly inside 1 ± margin is "same".
    pub equivalence: f64,
    /// Pin services and workloads to disjoint CPUs.
    pub pin: bool,
    /// Address-space randomization for runs; false runs them with
    /// `ADDR_NO_RANDOMIZE`.
    pub aslr: bool,
    /// Seed of the round order shuffle and the bootstrap; recorded in results.
    pub seed: Option<u64>,
    /// How many of the repetitions also count instructions under callgrind
    /// (slow but exact, so few suffice).
    pub instruction_repetitions: u32,
    /// `primary = "instructions"`: the instruction count heads the report
    /// (its verdict tested at the stated level, time then secondary).
    pub primary_instructions: bool,
    /// `afterburner race`: rounds race the variants by `[race]` instead of
    /// running every one for `repetitions` (then the race's most rounds);
    /// the fixed design's repetitions it stands in for.
    pub race: Option<u32>,
}

/// A sequential plan's limits (`repetitions = "auto"`).
#[derive(Debug, Clone, Serialize)]
pub struct Sequential {
    /// The time the rounds may take, warmup included.
    pub budget: Duration,
    /// Rounds before the first look.
    pub min: u32,
    /// The most rounds.
    pub max: u32,
    /// `check --rev --budget`: stop when every pair's gate is decided
    /// rather than every verdict.
    pub gate: Option<GateStop>,
}

/// The paired gate a sequential plan waits for.
#[derive(Debug, Clone, Serialize)]
pub struct GateStop {
    /// (variant, the same variant built from the baseline revision).
    pub pairs: Vec<(String, String)>,
    /// The regression that fails, in percent; `None`: the default for
    /// the metric's precision.
    pub threshold_pct: Option<f64>,
}
