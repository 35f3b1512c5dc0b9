//! Where each call through a pointer went, from the call chains of a
//! recording (`perf record -g`): what timer samples without branch stacks
//! cannot say otherwise, and what both compilers' readers take as the
//! targets of an indirect call (LLVM promotes a hot one to a direct call it
//! may inline, as instrumented PGO does from its value profile; gcc reads
//! them as the call's histogram).
//!
//! A chain's frames are, leaf first, the sampled address and each caller's
//! return address (the frame-pointer walk's) or the byte before it (`perf
//! script`'s DWARF unwinding, which points into the call). Each step from a
//! frame to the next names a callee (the frame's function) and a call (the
//! instruction the caller's frame lies in or follows); a step is counted
//! once a sample, where the call goes through a pointer (a direct call's
//! target is in the code).
//!
//! A function some other one jumps to (a tail call: `jmp f` at the end of
//! `g`) is never taken for a target: `g`'s frame is gone by then, so a
//! sample in `f` looks called from `g`'s caller, and a call through a
//! pointer to `g` (Redis's `dictSdsCaseHash`, which ends in `jmp
//! siphash_nocase`) would name `f`, a target the pointer never holds.
//!
//! A DWARF-unwound chain (`--call-graph dwarf`) is right at every frame. A frame-pointer chain (`-g`, as production
//! recordings often are) is right only where the frame's function had set
//! its frame pointer when the sample was taken: a function that keeps none
//! (`-fomit-frame-pointer`, the default at -O2; gcc's small leaves even
//! with `-fno-omit-frame-pointer`) hands the walk its caller's, which skips
//! the caller, and so does a function sampled in its prologue (before `mov
//! %rsp,%rbp`) or at its `ret`. In such a chain those steps are left out,
//! by the function's own code ([`Role`]).

use std::collections::{BTreeMap, BTreeSet};

use super::straight_runs::{Instruction, Role};

/// Per call through a pointer (its linked address): each function it was
/// seen calling (its name in the binary) and in how many samples.
pub type Targets = BTreeMap<u64, BTreeMap<String, u64>>;

/// Per direct call (its linked address): in how many samples its callee
/// was seen called from it (the share of the callee's calls made there,
/// which the profile's writer gives the call).
pub type Direct = BTreeMap<u64, u64>;

/// A binary's functions by address (`objdump -d`'s, see
/// [`super::straight_runs::disassembly`]).
pub struct Code<'a> {
    /// Each function's first address, name and instructions, by address.
    functions: Vec<(u64, &'a str, &'a [Instruction])>,
    /// The first addresses of functions another function jumps to.
    tail_called: BTreeSet<u64>,
}

impl<'a> Code<'a> {
    pub fn new(functions: &'a [(&'a str, Vec<Instruction>)]) -> Self {
        let mut functions: Vec<(u64, &str, &[Instruction])> = functions
            .iter()
            .filter_map(|(name, code)| Some((code.first()?.address, *name, code.as_slice())))
            .collect();
        functions.sort_by_key(|f| f.0);
        let starts: BTreeSet<u64> = functions.iter().map(|f| f.0).collect();
        let mut tail_called = BTreeSet::new();
        for (start, _, code) in &functions {
            for t in code.iter().filter_map(|i| i.target) {
                if t != *start && starts.contains(&t) {
                    tail_called.insert(t);
                }
            }
        }
        Self {
            functions,
            tail_called,
        }
    }

    /// The function whose instructions hold `address`: its first address,
    /// name and instructions.
    fn function_of(&self, address: u64) -> Option<(u64, &'a str, &'a [Instruction])> {
        let at = self.functions.partition_point(|f| f.0 <= address);
        let function = *self.functions.get(at.checked_sub(1)?)?;
        let last = function.2.last()?.address;
        // An instruction is at most 15 bytes long.
        (address <= last + 15).then_some(function)
    }

    /// The call that `caller` (a return address, or a byte inside the
    /// call) lies just after or in, if a call is what the instruction
    /// there is.
    fn call_at(&self, caller: u64) -> Option<&'a Instruction> {
        let (_, _, code) = self.function_of(caller.checked_sub(1)?)?;
        let next = code.partition_point(|i| i.address < caller);
        let call = code.get(next.checked_sub(1)?)?;
        matches!(call.role, Role::IndirectCall | Role::DirectCall).then_some(call)
    }
}

