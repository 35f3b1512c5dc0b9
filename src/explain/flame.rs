//! Flame graphs from callgrind's call graph: folded stacks (`a;b;c N`)
//! unrolled from each function's own instructions and the inclusive cost
//! of its calls, then a differential flame graph drawn by `inferno`.
//!
//! Callgrind keeps caller → callee edges, not whole stacks, so a stack's
//! share is estimated the way gprof and gprof2dot do: a function's cost
//! reached through a call is split over its callers in proportion to what
//! each call cost. Recursion and calls too small to see are drawn as one
//! frame of the callee, not unrolled further.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::OnceLock;

use anyhow::{Context as _, Result};
use regex::Regex;

use super::parse::{FunctionKey, Profile};

/// Folded stacks: each stack, frames joined by `;`, with its own
/// instructions (per run, or per request).
pub type Stacks = BTreeMap<String, f64>;

/// Stacks below this share of the total are drawn as one frame: narrower
/// than a pixel on a 1000-pixel graph anyway.
const SMALLEST_SHARE: f64 = 1.0 / 2000.0;

/// Frames a stack is unrolled to at most.
const DEEPEST: usize = 96;

/// The call graph of one profile, for unrolling.
struct Graph<'a> {
    own: HashMap<&'a FunctionKey, f64>,
    inclusive: HashMap<&'a FunctionKey, f64>,
    callees: HashMap<&'a FunctionKey, Vec<(&'a FunctionKey, f64)>>,
    smallest: f64,
}

/// The folded stacks of `profile`, its counts divided by `per`, added
/// into `into` with weight `weight` (1 / runs averaged).
pub fn fold(profile: &Profile, per: f64, weight: f64, into: &mut Stacks) {
    let mut graph = Graph {
        own: profile
            .functions
            .iter()
            .map(|(k, c)| (k, c.instructions as f64))
            .collect(),
        inclusive: HashMap::new(),
        callees: HashMap::new(),
        smallest: profile.total as f64 * SMALLEST_SHARE,
    };
    for ((caller, callee), n) in &profile.calls {
        graph
            .callees
            .entry(caller)
            .or_default()
            .push((callee, *n as f64));
    }
    for key in profile.functions.keys() {
        let calls: f64 = graph
            .callees
            .get(key)
            .into_iter()
            .flatten()
            .map(|c| c.1)
            .sum();
        graph
            .inclusive
            .insert(key, graph.own.get(key).copied().unwrap_or(0.0) + calls);
    }
    let called: HashSet<&FunctionKey> = profile.calls.keys().map(|(_, callee)| callee).collect();
    let scale = weight / per;
    let mut path = Vec::new();
    for root in profile.functions.keys().filter(|k| !called.contains(k)) {
        graph.unroll(root, 1.0, &mut path, &mut |stack, n| {
            *into.entry(stack).or_default() += n * scale;
        });
    }
}

impl<'a> Graph<'a> {
    /// Emit `key`'s own instructions on `path`, times `share` (of its
    /// inclusive cost that arrives by this path), then its callees'.
    fn unroll(
        &self,
        key: &'a FunctionKey,
        share: f64,
        path: &mut Vec<&'a FunctionKey>,
        emit: &mut dyn FnMut(String, f64),
    ) {
        path.push(key);
        let own = self.own.get(key).copied().unwrap_or(0.0) * share;
        if own > 0.0 {
            emit(stack(path), own);
        }
        for (callee, cost) in self.callees.get(key).into_iter().flatten() {
            let arriving = cost * share;
            let inclusive = self.inclusive.get(callee).copied().unwrap_or(0.0);
            if arriving < self.smallest
                || inclusive <= 0.0
                || path.contains(callee)
                || path.len() >= DEEPEST
            {
                // One frame of the callee holds all it costs by this path.
                path.push(callee);
                emit(stack(path), arriving);
                path.pop();
                continue;
            }
            self.unroll(callee, (arriving / inclusive).min(1.0), path, emit);
        }
        path.pop();
    }
}

/// A path's frames, joined the way folded stacks are (`;` inside a name,
/// which would split it, becomes `:`).
fn stack(path: &[&FunctionKey]) -> String {
    path.iter()
        .map(|k| k.function.replace(';', ":"))
        .collect::<Vec<_>>()
        .join(";")
}

