//! Straight-line runs of a binary's code, read from `objdump -d`, and
//! timer samples spread over them.
//!
//! Every instruction of a run that no jump enters in its middle and that
//! no jump or return leaves before its end executes as often as the
//! others. A timer sample lands on one of them, by the cycles each takes
//! and by skid, so one instruction's samples say little about how often
//! its line ran: a call line's two instructions, or a `return`'s one, are
//! seldom hit however often they run, and gcc 12 and 14 read a line with
//! no sample as cold (no inlining at its calls, code tuned for size).
//! Spread over its run, each instruction gets the run's samples per
//! instruction: the estimate of executions (times the mean time per
//! instruction) that every line of the run shares, from all of the run's
//! samples instead of one instruction's.
//!
//! A call does not end a run: the code after it runs as often as the code
//! before, so a call line shares the samples of the lines around it (the
//! callee's own samples never land in the run). A call that does not
//! return (`abort`, an assertion's) is followed by code that a jump
//! enters, which starts a run of its own; one reached only through a
//! `switch`'s table (a jump through a register, whose targets are not
//! seen here) would join the run before it.

use std::collections::{BTreeMap, BTreeSet};

/// One instruction of `objdump -d`'s listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub address: u64,
    /// A jump, return or trap: the run ends after it.
    pub ends_run: bool,
    /// A direct jump's target, where a run starts (a call's is a function's
    /// start, or in an object file not yet linked, the next instruction).
    pub target: Option<u64>,
    /// What the call chains need to know of it ([`Role`]).
    pub role: Role,
    /// The address it names besides a jump's target: a direct call's
    /// callee, or the one objdump names in a `# ADDRESS <name>` comment (a
    /// function's address taken by a `lea`).
    pub refers: Option<u64>,
}

/// What reading a call chain needs to know of an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    #[default]
    Other,
    /// `call *…`: a call through a pointer.
    IndirectCall,
    /// `call ADDRESS`: a direct call.
    DirectCall,
    /// `mov %rsp,%rbp`: the frame pointer is set from here on.
    SetsFrame,
    /// `ret`: the caller's frame pointer is back.
    Returns,
}

/// `objdump -d --no-show-raw-insn`'s functions: each `ADDRESS <NAME>:`
/// header and the instructions under it (`  ADDRESS:\tmnemonic …`).
pub fn disassembly(text: &str) -> Vec<(&str, Vec<Instruction>)> {
    let mut functions: Vec<(&str, Vec<Instruction>)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line
            .strip_suffix(">:")
            .and_then(|l| l.split_once(" <"))
            .map(|(_, name)| name)
        {
            functions.push((name, Vec::new()));
        } else if let Some((address, rest)) = line.split_once(":\t") {
            let is_instruction = !rest.trim().is_empty() && !rest.starts_with('(');
            if let (Some(function), Ok(address), true) = (
                functions.last_mut(),
                u64::from_str_radix(address.trim(), 16),
                is_instruction,
            ) {
                function.1.push(read(address, rest));
            }
        }
    }
    functions
}

/// Prefixes objdump writes before a mnemonic.
const PREFIXES: &[&str] = &[
    "notrack", "bnd", "rep", "repz", "repnz", "repe", "repne", "lock", "cs", "ds", "data16",
];

/// The instruction at `address` (`mnemonic operands`, AT&T syntax, as
/// objdump writes it): whether it ends a run, its direct target, its
/// [`Role`] and the address it names.
fn read(address: u64, instruction: &str) -> Instruction {
    let hex = |word: &str| u64::from_str_radix(word, 16).ok();
    let mut words = instruction
        .split_whitespace()
        .skip_while(|w| PREFIXES.contains(w));
    let Some(mnemonic) = words.next() else {
        return Instruction {
            address,
            ends_run: false,
            target: None,
            role: Role::Other,
            refers: None,
        };
    };
    let operand = words.next().unwrap_or_default();
    let jumps = mnemonic.starts_with('j');
    let ends_run =
        jumps || mnemonic.starts_with("ret") || matches!(mnemonic, "ud2" | "hlt" | "int3");
    let target = jumps.then(|| hex(operand)).flatten();
    let role = match mnemonic {
        "call" | "callq" if operand.starts_with('*') => Role::IndirectCall,
        "call" | "callq" => Role::DirectCall,
        "mov" | "movq" if operand == "%rsp,%rbp" => Role::SetsFrame,
        m if m.starts_with("ret") => Role::Returns,
        _ => Role::Other,
    };
    // Besides a jump's target: a direct call's callee, or objdump's
    // `# ADDRESS <name>` comment.
    let refers = if role == Role::DirectCall {
        hex(operand)
    } else {
        instruction
            .split_once("# ")
            .and_then(|(_, comment)| hex(comment.split_whitespace().next()?))
    };
    Instruction {
        address,
        ends_run,
        target,
        role,
        refers,
    }
}

