//! gcc 12 to 15 promote a call through a pointer to a direct call only
//! where their profile says the profiled binary had promoted it and
//! inlined the target: `afdo_vpt_for_early_inline` takes a call's targets
//! from the functions inlined at the call's location
//! (`update_inlined_ind_target`, `find_icall_target_map`) and promotes the
//! one with the most samples; the call targets listed on the line itself
//! only become a histogram the later passes seldom act on. Read in gcc
//! 12.2.0's and 15's `auto-profile.cc`, not copied.
//!
//! So each call target the chains named ([`super::call_targets`]) is also
//! written as a copy of the target inlined at its call: the target's own
//! body (its function's samples, without the copies written here), scaled
//! by the share of the target's calls made from this call. The reader
//! then promotes and inlines it, as gcc's PGO does from its value
//! profiles. Measured on Redis's ZRANGEBYSCORE (Debian 12, gcc 12): the
//! reply emitter `handler->emitResultFromCBuffer` promoted and inlined
//! into `genericZrangebyscoreCommand`'s loop, where without the copy gcc
//! left the call, or promoted it to `sdslen` (below).
//!
//! The reader promotes the largest of all the functions inlined at the
//! location, not only the targets: where the profiled binary inlined
//! another function on the call's line (Redis's
//! `handler->emitResultFromCBuffer(handler, ln->ele, sdslen(ln->ele), …)`:
//! `sdslen`), gcc 12 promotes the call to that one (gcc 13 and later key by
//! discriminator too, which parts them more often). A copy smaller than
//! such a neighbour is scaled up past it, as long as no line of it then
//! counts more than the call's own line (its copy runs no more often than
//! the call does); else it is left out.

use std::collections::BTreeMap;

use crate::toolchain::formats::gcov_afdo::Instance;

/// Add, in each of `functions` (a merged profile, keyed as its reader
/// looks locations up), a copy of each call's most-called target inlined
/// at the call; returns how many were added.
pub fn add(functions: &mut [Instance]) -> usize {
    let bodies: BTreeMap<String, Instance> = functions
        .iter()
        .map(|f| (f.name.clone(), f.clone()))
        .collect();
    let mut calls_to = BTreeMap::new();
    for f in functions.iter() {
        count_calls(f, &mut calls_to);
    }
    functions
        .iter_mut()
        .map(|f| add_in(f, &bodies, &calls_to))
        .sum()
}

/// Each target's calls over all the calls that named it.
fn count_calls(instance: &Instance, calls_to: &mut BTreeMap<String, u64>) {
    for line in instance.lines.values() {
        for (target, calls) in &line.targets {
            *calls_to.entry(target.clone()).or_default() += calls;
        }
    }
    for callee in instance.callsites.values() {
        count_calls(callee, calls_to);
    }
}

fn add_in(
    instance: &mut Instance,
    bodies: &BTreeMap<String, Instance>,
    calls_to: &BTreeMap<String, u64>,
) -> usize {
    let mut added: usize = instance
        .callsites
        .values_mut()
        .map(|callee| add_in(callee, bodies, calls_to))
        .sum();
    let mut copies = Vec::new();
    for (&key, line) in &instance.lines {
        let Some((target, &calls)) = line
            .targets
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        else {
            continue;
        };
        if target == &instance.name || instance.callsites.contains_key(&(key, target.clone())) {
            continue;
        }
        let Some(body) = bodies.get(target) else {
            continue;
        };
        let all = calls_to.get(target).copied().unwrap_or(calls).max(calls);
        let neighbour = instance
            .callsites
            .iter()
            .filter(|((k, _), _)| *k == key)
            .map(|(_, c)| c.total())
            .max()
            .unwrap_or(0);
        if let Some(copy) = copy_at(body, calls, all, neighbour, line.count) {
            copies.push(((key, target.clone()), copy));
        }
    }
    added += copies.len();
    instance.callsites.extend(copies);
    added
}

/// `body` scaled by `calls` / `all`, past `neighbour`'s total if it must
/// be, with no line above `cap`; `None` when that cannot be, or when
/// nothing is left.
fn copy_at(body: &Instance, calls: u64, all: u64, neighbour: u64, cap: u64) -> Option<Instance> {
    let mut copy = scaled(body, u128::from(calls), u128::from(all));
    let total = copy.total();
    if total == 0 {
        return None;
    }
    if total <= neighbour {
        let past = u128::from(neighbour) + 1;
        let bumped = scaled(&copy, past, u128::from(total));
        if largest_line(&bumped) > cap || bumped.total() <= neighbour {
            return None;
        }
        copy = bumped;
    }
    Some(copy)
}