/// A differential flame graph as an SVG without script (for report.html):
/// drawn with `after`'s widths, red where a stack grew from `before`, blue
/// where it shrank.
pub fn differential_svg(before: &Stacks, after: &Stacks, title: &str) -> Result<String> {
    let lines = |stacks: &Stacks| {
        let mut text = String::new();
        for (stack, n) in stacks.iter().filter(|(_, n)| n.round() > 0.0) {
            let _ = writeln!(text, "{stack} {n:.0}");
        }
        text
    };
    let mut diff = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        lines(before).as_bytes(),
        lines(after).as_bytes(),
        &mut diff,
    )
    .context("inferno could not set the folded stacks side by side")?;
    let diff = String::from_utf8(diff).context("inferno wrote stacks that are not UTF-8")?;
    let mut options = inferno::flamegraph::Options::default();
    title.clone_into(&mut options.title);
    "instructions".clone_into(&mut options.count_name);
    options.no_javascript = true;
    // report.html's page is 1000 pixels wide.
    options.image_width = Some(1000);
    options.deterministic = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, diff.lines(), &mut svg)
        .context("inferno could not draw the flame graph")?;
    let svg = String::from_utf8(svg).context("inferno drew an SVG that is not UTF-8")?;
    Ok(inline(&svg))
}

/// The SVG element alone, for inlining in report.html, which has no
/// script and names no address: without the XML prolog and doctype, what
/// `no_javascript` leaves (a script of settings, an `onload` calling it),
/// comments (links to the `FlameGraph` site) and namespace declarations
/// (an `<svg>` inside HTML is in SVG's namespace without them).
fn inline(svg: &str) -> String {
    static UNWANTED: OnceLock<Regex> = OnceLock::new();
    let unwanted = UNWANTED.get_or_init(|| {
        Regex::new(r#"(?s)<script.*?</script>|<!--.*?-->| onload="[^"]*"| xmlns(?::\w+)?="[^"]*""#)
            .expect("invariant: the pattern is valid")
    });
    let svg = svg.find("<svg").map_or(svg, |at| &svg[at..]);
    unwanted.replace_all(svg, "").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::parse::FunctionCost;

    fn key(function: &str) -> FunctionKey {
        FunctionKey {
            object: "hot".to_owned(),
            function: function.to_owned(),
        }
    }

    /// start → main (own 10) → {hash (own 60), log (own 30)}, and main
    /// → hash called from a second caller too: hash's cost splits by
    /// what each call cost.
    fn profile() -> Profile {
        let mut p = Profile::default();
        for (name, own) in [
            ("start", 0),
            ("main", 10),
            ("hash", 60),
            ("log", 30),
            ("init", 0),
        ] {
            p.functions.insert(
                key(name),
                FunctionCost {
                    instructions: own,
                    ..FunctionCost::default()
                },
            );
        }
        for (from, to, n) in [
            ("start", "main", 85),
            ("start", "init", 15),
            ("main", "hash", 45),
            ("main", "log", 30),
            ("init", "hash", 15),
        ] {
            p.calls.insert((key(from), key(to)), n);
        }
        p.total = 100;
        p
    }

    // Shares of whole numbers that come out whole.
    #[allow(clippy::float_cmp)]
    #[test]
    fn stacks_split_a_callee_by_what_each_call_cost() {
        let mut stacks = Stacks::new();
        fold(&profile(), 1.0, 1.0, &mut stacks);
        let expected: Stacks = [
            ("start;main", 10.0),
            ("start;main;hash", 45.0),
            ("start;main;log", 30.0),
            ("start;init;hash", 15.0),
        ]
        .into_iter()
        .map(|(s, n)| (s.to_owned(), n))
        .collect();
        assert_eq!(stacks, expected);
        assert_eq!(stacks.values().sum::<f64>(), 100.0);
    }

    #[test]
    fn a_differential_graph_is_an_svg_without_script() {
        let mut before = Stacks::new();
        fold(&profile(), 1.0, 1.0, &mut before);
        let mut after = before.clone();
        after.insert("start;main;hash".to_owned(), 5.0);
        let svg = differential_svg(&before, &after, "pgo against base").unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("hash") && svg.contains("pgo against base"));
        assert!(!svg.contains("<script") && !svg.contains("onload"), "{svg}");
        assert!(!svg.contains("http"), "names no address: {svg}");
    }
}
