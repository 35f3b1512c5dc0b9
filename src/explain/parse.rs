//! Reading callgrind's own output files into instructions per function and
//! object, and the names under which a function and its fragments meet.
//!
//! We read the callgrind out format directly rather than running
//! `callgrind_annotate`: valgrind 3.19's annotate prints `file:function
//! [object]` but leaves the object out on some lines, splits a function
//! over the files its inlined code came from (one row per `fi=`), reads one
//! file at a time (a run has one per process) and is a Perl script that
//! takes seconds on the large files a real program writes. The format is
//! small and documented (valgrind's `docs/callgrind-format`): name
//! compression `fn=(id) name` / `fn=(id)`, shared between `fn` and `cfn`
//! and between `ob` and `cob`; a `calls=` line whose next cost line is the
//! call's inclusive cost, not the caller's own; costs after the position
//! columns, in the order of `events:`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

use anyhow::{bail, Context as _, Result};
use regex::Regex;

/// One function as [`Profile`] keys it: its object's file name and its
/// name without fragment suffixes ([`normalise`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FunctionKey {
    /// The object's file name without its directory (`libc.so.6`, the
    /// program's own name): variants' binaries live in different
    /// directories, and this is where they meet.
    pub object: String,
    /// The function's name, normalised ([`normalise`]).
    pub function: String,
}

/// The events of callgrind's cache and branch simulation
/// (`--cache-sim=yes --branch-sim=yes`) that a simulated run's profile
/// keeps, in this order: conditional branches and their mispredictions,
/// indirect ones and theirs, then L1 instruction, L1 data read and write,
/// last-level instruction, data read and write misses.
pub const SIMULATED: [&str; 10] = [
    "Bc", "Bcm", "Bi", "Bim", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
];

/// Counts of the [`SIMULATED`] events, in its order (zero where a file has
/// no such event).
pub type Simulated = [u64; SIMULATED.len()];

/// A function's own instructions (exclusive of what it calls), and the
/// names callgrind gave its pieces.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FunctionCost {
    /// Instructions executed in the function itself (event `Ir`).
    pub instructions: u64,
    /// The function's own simulated events (zero unless simulated).
    pub simulated: Simulated,
    /// The names as callgrind wrote them (`main`, `main.cold`, …).
    pub names: BTreeSet<String>,
}

/// Instructions per function of one or more callgrind output files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// Each function's own instructions.
    pub functions: BTreeMap<FunctionKey, FunctionCost>,
    /// The files' `totals:` lines, summed: every
    /// instruction, so the functions' sum can be checked against it.
    pub total: u64,
    /// The simulated events of the `totals:` lines (zero unless simulated).
    pub simulated_total: Simulated,
    /// The call graph: the instructions of each caller's calls to each
    /// callee, the callee's and what it calls (inclusive).
    pub calls: BTreeMap<(FunctionKey, FunctionKey), u64>,
}

impl Profile {
    /// The functions' own instructions, summed: [`Self::total`] when every
    /// cost line was read as it should be.
    pub fn own_sum(&self) -> u64 {
        self.functions.values().map(|c| c.instructions).sum()
    }

    /// Add another profile's counts (another process of the same run).
    pub fn add(&mut self, other: Profile) {
        self.total += other.total;
        add_events(&mut self.simulated_total, &other.simulated_total);
        for (key, cost) in other.functions {
            let mine = self.functions.entry(key).or_default();
            mine.instructions += cost.instructions;
            add_events(&mut mine.simulated, &cost.simulated);
            mine.names.extend(cost.names);
        }
        for (edge, n) in other.calls {
            *self.calls.entry(edge).or_default() += n;
        }
    }
}

fn add_events(to: &mut Simulated, from: &Simulated) {
    for (t, f) in to.iter_mut().zip(from) {
        *t += f;
    }
}

/// What the parser knows at a line: the names defined so far, the current
/// object and function, and whether the next cost line is a call's.
#[derive(Default)]
struct State {
    objects: HashMap<String, String>,
    functions: HashMap<String, String>,
    object: String,
    function: String,
    /// Position columns before the costs (`positions: instr line` is 2).
    positions: usize,
    /// Column of `Ir` among the costs.
    ir: Option<usize>,
    /// Columns of the [`SIMULATED`] events, where the file has them.
    simulated: [Option<usize>; SIMULATED.len()],
    /// The callee of a `calls=` line: the next cost line is its cost.
    call_to: Option<FunctionKey>,
    /// The callee named by the last `cfn=`.
    callee: String,
    /// The callee's object, when a `cob=` named it for the next call
    /// (callgrind writes one before each call into another object).
    callee_object: Option<String>,
    /// The key of the current object and function, made at their first
    /// cost line (a real file has millions of cost lines, few functions).
    key: Option<FunctionKey>,
}

