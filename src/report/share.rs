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

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::results::Measurement;
use super::results::{Results, WarningEntry};
use crate::stats::fieller::{share_of_gain, share_of_gain_paired, FiellerSet, GainShare, Group};

/// Metrics that count executed work, shown beside the headline metric.
const WORK: [&str; 2] = ["instructions", "instructions_per_request"];

/// Every variant's share of the reference variant's gain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GainShares {
    /// The reference variant R (`[report] gain_reference`).
    pub reference: String,
    /// How the shares and their intervals were computed, one sentence.
    pub rule: String,
    /// Per workload: its headline metric first, the work (instructions)
    /// next, then the other judged metrics; per metric, the variants in
    /// experiment order.
    pub shares: Vec<ShareEntry>,
}

/// One variant's share of the reference's gain on one workload and metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShareEntry {
    pub workload: String,
    /// Metric name.
    pub metric: String,
    pub variant: String,
    /// Whether this is its workload's headline metric (absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub primary: bool,
    /// `(mean_B − mean_V) / (mean_B − mean_R)`, unitless: 1 is all of R's
    /// gain, 0 none, below 0 worse than the baseline, above 1 more than R;
    /// absent when R's mean equals the baseline's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Lower bound of Fieller's interval of the share, unitless; absent
    /// when the interval is unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    /// Upper bound of Fieller's interval of the share, unitless.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
    /// False when R's own gain is not significantly different from zero at
    /// the report's confidence: Fieller's set then has no finite bounds.
    pub bounded: bool,
    /// Whether the runs were paired by round (every round ran the
    /// baseline, the variant and the reference): each round's differences
    /// from the baseline are then one observation, and `df` is rounds − 1.
    pub paired: bool,
    /// Degrees of freedom the t quantile was taken with: rounds − 1 when
    /// paired, else Satterthwaite's for the contrast at the estimate.
    pub df: f64,
}

/// Read the run's `[report] gain_reference` and, where it names one (or
/// the run has a stale variant: [`super::stale::default_reference`]), put
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
    let Some(reference) = reference.or_else(|| super::stale::default_reference(results)) else {
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
        let primary = super::family::primary(
            &results.judging,
            &results.measurements,
            &results.comparisons,
            workload,
        );
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
        let primary = super::family::primary(
            &results.judging,
            &results.measurements,
            &results.comparisons,
            workload,
        );
        metrics.sort_by_key(|m| {
            if Some(*m) == primary {
                0
            } else if WORK.contains(m) {
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

/// The rows a report shows: the headline metric and the work beside it.
fn shown(shares: &GainShares) -> impl Iterator<Item = &ShareEntry> {
    shares
        .shares
        .iter()
        .filter(|s| s.primary || WORK.contains(&s.metric.as_str()))
}

/// A share as a percentage: "85%", "-12%" (never "-0%").
fn percent(x: f64) -> String {
    let rounded = (x * 100.0).round();
    format!("{}%", if rounded == 0.0 { 0.0 } else { rounded })
}

/// The share and interval cells: "85%" and "71% to 97%"; no number where
/// the interval is unbounded, since the reference's own gain is then not
/// established and a share of it means nothing.
fn cells(s: &ShareEntry, reference: &str) -> (String, String) {
    match (s.share, s.ci_low, s.ci_high) {
        (Some(share), Some(low), Some(high)) => (
            percent(share),
            format!("{} to {}", percent(low), percent(high)),
        ),
        _ => (
            "–".to_owned(),
            format!("none: `{reference}`'s own gain is not significant"),
        ),
    }
}

/// The section of report.md: a table per workload.
pub fn markdown(results: &Results) -> String {
    let Some(shares) = &results.gain_shares else {
        return String::new();
    };
    let reference = &shares.reference;
    let mut out = format!(
        "## Share of `{reference}`'s gain\n\nHow much of `{reference}`'s gain over `{}` each other variant reaches, on each workload's headline metric and the instructions beside it (results.json's `gain_shares` has every judged metric).\n\n",
        results.baseline
    );
    let mut workload = "";
    for s in shown(shares) {
        if s.workload != workload {
            workload = &s.workload;
            let _ = writeln!(
                out,
                "{}### Workload `{workload}`\n\n| Variant | Metric | Share | {:.0}% interval |\n|---|---|---:|---|",
                if out.ends_with("|\n") { "\n" } else { "" },
                results.confidence * 100.0
            );
        }
        let (share, interval) = cells(s, reference);
        let _ = writeln!(
            out,
            "| `{}` | {} | {share} | {interval} |",
            s.variant, s.metric
        );
    }
    let _ = writeln!(out, "\n{}\n", shares.rule);
    out
}

/// The lines of the terminal summary.
pub fn text(results: &Results) -> String {
    let Some(shares) = &results.gain_shares else {
        return String::new();
    };
    let rows: Vec<&ShareEntry> = shown(shares).collect();
    let width = |f: &dyn Fn(&ShareEntry) -> usize| rows.iter().map(|s| f(s)).max().unwrap_or(0);
    let (w, m, v) = (
        width(&|s| s.workload.len()),
        width(&|s| s.metric.len()),
        width(&|s| s.variant.len()),
    );
    let mut out = format!(
        "\nshare of `{}`'s gain over `{}` ({:.0}% Fieller interval):\n",
        shares.reference,
        results.baseline,
        results.confidence * 100.0
    );
    for s in rows {
        let (share, interval) = cells(s, &shares.reference);
        let _ = writeln!(
            out,
            "  {:<w$}  {:<m$}  {:<v$}  {share:>5}  {interval}",
            s.workload, s.metric, s.variant,
        );
    }
    out
}

#[cfg(test)]
mod tests {
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
            .find(|s| s.metric == "instructions")
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
            .find(|m| m.metric.name == "wall" && m.variant == "o3")
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
}
