//! "Share of R's gain": with `[report] gain_reference = "R"`, for each
//! workload, judged metric and variant V (neither the baseline B nor R),
//! how much of R's gain over B that V reaches, `(mean_B − mean_V) /
//! (mean_B − mean_R)`, with Fieller's interval ([`crate::stats::fieller`]):
//! AutoFDO's share of instrumented PGO's gain, a stale profile's share of a
//! fresh one's.
//!
//! The reference is read from the run's experiment file each time a report
//! is drawn, so a run benched before the file named one gets the section
//! from `afterburner report`.

use super::headline::counts_work;
use super::results::{GainShares, Measurement, Results, ShareEntry, WarningEntry};
use crate::stats::fieller::{share_of_gain, share_of_gain_paired, FiellerSet, GainShare, Group};

/// Read the run's `[report] gain_reference` and, where it names one (or
/// the run has a stale variant: [`default_reference`]), put
/// every share of its gain into `results`. A file that is gone costs
/// nothing; one that names no variant of this run costs the section, with
/// a warning that says why.
pub fn attach(results: &mut Results) {
    let names: Vec<&str> = results.variants.iter().map(|v| v.name.as_str()).collect();
    let settings = crate::experiment::report_settings(&results.experiment, names.into_iter());
    let reference = match settings {
        Ok(settings) => settings.gain_reference,
        Err(crate::experiment::ExperimentError::Read { .. }) => None,
        Err(error) => {
            results.warnings.push(warning(format!(
                "no section \"Share of a reference's gain\": {error}"
            )));
            None
        }
    };
    // A run with a stale profile measures it against the fresh one.
    let Some(reference) = reference.or_else(|| default_reference(results)) else {
        return;
    };
    let shares = compute(results, &reference);
    if shares.shares.is_empty() {
        results.warnings.push(warning(format!(
            "no section \"Share of `{reference}`'s gain\": no judged metric has two or more samples of `{}`, `{reference}` and a third variant",
            results.baseline
        )));
        return;
    }
    results.gain_shares = Some(shares);
}

fn warning(message: String) -> WarningEntry {
    WarningEntry {
        workload: None,
        metric: None,
        variant: None,
        message,
    }
}

/// Every variant's share of `reference`'s gain, per workload and judged
/// metric (one with comparisons), at the report's confidence.
pub fn compute(results: &Results, reference: &str) -> GainShares {
    let mut shares = Vec::new();
    for (workload, metrics) in judged(results) {
        let primary = results.primary_metric(workload);
        for metric in metrics {
            let measured = |variant: &str| {
                results.measurements.iter().find(|m| {
                    m.workload == workload && m.metric.name == metric && m.variant == variant
                })
            };
            let (Some(b), Some(r)) = (measured(&results.baseline), measured(reference)) else {
                continue;
            };
            for v in &results.variants {
                if v.name == results.baseline || v.name == reference {
                    continue;
                }
                let Some((found, paired)) =
                    measured(&v.name).and_then(|m| share(b, m, r, results.confidence))
                else {
                    continue;
                };
                let (ci_low, ci_high) = match found.interval {
                    FiellerSet::Bounded { low, high } => (Some(low), Some(high)),
                    FiellerSet::Unbounded => (None, None),
                };
                shares.push(ShareEntry {
                    workload: workload.to_owned(),
                    metric: metric.to_owned(),
                    variant: v.name.clone(),
                    primary: primary == Some(metric),
                    share: found.estimate,
                    ci_low,
                    ci_high,
                    bounded: ci_low.is_some(),
                    paired,
                    df: found.df,
                });
            }
        }
    }
    GainShares {
        reference: reference.to_owned(),
        rule: rule(results, reference, &shares),
        shares,
    }
}

