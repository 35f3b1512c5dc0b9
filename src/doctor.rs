//! `afterburner doctor`: for each optimization, what it needs, what this
//! machine has, and the exact command that installs what is missing
//! (`--fix` runs it with apt-get as root).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use crate::env::Environment;
use crate::toolchain::{clang_major, tools, Compiler};

/// One requirement and whether it is met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What is needed, e.g. "llvm-profdata".
    pub need: String,
    /// Whether this machine has it.
    pub present: bool,
    /// Debian packages that provide it, when apt can.
    pub packages: Vec<String>,
    /// What to do when apt cannot (or why it matters).
    pub note: Option<String>,
}

/// The checks of one optimization or capability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub title: &'static str,
    pub checks: Vec<Check>,
}

impl Section {
    pub fn ready(&self) -> bool {
        self.checks.iter().all(|c| c.present)
    }
}

fn tool(command: &str, package: &str) -> Check {
    Check {
        need: command.to_owned(),
        present: tools::is_installed(command),
        packages: vec![package.to_owned()],
        note: None,
    }
}

fn fact(need: &str, present: bool, note: &str) -> Check {
    Check {
        need: need.to_owned(),
        present,
        packages: Vec::new(),
        note: Some(note.to_owned()),
    }
}

/// Examine this machine.
pub fn diagnose(env: &Environment) -> Vec<Section> {
    let clang = Compiler::Clang.version().and_then(|v| clang_major(&v));
    let runtime = clang.map(|m| format!("libclang-rt-{m}-dev"));
    let runtime_check = Check {
        need: format!(
            "clang's profile runtime ({})",
            runtime.as_deref().unwrap_or("libclang-rt-N-dev")
        ),
        present: runtime.as_deref().is_some_and(tools::package_installed),
        packages: runtime.clone().into_iter().collect(),
        note: runtime
            .is_none()
            .then(|| "install clang first: the package is named after its version".to_owned()),
    };
    vec![
        Section {
            title: "gcc: pgo, lto, march, o3",
            checks: vec![tool("gcc", "gcc"), tool("g++", "g++"), tool("make", "make")],
        },
        Section {
            title: "clang: pgo, pgo-frontend, cspgo (llvm-profdata), lto, march, o3",
            checks: vec![
                tool("clang", "clang"),
                tool("llvm-profdata", "llvm"),
                runtime_check,
            ],
        },
        Section {
            title: "instructions metric",
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
            title: "source packages (source = { apt = … })",
            checks: vec![
                tool("dpkg-source", "dpkg-dev"),
                fact(
                    "a deb-src entry",
                    has_deb_src(),
                    "afterburner adds one when it runs as root",
                ),
            ],
        },
        Section {
            title: "autofdo (clang): perf samples → create_llvm_prof → -fprofile-sample-use",
            checks: vec![
                tool("perf", "linux-perf"),
                tool("create_llvm_prof", "autofdo"),
                tool("llvm-profdata", "llvm"),
                fact(
                    "hardware counters",
                    env.perf_counters,
                    "sampling needs a PMU: without one, autofdo variants are refused; use pgo or bolt (instrumented), or sample_event = \"cpu-clock\" for a weak timer-sampled profile",
                ),
                fact(
                    "branch stacks (LBR)",
                    env.lbr,
                    "without LBR, AutoFDO profiles have no branch or call-target data and are much weaker",
                ),
            ],
        },
        Section {
            title: "bolt, instrumented (llvm-bolt -instrument, needs no PMU; bolt_profile = \"instrumented\")",
            checks: vec![tool("llvm-bolt-16", "bolt-16"), tool("merge-fdata-16", "bolt-16")],
        },
        Section {
            title: "bolt from perf samples (perf record -b → perf2bolt; the default where LBR works, bolt_profile = \"sampled\")",
            checks: vec![
                tool("llvm-bolt-16", "bolt-16"),
                tool("perf", "linux-perf"),
                fact(
                    "branch stacks (LBR)",
                    env.lbr,
                    "without LBR, bolt variants are instrumented; bolt_profile = \"sampled\" with sample_event = \"cpu-clock\" samples addresses only (perf2bolt -nl), a weak profile",
                ),
            ],
        },
        Section {
            title: "go: pgo (go build -pgo, Go ≥ 1.21)",
            checks: vec![tool("go", "golang-go")],
        },
    ]
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
        for check in &section.checks {
            let mark = if check.present { "ok     " } else { "MISSING" };
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
        .filter(|c| !c.present)
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
                title: "gcc",
                checks: vec![Check {
                    need: "gcc".into(),
                    present: true,
                    packages: vec!["gcc".into()],
                    note: None,
                }],
            },
            Section {
                title: "clang",
                checks: vec![
                    Check {
                        need: "clang".into(),
                        present: false,
                        packages: vec!["clang".into()],
                        note: None,
                    },
                    Check {
                        need: "llvm-profdata".into(),
                        present: false,
                        packages: vec!["llvm".into()],
                        note: None,
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
    fn this_machine_has_gcc_for_the_tests() {
        let sections = diagnose(&crate::env::capture());
        assert!(sections[0].ready(), "{}", render(&sections));
    }
}