/// Instructions per function in one callgrind output file; `what` names
/// the file in errors.
pub fn parse(text: &str, what: &str) -> Result<Profile> {
    let mut state = State {
        positions: 1,
        ..State::default()
    };
    let mut profile = Profile::default();
    // Each part of a file (one per dump) has its own totals. Its
    // `summary:` comes first, so a file cut short has one: not trusted.
    let mut totals: Option<Totals> = None;
    for (number, line) in text.lines().enumerate() {
        let at = || format!("{what}:{}", number + 1);
        let Some(first) = line.bytes().next() else {
            continue;
        };
        if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'*') {
            cost_line(&mut state, &mut profile, line).with_context(at)?;
        } else if let Some(rest) = line.strip_prefix("positions:") {
            state.positions = rest.split_whitespace().count().max(1);
        } else if let Some(rest) = line.strip_prefix("events:") {
            let events: Vec<&str> = rest.split_whitespace().collect();
            state.ir = events.iter().position(|e| *e == "Ir");
            state.simulated = SIMULATED.map(|name| events.iter().position(|e| *e == name));
            if state.ir.is_none() {
                bail!("{}: callgrind counted no `Ir` event (events:{rest})\nhint: afterburner reads instruction counts; count with the default --tool=callgrind options", at());
            }
        } else if let Some(rest) = line.strip_prefix("totals:") {
            add_totals(&mut totals, &state, rest);
        } else if let Some((word, spec)) = line.split_once('=') {
            name_line(&mut state, word, spec).with_context(at)?;
        }
    }
    (profile.total, profile.simulated_total) = totals.with_context(|| format!("{what} has no totals line\nhint: callgrind writes it when the process ends; was it killed?"))?;
    Ok(profile)
}

/// Instructions and simulated events of a `totals:` line.
type Totals = (u64, Simulated);

/// Add a `totals:` line's counts into `sum`.
fn add_totals(sum: &mut Option<Totals>, state: &State, rest: &str) {
    let (instructions, events) = sum.get_or_insert((0, Simulated::default()));
    *instructions += nth_number(rest, state.ir.unwrap_or(0)).unwrap_or(0);
    let line = state
        .simulated
        .map(|column| column.and_then(|c| nth_number(rest, c)).unwrap_or(0));
    add_events(events, &line);
}

/// A `word=spec` line: a new object or function, a callee's names (which
/// define compressed ids too), or the call whose cost comes next.
fn name_line(state: &mut State, word: &str, spec: &str) -> Result<()> {
    match word {
        "ob" => {
            state.object = define(&mut state.objects, spec)?;
            state.key = None;
        }
        "cob" => state.callee_object = Some(define(&mut state.objects, spec)?),
        "fn" => {
            state.function = define(&mut state.functions, spec)?;
            state.key = None;
        }
        "cfn" => state.callee = define(&mut state.functions, spec)?,
        "calls" => {
            let object = state.callee_object.take();
            state.call_to = Some(FunctionKey {
                object: object_name(object.as_deref().unwrap_or(&state.object)),
                function: normalise(&state.callee).to_owned(),
            });
        }
        // Files (fl, fi, fe, cfi, cfl) do not change the function; jumps
        // (jump, jcnd) carry no instruction cost of their own.
        _ => {}
    }
    Ok(())
}

/// The name a compressed spec stands for: `(id) name` defines `id`,
/// `(id)` refers to it, a plain `name` is itself.
fn define(names: &mut HashMap<String, String>, spec: &str) -> Result<String> {
    let spec = spec.trim();
    let Some(rest) = spec.strip_prefix('(') else {
        return Ok(spec.to_owned());
    };
    let (id, name) = rest
        .split_once(')')
        .with_context(|| format!("`{spec}`: a compressed name without its closing parenthesis"))?;
    let name = name.trim();
    if name.is_empty() {
        return names
            .get(id)
            .cloned()
            .with_context(|| format!("name ({id}) is used before it is defined"));
    }
    names.insert(id.to_owned(), name.to_owned());
    Ok(name.to_owned())
}

