//! A variant's instructions per function and object against the
//! baseline's: each averaged over its counted runs, then the difference,
//! largest absolute change first.

use std::collections::{BTreeMap, BTreeSet};

use super::flame::Stacks;
use super::parse::{FunctionKey, Profile};

/// One variant's profile on one workload, averaged over its counted runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Averaged {
    /// Counted runs averaged.
    pub runs: usize,
    /// Instructions per run, all of them.
    pub total: f64,
    /// Each function's own instructions per run, and its names as
    /// callgrind wrote them.
    pub functions: BTreeMap<FunctionKey, (f64, BTreeSet<String>)>,
    /// Folded stacks from the call graph, for a flame graph.
    pub stacks: Stacks,
}

impl Averaged {
    /// The mean of `profiles` (one per counted run, each with what its
    /// counts are divided by: 1 for a run, its requests for a service
    /// counted over a load's window), function by function; a function a
    /// run did not execute counts 0 in that run.
    pub fn of(profiles: &[(Profile, f64)]) -> Self {
        let runs = profiles.len().max(1) as f64;
        let mut functions: BTreeMap<FunctionKey, (f64, BTreeSet<String>)> = BTreeMap::new();
        let mut total = 0.0;
        let mut stacks = Stacks::new();
        for (profile, per) in profiles {
            super::flame::fold(profile, *per, 1.0 / runs, &mut stacks);
            for (key, cost) in &profile.functions {
                let entry = functions.entry(key.clone()).or_default();
                entry.0 += cost.instructions as f64 / per / runs;
                entry.1.extend(cost.names.iter().cloned());
            }
            total += profile.total as f64 / per / runs;
        }
        Self {
            runs: profiles.len(),
            total,
            functions,
            stacks,
        }
    }
}

/// One variant against the baseline on one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The workload's name.
    pub workload: String,
    /// The variant set against the baseline.
    pub variant: String,
    /// Counted runs averaged on the baseline's side and on the variant's.
    pub runs: (usize, usize),
    /// Whether the counts are per request (a service counted over a
    /// load's window) rather than per run.
    pub per_request: bool,
    /// The baseline's instructions per run.
    pub baseline_total: f64,
    /// The variant's instructions per run.
    pub variant_total: f64,
    /// Every function of either side, largest absolute change first.
    pub functions: Vec<FunctionChange>,
    /// The functions summed per object, largest absolute change first.
    pub objects: Vec<ObjectChange>,
    /// The baseline's folded stacks, then the variant's.
    pub stacks: (Stacks, Stacks),
}

/// One function's own instructions per run, on each side.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionChange {
    /// The object's file name (`libc.so.6`, the program's name).
    pub object: String,
    /// The function's name without fragment and clone suffixes.
    pub function: String,
    /// Instructions per run in the baseline (0: not there).
    pub baseline: f64,
    /// Instructions per run in the variant (0: not there).
    pub variant: f64,
    /// The names callgrind gave its pieces in the baseline (`main`,
    /// `main.cold`, `checksum.constprop.0`).
    pub baseline_names: BTreeSet<String>,
    /// The names callgrind gave its pieces in the variant.
    pub variant_names: BTreeSet<String>,
}

impl FunctionChange {
    /// Variant minus baseline, instructions per run (negative: fewer).
    pub fn change(&self) -> f64 {
        self.variant - self.baseline
    }
}

/// One object's instructions per run, on each side.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectChange {
    /// The object's file name.
    pub object: String,
    /// Instructions per run in the baseline.
    pub baseline: f64,
    /// Instructions per run in the variant.
    pub variant: f64,
}

impl ObjectChange {
    /// Variant minus baseline, instructions per run (negative: fewer).
    pub fn change(&self) -> f64 {
        self.variant - self.baseline
    }
}

