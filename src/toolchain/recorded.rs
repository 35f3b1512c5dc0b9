//! What a build's binaries say about how they were compiled, and the check
//! that a variant is what its name says: its compiler (the `.comment`
//! section) and the switches its words add, read from the compiler's own
//! record of each object's command line (gcc's `-frecord-gcc-switches`
//! and DWARF `DW_AT_producer`, clang's `-frecord-command-line`, Go's build
//! information).
//!
//! How each compiler records (gcc 12, clang 14, Go 1.21+; tested in
//! `tests/it/verify.rs`): gcc writes one string per object into
//! `.GCC.command.line`, `GNU C17 12.2.0 -mtune=generic -march=x86-64 -O2 …`
//! (the options cc1 saw, without warnings, `-D` or `-I`; `-march=native`
//! expanded; `-flto=auto` as `-flto`), the same string as the DWARF
//! producer where `-g` is given. Identical strings of several objects are
//! merged by the linker, so without `-g` they are counted as command lines,
//! with it as compile units. An LTO link records its own units
//! (`GNU GIMPLE … -fltrans`) when it is given the switch, with the level
//! and `-march` but none of the other `-f` options; the objects' own
//! records are dropped. clang records the whole driver command line of each
//! object (`/usr/lib/llvm-14/bin/clang -O3 -flto=thin -c a.c -o a.o`), kept
//! through `ThinLTO`. The crt objects give every binary a `GCC:` comment,
//! clang's binaries too.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::Compiler;

/// How a switch a word adds shows in a recorded command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Test {
    /// One of these options, alone or with a value (`-flto`, `-flto=auto`).
    Option(Vec<String>),
    /// The last of a family (`-O…`, `-march=…`) is this one: a later
    /// `-O2` undoes `-O3`.
    Last { family: String, is: String },
    /// The last of a family is not this one (gcc writes `-march=native`
    /// as the CPU it found, so only "not the default" is known).
    LastNot { family: String, not: String },
}

/// One switch a build must show, as a word declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    /// As the user reads it (`-flto=auto`).
    pub said: String,
    pub test: Test,
    /// Whether gcc's LTO link units record it (the level and `-march`
    /// do; other `-f` options are left out there).
    pub at_lto_link: bool,
}

impl Switch {
    /// The switch a compile or Go build flag leaves in the record, or
    /// `None` for one no record keeps (warnings, `-D`, `-I`, linker
    /// options).
    pub fn from_flag(flag: &str) -> Option<Switch> {
        let family = |family: &str| Switch {
            said: flag.to_owned(),
            test: Test::Last {
                family: family.to_owned(),
                is: flag.to_owned(),
            },
            at_lto_link: true,
        };
        if let Some(option) = flag.strip_prefix("-C") {
            return Some(rustc_switch(flag, option));
        }
        if flag.starts_with("-O") {
            return Some(family("-O"));
        }
        if flag.starts_with("-march=") {
            return Some(family("-march="));
        }
        let recorded = ["-f", "-m", "-g", "-pgo"];
        if !recorded.iter().any(|p| flag.starts_with(p)) {
            return None;
        }
        let name = flag.split('=').next().unwrap_or(flag);
        Some(Switch::option(flag, &[name]))
    }

    /// The switches of every compile, Go and rustc flag in `flags` and of
    /// every cargo profile setting, each once.
    pub fn from_flags(flags: &super::Flags) -> Vec<Switch> {
        let mut out: Vec<Switch> = Vec::new();
        let settings = flags.cargo.iter().filter_map(|s| cargo_setting_flag(s));
        let written = flags
            .cflags
            .iter()
            .chain(&flags.goflags)
            .chain(&flags.rustflags)
            .cloned();
        for flag in written.chain(settings) {
            if let Some(switch) = Switch::from_flag(&flag) {
                if !out.contains(&switch) {
                    out.push(switch);
                }
            }
        }
        out
    }

