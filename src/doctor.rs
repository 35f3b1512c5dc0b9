//! `afterburner doctor`: for each optimization, what it needs, what this
//! machine has, and the exact command that installs what is missing
//! (`--fix` runs it with apt-get as root).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Result};

use crate::env::Environment;
use crate::experiment::{Experiment, Source, Variant};
use crate::metric::Builtin;
use crate::toolchain::optimize::{Requirement, VariantSetup};
use crate::toolchain::{go, tools, Compiler, ALL};

/// One requirement and whether it is met (an optimization's own are
/// declared beside it, by its `Optimize` in `toolchain`).
pub type Check = Requirement;

/// The checks of one optimization or capability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub title: String,
    pub checks: Vec<Check>,
}

impl Section {
    /// Whether every required check is met (optional ones aside).
    pub fn ready(&self) -> bool {
        self.checks.iter().all(|c| c.present || c.optional)
    }
}

fn tool(command: &str, package: &str) -> Check {
    Requirement::tool(command, package)
}

fn fact(need: &str, present: bool, note: &str) -> Check {
    Requirement::fact(need, present, note)
}

/// Whose needs to list.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// Everything afterburner can use (`doctor`, `doctor --fix`).
    Everything,
    /// What one experiment's source, compilers, optimizations and metrics
    /// use (`run`, `build`), and its target's `packages`.
    Experiment(&'a Experiment),
}

/// Examine this machine: the compilers, each optimization (from its own
/// declaration), the instruction counter and source packages.
pub fn diagnose(env: &Environment) -> Vec<Section> {
    requirements(env, Scope::Everything)
}

/// The one list of what `scope` needs and whether this machine has it:
/// `doctor` prints it, and `doctor --fix` and a run install what it
/// lacks ([`install`]), so the two cannot drift.
pub fn requirements(env: &Environment, scope: Scope) -> Vec<Section> {
    match scope {
        Scope::Everything => everything(env),
        Scope::Experiment(e) => of_experiment(env, e),
    }
}

fn compiler_section(compiler: Compiler) -> Section {
    let checks = match compiler {
        Compiler::Gcc => vec![tool("gcc", "gcc"), tool("g++", "g++"), tool("make", "make")],
        Compiler::Clang => vec![tool("clang", "clang"), tool("make", "make")],
        Compiler::Go => vec![tool("go", "golang-go")],
        Compiler::Rustc => vec![rust_toolchain()],
    };
    let title = match compiler {
        Compiler::Go => "go (PGO needs Go >= 1.21)".to_owned(),
        Compiler::Rustc => "rustc (cargo targets)".to_owned(),
        other => other.name().to_owned(),
    };
    Section { title, checks }
}

/// rustc and cargo on the PATH, with the release and LLVM `rustc -vV`
/// says (rustup's toolchain comes first on a PATH that has it).
fn rust_toolchain() -> Check {
    let found = crate::toolchain::rustc::probe();
    let cargo = tools::is_installed("cargo");
    Requirement {
        need: match &found {
            Some(r) => format!(
                "rustc {} (host {}, LLVM {}) and cargo",
                r.release,
                r.host,
                r.llvm_major
                    .map_or_else(|| "release unknown".to_owned(), |m| m.to_string())
            ),
            None => "rustc and cargo".to_owned(),
        },
        present: found.is_some() && cargo,
        packages: if found.is_some() && cargo {
            Vec::new()
        } else {
            crate::toolchain::rustc::packages()
        },
        note: Some("Debian 12's own rustc (1.63) is too old for most crates: rustup (https://rustup.rs), or Debian 12's rustc-web".to_owned()),
        optional: false,
    }
}

fn instructions_section(env: &Environment) -> Section {
    Section {
        title: "instructions metric".to_owned(),
        checks: vec![
            fact(
                "hardware counters (perf stat)",
                env.perf_counters,
                "without them instructions are counted with callgrind",
            ),
            tool("valgrind", "valgrind"),
            fact(
                "callgrind runs -march=native builds (a CPU without AVX-512, or counters)",
                env.perf_counters || env.x86_64_level.is_none_or(|l| l < 4),
                "this CPU has AVX-512 (x86-64-v4), which -march=native emits and valgrind 3.19 cannot run: give march variants whose instructions are counted march = \"x86-64-v3\"",
            ),
        ],
    }
}

