//! A direct call runs at least as often as its callee is entered from it.
//!
//! A call's own instructions (the argument moves, the `call`) seldom draw a
//! timer sample, and neither may the few around them: Redis's
//! `processInputBuffer` calls `processMultibulkBuffer` once a request, yet
//! in three recordings of 20 kHz timer samples its call line drew none,
//! while the callee's entry drew 25. clang's sample loader reads a line
//! listed at 0 as never run, and its inliner gives a call in a block never
//! run the cold threshold (45) instead of a hot call's (3,000): clang 14
//! passed over `alsoPropagate` (cost 260) in `call()` that way, which its
//! instrumented PGO inlines (`-Rpass-missed=inline` on Redis's server.c).
//!
//! The callee's entry is the better witness: every call enters it, and
//! the first straight-line run of a function (its prologue) has several
//! instructions to draw samples. So each direct call counts at least its
//! callee's entry count (the most samples on one instruction of that run,
//! what a line's count is) times the share of the callee's calls made
//! from it: from the call chains (the samples under the callee seen
//! called from each call), or without chains 1 where the call is the only
//! way into the callee (its one direct call in the binary, no jump to it,
//! its address never taken); otherwise the call keeps what it had.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::call_targets::Direct;
use super::straight_runs::{self, Instruction, Role};

/// Raise each direct call's count in `counts` (the profile's, per linked
/// address; only calls already listed, those of sampled functions) to its
/// callee's entry count in `samples` (the raw samples per address) times
/// the share of the callee's calls made from it. `functions`: the whole
/// binary's (`objdump -d`), to find every way into a callee; `direct`: the
/// call chains' counts per direct call (empty without chains). Returns how
/// many calls were raised.
pub fn raise(
    counts: &mut BTreeMap<u64, u64>,
    samples: &BTreeMap<u64, u64>,
    functions: &[(&str, Vec<Instruction>)],
    direct: &Direct,
) -> usize {
    let ways = Ways::of(functions);
    let jumped_to: BTreeSet<u64> = functions
        .iter()
        .flat_map(|(_, code)| code.iter().filter_map(|i| i.target))
        .collect();
    let mut raised = 0;
    for (_, code) in functions {
        let Some(entry) = entry_count(code, &jumped_to, samples) else {
            continue;
        };
        let start = code[0].address;
        let sites = ways.calls.get(&start).map_or(&[][..], Vec::as_slice);
        let seen: u64 = sites.iter().filter_map(|c| direct.get(c)).sum();
        for &call in sites {
            let share = if seen > 0 {
                (direct.get(&call).copied().unwrap_or(0), seen)
            } else if sites.len() == 1 && !ways.other.contains(&start) {
                (1, 1)
            } else {
                continue;
            };
            let want = (u128::from(entry) * u128::from(share.0) + u128::from(share.1) / 2)
                / u128::from(share.1);
            let want = u64::try_from(want).unwrap_or(u64::MAX);
            if let Some(count) = counts.get_mut(&call) {
                if want > *count {
                    *count = want;
                    raised += 1;
                }
            }
        }
    }
    raised
}

/// How a binary's functions are entered: by each direct call to them, or
/// otherwise (a jump, an address taken).
struct Ways {
    /// Per function's first address, the direct calls to it.
    calls: HashMap<u64, Vec<u64>>,
    /// The first addresses of functions entered other than by a direct
    /// call, or whose start a jump targets.
    other: BTreeSet<u64>,
}

impl Ways {
    fn of(functions: &[(&str, Vec<Instruction>)]) -> Self {
        let starts: BTreeSet<u64> = functions
            .iter()
            .filter_map(|(_, code)| code.first().map(|i| i.address))
            .collect();
        let mut calls: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut other = BTreeSet::new();
        for instruction in functions.iter().flat_map(|(_, code)| code) {
            if let Some(to) = instruction.target.filter(|t| starts.contains(t)) {
                other.insert(to);
            }
            let Some(to) = instruction.refers.filter(|t| starts.contains(t)) else {
                continue;
            };
            if instruction.role == Role::DirectCall {
                calls.entry(to).or_default().push(instruction.address);
            } else {
                other.insert(to);
            }
        }
        Self { calls, other }
    }
}