/// What one sample is worth after spreading: a run's samples per
/// instruction, in hundredths, so that one sample over a run of up to 100
/// instructions still counts.
pub const PER_SAMPLE: u64 = 100;

/// Replace each instruction's count in `counts` by its run's samples per
/// instruction (× [`PER_SAMPLE`], rounded), for every run of `functions`;
/// an address `counts` lacks is left out of its run, as is a run with no
/// address in `counts`. An address of `counts` in no run keeps its own
/// samples, in the same unit.
pub fn spread(counts: &mut BTreeMap<u64, u64>, functions: &[&[Instruction]]) {
    let starts: BTreeSet<u64> = functions
        .iter()
        .flat_map(|f| f.iter().filter_map(|i| i.target))
        .collect();
    let listed: BTreeSet<u64> = functions
        .iter()
        .flat_map(|f| f.iter().map(|i| i.address))
        .collect();
    for (address, count) in counts.iter_mut() {
        if !listed.contains(address) {
            *count *= PER_SAMPLE;
        }
    }
    for instructions in functions {
        for run in runs(instructions, &starts) {
            let placed: Vec<u64> = run
                .iter()
                .map(|i| i.address)
                .filter(|a| counts.contains_key(a))
                .collect();
            if placed.is_empty() {
                continue;
            }
            let samples: u64 = placed.iter().map(|a| counts[a]).sum();
            let n = placed.len() as u64;
            let per_instruction = (samples * PER_SAMPLE + n / 2) / n;
            for address in placed {
                counts.insert(address, per_instruction);
            }
        }
    }
}

