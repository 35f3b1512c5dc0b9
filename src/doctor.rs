//! `afterburner doctor`: for each optimization, what it needs, what this
//! machine has, and the exact command that installs what is missing
//! (`--fix` runs it with apt-get as root).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use crate::env::Environment;
use crate::toolchain::optimize::{self, Requirement};
use crate::toolchain::tools;

/// One requirement and whether it is met (an optimization's own are
/// declared beside it, in `toolchain::optimize`).
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

/// Examine this machine: the compilers, each optimization (from its own
/// declaration), the instruction counter and source packages.
pub fn diagnose(env: &Environment) -> Vec<Section> {
    let mut sections = vec![
        Section {
            title: "gcc".to_owned(),
            checks: vec![tool("gcc", "gcc"), tool("g++", "g++"), tool("make", "make")],
        },
        Section {
            title: "clang".to_owned(),
            checks: vec![tool("clang", "clang")],
        },
        Section {
            title: "go (PGO needs Go >= 1.21)".to_owned(),
            checks: vec![tool("go", "golang-go")],
        },
    ];
    sections.extend(optimize::ALL.iter().map(|o| Section {
        title: format!("{} ({})", o.word(), o.describe()),
        checks: o.requirements(env),
    }));
    sections.extend([
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
        },
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

fn has_deb_src() -> bool {
    let mut texts = vec![fs_err::read_to_string("/etc/apt/sources.list").unwrap_or_default()];
    if let Ok(entries) = fs_err::read_dir(Path::new("/etc/apt/sources.list.d")) {
        texts.extend(
            entries
                .flatten()
                .filter_map(|e| fs_err::read_to_string(e.path()).ok()),
        );
    }
    texts.iter().flat_map(|t| t.lines()).any(|l| {
        let l = l.trim();
        l.starts_with("deb-src ") || (l.starts_with("Types:") && l.contains("deb-src"))
    })
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

/// `--fix`: install the missing packages with apt-get (as root).
pub fn fix(sections: &[Section]) -> Result<()> {
    tools::ensure_packages(&missing_packages(sections))
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
        for o in optimize::ALL {
            assert!(
                sections
                    .iter()
                    .any(|s| s.title.starts_with(&format!("{} (", o.word()))),
                "{} missing from doctor",
                o.word()
            );
        }
    }

    #[test]
    fn this_machine_has_gcc_for_the_tests() {
        let sections = diagnose(&crate::env::capture());
        assert!(sections[0].ready(), "{}", render(&sections));
    }
}