/// A cost line: positions, then costs in the order of `events:`. The
/// line after `calls=` is the call's inclusive cost, which is the
/// callee's own cost counted again: not the caller's own, but the call
/// graph's edge ([`Profile::calls`]).
fn cost_line(state: &mut State, profile: &mut Profile, line: &str) -> Result<()> {
    let ir = state
        .ir
        .context("a cost line before the `events:` line\nhint: is this a callgrind output file?")?;
    let costs: Vec<&str> = line.split_whitespace().skip(state.positions).collect();
    let count = |column: usize| -> Result<u64> {
        costs.get(column).map_or(Ok(0), |cost| {
            cost.parse()
                .with_context(|| format!("`{cost}` is not an event count"))
        })
    };
    let instructions = count(ir)?;
    let mut simulated = Simulated::default();
    for (slot, column) in simulated.iter_mut().zip(state.simulated) {
        if let Some(column) = column {
            *slot = count(column)?;
        }
    }
    if state.key.is_none() {
        let key = FunctionKey {
            object: object_name(&state.object),
            function: normalise(&state.function).to_owned(),
        };
        let entry = profile.functions.entry(key.clone()).or_default();
        entry.names.insert(state.function.clone());
        state.key = Some(key);
    }
    let caller = state
        .key
        .as_ref()
        .context("invariant: the current function's key was made above")?;
    if let Some(callee) = state.call_to.take() {
        // A fragment calling its own function (main → main.cold) is one
        // row: its cost is already the function's own.
        if callee != *caller {
            *profile.calls.entry((caller.clone(), callee)).or_default() += instructions;
        }
        return Ok(());
    }
    let entry = profile
        .functions
        .get_mut(caller)
        .context("invariant: the current function's entry was made above")?;
    entry.instructions += instructions;
    add_events(&mut entry.simulated, &simulated);
    Ok(())
}

/// The `index`th number (from 0) of a `totals:` line.
fn nth_number(rest: &str, index: usize) -> Option<u64> {
    rest.split_whitespace().nth(index)?.parse().ok()
}

/// An object's file name without its directory.
fn object_name(path: &str) -> String {
    if path.is_empty() {
        return "???".to_owned();
    }
    path.rsplit('/').next().unwrap_or(path).to_owned()
}

/// The name of an object's code that has no symbol.
pub const NO_SYMBOL: &str = "(no symbol)";

