//! `bolt`: post-link layout optimization with `llvm-bolt`, from an
//! instrumented run (`llvm-bolt -instrument`, no PMU needed,
//! [`instrumented`]) or from `perf record` samples where the CPU has LBR
//! ([`sampled`]), as the variant's `bolt_profile` says. Both rounds lay
//! the binaries out the same way ([`optimize`]), from one merged `.fdata`
//! profile per binary, whose functions are listed by
//! [`crate::toolchain::formats::fdata`].
//!
//! Debian's `/usr/bin/llvm-bolt-N` is a symlink, and BOLT looks for its
//! instrumentation runtime relative to the path it was started by
//! (`/usr/lib/libbolt_rt_instr.a`, which the package does not ship). Running
//! the release's own `/usr/lib/llvm-N/bin/llvm-bolt` makes it look in
//! `/usr/lib/llvm-N/lib`, where the runtime of the same release is, without
//! touching the system. Which release is found, not listed ([`crate::toolchain::llvm`]).

pub mod instrumented;
pub mod sampled;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::env::Environment;
use crate::process::{capture_command, quote_output};
use crate::toolchain::formats::fdata;
use crate::toolchain::matching::Counts;
use crate::toolchain::optimize::{Optimize, Requirement, VariantSetup};
use crate::toolchain::round::Round;
use crate::toolchain::{llvm, sampling, Compiler, Flags, RoundChoices, StageDirs};

const FDATA: &str = "fdata";
const MERGED_PREFIX: &str = "merged-";
const TIMEOUT: Duration = Duration::from_mins(30);

/// Layout choices, from the BOLT README's recommended optimization flags for
/// LLVM 16: ext-tsp block order (best i-cache/branch behaviour), hfsort+
/// function order (cdsort arrived in LLVM 17), hot/cold splitting, and
/// identical code folding; dyno-stats reports what changed.
const OPTIMIZE_FLAGS: &[&str] = &[
    "-reorder-blocks=ext-tsp",
    "-reorder-functions=hfsort+",
    "-split-functions",
    "-split-all-cold",
    "-split-eh",
    "-icf=1",
    "-dyno-stats",
];

fn merged_path(profile_dir: &Path, binary: &str) -> PathBuf {
    profile_dir.join(format!("{MERGED_PREFIX}{binary}.{FDATA}"))
}

/// The oldest BOLT whose options the layout uses (`-reorder-blocks=ext-tsp`,
/// `-split-all-cold`, the instrumentation runtime beside the tool).
pub const MINIMUM: u32 = 16;

/// The LLVM release of the clang here (or apt's), whose BOLT is preferred.
fn clang_release() -> Option<u32> {
    llvm::clang_major_installed_or_candidate()
}

/// A BOLT tool from `/usr/lib/llvm-N/bin` (see the module comment): the
/// installed clang's release where it has BOLT, else the newest release
/// of at least [`MINIMUM`], else an unversioned tool on the PATH.
pub fn find_tool(name: &str) -> Result<PathBuf> {
    let Some(found) = found(name) else {
        bail!(
            "{name} is missing, so BOLT cannot run\nhint: {}",
            install_hint()
        );
    };
    Ok(fs_err::canonicalize(&found.path).unwrap_or(found.path))
}

/// How BOLT is installed here: the `bolt-N` package apt offers.
pub fn install_hint() -> String {
    match package() {
        Some(p) => format!("install it with `apt-get install -y {p}`"),
        None => format!("apt offers no bolt-N package here (BOLT {MINIMUM} or newer is needed): install LLVM's BOLT from apt.llvm.org or build it"),
    }
}

/// The `bolt-N` package apt would install: clang's release where apt
/// offers it, else the newest of at least [`MINIMUM`].
pub fn package() -> Option<String> {
    llvm::package_to_install("bolt-", clang_release()).filter(|p| {
        p.trim_start_matches("bolt-")
            .parse::<u32>()
            .is_ok_and(|m| m >= MINIMUM)
    })
}

/// Which BOLT runs, and why, for `doctor`.
pub fn chosen() -> Option<llvm::Chosen> {
    found("llvm-bolt")
}

/// BOLT tool `name` as [`find_tool`] chooses it (see there).
fn found(name: &str) -> Option<llvm::Chosen> {
    llvm::find(name, clang_release()).filter(|c| c.major.is_none_or(|m| m >= MINIMUM))
}

/// Run a BOLT tool; its output (stdout, then stderr) when it succeeds.
fn run(tool: &Path, args: &[String], what: &str) -> Result<String> {
    let mut command = Command::new(tool);
    command.args(args);
    let out = capture_command(&mut command, TIMEOUT)
        .with_context(|| format!("running {}", tool.display()))?;
    if !out.success() {
        bail!("{what} failed:\n{}\nhint: BOLT needs binaries linked with relocations (-Wl,--emit-relocs), which afterburner adds to LDFLAGS; check that the build honours LDFLAGS", quote_output(&format!("{}\n{}", out.stdout, out.stderr)));
    }
    Ok(format!("{}{}", out.stdout, out.stderr))
}

/// Where the layout's `llvm-bolt` output is kept: beside the binary, so
/// `explain` can show BOLT's own statistics.
pub fn log_path(binary: &Path) -> PathBuf {
    let mut name = binary.as_os_str().to_owned();
    name.push(".bolt.log");
    PathBuf::from(name)
}