/// `variant`'s share of `reference`'s gain over `baseline`, and whether it
/// was taken on paired rounds: paired when the three ran in the same rounds
/// (an interleaved bench), as the comparisons are; `None` with fewer than
/// two samples of any.
fn share(
    baseline: &Measurement,
    variant: &Measurement,
    reference: &Measurement,
    confidence: f64,
) -> Option<(GainShare, bool)> {
    if baseline.rounds == variant.rounds && baseline.rounds == reference.rounds {
        let paired = share_of_gain_paired(
            &baseline.samples,
            &variant.samples,
            &reference.samples,
            confidence,
        )?;
        return Some((paired, true));
    }
    let [b, v, r] = [baseline, variant, reference].map(|m| Group::of(&m.samples));
    Some((share_of_gain(&b?, &v?, &r?, confidence), false))
}

/// The judged metrics of each workload, in results order: the headline
/// metric first, the work next, then the others as compared.
fn judged(results: &Results) -> Vec<(&str, Vec<&str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in &results.comparisons {
        match out.iter_mut().find(|(w, _)| *w == c.workload) {
            Some((_, metrics)) if !metrics.contains(&c.metric.as_str()) => metrics.push(&c.metric),
            Some(_) => {}
            None => out.push((&c.workload, vec![&c.metric])),
        }
    }
    for (workload, metrics) in &mut out {
        let primary = results.primary_metric(workload);
        metrics.sort_by_key(|m| {
            if Some(*m) == primary {
                0
            } else if counts_work(m) {
                1
            } else {
                2
            }
        });
    }
    out
}

/// The rule in one sentence, naming the forms of the interval `shares`
/// used.
fn rule(results: &Results, reference: &str, shares: &[ShareEntry]) -> String {
    let paired = shares.iter().any(|s| s.paired);
    let unpaired = shares.iter().any(|s| !s.paired);
    let form = match (paired, unpaired) {
        (true, false) => "each round's two differences from the baseline (the variant's and the reference's, runs interleaved in rounds) one observation, t at rounds − 1 degrees of freedom",
        (false, _) => "each variant's runs an independent sample with its own variance, t at Satterthwaite's degrees of freedom (Hasler, Vonk & Hothorn 2008)",
        (true, true) => "each round's two differences from the baseline one observation where the three ran in the same rounds (t at rounds − 1 degrees of freedom), elsewhere each variant's runs an independent sample with its own variance (t at Satterthwaite's degrees of freedom; results.json's `paired` says which)",
    };
    format!(
        "Share = (mean of `{b}` − mean of the variant) / (mean of `{b}` − mean of `{reference}`), the fraction of `{reference}`'s gain the variant reaches (100% = all of it, 0% = none, below 0% = worse than `{b}`); its {c}% interval by Fieller's method (Fieller 1954) for a ratio whose numerator and denominator share `{b}`'s runs, {form}; where `{reference}`'s own gain is not significantly different from zero at that level the interval has no finite bounds, and neither it nor the share is given.",
        b = results.baseline,
        c = tidy(results.confidence * 100.0),
    )
}

