//! Sequential plans: rounds go on until every primary comparison is decided
//! or the budget ends, without inflating false verdicts by looking again.
//!
//! The method is group-sequential alpha spending (Lan & DeMets, "Discrete
//! sequential boundaries for clinical trials", Biometrika 70, 1983) with the
//! Pocock-type spending function α(t) = α·ln(1 + (e − 1)·t) (Kim & DeMets,
//! 1987), t = rounds / the most rounds planned. The data are looked at only
//! after a few scheduled rounds (`looks`, about 25% apart); look k may spend
//! αₖ = α(tₖ) − α(tₖ₋₁) of error: the probability of first crossing its
//! boundary there, under the null. The boundaries cₖ come from the joint null
//! distribution of the standardized statistics at the looks, that of a
//! Brownian motion (Zₖ = S(nₖ)/√nₖ, the signed-rank statistic's asymptotic
//! law; Sen & Ghosh 1971), computed by a fixed-seed simulation of 200,000
//! paths; look k then judges at the nominal confidence 1 − 2·(1 − Φ(cₖ)),
//! by the exact signed-rank interval. The simulations in the tests (2,000
//! A/A trials under optional stopping) and in `benches/power.rs` check the
//! level and show the cost in power.
//!
//! A comparison's verdict is the first look at which it was decided; one
//! never decided is undecided at the last look.

use serde::{Deserialize, Serialize};

use super::{compare, CompareOptions, Comparison, Precision, Verdict};

/// A sequential plan: when to look and how much error each look may spend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plan {
    /// The total error rate spent over all looks, 1 − confidence (0.05).
    pub alpha: f64,
    /// Rounds before the first look (a count).
    pub min: u32,
    /// The most rounds; the spending function's t = rounds / max.
    pub max: u32,
    /// Rounds (counted, warmup excluded) after which the data are looked at,
    /// ascending, the last being `max`.
    pub looks: Vec<u32>,
    /// The two-sided nominal level of each look (a probability): its
    /// verdict is judged at confidence 1 − level.
    pub nominal: Vec<f64>,
}

/// Simulated null paths behind the boundaries.
const PATHS: usize = 200_000;
/// Their seed: the same looks always give the same boundaries.
const PATHS_SEED: u64 = 0x5e9_0e47_1a15;

/// The nominal two-sided level of each look in `looks` (ascending rounds,
/// the last at most `max`) such that a null path first crosses at look k
/// with probability α(tₖ) − α(tₖ₋₁); simulated once per (α, max, looks)
/// in a process, then remembered (a plan is built for every budgeted
/// bench and every simulated one, and a run that stopped between looks
/// has its levels recomputed whenever it is judged).
fn nominal_levels(alpha: f64, max: u32, looks: &[u32]) -> Vec<f64> {
    type Key = (u64, u32, Vec<u32>);
    static KNOWN: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<Key, Vec<f64>>>> =
        std::sync::OnceLock::new();
    let key = (alpha.to_bits(), max, looks.to_vec());
    let known = KNOWN.get_or_init(Default::default);
    if let Some(levels) = known.lock().ok().and_then(|k| k.get(&key).cloned()) {
        return levels;
    }
    let levels = simulate_levels(alpha, max, looks);
    if let Ok(mut k) = known.lock() {
        k.insert(key, levels.clone());
    }
    levels
}

/// [`nominal_levels`], simulated: [`PATHS`] null paths from [`PATHS_SEED`].
fn simulate_levels(alpha: f64, max: u32, looks: &[u32]) -> Vec<f64> {
    let mut rng = afterburner_leaves::rng::Rng::new(PATHS_SEED);
    let mut sums = vec![0.0_f64; PATHS];
    let mut alive: Vec<usize> = (0..PATHS).collect();
    let mut previous = 0;
    let mut levels = Vec::with_capacity(looks.len());
    for &look in looks {
        let step = f64::from(look.saturating_sub(previous)).sqrt();
        for s in &mut sums {
            *s += step * rng.normal();
        }
        let t = |r: u32| f64::from(r) / f64::from(max.max(1));
        let spend = (spent(alpha, t(look)) - spent(alpha, t(previous))).max(0.0);
        previous = look;
        let scale = f64::from(look.max(1)).sqrt();
        let mut z: Vec<(f64, usize)> = alive
            .iter()
            .map(|&i| ((sums[i] / scale).abs(), i))
            .collect();
        z.sort_by(|a, b| b.0.total_cmp(&a.0));
        // Paths to stop here: the spend's share of all paths.
        // spend·PATHS lies in [0, PATHS]: no truncation, no sign to lose.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let crossing = ((spend * PATHS as f64).round() as usize).min(z.len());
        let boundary = if crossing == 0 {
            f64::INFINITY
        } else if crossing < z.len() {
            f64::midpoint(z[crossing - 1].0, z[crossing].0)
        } else {
            0.0
        };
        let stopped: std::collections::HashSet<usize> = z[..crossing].iter().map(|p| p.1).collect();
        alive.retain(|i| !stopped.contains(i));
        levels.push((2.0 * super::normal::normal_sf(boundary)).clamp(0.0, 1.0));
    }
    levels
}