/// A function's entry count: the most samples on one instruction of its
/// first straight-line run (up to the first jump, return or instruction
/// a jump in `jumped_to` targets); `None` when that run drew none.
fn entry_count(
    code: &[Instruction],
    jumped_to: &BTreeSet<u64>,
    samples: &BTreeMap<u64, u64>,
) -> Option<u64> {
    let first = *straight_runs::runs(code, jumped_to).first()?;
    let most = first
        .iter()
        .filter_map(|i| samples.get(&i.address).copied())
        .max()?;
    (most > 0).then_some(most)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::autofdo::straight_runs::disassembly;

    /// `main` calls `parse` (its only caller) and `emit` twice; `emit`'s
    /// address is also taken; `loop` jumps back to its own start.
    const LISTING: &str = "
0000000000001000 <main>:
    1000:\tpush   %rbx
    1001:\tcall   1100 <parse>
    1006:\tcall   1200 <emit>
    100b:\tcall   1200 <emit>
    1010:\tlea    0x1e9(%rip),%rdi        # 1200 <emit>
    1017:\tcall   1300 <loop>
    101c:\tpop    %rbx
    101d:\tret

0000000000001100 <parse>:
    1100:\tpush   %rbp
    1101:\tpush   %rbx
    1102:\ttest   %edi,%edi
    1104:\tje     1110 <parse+0x10>
    1106:\tadd    %edi,%eax
    1110:\tpop    %rbx
    1111:\tpop    %rbp
    1112:\tret

0000000000001200 <emit>:
    1200:\tpush   %rbx
    1201:\tmov    %edi,%eax
    1203:\tpop    %rbx
    1204:\tret

0000000000001300 <loop>:
    1300:\tsub    $0x1,%edi
    1303:\tjne    1300 <loop>
    1305:\tret
";

    fn raised(samples: &[(u64, u64)], direct: &Direct) -> (BTreeMap<u64, u64>, usize) {
        let functions = disassembly(LISTING);
        let samples: BTreeMap<u64, u64> = samples.iter().copied().collect();
        // The calls are listed (main was sampled), at 0 or 1.
        let mut counts = BTreeMap::from([(0x1001, 0), (0x1006, 1), (0x100b, 0), (0x1017, 0)]);
        let n = raise(&mut counts, &samples, &functions, direct);
        (counts, n)
    }

    #[test]
    fn the_only_call_into_a_function_runs_as_often_as_its_entry() {
        // parse's entry run (up to its `je`) drew 3 and 7: its count is 7;
        // 0x1106 (past the jump) is not its entry.
        let (counts, n) = raised(&[(0x1100, 3), (0x1102, 7), (0x1106, 40)], &Direct::new());
        assert_eq!(counts[&0x1001], 7);
        assert_eq!(n, 1);
    }

    #[test]
    fn without_chains_a_callee_with_other_ways_in_is_left_alone() {
        // emit is called twice and its address taken; loop's start is a
        // jump's target (its entry run counts its iterations too).
        let (counts, n) = raised(&[(0x1200, 9), (0x1300, 30)], &Direct::new());
        assert_eq!(
            (counts[&0x1006], counts[&0x100b], counts[&0x1017]),
            (1, 0, 0)
        );
        assert_eq!(n, 0);
    }

    #[test]
    fn chains_share_a_callees_entry_among_its_calls() {
        // emit's entry drew 9; the chains saw it called 2 times from
        // 0x1006 and once from 0x100b: 6 and 3.
        let direct = Direct::from([(0x1006, 2), (0x100b, 1)]);
        let (counts, n) = raised(&[(0x1200, 9)], &direct);
        assert_eq!((counts[&0x1006], counts[&0x100b]), (6, 3));
        assert_eq!(n, 2);
        // A call already counted higher keeps its count.
        let direct = Direct::from([(0x1006, 1), (0x100b, 99)]);
        let (counts, _) = raised(&[(0x1200, 1)], &direct);
        assert_eq!((counts[&0x1006], counts[&0x100b]), (1, 1));
    }

    #[test]
    fn a_callee_whose_entry_drew_no_sample_raises_nothing() {
        let (counts, n) = raised(&[(0x1106, 40)], &Direct::new());
        assert_eq!(counts[&0x1001], 0);
        assert_eq!(n, 0);
    }
}