fn tidy(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The gain reference a run with a stale variant (`profile_from`: trained
/// on another revision) gets when its experiment names none: the first
/// fresh variant built like the first stale one (same optimizations, same
/// compiler), other than the baseline.
pub fn default_reference(results: &Results) -> Option<String> {
    let stale = results.variants.iter().find(|v| v.profile_from.is_some())?;
    results
        .variants
        .iter()
        .find(|v| {
            v.name != results.baseline
                && v.profile_from.is_none()
                && v.optimize == stale.optimize
                && v.compiler_version == stale.compiler_version
        })
        .map(|v| v.name.clone())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn hotpath() -> Results {
        serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json")).unwrap()
    }

    /// Neither the baseline nor the reference gets a row; the headline
    /// metric (wall) leads, the instructions follow, then the rest.
    #[test]
    fn every_other_variant_gets_a_row_per_judged_metric_time_first() {
        let results = hotpath();
        let shares = compute(&results, "pgo");
        let rows: Vec<(&str, &str, bool)> = shares
            .shares
            .iter()
            .map(|s| (s.metric.as_str(), s.variant.as_str(), s.primary))
            .collect();
        assert_eq!(
            rows,
            [
                ("wall", "o3", true),
                ("instructions", "o3", false),
                ("user", "o3", false),
                ("max_rss", "o3", false),
            ]
        );
        // o3 counts what the baseline counts: none of pgo's gain.
        let instructions = &shares.shares[1];
        assert_eq!(instructions.share, Some(0.0));
        assert!(instructions.bounded);
        let against_o3 = compute(&results, "o3");
        // o3's instructions are the baseline's: no gain, no interval.
        let pgo = against_o3
            .shares
            .iter()
            .find(|s| crate::metric::MetricId::INSTRUCTIONS.is(&s.metric))
            .unwrap();
        assert_eq!(
            (pgo.variant.as_str(), pgo.share, pgo.bounded),
            ("pgo", None, false)
        );
    }

    /// Interleaved rounds pair the runs; a variant that misses a round (a
    /// failed run) is taken unpaired, and the rule names both forms.
    #[test]
    fn rounds_in_common_pair_the_runs_and_a_missing_one_unpairs_them() {
        let mut results = hotpath();
        let paired = compute(&results, "pgo");
        assert!(paired.shares.iter().all(|s| s.paired), "{paired:?}");
        assert!((paired.shares[0].df - 5.0).abs() < 1e-12);
        assert!(!paired.rule.contains("Satterthwaite"), "{}", paired.rule);
        let wall = results
            .measurements
            .iter_mut()
            .find(|m| m.metric.is(&crate::metric::MetricId::WALL) && m.variant == "o3")
            .unwrap();
        wall.rounds.pop();
        wall.samples.pop();
        let mixed = compute(&results, "pgo");
        assert!(
            !mixed.shares[0].paired && mixed.shares[1].paired,
            "{mixed:?}"
        );
        assert!(mixed.rule.contains("Satterthwaite"), "{}", mixed.rule);
        assert!(mixed.rule.contains("rounds − 1"), "{}", mixed.rule);
    }

    /// The run's experiment file decides: gone, nothing; naming a variant
    /// the run lacks, a warning and no section; naming one, the section.
    #[test]
    fn the_runs_experiment_file_names_the_reference() {
        let dir = tempfile::tempdir().unwrap();
        let mut results = hotpath();
        results.experiment = dir.path().join("afterburner.toml");
        let warnings = results.warnings.len();
        attach(&mut results);
        assert!(results.gain_shares.is_none());
        assert_eq!(results.warnings.len(), warnings);
        fs_err::write(&results.experiment, "[report]\ngain_reference = \"pgo2\"\n").unwrap();
        attach(&mut results);
        assert!(results.gain_shares.is_none());
        let last = &results.warnings.last().unwrap().message;
        assert!(last.contains("afterburner.toml:2:"), "{last}");
        assert!(last.contains("names no variant"), "{last}");
        fs_err::write(&results.experiment, "[report]\ngain_reference = \"pgo\"\n").unwrap();
        attach(&mut results);
        assert_eq!(results.gain_shares.unwrap().reference, "pgo");
    }

    /// hotpath's run (baseline, pgo, o3) with a fourth variant, `stale`:
    /// `pgo` again, its profile from another revision.
    pub(crate) fn with_stale(optimize_like: &str) -> Results {
        let mut results: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        let like = results
            .variants
            .iter()
            .find(|v| v.name == optimize_like)
            .unwrap();
        let stale = crate::runs::VariantInfo {
            name: "stale".to_owned(),
            profile_from: Some("git https://example.org/x.git @ v1 (0123abcd)".to_owned()),
            profile_mismatch: Some(crate::toolchain::mismatch::ProfileMismatch {
                warnings: 7,
                changed: 2,
                moved: 3,
                missing: 1,
                changed_names: vec!["walk".to_owned(), "main".to_owned()],
            }),
            ..like.clone()
        };
        results.variants.push(stale);
        results
    }

    #[test]
    fn the_fresh_variant_built_alike_is_the_default_reference() {
        assert_eq!(
            default_reference(&with_stale("pgo")).as_deref(),
            Some("pgo")
        );
        // A stale o3 is measured against the fresh o3: same optimize.
        assert_eq!(default_reference(&with_stale("o3")).as_deref(), Some("o3"));
        let plain: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        assert_eq!(default_reference(&plain), None);
    }
}