    /// `said`, shown as any of `names` (each alone or with a value).
    pub fn option(said: &str, names: &[&str]) -> Switch {
        Switch {
            said: said.to_owned(),
            test: Test::Option(names.iter().map(|n| (*n).to_owned()).collect()),
            at_lto_link: false,
        }
    }

    /// Whether `unit` shows it: `None` where the unit does not record
    /// such a switch (an LTO link's unit, for most options).
    pub fn found_in(&self, unit: &Unit) -> Option<bool> {
        if unit.lto_link && !self.at_lto_link {
            return None;
        }
        let tokens = || unit.line.split_whitespace();
        let last = |family: &str| tokens().rev().find(|t| t.starts_with(family));
        Some(match &self.test {
            Test::Option(names) => tokens().any(|t| {
                names.iter().any(|n| {
                    t == n
                        || t.strip_prefix(n.as_str())
                            .is_some_and(|r| r.starts_with('='))
                })
            }),
            Test::Last { family, is } => last(family) == Some(is.as_str()),
            Test::LastNot { family, not } => last(family).is_some_and(|l| l != not),
        })
    }
}

/// How a rustc codegen option `-C<option>` shows in rustc's command line:
/// a level or CPU as the last of its family, a link argument whole, any
/// other by its name (`-Cprofile-use`, alone or with a value).
fn rustc_switch(flag: &str, option: &str) -> Switch {
    let (name, value) = option.split_once('=').unwrap_or((option, ""));
    match name {
        "opt-level" | "target-cpu" | "codegen-units" | "lto" if !value.is_empty() => Switch {
            said: flag.to_owned(),
            test: Test::Last {
                family: format!("-C{name}="),
                is: flag.to_owned(),
            },
            at_lto_link: true,
        },
        "link-arg" | "link-args" => Switch::option(flag, &[flag]),
        _ => Switch::option(flag, &[&format!("-C{name}")]),
    }
}

/// The rustc option a cargo release-profile setting becomes
/// (`CARGO_PROFILE_RELEASE_LTO=fat` → `-Clto=fat`), as cargo passes it.
pub fn cargo_setting_flag(setting: &str) -> Option<String> {
    let (key, value) = setting.split_once('=')?;
    let name = key.strip_prefix("CARGO_PROFILE_RELEASE_")?;
    Some(format!(
        "-C{}={value}",
        name.to_ascii_lowercase().replace('_', "-")
    ))
}

/// The rustc command lines of a cargo build's verbose log (its `Running`
/// lines, `…/rustc --crate-name foo … --target HOST …` quoted in
/// backticks): the crates built for
/// the target, not the build scripts and procedural macros cargo builds
/// for the host. Each `-C option` is written `-Coption`, as RUSTFLAGS give
/// them, so one test reads both.
pub fn parse_cargo_log(text: &str) -> Vec<Unit> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("Running `"))
        .filter_map(|l| l.strip_suffix('`'))
        .filter(|l| {
            let first = l.split_whitespace().next().unwrap_or_default();
            first.rsplit('/').next() == Some("rustc") && l.contains(" --target ")
        })
        .map(|l| Unit {
            line: cargo_words(l),
            compiler: Some(Compiler::Rustc),
            lto_link: false,
        })
        .collect()
}

/// A command line as cargo's log shows it, as rustc's arguments: cargo
/// quotes an argument with a character the shell would read (a path
/// under `pgo@1a2b3c/` is `'-Cprofile-generate=…/pgo@1a2b3c/…'`), and
/// writes a codegen option as `-C opt-level=3`, which reads as
/// `-Copt-level=3`.
fn cargo_words(line: &str) -> String {
    let words = shell_words::split(line)
        .unwrap_or_else(|_| line.split_whitespace().map(str::to_owned).collect());
    let mut joined: Vec<String> = Vec::with_capacity(words.len());
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        match (word.as_str(), words.as_slice().first()) {
            ("-C", Some(_)) => joined.push(format!("-C{}", words.next().unwrap_or_default())),
            _ => joined.push(word),
        }
    }
    joined.join(" ")
}