fn everything(env: &Environment) -> Vec<Section> {
    let mut sections: Vec<Section> = [
        Compiler::Gcc,
        Compiler::Clang,
        Compiler::Go,
        Compiler::Rustc,
    ]
    .into_iter()
    .map(compiler_section)
    .collect();
    sections[2].checks.push(go::pgo_requirement().optional());
    sections[3]
        .checks
        .push(crate::toolchain::rustc::profdata_requirement().optional());
    sections.extend(ALL.iter().map(|o| Section {
        title: format!("{} ({})", o.word(), o.describe()),
        checks: o.requirements(env, None),
    }));
    sections.extend([
        instructions_section(env),
        Section {
            title: "source packages (source = { apt = … })".to_owned(),
            checks: vec![
                tool("dpkg-source", "dpkg-dev"),
                fact(
                    "a deb-src entry",
                    has_deb_src(),
                    "afterburner adds one when it runs as root",
                ),
            ],
        },
    ]);
    sections
}

/// A Debian package, present when dpkg lists it as installed.
fn package(name: &str) -> Check {
    Requirement {
        need: name.to_owned(),
        present: tools::package_installed(name),
        packages: vec![name.to_owned()],
        note: None,
        optional: false,
    }
}

fn of_experiment(env: &Environment, e: &Experiment) -> Vec<Section> {
    let mut target = match &e.target.source {
        Source::Path(_) => Vec::new(),
        Source::Apt(_) => vec![tool("dpkg-source", "dpkg-dev")],
        // https needs the CA bundle, which git and libcurl only recommend
        // (and apt installs without recommends).
        Source::Git { .. } => vec![tool("git", "git"), package(tools::CA_CERTIFICATES)],
        Source::Url { .. } | Source::Crate { .. } => vec![
            tool("curl", "curl"),
            tool("tar", "tar"),
            package(tools::CA_CERTIFICATES),
        ],
    };
    target.extend(e.target.packages.iter().map(|p| package(p)));
    let mut sections = vec![Section {
        title: format!("target `{}`", e.target.name),
        checks: target,
    }];
    let mut compilers: Vec<Compiler> = e.variants.iter().map(|v| v.compiler).collect();
    compilers.dedup();
    for compiler in [
        Compiler::Gcc,
        Compiler::Clang,
        Compiler::Go,
        Compiler::Rustc,
    ] {
        if compilers.contains(&compiler) {
            sections.push(compiler_section(compiler));
        }
    }
    for variant in &e.variants {
        let setup = variant_setup(variant);
        sections.extend(variant.optimize.iter().map(|o| Section {
            title: format!("variant `{}`: {}", variant.name, o.word()),
            checks: o.requirements(env, Some(&setup)),
        }));
    }
    if e.bench.metrics.contains(&Builtin::INSTRUCTIONS) && !env.perf_counters {
        // Counted with callgrind where perf cannot count.
        sections.push(Section {
            title: "instructions metric (callgrind)".to_owned(),
            checks: vec![tool("valgrind", "valgrind")],
        });
    }
    sections
}

/// What of a variant its optimizations' checks look at.
pub fn variant_setup(variant: &Variant) -> VariantSetup<'_> {
    VariantSetup {
        compiler: variant.compiler,
        bolt_profile: variant.bolt_profile,
        go_pgo: variant.go_pgo,
        sampling: crate::toolchain::sampling::Asked {
            event: variant.sample_event.as_deref(),
            call_chains: variant.call_chains,
        },
    }
}

