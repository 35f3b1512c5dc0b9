//! AutoFDO: a sampled profile instead of an instrumented one. The profiled
//! build is the finished code plus line tables; training runs it under
//! `perf record` (branch stacks, `-b`, where the CPU has LBR);
//! each recording becomes a sample profile for each binary: with branch
//! stacks through `create_llvm_prof`, without (timer samples) through
//! afterburner's own conversion ([`super::afdo_ip`]). For clang, `llvm-profdata merge -sample` merges them across
//! workloads and binaries and the final build reads it with
//! `-fprofile-sample-use=`. For gcc, each is written as text, merged and
//! converted to gcc 12's own format ([`super::gcov_afdo`]: Debian's
//! `create_gcov` writes one gcc 12 rejects), read with `-fauto-profile=`.
//!
//! Sampling needs a PMU. Where perf has none (most VMs) the variant is
//! refused, saying so, unless it names a software event itself
//! (`sample_event = "cpu-clock"`): timer samples give a weaker profile with
//! no branch or call-target data, but exercise the whole path.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::sampling::{self, Sampler, RAW_EXTENSION};
use super::{find_files, merged_profiles, require_merged, Compiler, Flags, Pgo, StageDirs};
use crate::process::{capture_command, quote_output};

/// AutoFDO for clang.
pub struct AutoFdo;

/// AutoFDO for gcc (12): the same recordings, converted to gcc's format.
pub struct GccAutoFdo;

/// The AutoFDO implementation of `compiler` (clang's or gcc's; Go is
/// refused when the experiment is read).
pub fn for_compiler(compiler: Compiler) -> &'static dyn Pgo {
    match compiler {
        Compiler::Gcc => &GccAutoFdo,
        Compiler::Clang | Compiler::Go => &AutoFdo,
    }
}

/// The reader of the installed gcc, which decides how [`GccAutoFdo`]
/// writes its profile; the error says why this gcc cannot be served.
pub fn check_gcc() -> Result<super::gcov_afdo::Reader> {
    let ask = |arg: &str| {
        crate::process::capture(Compiler::Gcc.cc(), &[arg], Duration::from_secs(10))
            .ok()
            .filter(crate::process::Captured::success)
            .map(|o| o.stdout)
    };
    let major = ask("-dumpversion").and_then(|v| super::gcov_afdo::gcc_major(&v));
    // gcc 16 and later say which AutoFDO version they read; older ones
    // refuse the option.
    let version = ask("-print-autofdo-gcov-version").and_then(|v| v.trim().parse().ok());
    super::gcov_afdo::reader_of(major, version).map_err(anyhow::Error::msg)
}

const MERGED_EXTENSION: &str = "afdo";

/// Line tables the profile is mapped back to source with, in the profiled
/// and the final build alike. DWARF 4, because `create_llvm_prof` 0.19 reads
/// no profile out of clang 14's default DWARF 5; `-fdebug-info-for-profiling`
/// for the discriminators the final build keys samples by, and the
/// functions' first lines (`DW_AT_decl_line`) that `-gline-tables-only`
/// alone leaves out.
const DEBUG_FLAGS: &[&str] = &[
    "-gline-tables-only",
    "-gdwarf-4",
    "-fdebug-info-for-profiling",
];

/// gcc's line tables: DWARF 4, which `create_llvm_prof` 0.19 reads (it
/// finds no function in gcc 12's default DWARF 5). gcc assigns
/// discriminators by default, so it needs no `-fdebug-info-for-profiling`;
/// full `-g` keeps the inlined-subroutine records the inline stacks come
/// from.
const GCC_DEBUG_FLAGS: &[&str] = &["-g", "-gdwarf-4"];

/// The per-recording text profiles of gcc's round, and its merged file.
const GCC_TEXT_EXTENSION: &str = "txt";
const GCC_MERGED_EXTENSION: &str = "gcov";
/// gcc AutoFDO profiles brought as they are (`profile = "x.afdo"`), laid
/// out under the round's raw directory and merged without conversion.
pub const GCC_BROUGHT_EXTENSION: &str = "afdo";

const TIMEOUT: Duration = Duration::from_mins(10);

/// AutoFDO's part in the messages about sampling.
pub const SAMPLER: Sampler = Sampler {
    what: "AutoFDO",
    instead: "use optimize = [\"pgo\"] (instrumented: needs no PMU), or `bolt` (instrumented too)",
    default_event: None,
    call_graph: false,
};

fn converter() -> Result<&'static str> {
    if super::tools::is_installed("create_llvm_prof") {
        Ok("create_llvm_prof")
    } else {
        bail!("create_llvm_prof is missing, so perf recordings cannot become a profile\nhint: install it with `apt-get install -y autofdo`")
    }
}

