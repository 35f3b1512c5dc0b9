//! A cluster run's blocks side by side: each block analysed alone (its
//! own paired rounds, its own interval and verdict), with the node it ran
//! on and that node's CPU, and whether the merged verdict holds on every
//! node type. Two blocks whose intervals do not overlap disagree beyond
//! their noise: a warning says so, naming both.

use std::collections::BTreeSet;

use super::analyze::analyze;
use super::results::{ComparisonEntry, Node, NodeComparison, Results, WarningEntry};
use crate::runs::Block;

/// Each block analysed alone.
pub fn read(blocks: &[Block]) -> Vec<Node> {
    blocks
        .iter()
        .map(|b| {
            let r = &b.recorded;
            let results = analyze(&r.meta, &r.runs);
            Node {
                block: b.index,
                node: r.meta.environment.hostname.clone(),
                cpu_model: r.meta.environment.cpu_model.clone(),
                logical_cpus: r.meta.environment.logical_cpus,
                complete_rounds: r.progress.complete_rounds,
                planned_rounds: r.progress.planned_rounds,
                comparisons: results
                    .comparisons
                    .iter()
                    .map(|c| {
                        let (ratio, ci_low, ci_high) = c.interval();
                        NodeComparison {
                            workload: c.workload.clone(),
                            metric: c.metric.clone(),
                            variant: c.variant.clone(),
                            ratio,
                            ci_low,
                            ci_high,
                            verdict: c.outcome.verdict,
                        }
                    })
                    .collect(),
                environment: r.meta.environment.clone(),
                load_path: r.meta.load_path.clone(),
            }
        })
        .collect()
}

/// How a report names a block: its index, node and CPU.
pub fn node_name(n: &Node) -> String {
    format!(
        "block {} on {} ({})",
        n.block,
        n.node.as_deref().unwrap_or("?"),
        n.cpu_model.as_deref().unwrap_or("unknown CPU")
    )
}

/// How the merged comparison `c` fares node by node: (blocks whose own
/// verdict is the merged one, blocks that have it, node types on which
/// every block agrees, node types).
pub fn holds(nodes: &[Node], c: &ComparisonEntry) -> (usize, usize, usize, usize) {
    let mut blocks = 0;
    let mut agree = 0;
    let mut types: BTreeSet<&str> = BTreeSet::new();
    let mut failing: BTreeSet<&str> = BTreeSet::new();
    for n in nodes {
        let Some(own) = find(n, c) else { continue };
        let cpu = n.cpu_model.as_deref().unwrap_or("unknown CPU");
        types.insert(cpu);
        blocks += 1;
        if own.verdict == c.outcome.verdict {
            agree += 1;
        } else {
            failing.insert(cpu);
        }
    }
    (agree, blocks, types.len() - failing.len(), types.len())
}

/// Block `n`'s own outcome of the merged comparison `c`, if it has one.
pub fn find<'a>(n: &'a Node, c: &ComparisonEntry) -> Option<&'a NodeComparison> {
    n.comparisons
        .iter()
        .find(|o| o.workload == c.workload && o.metric == c.metric && o.variant == c.variant)
}