/// One recorded compilation: an object's (or an LTO link partition's)
/// command line, a Go binary's build settings, or a crate's rustc command
/// line as cargo ran it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub line: String,
    /// The compiler that wrote it, where the line says.
    pub compiler: Option<Compiler>,
    /// A gcc LTO link's unit (`GNU GIMPLE …`), which records few options.
    pub lto_link: bool,
}

impl Unit {
    /// A recorded line, its compiler told by its form.
    pub fn parse(line: &str) -> Unit {
        let line = line.trim().to_owned();
        let first = line.split_whitespace().next().unwrap_or_default();
        let program = first.rsplit('/').next().unwrap_or(first);
        let compiler = if first == "GNU" {
            Some(Compiler::Gcc)
        } else if program.starts_with("clang") {
            Some(Compiler::Clang)
        } else {
            None
        };
        Unit {
            lto_link: line.starts_with("GNU GIMPLE"),
            line,
            compiler,
        }
    }
}

/// The strings of `readelf -p SECTION`: `  [   4f]  text` lines.
pub fn parse_string_dump(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('[')?;
            let (_, text) = rest.split_once(']')?;
            Some(text.trim().to_owned())
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// The compile units' `DW_AT_producer` strings of `readelf
/// --debug-dump=info`, whether inline or in `.debug_str`
/// (`(indirect string, offset: 0x7a): GNU C17 …`).
pub fn parse_producers(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once("DW_AT_producer")?;
            let rest = rest.trim_start().strip_prefix(':')?.trim_start();
            let value = match rest.strip_prefix('(') {
                Some(inner) => inner.split_once("): ")?.1,
                None => rest,
            };
            Some(value.trim().to_owned())
        })
        .collect()
}

/// A Go binary's build settings from `go version -m`, as one unit
/// (`-pgo=/p/default.pgo -compiler=gc CGO_ENABLED=1 …`).
pub fn parse_go_build_info(text: &str) -> Option<Unit> {
    let settings: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("build\t"))
        .map(str::trim)
        .collect();
    (!settings.is_empty()).then(|| Unit {
        line: settings.join(" "),
        compiler: Some(Compiler::Go),
        lto_link: false,
    })
}

/// Which compilers a binary's `.comment` names: gcc by `GCC:`, clang by
/// `clang version`. Every binary linked with the system's crt objects
/// names gcc, clang's too.
pub fn comment_compilers(comment: &[String]) -> (bool, bool) {
    let gcc = comment.iter().any(|c| c.starts_with("GCC:"));
    let clang = comment.iter().any(|c| c.contains("clang version"));
    (gcc, clang)
}

/// What one binary records of its compilation.
#[derive(Debug, Clone, Default)]
pub struct BinaryRecord {
    /// The `.comment` strings (`GCC: (Debian 12.2.0-14) 12.2.0`).
    pub comment: Vec<String>,
    /// Each recorded compilation.
    pub units: Vec<Unit>,
    /// Where the units were read: "command lines", "compile units" or
    /// "build info".
    pub units_from: &'static str,
    /// The symbols it defines, where it has a symbol table (empty when
    /// stripped).
    pub symbols: Vec<String>,
}

const READ_TIMEOUT: Duration = Duration::from_mins(2);

/// Where a cargo target's units are read.
pub const CARGO_UNITS: &str = "rustc command lines (cargo's log)";

