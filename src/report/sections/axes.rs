//! Matrix variants grouped by axis: for each axis value, the primary
//! metric's ratios of the variants that have it, summed up, so "what does
//! pgo+lto do across every thread count" reads at a glance.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::analysis::headline;
use crate::analysis::Results;
use crate::stats::Verdict;

/// A group: workload, metric, axis and value.
type Key<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The "By matrix axis" section of report.md; empty when no variant came
/// from a `[[matrix]]`.
pub fn markdown(results: &Results) -> String {
    let axes_of: BTreeMap<&str, &BTreeMap<String, String>> = results
        .variants
        .iter()
        .filter(|v| !v.axes.is_empty())
        .map(|v| (v.name.as_str(), &v.axes))
        .collect();
    if axes_of.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## By matrix axis\n\nPer workload's primary metric, the variants that share an axis value: their geometric mean ratio against the baseline and how many of them each verdict called.\n\n| workload | metric | axis | value | variants | geometric mean ratio | faster | slower | same | undecided |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut groups: BTreeMap<Key, Vec<(f64, Verdict)>> = BTreeMap::new();
    for row in headline::rows(results) {
        let c = row.comparison;
        let Some(axes) = axes_of.get(c.variant.as_str()) else {
            continue;
        };
        for (axis, value) in *axes {
            groups
                .entry((row.workload, &c.metric, axis, value))
                .or_default()
                .push((c.outcome.ratio, c.outcome.verdict));
        }
    }
    for ((workload, metric, axis, value), members) in groups {
        let geomean =
            (members.iter().map(|(r, _)| r.ln()).sum::<f64>() / members.len() as f64).exp();
        let count = |v: Verdict| members.iter().filter(|(_, x)| *x == v).count();
        let _ = writeln!(
            out,
            "| {workload} | {metric} | {axis} | {value} | {} | {geomean:.3} | {} | {} | {} | {} |",
            members.len(),
            count(Verdict::Faster),
            count(Verdict::Slower),
            count(Verdict::Same),
            count(Verdict::Undecided),
        );
    }
    out.push('\n');
    out
}
