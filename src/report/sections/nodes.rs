//! The "Per node" section of a cluster run's report: each block's own
//! comparisons beside the merged verdicts, and on how many blocks and node
//! types each holds ([`crate::analysis::nodes`] analyses the blocks).

use std::fmt::Write as _;

use crate::analysis::nodes::{find, holds, node_name};
use crate::analysis::Results;
use crate::stats::Verdict;

/// The section "Per node" of report.md.
pub fn markdown(results: &Results) -> String {
    if results.nodes.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "## Per node\n\nA cluster run: {} blocks, each the whole interleaved plan on one node with its own order and seed. A block's ratio below is its own (its paired rounds alone); the verdicts above pool every block's rounds, and pairs never cross blocks.\n\n| Block | Node | CPU | Rounds | Workload | Metric | Variant | Ratio | {:.0}% CI | Verdict |\n|---:|---|---|---:|---|---|---|---:|---|---|\n",
        results.nodes.len(),
        results.confidence * 100.0
    );
    for n in &results.nodes {
        for o in &n.comparisons {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {}/{} | `{}` | {} | `{}` | {:.3} | {:.3}–{:.3} | {} |",
                n.block,
                n.node.as_deref().unwrap_or("?"),
                n.cpu_model.as_deref().unwrap_or("?"),
                n.complete_rounds,
                n.planned_rounds,
                o.workload,
                o.metric,
                o.variant,
                o.ratio,
                o.ci_low,
                o.ci_high,
                verdict_word(o.verdict)
            );
        }
    }
    out.push('\n');
    for n in &results.nodes {
        let e = &n.environment;
        let _ = writeln!(
            out,
            "- block {}: {}, {}, {} logical CPUs, kernel {}, hardware counters {}, captured {}",
            n.block,
            e.hostname.as_deref().unwrap_or("?"),
            e.cpu_model.as_deref().unwrap_or("unknown CPU"),
            e.logical_cpus,
            e.kernel_version
                .as_deref()
                .or(e.kernel.as_deref())
                .unwrap_or("?"),
            if e.perf_counters { "yes" } else { "no" },
            e.captured_at
        );
        if let Some(path) = &n.load_path {
            let _ = writeln!(out, "  - block {}'s {}", n.block, path.describe());
        }
    }
    out.push('\n');
    for c in &results.comparisons {
        let (agree, blocks, types_ok, types) = holds(&results.nodes, c);
        let _ = writeln!(
            out,
            "- `{}` on `{}` ({}): {} merged; the same on {agree} of {blocks} blocks, on {types_ok} of {types} node type(s)",
            c.variant,
            c.workload,
            c.metric,
            c.outcome.verdict_text()
        );
    }
    out.push('\n');
    out
}

/// The section "Per node" of report.html.
pub fn html(out: &mut String, results: &Results, esc: fn(&str) -> String) {
    if results.nodes.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<h2>Per node</h2><p>{} blocks, each the whole plan on one node; a block's ratio is its own, pairs never cross blocks.</p><table><tr><th>Block</th><th>Node</th><th>CPU</th><th>Rounds</th><th>Workload</th><th>Metric</th><th>Variant</th><th>Ratio</th><th>{:.0}% CI</th><th>Verdict</th></tr>",
        results.nodes.len(),
        results.confidence * 100.0
    );
    for n in &results.nodes {
        for o in &n.comparisons {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{:.3}</td><td>{:.3}–{:.3}</td><td>{}</td></tr>",
                n.block,
                esc(n.node.as_deref().unwrap_or("?")),
                esc(n.cpu_model.as_deref().unwrap_or("?")),
                n.complete_rounds,
                n.planned_rounds,
                esc(&o.workload),
                esc(&o.metric),
                esc(&o.variant),
                o.ratio,
                o.ci_low,
                o.ci_high,
                verdict_word(o.verdict)
            );
        }
    }
    let _ = writeln!(out, "</table>");
    for n in results.nodes.iter().filter(|n| n.load_path.is_some()) {
        if let Some(path) = &n.load_path {
            let _ = writeln!(out, "<p>Block {}: {}</p>", n.block, esc(&path.describe()));
        }
    }
}

/// The terminal's lines: each block's primary comparisons, in a line.
pub fn text(results: &Results) -> String {
    if results.nodes.is_empty() {
        return String::new();
    }
    let rows = crate::analysis::headline::rows(results);
    let mut out = format!(
        "per node ({} blocks, pairs within each):\n",
        results.nodes.len()
    );
    for n in &results.nodes {
        let mut line = format!("  {}:", node_name(n));
        for row in &rows {
            if let Some(o) = find(n, row.comparison) {
                let _ = write!(
                    line,
                    " {} {} {} {:.3} {};",
                    o.workload,
                    o.metric,
                    o.variant,
                    o.ratio,
                    verdict_word(o.verdict)
                );
            }
        }
        let _ = writeln!(out, "{}", line.trim_end_matches(';'));
        if let Some(path) = &n.load_path {
            let _ = writeln!(out, "    {}", path.describe());
        }
    }
    out
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::Same => "same",
        Verdict::Undecided => "undecided",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::nodes::tests::node;

    #[test]
    fn a_separate_load_names_both_nodes_and_the_path_in_the_report() {
        let mut results: Results =
            serde_json::from_str(include_str!("../../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        let mut n = node(0, "EPYC", 0.8, 0.75, 0.85, Verdict::Faster);
        n.load_path = Some(crate::runs::LoadPath {
            service_node: "node1".into(),
            service_address: "198.18.1.11".into(),
            load_node: "node2".into(),
            load_address: "198.18.1.12".into(),
        });
        results.nodes = vec![n, node(1, "EPYC", 0.8, 0.75, 0.85, Verdict::Faster)];
        let line = "load on node2 → service on node1 over 198.18.1.12 → 198.18.1.11";
        let md = markdown(&results);
        assert!(md.contains(&format!("block 0's {line}")), "{md}");
        assert_eq!(md.matches("load on").count(), 1, "{md}");
        assert!(text(&results).contains(line));
        let json = serde_json::to_value(&results.nodes).unwrap();
        assert_eq!(json[0]["load_path"]["load_node"], "node2");
        assert!(json[1].get("load_path").is_none());
    }
}