/// Read what `binary` records, or `None` when it is not an ELF file (a
/// script): there is nothing to read then.
/// `go` is the Go command that reads a Go binary's build information.
pub fn read(binary: &Path, compiler: Compiler, go: &str) -> Result<Option<BinaryRecord>> {
    let mut magic = [0u8; 4];
    let is_elf = fs_err::File::open(binary)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok()
        && magic == *b"\x7fELF";
    if !is_elf {
        return Ok(None);
    }
    let path = binary.to_string_lossy();
    let readelf = |args: &[&str]| -> Result<String> {
        let mut all = args.to_vec();
        all.push(&path);
        let out = crate::process::capture("readelf", &all, READ_TIMEOUT)
            .context("running readelf (binutils) to check what the build compiled")?;
        Ok(out.stdout)
    };
    let comment = parse_string_dump(&readelf(&["-W", "-p", ".comment"])?);
    let (units, units_from) = match compiler {
        Compiler::Go => (go_build_info(go, &path), "build info"),
        // rustc records no command line in the binary: cargo's log holds
        // them ([`parse_cargo_log`]).
        Compiler::Rustc => (Vec::new(), CARGO_UNITS),
        Compiler::Gcc | Compiler::Clang => {
            let producers: Vec<Unit> =
                parse_producers(&readelf(&["--debug-dump=info", "--dwarf-depth=1"])?)
                    .iter()
                    .map(|p| Unit::parse(p))
                    .filter(|u| u.compiler == Some(Compiler::Gcc))
                    .collect();
            if producers.is_empty() {
                let lines = parse_string_dump(&readelf(&["-W", "-p", ".GCC.command.line"])?);
                (
                    lines.iter().map(|l| Unit::parse(l)).collect(),
                    "command lines",
                )
            } else {
                (producers, "compile units")
            }
        }
    };
    let symbols = super::matching::symbols(binary).unwrap_or_default();
    Ok(Some(BinaryRecord {
        comment,
        units,
        units_from,
        symbols,
    }))
}

/// A Go binary's build settings, as one unit (none when `go` is missing).
fn go_build_info(go: &str, path: &str) -> Vec<Unit> {
    let Ok(out) = crate::process::capture(go, &["version", "-m", path], READ_TIMEOUT) else {
        return Vec::new();
    };
    parse_go_build_info(&out.stdout).into_iter().collect()
}

/// How many recorded units show one switch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SwitchSeen {
    /// The switch, as the user reads it (`-flto=auto`).
    pub switch: String,
    /// The word of `optimize` (or variant option) that adds it.
    pub from: String,
    /// Units that show it.
    pub with: usize,
    /// Units that do not.
    pub without: usize,
    /// Units that do not record such a switch (gcc's LTO link units).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unrecorded: usize,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One switch a stage of a variant must show, and the word that adds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The word of `optimize` (or variant option) that adds it.
    pub from: String,
    pub switch: Switch,
}

/// Symbols an instrumented build defines (`__gcov_`), and the word whose
/// training needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instrumentation {
    pub from: String,
    /// Prefixes of the runtime's symbols; any one shows it.
    pub prefixes: &'static [&'static str],
}

/// Whether a stage's instrumentation is in its binaries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InstrumentationSeen {
    /// The word whose training runs it.
    pub from: String,
    /// The symbol prefixes looked for (`__gcov_`, `__llvm_profile_`).
    pub symbols: Vec<String>,
    /// Binaries that define one; `None` where every binary is stripped.
    pub found: Option<usize>,
    /// Binaries checked.
    pub binaries: usize,
}

/// What was verified of one build of a variant: the compiler its binaries
/// name and, for each switch its words add, how many recorded units show
/// it. results.json keeps the final build's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verification {
    /// Why the build was not verified (`prebuilt` binaries, no ELF
    /// binary); absent when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_verified: Option<String>,
    /// The compiler the variant names (`gcc`, `clang`, `go`).
    pub compiler: String,
    /// What the binaries' `.comment` sections say, each once (`GCC:
    /// (Debian 12.2.0-14) 12.2.0`, `Debian clang version 14.0.6`).
    #[serde(default)]
    pub compiler_seen: Vec<String>,
    /// Where the units were read: `command lines` (`.GCC.command.line`,
    /// identical lines merged), `compile units` (DWARF producers) or
    /// `build info` (Go).
    #[serde(default)]
    pub units_from: String,
    /// Recorded units, over every binary.
    #[serde(default)]
    pub units: usize,
    /// Units by the compiler that wrote them (`gcc` → 40).
    #[serde(default)]
    pub unit_compilers: std::collections::BTreeMap<String, usize>,
    /// Each switch the variant's words add, with the units that show it.
    #[serde(default)]
    pub switches: Vec<SwitchSeen>,
    /// An instrumented build's runtime, looked for in its binaries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instrumentation: Vec<InstrumentationSeen>,
}