/// A function's name without the suffixes of its fragments and clones, so
/// that a function and its pieces are one row: gcc's `.cold`, `.part.N`,
/// `.isra.N`, `.constprop.N`, `.lto_priv.N` (also demangled as
/// `[clone .cold]`), clang's `.llvm.N`, BOLT's `.cold.N` and `/N`, and
/// callgrind's own `'N` for a recursion level. Code without a symbol,
/// which callgrind names by its address (`0x0000000000001050`), is one
/// row per object, [`NO_SYMBOL`]: its addresses differ from build to build.
pub fn normalise(name: &str) -> &str {
    static SUFFIX: OnceLock<Regex> = OnceLock::new();
    if name.len() > 2 && name.starts_with("0x") && name[2..].bytes().all(|b| b.is_ascii_hexdigit())
    {
        return NO_SYMBOL;
    }
    let suffix = SUFFIX.get_or_init(|| {
        Regex::new(
            r"(?:\.(?:cold|part|isra|constprop|lto_priv|llvm|localalias|clone)(?:\.\d+)?|/\d+|'\d+| \[clone [^\]]*\])$",
        )
        .expect("invariant: the pattern is valid")
    });
    let mut rest = name;
    while let Some(found) = suffix.find(rest) {
        if found.start() == 0 {
            break;
        }
        rest = &rest[..found.start()];
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_and_clones_meet_under_one_name() {
        for (raw, plain) in [
            ("main.cold", "main"),
            ("checksum.constprop.0", "checksum"),
            ("parse.part.0.isra.0", "parse"),
            ("helper.lto_priv.3", "helper"),
            ("scan.llvm.4711", "scan"),
            ("foo.cold.1", "foo"),
            ("foo/1", "foo"),
            ("foo/1.cold.0", "foo"),
            ("walk'2", "walk"),
            (
                "std::sort(int*, int*) [clone .isra.0]",
                "std::sort(int*, int*)",
            ),
            ("0x0000000000001050", NO_SYMBOL),
            ("0x", "0x"),
            ("operator/(int, int)", "operator/(int, int)"),
            (".cold", ".cold"),
        ] {
            assert_eq!(normalise(raw), plain, "{raw}");
        }
    }

    /// A hand-written file with every feature the parser must get right:
    /// compressed names defined in `cfn=` and used later in `fn=`, a
    /// call's inclusive cost left out, relative positions, a second event,
    /// an object switch, and a function split into a `.cold` fragment.
    const FILE: &str = "# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 42
cmd:  ./hot 10
part: 1

positions: instr line
events: Ir Dr
summary: 1140

ob=(1) /work/variants/pgo/hot
fl=(1) hot.c
fn=(1) main
0x10 5 10 1
+2 +1 20
cfl=(1)
cfn=(2) checksum.constprop.0
calls=3 0x40 9
* * 900 300
fi=(2) inline.h
+4 -1 7
fe=(1)

fn=(2)
0x40 9 900 300

fn=(3) main.cold
0x90 30 3

ob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
fl=(3) ???
fn=(4) (below main)
0 0 200
cob=(1)
cfn=(1)
calls=1 0x10 5
0 0 940
totals: 1140 301
";

    #[test]
    fn reads_own_costs_per_function_and_object() {
        let profile = parse(FILE, "test").unwrap();
        let key = |object: &str, function: &str| FunctionKey {
            object: object.to_owned(),
            function: function.to_owned(),
        };
        let cost = |k: &FunctionKey| profile.functions[k].instructions;
        assert_eq!(cost(&key("hot", "main")), 10 + 20 + 7 + 3);
        assert_eq!(cost(&key("hot", "checksum")), 900);
        assert_eq!(cost(&key("libc.so.6", "(below main)")), 200);
        assert_eq!(
            profile.functions[&key("hot", "main")]
                .names
                .iter()
                .collect::<Vec<_>>(),
            ["main", "main.cold"]
        );
        assert_eq!(profile.total, 1140);
        assert_eq!(
            profile.own_sum(),
            profile.total,
            "own costs add up to the total"
        );
    }

    /// The events of `--cache-sim=yes --branch-sim=yes`, as valgrind 3.19
    /// writes them; costs left out at the end of a line are zero.
    #[test]
    fn reads_simulated_branches_and_misses() {
        let file = "positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim
summary: 1
ob=(1) /bin/hot
fn=(1) main
3 100 10 0 2 1 0 2 1 0 25 4 1 1
4 10 0 0 0 0 0 0 0 0 5
cfn=(2) leaf
calls=1 0
0 999 999 999 999 999 999 999 999 999 999 999 999 999
totals: 110 10 0 2 1 0 2 1 0 30 4 1 1
";
        let profile = parse(file, "sim").unwrap();
        let main = &profile.functions[&FunctionKey {
            object: "hot".to_owned(),
            function: "main".to_owned(),
        }];
        // Bc Bcm Bi Bim I1mr D1mr D1mw ILmr DLmr DLmw
        assert_eq!(main.simulated, [30, 4, 1, 1, 2, 1, 0, 2, 1, 0]);
        assert_eq!(profile.simulated_total, main.simulated);
        assert_eq!((main.instructions, profile.total), (110, 110));
    }

    /// A file dumped in parts (`callgrind_control -d`): every part's
    /// costs and totals count, the names defined in one part hold in the next.
    #[test]
    fn parts_of_a_file_add_up() {
        let file = "events: Ir\npart: 1\nsummary: 5\nob=(1) /bin/a\nfn=(1) f\n1 5\ntotals: 5\npart: 2\nsummary: 7\nob=(1)\nfn=(1)\n1 7\ntotals: 7\n";
        let profile = parse(file, "parts").unwrap();
        assert_eq!((profile.total, profile.own_sum()), (12, 12));
    }

    #[test]
    fn says_what_is_wrong_with_a_file() {
        let error = parse("events: Ir\nfn=(7)\n0 1\ntotals: 1\n", "x.out").unwrap_err();
        assert!(format!("{error:#}").contains("x.out:2"), "{error:#}");
        // A file cut short: its summary came first, its totals never.
        let error = parse("events: Ir\nsummary: 1\nfn=(1) f\n0 1\n", "x.out").unwrap_err();
        assert!(format!("{error:#}").contains("no totals line"), "{error:#}");
        let error = parse("events: Dr\n", "x.out").unwrap_err();
        assert!(format!("{error:#}").contains("hint:"), "{error:#}");
    }

    #[test]
    fn processes_of_a_run_add_up() {
        let mut sum = parse(FILE, "a").unwrap();
        sum.add(parse(FILE, "b").unwrap());
        assert_eq!(sum.total, 2280);
        let main = FunctionKey {
            object: "hot".to_owned(),
            function: "main".to_owned(),
        };
        assert_eq!(sum.functions[&main].instructions, 80);
    }
}