/// Convert one recording for one binary; `None` when it holds no sample of
/// that binary.
fn convert(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    run_converter(recording, binary, out, branch_stack, &[])?;
    let text = fs_err::read(out)?;
    let (clean, dropped) = drop_garbled_callsites(&String::from_utf8_lossy(&text));
    if dropped > 0 {
        crate::progress::info(format_args!(
            "{}: left out {dropped} inlined call site(s) whose name create_llvm_prof garbled",
            out.display()
        ));
        fs_err::write(out, clean)?;
    }
    Ok(has_samples(out)?.then(|| out.to_path_buf()))
}

/// Convert one recording for one binary into an LLVM text profile (gcc's
/// round reads text: `create_llvm_prof` 0.19's binary writer fails on some
/// binaries with "Truncated function name table"); `None` when it holds no
/// sample of that binary.
fn convert_text(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    run_converter(recording, binary, out, branch_stack, &[])?;
    let text = if out.is_file() {
        read_lossy(out)?
    } else {
        String::new()
    };
    let functions = super::gcov_afdo::parse_llvm_text(&text)
        .with_context(|| format!("reading create_llvm_prof's profile {}", out.display()))?;
    Ok(functions
        .iter()
        .any(|f| f.total() > 0)
        .then(|| out.to_path_buf()))
}

/// clang's round: recordings with branch stacks through `create_llvm_prof`
/// (which reads LBR ranges), the others through afterburner's own
/// conversion ([`super::afdo_ip`], keyed for LLVM): Debian 13's
/// `create_llvm_prof` is built without LLVM support and converts nothing.
fn convert_for_clang(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    let with_lbr = branch_stack.then_some(convert as super::merge::Convert);
    either(
        recording,
        binary,
        out,
        with_lbr,
        super::afdo_ip::Dialect::Llvm,
    )
}

/// gcc's round: as clang's, keyed for gcc ([`super::afdo_ip`] names every
/// inlined callee, which `create_llvm_prof` 0.19 garbles).
fn convert_for_gcc(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    let with_lbr = branch_stack.then_some(convert_text as super::merge::Convert);
    either(
        recording,
        binary,
        out,
        with_lbr,
        super::afdo_ip::Dialect::Gcc,
    )
}

/// `with_lbr` for a recording with branch stacks, else afterburner's own
/// conversion in `dialect`.
fn either(
    recording: &Path,
    binary: &Path,
    out: &Path,
    with_lbr: Option<super::merge::Convert>,
    dialect: super::afdo_ip::Dialect,
) -> Result<Option<PathBuf>> {
    match with_lbr {
        Some(converter) => converter(recording, binary, out, true),
        None => super::afdo_ip::convert(recording, binary, out, dialect),
    }
}

/// A text profile, its bytes read as UTF-8 where they are not (some names
/// `create_llvm_prof` writes are garbage; `gcov_afdo` leaves them out).
pub(super) fn read_lossy(path: &Path) -> Result<String> {
    Ok(String::from_utf8_lossy(&fs_err::read(path)?).into_owned())
}

fn run_converter(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
    extra: &[&str],
) -> Result<()> {
    let mut command = Command::new(converter()?);
    command
        .args(extra)
        .arg(format!("--binary={}", binary.display()))
        .arg(format!("--profile={}", recording.display()))
        .arg(format!("--out={}", out.display()))
        .arg(format!("--use_lbr={branch_stack}"))
        // Text: create_llvm_prof 0.19's binary writer fails on some
        // daemons ("Truncated function name table"); llvm-profdata reads
        // the text form and merges it into the binary one.
        .arg("--format=text")
        // glog would otherwise leave log files in /tmp on every call.
        .arg("--logtostderr");
    let result = capture_command(&mut command, TIMEOUT).context("running create_llvm_prof")?;
    if !result.success() {
        bail!(
            "create_llvm_prof failed on {} for {}:\n{}",
            recording.display(),
            binary.display(),
            quote_output(&result.stderr)
        );
    }
    Ok(())
}