impl Verification {
    /// A build that is not checked, and why.
    pub fn skipped(compiler: Compiler, why: &str) -> Verification {
        Verification {
            not_verified: Some(why.to_owned()),
            compiler: compiler.name().to_owned(),
            ..Verification::default()
        }
    }

    /// Which compilers the `.comment` strings name: (gcc, clang).
    pub fn comment_names(&self) -> (bool, bool) {
        comment_compilers(&self.compiler_seen)
    }
}

/// Read `binaries` and count, for each expected switch, the units that
/// show it, and whether each instrumentation is there (`go`: the Go
/// command, for a Go build; `logged`: the compilations a build's log
/// holds, for a cargo target).
pub fn verify(
    compiler: Compiler,
    expected: &[Expected],
    instrumentation: &[Instrumentation],
    binaries: &[std::path::PathBuf],
    go: &str,
    logged: &[Unit],
) -> Result<Verification> {
    let mut records = Vec::new();
    for binary in binaries {
        if let Some(record) = read(binary, compiler, go)? {
            records.push(record);
        }
    }
    if records.is_empty() {
        return Ok(Verification::skipped(compiler, "no binary is an ELF file"));
    }
    if !logged.is_empty() {
        // The compilations the build's log holds (a cargo target's).
        records.push(BinaryRecord {
            units: logged.to_vec(),
            units_from: CARGO_UNITS,
            ..BinaryRecord::default()
        });
    }
    Ok(tally(compiler, expected, instrumentation, &records))
}

/// The counts of [`verify`], from what the binaries record.
pub fn tally(
    compiler: Compiler,
    expected: &[Expected],
    instrumentation: &[Instrumentation],
    records: &[BinaryRecord],
) -> Verification {
    let units: Vec<&Unit> = records.iter().flat_map(|r| &r.units).collect();
    let mut seen = Verification {
        compiler: compiler.name().to_owned(),
        units: units.len(),
        units_from: records
            .iter()
            .find(|r| !r.units.is_empty())
            .map_or("command lines", |r| r.units_from)
            .to_owned(),
        ..Verification::default()
    };
    for c in records.iter().flat_map(|r| &r.comment) {
        if !seen.compiler_seen.contains(c) {
            seen.compiler_seen.push(c.clone());
        }
    }
    for unit in &units {
        let name = unit.compiler.map_or("other", Compiler::name);
        *seen.unit_compilers.entry(name.to_owned()).or_default() += 1;
    }
    for e in expected {
        let mut count = SwitchSeen {
            switch: e.switch.said.clone(),
            from: e.from.clone(),
            with: 0,
            without: 0,
            unrecorded: 0,
        };
        for unit in &units {
            match e.switch.found_in(unit) {
                Some(true) => count.with += 1,
                Some(false) => count.without += 1,
                None => count.unrecorded += 1,
            }
        }
        seen.switches.push(count);
    }
    seen.instrumentation = instrumentation
        .iter()
        .map(|i| runtime_seen(i, records))
        .collect();
    seen
}

/// Whether `records` hold the runtime of `instrumentation`: how many
/// binaries define one of its symbols, where any has a symbol table.
fn runtime_seen(
    instrumentation: &Instrumentation,
    records: &[BinaryRecord],
) -> InstrumentationSeen {
    let has = |r: &BinaryRecord| {
        r.symbols
            .iter()
            .any(|s| instrumentation.prefixes.iter().any(|p| s.starts_with(p)))
    };
    let readable: Vec<&BinaryRecord> = records.iter().filter(|r| !r.symbols.is_empty()).collect();
    InstrumentationSeen {
        from: instrumentation.from.clone(),
        symbols: instrumentation
            .prefixes
            .iter()
            .map(|p| (*p).to_owned())
            .collect(),
        found: (!readable.is_empty()).then(|| readable.iter().filter(|r| has(r)).count()),
        binaries: records.len(),
    }
}

#[cfg(test)]
#[path = "recorded_tests.rs"]
mod tests;