/// Whether a frame at `address` of `code` had its frame pointer set: past
/// its `mov %rsp,%rbp`, and for the sampled frame (`leaf`) not at a `ret`.
fn frame_set(code: &[Instruction], address: u64, leaf: bool) -> bool {
    let Some(set) = code.iter().find(|i| i.role == Role::SetsFrame) else {
        return false;
    };
    let returning = leaf
        && code
            .iter()
            .any(|i| i.address == address && i.role == Role::Returns);
    address > set.address && !returning
}

/// Count the calls of one sample's `chain` (each frame's linked address in
/// the binary, `None` outside it, leaf first): those through pointers into
/// `targets`, the direct ones into `direct`; `frame_pointers`: the chain
/// is the frame pointers' walk.
pub fn count(
    targets: &mut Targets,
    direct: &mut Direct,
    code: &Code,
    chain: &[Option<u64>],
    frame_pointers: bool,
) {
    let mut seen = BTreeSet::new();
    for (i, pair) in chain.windows(2).enumerate() {
        let (Some(at), Some(return_site)) = (pair[0], pair[1]) else {
            continue;
        };
        let leaf = i == 0;
        // A return address follows its call: the byte before it is the
        // caller's.
        let inside = if leaf { at } else { at.saturating_sub(1) };
        let Some((start, callee, callee_code)) = code.function_of(inside) else {
            continue;
        };
        if code.tail_called.contains(&start) {
            continue;
        }
        if frame_pointers && !frame_set(callee_code, at, leaf) {
            continue;
        }
        let Some(call) = code.call_at(return_site) else {
            continue;
        };
        if !seen.insert((call.address, callee)) {
            continue;
        }
        if call.role == Role::DirectCall {
            // A direct call whose callee is not this frame's function
            // (the frame is a function it tail-called) is not counted.
            if call.refers == Some(start) {
                *direct.entry(call.address).or_default() += 1;
            }
            continue;
        }
        *targets
            .entry(call.address)
            .or_default()
            .entry(callee.to_owned())
            .or_default() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::autofdo::straight_runs::disassembly;

    /// gcc -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer's
    /// shape: `run` calls `cb` through a pointer at 0x1010, `cb` calls
    /// `leaf` directly; `bare` keeps no frame pointer.
    const LISTING: &str = "
0000000000001000 <run>:
    1000:\tpush   %rbp
    1001:\tmov    %rsp,%rbp
    1004:\tmov    0x8(%rdi),%rax
    1008:\tcall   *%rax
    100a:\tcall   1040 <leaf>
    100f:\tpop    %rbp
    1010:\tret

0000000000001020 <cb>:
    1020:\tpush   %rbp
    1021:\tmov    %rsp,%rbp
    1024:\tcall   1040 <leaf>
    1029:\tadd    $0x1,%eax
    102c:\tpop    %rbp
    102d:\tret

0000000000001040 <leaf>:
    1040:\tpush   %rbp
    1041:\tmov    %rsp,%rbp
    1044:\timul   %edi,%eax
    1047:\tpop    %rbp
    1048:\tret

0000000000001050 <bare>:
    1050:\timul   %edi,%eax
    1053:\tret

0000000000001060 <hash>:
    1060:\tmov    %edi,%eax
    1062:\tjmp    1070 <siphash>

0000000000001070 <siphash>:
    1070:\timul   %edi,%eax
    1073:\tret
";

    fn counted_both(chains: &[&[u64]], frame_pointers: bool) -> (Targets, Direct) {
        let functions = disassembly(LISTING);
        let code = Code::new(&functions);
        let (mut targets, mut direct) = (Targets::new(), Direct::new());
        for chain in chains {
            let chain: Vec<Option<u64>> = chain.iter().map(|a| Some(*a)).collect();
            count(&mut targets, &mut direct, &code, &chain, frame_pointers);
        }
        (targets, direct)
    }

    fn counted_as(chains: &[&[u64]], frame_pointers: bool) -> Targets {
        counted_both(chains, frame_pointers).0
    }

    fn counted(chains: &[&[u64]]) -> Targets {
        counted_as(chains, true)
    }

    #[test]
    fn a_callee_under_a_call_through_a_pointer_is_its_target() {
        // In cb's body, called from 0x1008 (returns to 0x100a); in leaf,
        // called by cb (direct: not counted) called from 0x1008.
        let targets = counted(&[&[0x1029, 0x100a], &[0x1044, 0x1029, 0x100a]]);
        assert_eq!(
            targets,
            Targets::from([(0x1008, BTreeMap::from([("cb".to_owned(), 2)]))])
        );
    }

    #[test]
    fn direct_calls_are_counted_apart_by_their_site() {
        // leaf called directly by run (returns to 0x100f) twice, by cb
        // (returns to 0x1029) once, cb through run's pointer.
        let (targets, direct) = counted_both(
            &[
                &[0x1044, 0x100f],
                &[0x1044, 0x100f],
                &[0x1044, 0x1029, 0x100a],
            ],
            true,
        );
        assert_eq!(direct, Direct::from([(0x100a, 2), (0x1024, 1)]));
        assert_eq!(targets[&0x1008]["cb"], 1);
        assert_eq!(targets.len(), 1);
    }

    #[test]
    fn a_frame_without_its_frame_pointer_set_says_nothing_of_its_caller() {
        // cb sampled at its first instruction and at its `ret`: the walk
        // read run's frame pointer, so the next frame is run's caller's.
        // bare keeps no frame pointer at all.
        assert!(counted(&[&[0x1020, 0x100a], &[0x102d, 0x100a], &[0x1050, 0x100a]]).is_empty());
        // Past `mov %rsp,%rbp` it does.
        assert_eq!(counted(&[&[0x1024, 0x100a]])[&0x1008]["cb"], 1);
    }

    /// `run` calls `hash` through its pointer; `hash` tail-calls `siphash`,
    /// whose samples look called from 0x1008: never its target.
    #[test]
    fn a_function_reached_by_a_tail_call_is_no_target() {
        let dwarf = counted_as(&[&[0x1070, 0x1009], &[0x1060, 0x1009]], false);
        assert_eq!(dwarf[&0x1008], BTreeMap::from([("hash".to_owned(), 1)]));
    }

    /// `perf script` prints a DWARF-unwound caller as the byte before its
    /// return address (perf 6.1 on this machine: 0x1092 for a `call *%r13`
    /// at 0x1090 returning to 0x1093); every frame of such a chain is right,
    /// frame pointer or not.
    #[test]
    fn a_dwarf_chain_counts_frames_without_a_frame_pointer() {
        let dwarf = counted_as(&[&[0x1050, 0x1009], &[0x1020, 0x1009]], false);
        assert_eq!(
            dwarf[&0x1008],
            BTreeMap::from([("bare".to_owned(), 1), ("cb".to_owned(), 1)])
        );
        // Inside the call or at its return: the same call.
        assert_eq!(counted(&[&[0x1029, 0x1009]])[&0x1008]["cb"], 1);
    }

    #[test]
    fn a_step_counts_once_a_sample_and_addresses_outside_the_code_are_skipped() {
        // Recursion through the same call: one sample, one count.
        let targets = counted(&[&[0x1029, 0x100a, 0x1029, 0x100a]]);
        assert_eq!(targets[&0x1008]["cb"], 1);
        assert!(counted(&[&[0x9000, 0x100a], &[0x1029, 0x9000]]).is_empty());
    }
}