/// `create_llvm_prof` 0.19 sometimes writes an inlined call site's name
/// as bytes from nowhere (`3: P\u{fffd}D\u{fffd}U  P\u{fffd}A:0`, seen
/// on a forking daemon recorded over its whole life), which
/// `llvm-profdata` then refuses. Such a call site, and everything nested
/// under it, is left out; the count of those left out is returned.
/// In the text format a body line is `OFFSET: COUNT [TARGET:COUNT]*` and
/// a call site `OFFSET: NAME:TOTAL`, each nested one space deeper.
fn drop_garbled_callsites(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut dropped = 0;
    let mut skip_deeper_than: Option<usize> = None;
    for line in text.lines() {
        let depth = line.len() - line.trim_start_matches(' ').len();
        if let Some(limit) = skip_deeper_than {
            if depth > limit {
                continue;
            }
            skip_deeper_than = None;
        }
        if depth > 0 && is_garbled_callsite(line.trim_start()) {
            dropped += 1;
            skip_deeper_than = Some(depth);
            continue;
        }
        // A garbled name holding a newline leaves its tail at depth 0:
        // no function header. It and what it nests (as a call site, one
        // level deep) are left out.
        if depth == 0 && !line.is_empty() && !is_function_header(line) {
            dropped += 1;
            skip_deeper_than = Some(1);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, dropped)
}

/// Whether an unindented line is a function's header, `NAME:TOTAL:HEAD`
/// with a name that is a symbol (printable ASCII without spaces).
fn is_function_header(line: &str) -> bool {
    let mut parts = line.rsplitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(head), Some(total), Some(name)) => {
            head.trim().parse::<u64>().is_ok()
                && total.parse::<u64>().is_ok()
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_graphic())
        }
        _ => false,
    }
}

/// Whether `line` (indentation removed) is a call site whose name is not
/// a symbol: a symbol is printable ASCII without spaces.
fn is_garbled_callsite(line: &str) -> bool {
    let Some((_, rest)) = line.split_once(": ") else {
        return false;
    };
    if rest
        .split_whitespace()
        .next()
        .is_some_and(|w| w.parse::<u64>().is_ok())
    {
        return false; // a body line: a count first
    }
    let name = rest.rsplit_once(':').map_or(rest, |(name, _)| name);
    name.is_empty() || !name.chars().all(|c| c.is_ascii_graphic())
}

/// Whether a sample profile names at least one function with samples.
fn has_samples(profile: &Path) -> Result<bool> {
    if !profile.is_file() {
        return Ok(false);
    }
    let tool = super::find_llvm_profdata()?;
    let mut command = Command::new(tool);
    command.args(["show", "--sample"]).arg(profile);
    let result = capture_command(&mut command, TIMEOUT).context("running llvm-profdata show")?;
    Ok(result.success() && result.stdout.contains("Function: "))
}

/// What to do when no recording holds a sample of the binaries (both rounds).
const NO_SAMPLES_HINT: &str = "the training workloads must run the profiled binaries ({bin.NAME}) long enough to be sampled (perf samples about 4000 times a second)";

impl Pgo for AutoFdo {
    fn name(&self) -> &'static str {
        "autofdo"
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        flags
            .cflags
            .extend(DEBUG_FLAGS.iter().map(|f| (*f).to_owned()));
    }

    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }

    fn training_prefix(&self, dirs: &StageDirs, event: Option<&str>) -> Result<Vec<String>> {
        sampling::start(dirs, event, &SAMPLER)
    }

    fn samples(&self) -> bool {
        true
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let converted = super::merge::convert_recordings(
            dirs,
            binaries,
            (RAW_EXTENSION, MERGED_EXTENSION),
            convert_for_clang,
            NO_SAMPLES_HINT,
        )?;
        let profiles: Vec<PathBuf> = converted.into_iter().flat_map(|c| c.profiles).collect();
        Ok(vec![super::merge::profdata_merge(
            dirs,
            &["-sample"],
            &profiles,
            MERGED_EXTENSION,
        )?])
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        require_merged(profile_dir, MERGED_EXTENSION)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        use_merged(
            flags,
            dirs,
            DEBUG_FLAGS,
            (MERGED_EXTENSION, "-fprofile-sample-use"),
        );
    }
}

/// The gcc AutoFDO profiles brought as they are, each scaled by its
/// weight.
fn brought_gcc_profiles(dirs: &StageDirs) -> Result<Vec<Vec<super::gcov_afdo::Instance>>> {
    let mut profiles = Vec::new();
    for file in find_files(&super::raw_dir(dirs), GCC_BROUGHT_EXTENSION) {
        let functions = super::gcov_afdo_read::read(&fs_err::read(&file)?)
            .map_err(|why| anyhow::anyhow!("reading {}: {why}", file.display()))?;
        profiles.push(weighted(dirs, &file, functions)?);
    }
    Ok(profiles)
}

/// `functions`, read from `file`, scaled by the weight of its workload.
fn weighted(
    dirs: &StageDirs,
    file: &Path,
    mut functions: Vec<super::gcov_afdo::Instance>,
) -> Result<Vec<super::gcov_afdo::Instance>> {
    let weight = u64::from(super::weights::of(dirs, file)?);
    if weight != 1 {
        for f in &mut functions {
            f.scale(weight);
        }
    }
    Ok(functions)
}