/// `instructions` cut into runs: after each instruction that ends one,
/// and before each that a jump in `starts` targets.
pub(super) fn runs<'a>(
    instructions: &'a [Instruction],
    starts: &BTreeSet<u64>,
) -> Vec<&'a [Instruction]> {
    let mut runs = Vec::new();
    let mut first = 0;
    for (i, instruction) in instructions.iter().enumerate() {
        if i > first && starts.contains(&instruction.address) {
            runs.push(&instructions[first..i]);
            first = i;
        }
        if instruction.ends_run {
            runs.push(&instructions[first..=i]);
            first = i + 1;
        }
    }
    if first < instructions.len() {
        runs.push(&instructions[first..]);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gcc 12 -O2's `objdump -d --no-show-raw-insn` of a function with a
    /// loop, a call and a tail jump, cut down.
    const LISTING: &str = "
0000000000001140 <sum>:
    1140:\tpush   %rbx
    1141:\txor    %eax,%eax
    1143:\ttest   %edi,%edi
    1145:\tjle    1158 <sum+0x18>
    1147:\tadd    %edi,%eax
    1149:\tsub    $0x1,%edi
    114c:\tjne    1147 <sum+0x7>
    114e:\tmov    %eax,%ebx
    1150:\tcall   1030 <puts@plt>
    1155:\tmov    %ebx,%eax
    1156:\tpop    %rbx
    1157:\tret
    1158:\tnotrack jmp *%rax
    115b:\tnopl   0x0(%rax,%rax,1)

0000000000001160 <sum.cold>:
    1160:\tud2
";

    #[test]
    fn the_listing_is_read_per_function_with_where_runs_end_and_start() {
        let functions = disassembly(LISTING);
        let names: Vec<&str> = functions.iter().map(|f| f.0).collect();
        assert_eq!(names, ["sum", "sum.cold"]);
        let sum = &functions[0].1;
        assert_eq!(sum.len(), 14);
        let at = |a: u64| sum.iter().find(|i| i.address == a).unwrap();
        assert_eq!(at(0x1145).target, Some(0x1158));
        assert!(at(0x1145).ends_run);
        // A call keeps its run going.
        assert_eq!(at(0x1150).target, None);
        assert!(!at(0x1150).ends_run && at(0x1157).ends_run);
        // An indirect jump (with its prefix) ends a run, with no target.
        assert_eq!((at(0x1158).ends_run, at(0x1158).target), (true, None));
        assert!(!at(0x1147).ends_run && !at(0x114e).ends_run);
        assert!(functions[1].1[0].ends_run);
        assert_eq!(at(0x1157).role, Role::Returns);
        // A direct call is one; an indirect jump is no call.
        assert_eq!(at(0x1150).role, Role::DirectCall);
        assert_eq!(at(0x1158).role, Role::Other);
        // It names its callee; a jump names only its target.
        assert_eq!(at(0x1150).refers, Some(0x1030));
        assert_eq!(at(0x1145).refers, None);
    }

    #[test]
    fn calls_through_pointers_and_frame_set_up_are_told_apart() {
        let listing = "
0000000000002000 <f>:
    2000:\tpush   %rbp
    2001:\tmov    %rsp,%rbp
    2004:\tcall   *0x40(%rbx)
    2007:\tnotrack call *%rax
    2008:\tlea    0x16245(%rip),%rdi        # 7e100 <main>
    2009:\tmov    %rbp,%rsp
    200c:\tpop    %rbp
    200d:\tret
";
        let functions = disassembly(listing);
        let roles: Vec<Role> = functions[0].1.iter().map(|i| i.role).collect();
        assert_eq!(
            roles,
            [
                Role::Other,
                Role::SetsFrame,
                Role::IndirectCall,
                Role::IndirectCall,
                Role::Other,
                Role::Other,
                Role::Other,
                Role::Returns
            ]
        );
        // A function's address taken is named; a call through a pointer
        // names none.
        assert_eq!(functions[0].1[4].refers, Some(0x7e100));
        assert_eq!(functions[0].1[2].refers, None);
    }

    #[test]
    fn runs_are_cut_after_transfers_and_before_targets() {
        let functions = disassembly(LISTING);
        let sum = &functions[0].1;
        let starts = BTreeSet::from([0x1147, 0x1158]);
        let cut: Vec<Vec<u64>> = runs(sum, &starts)
            .iter()
            .map(|r| r.iter().map(|i| i.address).collect())
            .collect();
        assert_eq!(
            cut,
            vec![
                vec![0x1140, 0x1141, 0x1143, 0x1145],
                vec![0x1147, 0x1149, 0x114c],
                vec![0x114e, 0x1150, 0x1155, 0x1156, 0x1157],
                vec![0x1158],
                vec![0x115b],
            ]
        );
    }

    #[test]
    fn a_runs_samples_are_shared_by_its_instructions() {
        let functions = disassembly(LISTING);
        let sum: &[Instruction] = &functions[0].1;
        // The loop's three instructions have 7 samples, all on the jump
        // (skid); the run of the call and the return 1 sample, on the
        // `mov` after the call; 0x115b is not a sampled function's
        // (absent).
        let mut counts: BTreeMap<u64, u64> = sum
            .iter()
            .map(|i| (i.address, 0))
            .filter(|(a, _)| *a != 0x115b)
            .collect();
        counts.insert(0x114c, 7);
        counts.insert(0x1155, 1);
        // A sample at an address of no function listed.
        counts.insert(0x9000, 2);
        spread(&mut counts, &[sum]);
        assert_eq!(counts.remove(&0x9000), Some(2 * PER_SAMPLE));
        assert_eq!(counts[&0x1147], 233);
        assert_eq!(counts[&0x1149], 233);
        assert_eq!(counts[&0x114c], 233);
        // The call and the return, never hit, run as often as the `mov`.
        assert_eq!(counts[&0x1150], 20);
        assert_eq!(counts[&0x1157], 20);
        // The run before the loop had no sample: it stays at 0.
        assert_eq!(counts[&0x1140], 0);
        assert!(!counts.contains_key(&0x115b));
        // Samples are kept: 7 over 3 and 1 over 5 instructions.
        assert_eq!(counts.values().sum::<u64>(), 3 * 233 + 5 * 20);
    }
}