fn file_name(binary: &Path) -> String {
    binary
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub struct Bolt;

impl Optimize for Bolt {
    fn word(&self) -> &'static str {
        "bolt"
    }

    fn describe(&self) -> &'static str {
        "post-link layout optimization with `llvm-bolt`, from an instrumented run"
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        match compiler {
            Compiler::Gcc | Compiler::Clang | Compiler::Rustc => Ok(()),
            Compiler::Go => Err(
                "BOLT on Go binaries is not supported here; use optimize = [\"pgo\"]".to_owned(),
            ),
        }
    }

    fn needs_profile(&self) -> bool {
        true
    }

    fn rounds(&self, _compiler: Compiler, sources: RoundChoices) -> Vec<&'static dyn Round> {
        if sources.bolt.is_sampled() {
            vec![&sampled::BoltPerf]
        } else {
            vec![&instrumented::Bolt]
        }
    }

    fn rounds_after_link(&self) -> bool {
        true
    }

    fn finished_code_flags(&self, compiler: Compiler, flags: &mut Flags) {
        // gcc splits functions into hot and cold parts (`foo.cold`), most
        // of all with a profile; BOLT 16 instruments such fragments wrongly
        // (SQLite's PGO+LTO build crashed in its first call), and splits
        // better itself (-split-functions).
        if compiler == Compiler::Gcc {
            flags.both(&["-fno-reorder-blocks-and-partition"]);
        }
    }

    fn requirements(&self, env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        // The release is found, not listed (find_tool): clang's where it
        // has BOLT, else the newest of at least MINIMUM.
        let package = package();
        let chosen = chosen();
        let tool = |name: &str| Requirement {
            need: match (&chosen, name) {
                (Some(c), "llvm-bolt") => format!("llvm-bolt ({}: {})", c.path.display(), c.why),
                _ => format!("{name} (BOLT {MINIMUM} or newer)"),
            },
            present: find_tool(name).is_ok(),
            packages: package.clone().into_iter().collect(),
            note: package.is_none().then(install_hint),
            optional: false,
        };
        let bolt = tool("llvm-bolt");
        let merge = tool("merge-fdata");
        let perf = Requirement::tool("perf", "linux-perf");
        let Some(variant) = variant else {
            return vec![
                bolt,
                merge,
                perf.note("only bolt_profile = \"sampled\" records with perf")
                    .optional(),
                Requirement::fact(
                    "branch stacks (LBR), for bolt_profile = \"sampled\" (the default where LBR works)",
                    env.lbr,
                    "without LBR, bolt variants are instrumented; bolt_profile = \"sampled\" with sample_event = \"cpu-clock\" samples addresses only (perf2bolt -nl), a weak profile",
                )
                .optional(),
            ];
        };
        let mut needs = vec![bolt, merge];
        if variant.bolt_profile.is_sampled() {
            needs.push(perf);
        }
        needs
    }

    fn check(&self, variant: &VariantSetup) -> Result<()> {
        if variant.bolt_profile.is_sampled() {
            sampling::sampling(variant.sampling, &sampled::SAMPLER).map_err(anyhow::Error::msg)?;
        }
        Ok(())
    }
}

/// Both rounds' check: the merged profiles' functions with their counts.
fn sampled_functions(files: &[PathBuf]) -> Result<Counts> {
    let mut counts = Counts::new();
    for file in files {
        let text = String::from_utf8_lossy(&fs_err::read(file)?).into_owned();
        fdata::add_counts(&text, &mut counts);
    }
    Ok(counts)
}

/// Both rounds' link flags: BOLT rewrites binaries linked with their
/// relocations.
fn keep_relocations(flags: &mut Flags) {
    flags.ldflags.push("-Wl,--emit-relocs".to_owned());
}

/// Merge BOLT profiles of one binary with `merge-fdata` into `out`.
fn merge_fdata(files: &[PathBuf], out: &Path, binary: &str) -> Result<()> {
    let tool = find_tool("merge-fdata")?;
    let mut command = Command::new(&tool);
    command.args(files);
    let result = capture_command(&mut command, TIMEOUT).context("running merge-fdata")?;
    if !result.success() {
        bail!(
            "merge-fdata failed on {} profiles of {binary}:\n{}",
            files.len(),
            quote_output(&result.stderr)
        );
    }
    fs_err::write(out, result.stdout)?;
    Ok(())
}

/// Rewrite `binary` in place with `llvm-bolt` and `args`; its output.
fn rewrite(bolt: &Path, binary: &Path, args: &[String], what: &str) -> Result<String> {
    let rewritten = binary.with_extension("bolt-tmp");
    let mut all = vec![
        binary.to_string_lossy().into_owned(),
        "-o".to_owned(),
        rewritten.to_string_lossy().into_owned(),
    ];
    all.extend_from_slice(args);
    let output = run(
        bolt,
        &all,
        &format!("llvm-bolt {what} on {}", binary.display()),
    )?;
    // llvm-bolt leaves its output mode 0777 whatever the umask: the
    // rewritten binary takes the linked one's mode (0755 as a rule).
    fs_err::set_permissions(&rewritten, fs_err::metadata(binary)?.permissions())?;
    fs_err::rename(&rewritten, binary)?;
    Ok(output)
}

/// Lay out each binary in place from its merged profile in `dirs.profile`.
fn optimize(binaries: &[PathBuf], dirs: &StageDirs) -> Result<()> {
    let bolt = find_tool("llvm-bolt")?;
    for binary in binaries {
        let name = file_name(binary);
        let profile = merged_path(&dirs.profile, &name);
        if !profile.is_file() {
            // A binary training never ran (a multi-binary target's tool):
            // nothing to lay out by.
            crate::progress::warn(format_args!(
                "no BOLT profile for binary `{name}` in {} (training never ran it): left as linked",
                dirs.profile.display()
            ));
            continue;
        }
        let mut args = vec![format!("-data={}", profile.display())];
        args.extend(OPTIMIZE_FLAGS.iter().map(|f| (*f).to_owned()));
        let output = rewrite(&bolt, binary, &args, "-data")?;
        fs_err::write(log_path(binary), output)?;
    }
    Ok(())
}