/// A comparison decided by a sequential plan, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The comparison at the deciding look (the last one when undecided).
    pub comparison: Comparison,
    /// Rounds the deciding look used.
    pub rounds: u32,
    /// The confidence that look judged at, 1 − αₖ.
    pub confidence: f64,
}

/// The Pocock-type spending function: the error that may be spent by
/// information fraction `t` (0 to 1), α·ln(1 + (e − 1)·t).
pub fn spent(alpha: f64, t: f64) -> f64 {
    alpha * (1.0 + (std::f64::consts::E - 1.0) * t.clamp(0.0, 1.0)).ln()
}

/// Looks from `min` rounds (at least 1) on, each about 25% after the one
/// before (rounded up, and at least one round later), the last at `max`.
pub fn schedule(min: u32, max: u32) -> Vec<u32> {
    let min = min.max(1);
    let max = max.max(min);
    let mut looks = vec![min];
    let mut last = min;
    while last < max {
        last = last
            .saturating_mul(5)
            .div_ceil(4)
            .max(last.saturating_add(1))
            .min(max);
        looks.push(last);
    }
    looks
}

impl Plan {
    /// Looks from `min` rounds on, each about 25% after the one before, the
    /// last at `max`; `confidence` is the overall level (0.95). `min` is at
    /// least 1 and `max` at least `min`.
    pub fn new(confidence: f64, min: u32, max: u32) -> Self {
        let min = min.max(1);
        let max = max.max(min);
        let looks = schedule(min, max);
        let alpha = (1.0 - confidence).clamp(0.0, 1.0);
        Self {
            alpha,
            min,
            max,
            nominal: nominal_levels(alpha, max, &looks),
            looks,
        }
    }

    /// Whether the data should be looked at after `rounds` counted rounds.
    pub fn is_look(&self, rounds: u32) -> bool {
        self.looks.contains(&rounds)
    }

    /// The looks at which `rounds` rounds of data are judged: every
    /// scheduled look up to `rounds`, and `rounds` itself when the plan
    /// stopped between looks (the budget ran out, or it was interrupted).
    pub fn looks_for(&self, rounds: u32) -> Vec<u32> {
        let mut looks: Vec<u32> = self
            .looks
            .iter()
            .copied()
            .filter(|&l| l <= rounds)
            .collect();
        if rounds > 0 && looks.last() != Some(&rounds) {
            looks.push(rounds.min(self.max));
        }
        looks.dedup();
        looks
    }

    /// Each look at which `rounds` rounds of data are judged, with its
    /// nominal two-sided level ([`Plan::looks_for`]).
    pub fn looks_with_levels(&self, rounds: u32) -> Vec<(u32, f64)> {
        let looks = self.looks_for(rounds);
        let levels = self.levels_for(&looks);
        looks.into_iter().zip(levels).collect()
    }

    /// The nominal two-sided level of each look judging `rounds` rounds
    /// ([`Plan::looks_for`]): the stored ones when it stopped at a look,
    /// else recomputed with the extra final look.
    fn levels_for(&self, looks: &[u32]) -> Vec<f64> {
        if self.looks.starts_with(looks) && self.nominal.len() == self.looks.len() {
            self.nominal[..looks.len()].to_vec()
        } else {
            nominal_levels(self.alpha, self.max, looks)
        }
    }