/// Warnings for comparisons whose blocks disagree beyond their intervals.
pub fn disagreements(results: &Results) -> Vec<WarningEntry> {
    let mut out = Vec::new();
    for c in &results.comparisons {
        let own: Vec<(&Node, &NodeComparison)> = results
            .nodes
            .iter()
            .filter_map(|n| find(n, c).map(|o| (n, o)))
            .collect();
        let apart = own.iter().find_map(|(a, x)| {
            own.iter()
                .find(|(_, y)| y.ci_low > x.ci_high)
                .map(|(b, y)| ((a, x), (b, y)))
        });
        let Some(((a, x), (b, y))) = apart else {
            continue;
        };
        let (_, _, types_ok, types) = holds(&results.nodes, c);
        out.push(WarningEntry {
            workload: Some(c.workload.clone()),
            metric: Some(c.metric.clone()),
            variant: Some(c.variant.clone()),
            message: format!(
                "the blocks disagree beyond their intervals: {} {:.3} [{:.3}, {:.3}] against {} {:.3} [{:.3}, {:.3}]; the merged verdict ({}) holds on {types_ok} of {types} node type(s)",
                node_name(a),
                x.ratio,
                x.ci_low,
                x.ci_high,
                node_name(b),
                y.ratio,
                y.ci_low,
                y.ci_high,
                c.outcome.verdict_text()
            ),
        });
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stats::Verdict;

    /// A block of hotpath's run on a CPU, with one comparison.
    pub(crate) fn node(
        block: u32,
        cpu: &str,
        ratio: f64,
        low: f64,
        high: f64,
        verdict: Verdict,
    ) -> Node {
        let results: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        Node {
            environment: results.environment,
            block,
            node: Some(format!("n{block}")),
            cpu_model: Some(cpu.to_owned()),
            logical_cpus: 2,
            complete_rounds: 4,
            planned_rounds: 4,
            comparisons: vec![NodeComparison {
                workload: "w".into(),
                metric: "wall".into(),
                variant: "pgo".into(),
                ratio,
                ci_low: low,
                ci_high: high,
                verdict,
            }],
            load_path: None,
        }
    }

    fn entry(verdict: Verdict) -> ComparisonEntry {
        let mut outcome = crate::stats::compare(
            &[1.0, 1.1, 0.9, 1.0],
            &[0.8, 0.85, 0.75, 0.8],
            &crate::stats::CompareOptions {
                confidence: 0.95,
                paired: true,
                precision: crate::stats::Precision::Noisy,
                lower_is_better: true,
                resamples: 1000,
                seed: 1,
                equivalence: 0.01,
            },
        )
        .unwrap();
        outcome.verdict = verdict;
        ComparisonEntry {
            workload: "w".into(),
            metric: "wall".into(),
            unit: "s".into(),
            variant: "pgo".into(),
            baseline: "baseline".into(),
            outcome,
            paired: true,
            primary: true,
            level: None,
        }
    }

    #[test]
    fn holds_counts_blocks_and_node_types() {
        let nodes = vec![
            node(0, "EPYC", 0.8, 0.75, 0.85, Verdict::Faster),
            node(1, "EPYC", 0.82, 0.78, 0.86, Verdict::Faster),
            node(2, "Xeon", 1.0, 0.97, 1.03, Verdict::Undecided),
        ];
        assert_eq!(holds(&nodes, &entry(Verdict::Faster)), (2, 3, 1, 2));
    }

    #[test]
    fn intervals_apart_are_a_warning_and_overlapping_ones_are_not() {
        let mut results: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        results.comparisons = vec![entry(Verdict::Faster)];
        results.nodes = vec![
            node(0, "EPYC", 0.8, 0.75, 0.85, Verdict::Faster),
            node(1, "Xeon", 0.83, 0.8, 0.9, Verdict::Faster),
        ];
        assert!(disagreements(&results).is_empty());
        results
            .nodes
            .push(node(2, "Xeon", 1.0, 0.97, 1.03, Verdict::Undecided));
        let warnings = disagreements(&results);
        assert_eq!(warnings.len(), 1);
        let text = &warnings[0].message;
        assert!(
            text.contains(
                "block 0 on n0 (EPYC) 0.800 [0.750, 0.850] against block 2 on n2 (Xeon) 1.000"
            ),
            "{text}"
        );
        assert!(text.contains("holds on 1 of 2 node type(s)"), "{text}");
    }

    /// One block's deciding interval on simulated paired rounds: the
    /// baseline's time per round with 5% noise (and a node's own drift),
    /// the variant `effect` times it, with its own 5% noise.
    fn simulated_block(rng: &mut crate::rng::Rng, effect: f64, rounds: usize) -> (f64, f64) {
        let mut base = Vec::new();
        let mut variant = Vec::new();
        for _ in 0..rounds {
            let drift = 1.0 + 0.1 * rng.normal();
            base.push(drift * (1.0 + 0.05 * rng.normal()));
            variant.push(drift * effect * (1.0 + 0.05 * rng.normal()));
        }
        let c = crate::stats::compare(
            &base,
            &variant,
            &crate::stats::CompareOptions {
                confidence: 0.95,
                paired: true,
                precision: crate::stats::Precision::Noisy,
                lower_is_better: true,
                resamples: 200,
                seed: rng.next_u64(),
                equivalence: 0.01,
            },
        )
        .unwrap();
        (c.median_ci_low.unwrap(), c.median_ci_high.unwrap())
    }

    /// The disagreement rule by simulation: two blocks of 10 paired rounds
    /// from the same machine type rarely have disjoint 95% intervals (two
    /// independent intervals of equal width are disjoint about 0.6% of the
    /// time, by the normal approximation), while a gain of 20% on one node
    /// type and none on the other is nearly always called.
    #[test]
    fn disjoint_intervals_are_rare_between_alike_nodes_and_common_between_unlike() {
        let mut rng = crate::rng::Rng::new(17);
        let trials = 300;
        let apart = |a: (f64, f64), b: (f64, f64)| a.0 > b.1 || b.0 > a.1;
        let mut false_alarms = 0;
        let mut found = 0;
        for _ in 0..trials {
            let a = simulated_block(&mut rng, 0.8, 10);
            let b = simulated_block(&mut rng, 0.8, 10);
            false_alarms += usize::from(apart(a, b));
            let c = simulated_block(&mut rng, 1.0, 10);
            found += usize::from(apart(a, c));
        }
        let false_rate = false_alarms as f64 / f64::from(trials);
        let power = found as f64 / f64::from(trials);
        eprintln!("disjoint intervals: alike nodes {false_rate:.3}, unlike nodes {power:.3}");
        assert!(false_rate < 0.03, "{false_rate}");
        assert!(power > 0.9, "{power}");
    }
}