impl Difference {
    /// `variant` against `baseline` on `workload` (see [`Self::per_request`]).
    pub fn between(
        workload: &str,
        variant: &str,
        (baseline, other): (&Averaged, &Averaged),
        per_request: bool,
    ) -> Self {
        let keys: BTreeSet<&FunctionKey> = baseline
            .functions
            .keys()
            .chain(other.functions.keys())
            .collect();
        let mut functions: Vec<FunctionChange> = keys
            .into_iter()
            .map(|key| {
                let (b, b_names) = baseline.functions.get(key).cloned().unwrap_or_default();
                let (v, v_names) = other.functions.get(key).cloned().unwrap_or_default();
                FunctionChange {
                    object: key.object.clone(),
                    function: key.function.clone(),
                    baseline: b,
                    variant: v,
                    baseline_names: b_names,
                    variant_names: v_names,
                }
            })
            .collect();
        functions.sort_by(|a, b| {
            b.change()
                .abs()
                .total_cmp(&a.change().abs())
                .then_with(|| (&a.object, &a.function).cmp(&(&b.object, &b.function)))
        });
        let objects = per_object(&functions);
        Self {
            workload: workload.to_owned(),
            variant: variant.to_owned(),
            runs: (baseline.runs, other.runs),
            per_request,
            baseline_total: baseline.total,
            variant_total: other.total,
            functions,
            objects,
            stacks: (baseline.stacks.clone(), other.stacks.clone()),
        }
    }
}

/// The functions summed per object, largest absolute change first, then
/// (unchanged ones) the largest first.
fn per_object(functions: &[FunctionChange]) -> Vec<ObjectChange> {
    let mut objects: BTreeMap<&str, ObjectChange> = BTreeMap::new();
    for f in functions {
        let entry = objects.entry(&f.object).or_insert_with(|| ObjectChange {
            object: f.object.clone(),
            baseline: 0.0,
            variant: 0.0,
        });
        entry.baseline += f.baseline;
        entry.variant += f.variant;
    }
    let mut objects: Vec<ObjectChange> = objects.into_values().collect();
    // Unchanged objects: the largest first.
    objects.sort_by(|a, b| {
        b.change()
            .abs()
            .total_cmp(&a.change().abs())
            .then_with(|| b.baseline.total_cmp(&a.baseline))
            .then_with(|| a.object.cmp(&b.object))
    });
    objects
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::parse::FunctionCost;

    fn profile(costs: &[(&str, &str, u64)]) -> Profile {
        let mut p = Profile::default();
        for &(object, name, n) in costs {
            let key = FunctionKey {
                object: object.to_owned(),
                function: crate::explain::parse::normalise(name).to_owned(),
            };
            let cost = p.functions.entry(key).or_insert_with(FunctionCost::default);
            cost.instructions += n;
            cost.names.insert(name.to_owned());
            p.total += n;
        }
        p
    }

    // Means of whole numbers over two runs: exact in f64.
    #[allow(clippy::float_cmp)]
    #[test]
    fn largest_change_first_with_fragments_matched_and_objects_summed() {
        let run = |memcpy| {
            (
                profile(&[
                    ("hot", "checksum.constprop.0", 8000),
                    ("hot", "main", 100),
                    ("libc.so.6", "memcpy", memcpy),
                    ("hot", "mix", 300),
                ]),
                1.0,
            )
        };
        let base = Averaged::of(&[run(50), run(70)]);
        let pgo = Averaged::of(&[(
            profile(&[
                ("hot", "checksum", 4500),
                ("hot", "main", 350),
                ("hot", "main.cold", 2),
                ("libc.so.6", "memcpy", 60),
            ]),
            1.0,
        )]);
        let d = Difference::between("loop", "pgo", (&base, &pgo), false);
        assert_eq!(d.runs, (2, 1));
        assert_eq!(d.baseline_total, 8460.0);
        let first = &d.functions[0];
        assert_eq!(
            (first.function.as_str(), first.change()),
            ("checksum", -3500.0)
        );
        assert!(first.baseline_names.contains("checksum.constprop.0"));
        // mix was inlined into main: gone on one side, main grew.
        assert_eq!(
            (d.functions[1].function.as_str(), d.functions[1].change()),
            ("mix", -300.0)
        );
        assert_eq!(d.functions[1].variant, 0.0);
        assert_eq!(
            (d.functions[2].function.as_str(), d.functions[2].change()),
            ("main", 252.0)
        );
        assert_eq!(d.functions[3].change(), 0.0);
        assert_eq!(d.objects[0].object, "hot");
        assert_eq!(d.objects[0].change(), 4852.0 - 8400.0);
        assert_eq!(d.objects[1].change(), 0.0);
    }

    #[allow(clippy::float_cmp)]
    #[test]
    fn a_service_counted_over_a_window_is_averaged_per_request() {
        let one = profile(&[("memcached", "process_command", 4000)]);
        let two = profile(&[("memcached", "process_command", 9000)]);
        let averaged = Averaged::of(&[(one, 100.0), (two, 200.0)]);
        // 40 and 45 instructions per request.
        assert_eq!(averaged.total, 42.5);
    }
}