    /// Judge a variant against the baseline look by look: samples are
    /// (round, value) pairs in the metric's unit; a look after n rounds uses
    /// the first n rounds of each. Exact metrics need no spending: they are
    /// compared once on everything. `None` when [`compare`] gives none.
    pub fn decide(
        &self,
        baseline: &[(u32, f64)],
        variant: &[(u32, f64)],
        options: &CompareOptions,
    ) -> Option<Decision> {
        let values = |s: &[(u32, f64)], n: usize| -> (Vec<u32>, Vec<f64>) {
            let mut sorted = s.to_vec();
            sorted.sort_by_key(|p| p.0);
            sorted.truncate(n);
            sorted.into_iter().unzip()
        };
        let rounds = u32::try_from(baseline.len().max(variant.len())).unwrap_or(u32::MAX);
        if options.precision == Precision::Exact {
            let (_, b) = values(baseline, usize::MAX);
            let (_, v) = values(variant, usize::MAX);
            return compare(&b, &v, options).map(|comparison| Decision {
                comparison,
                rounds,
                confidence: options.confidence,
            });
        }
        let mut last = None;
        let looks = self.looks_for(rounds);
        for (look, level) in looks.iter().copied().zip(self.levels_for(&looks)) {
            let n = look as usize;
            let (br, b) = values(baseline, n);
            let (vr, v) = values(variant, n);
            let confidence = 1.0 - level;
            let judged = CompareOptions {
                confidence,
                paired: options.paired && br == vr,
                ..*options
            };
            let Some(mut comparison) = compare(&b, &v, &judged) else {
                continue;
            };
            comparison.rule = format!(
                "{} Sequential: alpha spending (Lan–DeMets, Pocock-type α(t) = α·ln(1 + (e − 1)t), α = {}), looks after {} rounds; boundaries for a first crossing spending α(t) − α(t′) at each look, from the null's Brownian-motion limit; this look after {look} rounds judged at {:.2}% confidence.",
                comparison.rule,
                super::tidy(self.alpha),
                self.looks
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                confidence * 100.0,
            );
            let decision = Decision {
                comparison,
                rounds: look,
                confidence,
            };
            if decision.comparison.verdict != Verdict::Undecided {
                return Some(decision);
            }
            last = Some(decision);
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use afterburner_leaves::rng::Rng;

    fn options() -> CompareOptions {
        CompareOptions {
            confidence: 0.95,
            paired: true,
            precision: Precision::Noisy,
            lower_is_better: true,
            // The paired verdict is the Hodges–Lehmann interval's; the
            // bootstrap interval is only shown beside it.
            resamples: 50,
            seed: 1,
            equivalence: 0.01,
        }
    }

    #[test]
    fn looks_grow_by_a_quarter_and_end_at_max() {
        let plan = Plan::new(0.95, 10, 50);
        assert_eq!(plan.looks, vec![10, 13, 17, 22, 28, 35, 44, 50]);
        assert_eq!(Plan::new(0.95, 1, 3).looks, vec![1, 2, 3]);
        assert_eq!(Plan::new(0.95, 7, 7).looks, vec![7]);
        assert_eq!(Plan::new(0.95, 9, 2).looks, vec![9]);
        assert_eq!(plan.looks_for(30), vec![10, 13, 17, 22, 28, 30]);
        assert_eq!(plan.looks_for(28), vec![10, 13, 17, 22, 28]);
        assert!(plan.looks_for(0).is_empty());
    }

    /// The spending function against its closed form; the first look's
    /// level is what it spends; later nominal levels exceed their share of
    /// the spending (the looks are correlated) yet stay below α.
    #[test]
    fn levels_follow_the_spending_function() {
        // α(0.2) = 0.05·ln(1 + 1.718281828·0.2) = 0.05·ln(1.343656) = 0.014770.
        assert!((spent(0.05, 0.2) - 0.014_770).abs() < 1e-6);
        assert!((spent(0.05, 1.0) - 0.05).abs() < 1e-15);
        assert!(spent(0.05, 0.0).abs() < 1e-300);
        let plan = Plan::new(0.95, 10, 50);
        assert_eq!(plan.nominal.len(), plan.looks.len());
        // The first look: P(|Z| > c) = α(0.2), up to the simulation's error
        // (binomial, 200,000 paths: ±0.0006 at 2 sigma).
        assert!(
            (plan.nominal[0] - 0.014_770).abs() < 6e-4,
            "{:?}",
            plan.nominal
        );
        let mut previous = 10;
        for (&look, &level) in plan.looks.iter().zip(&plan.nominal).skip(1) {
            let share =
                spent(0.05, f64::from(look) / 50.0) - spent(0.05, f64::from(previous) / 50.0);
            assert!(
                level > share && level < 0.05,
                "{look}: {level} (share {share})"
            );
            previous = look;
        }
        // Pocock-like: the levels are all of a size.
        let (lo, hi) = plan
            .nominal
            .iter()
            .fold((1.0_f64, 0.0_f64), |(l, h), x| (l.min(*x), h.max(*x)));
        assert!(hi / lo < 2.0, "{:?}", plan.nominal);
    }

    /// Rounds of an A/A or A/B pair under shared drift: each round's
    /// conditions (a busy neighbour) hit both variants alike, and each run
    /// has its own noise of coefficient of variation `cv`.
    type Rounds = Vec<(u32, f64)>;

    fn rounds(rng: &mut Rng, n: u32, effect: f64, cv: f64) -> (Rounds, Rounds) {
        let mut base = Vec::new();
        let mut variant = Vec::new();
        for round in 0..n {
            let drift = 1.0 + 0.2 * rng.next_f64();
            base.push((round, drift * (1.0 + cv * rng.normal()).max(0.05)));
            variant.push((round, drift * effect * (1.0 + cv * rng.normal()).max(0.05)));
        }
        (base, variant)
    }

    /// Optional stopping on an A/A pair: looking at every scheduled look
    /// and stopping at the first decision other than "same" must call a
    /// difference at most 5% of the time (2,000 trials). The union bound
    /// says at most α; the simulation shows the conservatism.
    #[test]
    fn a_a_false_verdicts_stay_below_alpha_under_optional_stopping() {
        let plan = Plan::new(0.95, 10, 50);
        let mut rng = Rng::new(20_261_125);
        let trials = 2_000;
        let mut false_calls = 0;
        // The same data judged after every round at the fixed 95% level:
        // the naive way, to show what spending prevents.
        let mut naive_calls = 0;
        let mut naive_trials = 300_u32;
        for _ in 0..trials {
            let (base, variant) = rounds(&mut rng, plan.max, 1.0, 0.10);
            let d = plan.decide(&base, &variant, &options()).unwrap();
            if matches!(d.comparison.verdict, Verdict::Faster | Verdict::Slower) {
                false_calls += 1;
            }
            // Naive peeking at every round from the 10th (the signed-rank
            // test at 5%), on the first 300 trials.
            let naive = naive_trials > 0
                && (plan.min..=plan.max).any(|n| {
                    let logs: Vec<f64> = base[..n as usize]
                        .iter()
                        .zip(&variant[..n as usize])
                        .map(|(b, v)| (v.1 / b.1).ln())
                        .collect();
                    super::super::wilcoxon_signed_rank(&logs).is_some_and(|w| w.p_value < 0.05)
                });
            naive_trials = naive_trials.saturating_sub(1);
            if naive {
                naive_calls += 1;
            }
        }
        let rate = f64::from(false_calls) / f64::from(trials);
        let naive = f64::from(naive_calls) / 300.0;
        assert!(rate <= 0.05, "A/A false verdicts: {rate}");
        // Looking 41 times at 5% inflates it well above 5%.
        assert!(naive > 0.10, "naive peeking: {naive}");
    }

    /// A 10% slowdown at 10% noise per run: the sequential plan finds it
    /// nearly always, in fewer rounds on average than the ~31 a fixed plan
    /// needs for that power (n ≈ ((1.96 + 1.88)/0.707)²/0.955), and
    /// never calls it faster. (Smaller effects: `cargo bench --bench power`.)
    #[test]
    fn a_real_effect_is_found_and_stops_early() {
        let plan = Plan::new(0.95, 10, 50);
        let mut rng = Rng::new(7);
        let trials = 300;
        let (mut found, mut wrong, mut rounds_used) = (0, 0, 0);
        for _ in 0..trials {
            let (base, variant) = rounds(&mut rng, plan.max, 1.10, 0.10);
            let d = plan.decide(&base, &variant, &options()).unwrap();
            match d.comparison.verdict {
                Verdict::Slower => found += 1,
                Verdict::Faster => wrong += 1,
                _ => {}
            }
            rounds_used += d.rounds;
        }
        assert_eq!(wrong, 0);
        assert!(found * 100 >= trials * 95, "found {found} of {trials}");
        let mean = f64::from(rounds_used) / f64::from(trials);
        assert!(mean < 28.0, "mean rounds {mean}");
    }

    #[test]
    fn an_equal_pair_is_called_same_and_says_when() {
        let plan = Plan::new(0.95, 10, 50);
        let mut rng = Rng::new(3);
        let (base, variant) = rounds(&mut rng, 50, 1.0, 0.001);
        let d = plan.decide(&base, &variant, &options()).unwrap();
        assert_eq!(d.comparison.verdict, Verdict::Same, "{d:?}");
        assert_eq!(d.rounds, 10);
        assert!(d.confidence > 0.95 && d.confidence < 1.0);
        assert!(
            d.comparison.rule.contains("looks after 10, 13, 17"),
            "{}",
            d.comparison.rule
        );
    }

    /// Stopped between looks (the budget ran out after 15 rounds): the
    /// last look is at 15 and spends α(15/50) − α(13/50).
    #[test]
    fn a_plan_stopped_between_looks_judges_what_it_has() {
        let plan = Plan::new(0.95, 10, 50);
        let mut rng = Rng::new(11);
        let (base, variant) = rounds(&mut rng, 15, 1.0, 0.5);
        let d = plan.decide(&base, &variant, &options()).unwrap();
        assert_eq!(d.comparison.verdict, Verdict::Undecided, "{d:?}");
        assert_eq!(d.rounds, 15);
        // A look of its own, at a level between the scheduled ones'.
        assert!(d.confidence > 1.0 - 0.05 && d.confidence < 1.0, "{d:?}");
        assert!(!plan.looks.contains(&15));
    }
}