/// Install, with apt-get as root, every package `scope` lacks, in one
/// apt-get call, then probe again: a package named after what another
/// brings (clang's profile runtime) may show up only then. apt's lists
/// are brought up to date first, since the names of versioned packages
/// (`bolt-N`, `libclang-rt-N-dev`) are read from them. A package apt
/// cannot install here does not stop the others: they are installed, and
/// the error names what is left and who needs it. Not root: one error
/// with the exact command.
pub fn install(env: &Environment, scope: Scope) -> Result<()> {
    let mut installed: Vec<String> = Vec::new();
    let mut updated = false;
    for _ in 0..4 {
        // A fresh root has no lists: the versioned names (`bolt-N`) are
        // read from them, so they come first.
        if !updated && tools::is_root() && tools::apt_lists_empty() {
            tools::apt_update()?;
            updated = true;
        }
        let sections = requirements(env, scope);
        let missing = missing_packages(&sections);
        // What apt cannot fix (a PMU, a tool no package has) is each
        // variant's check to refuse, with its reason.
        if missing.is_empty() {
            return Ok(());
        }
        if !tools::is_root() {
            let list = missing.join(" ");
            bail!("missing packages: {list}\nhint: install them with `sudo apt-get install -y {list}` (or run `sudo afterburner doctor --fix`)\n{}", render_unmet(&sections));
        }
        if !updated {
            tools::apt_update()?;
            updated = true;
            continue; // probe again: versioned names come from apt's lists
        }
        let names: Vec<&str> = missing.iter().map(String::as_str).collect();
        let (known, unknown) = tools::apt_installable(&names);
        let fresh: Vec<&str> = known
            .into_iter()
            .filter(|p| !installed.iter().any(|i| i == p))
            .collect();
        if fresh.is_empty() {
            let why = if unknown.is_empty() {
                format!(
                    "apt-get installed {}, but it is still missing",
                    missing.join(" ")
                )
            } else {
                format!("apt cannot install {} here", unknown.join(" "))
            };
            bail!("{why}:\n{}\nhint: run `afterburner doctor` to see what each needs; drop the variants it names, or install their tools by hand", render_unmet(&sections));
        }
        if !unknown.is_empty() {
            crate::progress::warn(format_args!(
                "apt cannot install {} here; installing the rest ({})",
                unknown.join(" "),
                fresh.join(" ")
            ));
        }
        crate::progress::info(format_args!("installing {} with apt-get", fresh.join(" ")));
        tools::apt_install_updated(&fresh)?;
        installed.extend(fresh.iter().map(|p| (*p).to_owned()));
    }
    let sections = requirements(env, scope);
    if sections.iter().all(Section::ready) {
        return Ok(());
    }
    bail!(
        "still missing after installing {}:\n{}",
        installed.join(" "),
        render_unmet(&sections)
    )
}

/// The sections that are not ready, each with its unmet checks: who
/// cannot be served, and what it lacks.
fn render_unmet(sections: &[Section]) -> String {
    let unmet: Vec<Section> = sections
        .iter()
        .filter(|s| !s.ready())
        .map(|s| Section {
            title: s.title.clone(),
            checks: s
                .checks
                .iter()
                .filter(|c| !c.present && !c.optional)
                .cloned()
                .collect(),
        })
        .collect();
    let mut text = render(&unmet);
    if let Some(cut) = text.find("\nto install everything apt can") {
        text.truncate(cut);
    }
    text.trim_end().to_owned()
}

fn has_deb_src() -> bool {
    crate::source::apt_sources::AptSources::read(Path::new("/")).has_deb_src()
}

/// The report `doctor` prints.
pub fn render(sections: &[Section]) -> String {
    let mut out = String::new();
    for section in sections {
        let status = if section.ready() {
            "ready"
        } else {
            "missing something"
        };
        let _ = writeln!(out, "{}: {status}", section.title);
        if section.checks.is_empty() {
            out.push_str("  the compiler alone\n");
        }
        for check in &section.checks {
            let mark = match (check.present, check.optional) {
                (true, _) => "ok     ",
                (false, false) => "MISSING",
                (false, true) => "absent ",
            };
            let _ = write!(out, "  {mark} {}", check.need);
            if !check.present {
                if !check.packages.is_empty() {
                    let _ = write!(out, "  (apt-get install -y {})", check.packages.join(" "));
                }
                if let Some(note) = &check.note {
                    let _ = write!(out, "  ({note})");
                }
            }
            out.push('\n');
        }
    }
    let missing = missing_packages(sections);
    if !missing.is_empty() {
        let _ = writeln!(out, "\nto install everything apt can: apt-get install -y {}\n(or run `afterburner doctor --fix` as root)", missing.join(" "));
    }
    out
}

/// Packages that would fix every missing check apt can fix.
pub fn missing_packages(sections: &[Section]) -> Vec<String> {
    let mut packages: Vec<String> = sections
        .iter()
        .flat_map(|s| &s.checks)
        .filter(|c| !c.present && !c.optional)
        .flat_map(|c| c.packages.clone())
        .collect();
    packages.sort();
    packages.dedup();
    packages
}