/// `instance` with every count times `num` / `den` (rounded), as an
/// inlined copy (no head count).
fn scaled(instance: &Instance, num: u128, den: u128) -> Instance {
    let times = |n: u64| u64::try_from((u128::from(n) * num + den / 2) / den).unwrap_or(u64::MAX);
    let mut copy = instance.clone();
    copy.head = 0;
    for line in copy.lines.values_mut() {
        line.count = times(line.count);
        for calls in line.targets.values_mut() {
            *calls = times(*calls);
        }
        line.targets.retain(|_, calls| *calls > 0);
    }
    copy.callsites = instance
        .callsites
        .iter()
        .map(|(key, callee)| (key.clone(), scaled(callee, num, den)))
        .collect();
    copy
}

fn largest_line(instance: &Instance) -> u64 {
    instance
        .lines
        .values()
        .map(|l| l.count)
        .chain(instance.callsites.values().map(largest_line))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::formats::gcov_afdo::Line;

    fn line(count: u64, targets: &[(&str, u64)]) -> Line {
        Line {
            count,
            targets: targets.iter().map(|(t, c)| ((*t).to_owned(), *c)).collect(),
        }
    }

    fn function(name: &str, head: u64, lines: &[(u32, Line)]) -> Instance {
        let mut f = Instance::exactly(name);
        f.head = head;
        f.lines = lines.iter().cloned().collect();
        f
    }

    /// The most-called target goes in at its call, its body scaled by the
    /// share of its calls made there; the line's targets stay.
    #[test]
    fn the_top_target_is_inlined_at_its_call_by_its_share() {
        let mut functions = vec![
            function(
                "loop",
                10,
                &[(5 << 16, line(300, &[("emit", 200), ("other", 100)]))],
            ),
            function("two", 10, &[(1 << 16, line(200, &[("emit", 200)]))]),
            function("emit", 40, &[(0, line(40, &[])), (2 << 16, line(80, &[]))]),
            function("other", 10, &[(0, line(10, &[]))]),
        ];
        assert_eq!(add(&mut functions), 2);
        let copy = &functions[0].callsites[&(5 << 16, "emit".to_owned())];
        // Half of emit's calls came from here.
        assert_eq!(copy.lines[&0].count, 20);
        assert_eq!(copy.lines[&(2 << 16)].count, 40);
        assert_eq!(copy.head, 0);
        assert!(!functions[0]
            .callsites
            .contains_key(&(5 << 16, "other".to_owned())));
        assert_eq!(functions[0].lines[&(5 << 16)].targets.len(), 2);
        // The copies are of the bodies as read, not of each other.
        assert!(functions[2].callsites.is_empty());
    }

    /// A function already inlined at a neighbouring location position is
    /// what gcc would promote; the copy is scaled past it while no line of
    /// it outruns the call, and left out where it would.
    #[test]
    fn a_copy_is_scaled_past_a_neighbour_inlined_on_its_line_within_the_calls_count() {
        let mut neighbour = Instance::exactly("sdslen");
        neighbour.lines.insert(0, line(90, &[]));
        let caller = |count| {
            let mut f = function("range", 5, &[(97 << 16, line(count, &[("emit", 50)]))]);
            f.callsites
                .insert((97 << 16, "sdslen".to_owned()), neighbour.clone());
            f
        };
        let emit = function("emit", 5, &[(0, line(10, &[])), (1 << 16, line(20, &[]))]);
        let mut functions = vec![caller(100), emit.clone()];
        assert_eq!(add(&mut functions), 1);
        let copy = &functions[0].callsites[&(97 << 16, "emit".to_owned())];
        assert!(copy.total() > 90, "{copy:?}");
        assert!(copy.lines[&(1 << 16)].count <= 100);
        // Past 90 would need a line of 61 where the call counts 40.
        let mut functions = vec![caller(40), emit];
        assert_eq!(add(&mut functions), 0);
    }

    /// Targets on a line inside an inlined copy go in there; a function
    /// never inlines a copy of itself, nor one already inlined there.
    #[test]
    fn targets_inside_inlined_copies_and_recursion() {
        let mut inner = Instance::exactly("inner");
        inner.lines.insert(3 << 16, line(30, &[("emit", 30)]));
        let mut outer = function("outer", 1, &[(1 << 16, line(9, &[("outer", 9)]))]);
        outer.callsites.insert((2 << 16, "inner".to_owned()), inner);
        let mut functions = vec![outer, function("emit", 3, &[(0, line(6, &[]))])];
        assert_eq!(add(&mut functions), 1);
        let inner = &functions[0].callsites[&(2 << 16, "inner".to_owned())];
        assert_eq!(
            inner.callsites[&(3 << 16, "emit".to_owned())].lines[&0].count,
            6
        );
        assert!(!functions[0]
            .callsites
            .contains_key(&(1 << 16, "outer".to_owned())));
        assert_eq!(add(&mut functions), 0);
    }
}
