//! The simulated power table of the verdict rules: how often a real effect
//! is called (effects 2/5/10%, noise CV 3/10/20% per run), with how many
//! rounds, for the rule before paired verdicts, the paired rule at fixed
//! plans, and the sequential plan (`repetitions = "auto"`, 10–50 rounds);
//! then the fixed plan that matches the sequential plan's power, and what
//! the sequential plan saves against it. Rounds share a drift (a busy
//! neighbour, uniform 0–20%) that hits both variants of a round alike.
//!
//! `cargo bench --bench power` (a few minutes); `-- --trials N` for more;
//! `-- --holm` for Holm's cost on secondary metrics alone.

use afterburner::rng::Rng;
use afterburner::stats::sequential::Plan;
use afterburner::stats::{compare, CompareOptions, Precision, Verdict};

fn options(paired: bool) -> CompareOptions {
    CompareOptions {
        confidence: 0.95,
        paired,
        precision: Precision::Noisy,
        lower_is_better: true,
        resamples: 1_000,
        seed: 1,
        equivalence: 0.01,
    }
}

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

fn values(r: &Rounds, n: u32) -> Vec<f64> {
    r.iter().take(n as usize).map(|p| p.1).collect()
}

/// The share of trials in which a fixed plan of `n` rounds calls the
/// slowdown (and never the wrong way).
fn fixed_power(seed: u64, trials: u32, n: u32, effect: f64, cv: f64, paired: bool) -> f64 {
    power_at(seed, trials, n, effect, cv, paired, 0.05)
}

/// [`fixed_power`] with the test at significance `level` (a secondary
/// metric under Holm's correction is tested at α/m to α).
fn power_at(seed: u64, trials: u32, n: u32, effect: f64, cv: f64, paired: bool, level: f64) -> f64 {
    let mut rng = Rng::new(seed);
    let mut found = 0;
    let options = CompareOptions {
        confidence: 1.0 - level,
        ..options(paired)
    };
    for _ in 0..trials {
        let (b, v) = rounds(&mut rng, n, effect, cv);
        let c = compare(&values(&b, n), &values(&v, n), &options);
        if c.is_some_and(|c| c.verdict == Verdict::Slower) {
            found += 1;
        }
    }
    f64::from(found) / f64::from(trials)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trials: u32 = args
        .iter()
        .position(|a| a == "--trials")
        .and_then(|i| args.get(i + 1))
        .and_then(|t| t.parse().ok())
        .unwrap_or(300);
    if args.iter().any(|a| a == "--holm") {
        holm_cost(trials);
        return;
    }
    let plan = Plan::new(0.95, 10, 50);
    println!(
        "# Power of the verdict rules: a slowdown called \"slower\" ({trials} trials per cell)\n"
    );
    println!(
        "Sequential plan: looks after {:?} rounds, nominal levels {:?}\n",
        plan.looks,
        plan.nominal
            .iter()
            .map(|l| format!("{l:.4}"))
            .collect::<Vec<_>>()
    );
    println!("| effect | CV | before: unpaired bootstrap + MW, 10 rounds | paired, 10 rounds | paired, 50 rounds | sequential 10–50: power | mean rounds | fixed plan of equal power | rounds saved |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut seed = 1000;
    for effect in [1.02, 1.05, 1.10] {
        for cv in [0.03, 0.10, 0.20] {
            seed += 1;
            let before = fixed_power(seed, trials, 10, effect, cv, false);
            let paired10 = fixed_power(seed, trials, 10, effect, cv, true);
            let paired50 = fixed_power(seed, trials, 50, effect, cv, true);
            let mut rng = Rng::new(seed);
            let (mut found, mut used) = (0_u32, 0_u32);
            for _ in 0..trials {
                let (b, v) = rounds(&mut rng, plan.max, effect, cv);
                let d = plan.decide(&b, &v, &options(true));
                if let Some(d) = d {
                    if d.comparison.verdict == Verdict::Slower {
                        found += 1;
                    }
                    used += d.rounds;
                }
            }
            let power = f64::from(found) / f64::from(trials);
            let mean = f64::from(used) / f64::from(trials);
            // The smallest fixed plan (6 to 150 rounds) reaching that power.
            let (mut low, mut high) = (6_u32, 150_u32);
            if fixed_power(seed, trials, high, effect, cv, true) < power {
                low = high + 1;
            } else {
                while low < high {
                    let middle = u32::midpoint(low, high);
                    if fixed_power(seed, trials, middle, effect, cv, true) >= power {
                        high = middle;
                    } else {
                        low = middle + 1;
                    }
                }
            }
            let (equal, saved) = if low > 150 {
                ("> 150".to_owned(), "–".to_owned())
            } else {
                (
                    low.to_string(),
                    format!("{:+.0}%", (1.0 - mean / f64::from(low)) * 100.0),
                )
            };
            println!(
                "| {:.0}% | {:.0}% | {:.0}% | {:.0}% | {:.0}% | {:.0}% | {mean:.1} | {equal} | {saved} |",
                (effect - 1.0) * 100.0,
                cv * 100.0,
                before * 100.0,
                paired10 * 100.0,
                paired50 * 100.0,
                power * 100.0,
            );
        }
    }
    holm_cost(trials);
    // Optional stopping on A/A pairs: the false verdicts.
    let mut rng = Rng::new(99);
    let mut false_calls = 0;
    let aa = trials * 4;
    for _ in 0..aa {
        let (b, v) = rounds(&mut rng, plan.max, 1.0, 0.10);
        if plan
            .decide(&b, &v, &options(true))
            .is_some_and(|d| matches!(d.comparison.verdict, Verdict::Faster | Verdict::Slower))
        {
            false_calls += 1;
        }
    }
    println!(
        "\nA/A under optional stopping (CV 10%, {aa} trials): {false_calls} false verdicts ({:.1}%; the plan's α is 5%)",
        f64::from(false_calls) / f64::from(aa) * 100.0
    );
}

/// What Holm's correction of a report's secondary metrics costs: the power
/// to call a real 5% slowdown in 10 and 20 paired rounds, at the stated
/// level (before) and at the strictest Holm level α/m (after, the worst
/// case: the secondary with the largest p-value of a report whose other
/// secondaries show nothing), for m = 3 (a command's default metrics under
/// a wall headline) and m = 10 (a Redis load's).
fn holm_cost(trials: u32) {
    println!("\n# Holm's cost: power on a secondary metric with a real 5% effect ({trials} trials per cell)\n");
    println!("| rounds | CV | before (α = 0.05) | after, m = 3 (α/3) | after, m = 10 (α/10) |");
    println!("|---:|---:|---:|---:|---:|");
    let mut seed = 5000;
    for n in [10, 20] {
        for cv in [0.01, 0.03, 0.10] {
            seed += 1;
            let at = |level: f64| power_at(seed, trials, n, 1.05, cv, true, level) * 100.0;
            println!(
                "| {n} | {:.0}% | {:.0}% | {:.0}% | {:.0}% |",
                cv * 100.0,
                at(0.05),
                at(0.05 / 3.0),
                at(0.005)
            );
        }
    }
}