/// `--fix`: install what `doctor` lists as missing, the way a run does.
pub fn fix(env: &Environment) -> Result<()> {
    install(env, Scope::Everything)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_names_what_is_missing_and_how_to_install_it() {
        let sections = vec![
            Section {
                title: "gcc".into(),
                checks: vec![Check {
                    need: "gcc".into(),
                    present: true,
                    packages: vec!["gcc".into()],
                    note: None,
                    optional: false,
                }],
            },
            Section {
                title: "clang".into(),
                checks: vec![
                    Check {
                        need: "clang".into(),
                        present: false,
                        packages: vec!["clang".into()],
                        note: None,
                        optional: false,
                    },
                    Check {
                        need: "llvm-profdata".into(),
                        present: false,
                        packages: vec!["llvm".into()],
                        note: None,
                        optional: false,
                    },
                ],
            },
        ];
        let text = render(&sections);
        assert!(text.contains("gcc: ready"), "{text}");
        assert!(text.contains("clang: missing something"), "{text}");
        assert!(
            text.contains("MISSING clang  (apt-get install -y clang)"),
            "{text}"
        );
        assert!(text.contains("apt-get install -y clang llvm\n"), "{text}");
        assert_eq!(missing_packages(&sections), vec!["clang", "llvm"]);
    }

    #[test]
    fn a_missing_optional_check_is_said_but_not_required() {
        let sections = vec![Section {
            title: "bolt".into(),
            checks: vec![Requirement::tool("no-such-tool-here", "nothing")
                .note("only one mode uses it")
                .optional()],
        }];
        let text = render(&sections);
        assert!(text.contains("bolt: ready"), "{text}");
        assert!(text.contains("absent  no-such-tool-here"), "{text}");
        assert!(missing_packages(&sections).is_empty());
    }

    #[test]
    fn every_optimization_has_its_section() {
        let sections = diagnose(&crate::env::capture());
        for o in ALL {
            assert!(
                sections
                    .iter()
                    .any(|s| s.title.starts_with(&format!("{} (", o.word()))),
                "{} missing from doctor",
                o.word()
            );
        }
    }

    /// A gcc baseline and a clang PGO variant.
    const CLANG_PGO: &str = r#"
[target]
name = "t"
source = { path = "/" }
build = "make"
binaries = { t = "t" }

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
compiler = "clang"
optimize = ["pgo"]

[[workload]]
name = "w"
run = "{bin.t}"
"#;

    fn clang_pgo_experiment() -> Experiment {
        crate::experiment::load_str(Path::new("/exp/afterburner.toml"), CLANG_PGO, false).unwrap()
    }

    /// Regression (issue 27): on a machine without clang, a run installed
    /// clang but not `libclang-rt-N-dev`, which `doctor` listed; the
    /// instrumented build then failed to link the profile runtime.
    #[test]
    fn a_clang_pgo_variant_needs_the_profile_runtime_of_the_clang_here() {
        let env = crate::env::capture();
        let sections = requirements(&env, Scope::Experiment(&clang_pgo_experiment()));
        let checks: Vec<&Check> = sections.iter().flat_map(|s| &s.checks).collect();
        assert!(
            checks.iter().any(|c| c.need == "clang"),
            "{}",
            render(&sections)
        );
        assert!(
            checks.iter().any(|c| c.need.starts_with("llvm-profdata")),
            "{}",
            render(&sections)
        );
        let Some(major) = crate::toolchain::llvm::clang_major_installed_or_candidate() else {
            crate::test_skips::skip(
                "the runtime package check: neither clang nor apt's candidate for it is known here",
            );
            return;
        };
        let runtime = format!("libclang-rt-{major}-dev");
        assert!(
            checks
                .iter()
                .any(|c| c.packages.contains(&runtime) && !c.optional),
            "{runtime} missing from\n{}",
            render(&sections)
        );
        // The gcc baseline needs no clang runtime twice, and bolt's tools not at all.
        assert_eq!(
            checks
                .iter()
                .filter(|c| c.packages.contains(&runtime))
                .count(),
            1
        );
        assert!(!checks.iter().any(|c| c.need.starts_with("llvm-bolt")));
    }

    /// `doctor --fix` and a run install through the same function
    /// (`install`, from `requirements`): what an experiment needs is what
    /// `doctor` checks for the same compilers and optimizations.
    #[test]
    fn a_run_needs_what_doctor_checks_for_the_same_words() {
        let env = crate::env::capture();
        let doctor = requirements(&env, Scope::Everything);
        let run = requirements(&env, Scope::Experiment(&clang_pgo_experiment()));
        let in_doctor = |c: &Check| doctor.iter().flat_map(|s| &s.checks).any(|d| d == c);
        for check in run.iter().flat_map(|s| &s.checks) {
            assert!(in_doctor(check), "{check:?} is not among doctor's checks");
        }
        assert_eq!(
            missing_packages(&diagnose(&env)),
            missing_packages(&doctor),
            "doctor prints the list --fix installs"
        );
    }

    #[test]
    fn this_machine_has_gcc_for_the_tests() {
        let sections = diagnose(&crate::env::capture());
        assert!(sections[0].ready(), "{}", render(&sections));
    }
}