impl Pgo for GccAutoFdo {
    fn name(&self) -> &'static str {
        "gcc-autofdo"
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        flags
            .cflags
            .extend(GCC_DEBUG_FLAGS.iter().map(|f| (*f).to_owned()));
    }

    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }

    fn training_prefix(&self, dirs: &StageDirs, event: Option<&str>) -> Result<Vec<String>> {
        sampling::start(dirs, event, &SAMPLER)
    }

    fn samples(&self) -> bool {
        true
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let reader = check_gcc()?;
        let mut profiles = brought_gcc_profiles(dirs)?;
        let recordings = !find_files(&super::raw_dir(dirs), RAW_EXTENSION).is_empty();
        let converted = if recordings || profiles.is_empty() {
            super::merge::convert_recordings(
                dirs,
                binaries,
                (RAW_EXTENSION, GCC_TEXT_EXTENSION),
                convert_for_gcc,
                NO_SAMPLES_HINT,
            )?
        } else {
            Vec::new()
        };
        let mut garbled = 0;
        for file in converted.iter().flat_map(|c| &c.profiles) {
            let (functions, bad) = super::gcov_afdo::parse_llvm_text_counting(&read_lossy(file)?)
                .with_context(|| format!("reading {}", file.display()))?;
            garbled += bad;
            profiles.push(weighted(dirs, file, functions)?);
        }
        if garbled > 0 {
            crate::progress::warn(format_args!(
                "create_llvm_prof wrote {garbled} inlined callee names garbled (a bug of autofdo 0.19 on gcc binaries); their samples are left out of the gcc profile, the rest is kept"
            ));
        }
        let mut merged = super::gcov_afdo::merge(profiles);
        reader.prepare(&mut merged);
        let staging = dirs.profile.join("merging.tmp");
        fs_err::write(
            &staging,
            super::gcov_afdo::write_layout(&merged, reader.layout()),
        )?;
        Ok(vec![super::store_merged(
            &dirs.profile,
            &staging,
            GCC_MERGED_EXTENSION,
        )?])
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        require_merged(profile_dir, GCC_MERGED_EXTENSION)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        use_merged(
            flags,
            dirs,
            GCC_DEBUG_FLAGS,
            (GCC_MERGED_EXTENSION, "-fauto-profile"),
        );
    }
}

/// The final build of either round: the profiled build's debug flags, and
/// `OPTION=merged profile` in CFLAGS and LDFLAGS (LTO reads it at link).
fn use_merged(
    flags: &mut Flags,
    dirs: &StageDirs,
    debug: &[&str],
    (extension, option): (&str, &str),
) {
    flags.cflags.extend(debug.iter().map(|f| (*f).to_owned()));
    let merged = merged_profiles(&dirs.profile, extension)
        .into_iter()
        .next()
        .unwrap_or_else(|| dirs.profile.join(format!("merged-missing.{extension}")));
    let option = format!("{option}={}", merged.display());
    flags.cflags.push(option.clone());
    flags.ldflags.push(option);
}

#[cfg(test)]
mod tests {
    /// The recording of a forking daemon's whole life that
    /// `create_llvm_prof` 0.19 wrote with a garbled inlined name.
    #[test]
    fn a_garbled_inlined_call_site_is_left_out_with_what_it_nests() {
        let text = "startup_burn:1965:0\n 1: 0\n 5.3: 1657\n 3: P\u{fffd}D\u{fffd}U  P\u{fffd}A:0\n  3: 0\n  4: 0\n 6: 303\n 7: helper:40\n  1: 40\nmain:10:1\n 1: 1\n";
        let (clean, dropped) = super::drop_garbled_callsites(text);
        assert_eq!(dropped, 1);
        assert_eq!(
            clean,
            "startup_burn:1965:0\n 1: 0\n 5.3: 1657\n 6: 303\n 7: helper:40\n  1: 40\nmain:10:1\n 1: 1\n"
        );
    }

    /// A garbled name that held a newline: its tail starts a line of its
    /// own at depth 0, its body two levels deep (seen on the same daemon).
    #[test]
    fn a_garbled_name_split_onto_a_line_of_its_own_is_left_out() {
        let text = "startup_burn:1959:0\n 5.3: 1618\n 65498: 0\n\u{c}\u{12}nU\u{0}\u{0}\u{fffd}$\t:0\n  3: 0\n  4: 0\n 6: 340\nserve:11:0\n 6: 5\n";
        let (clean, dropped) = super::drop_garbled_callsites(text);
        assert_eq!(dropped, 1);
        assert_eq!(
            clean,
            "startup_burn:1959:0\n 5.3: 1618\n 65498: 0\n 6: 340\nserve:11:0\n 6: 5\n"
        );
    }
}
