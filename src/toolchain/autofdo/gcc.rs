//! AutoFDO for gcc: the same recordings as clang's, each converted to an
//! LLVM text profile keyed for gcc ([`super::from_ip`] without branch
//! stacks, `create_llvm_prof` with), merged and written in the installed
//! gcc's own format ([`gcov_afdo`]: Debian's `create_gcov` writes one
//! gcc 12 rejects), read with `-fauto-profile=`. A gcc AutoFDO profile
//! brought as it is (`.afdo`) is merged without conversion. Call targets
//! (from call chains) are also written as inlined copies of the targets
//! ([`target_inlines`]), the form in which gcc promotes them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use super::create_llvm_prof::{self, read_lossy};
use super::from_ip::Dialect;
use super::target_inlines;
use super::{use_merged, NO_SAMPLES_HINT, SAMPLER};
use crate::toolchain::formats::brought::Format;
use crate::toolchain::formats::{gcov_afdo, gcov_afdo_read};
use crate::toolchain::matching::Counts;
use crate::toolchain::merge::{self, Convert};
use crate::toolchain::round::{Accepts, Round};
use crate::toolchain::sampling::{Sampler, RAW_EXTENSION};
use crate::toolchain::{find_files, raw_dir, store_merged, weights, Compiler, Flags, StageDirs};

/// AutoFDO for gcc (12): the same recordings, converted to gcc's format.
pub struct GccAutoFdo;

/// The reader of the installed gcc, which decides how [`GccAutoFdo`]
/// writes its profile; the error says why this gcc cannot be served.
pub fn check_gcc() -> Result<gcov_afdo::Reader> {
    let ask = |arg: &str| {
        crate::process::capture(Compiler::Gcc.cc(), &[arg], Duration::from_secs(10))
            .ok()
            .filter(crate::process::Captured::success)
            .map(|o| o.stdout)
    };
    let major = ask("-dumpversion").and_then(|v| gcov_afdo::gcc_major(&v));
    // gcc 16 and later say which AutoFDO version they read; older ones
    // refuse the option.
    let version = ask("-print-autofdo-gcov-version").and_then(|v| v.trim().parse().ok());
    gcov_afdo::reader_of(major, version).map_err(anyhow::Error::msg)
}

/// gcc's line tables: DWARF 4, which `create_llvm_prof` 0.19 reads (it
/// finds no function in gcc 12's default DWARF 5). gcc assigns
/// discriminators by default, so it needs no `-fdebug-info-for-profiling`;
/// full `-g` keeps the inlined-subroutine records the inline stacks come
/// from.
const GCC_DEBUG_FLAGS: &[&str] = &["-g", "-gdwarf-4"];

/// The per-recording text profiles of gcc's round, and its merged file.
const GCC_TEXT_EXTENSION: &str = "txt";
const GCC_MERGED_EXTENSION: &str = "gcov";
// gcc AutoFDO profiles brought as they are (`profile = "x.afdo"`), laid
// out under the round's raw directory by their format and merged without
// conversion.
use crate::toolchain::formats::brought::gcc_afdo::EXTENSION as GCC_BROUGHT_EXTENSION;

/// gcc's round: as clang's, keyed for gcc ([`super::from_ip`] names every
/// inlined callee, which `create_llvm_prof` 0.19 garbles).
fn convert_for_gcc(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    let with_lbr = branch_stack.then_some(create_llvm_prof::convert_text as Convert);
    super::either(recording, binary, out, with_lbr, Dialect::Gcc)
}

/// The gcc AutoFDO profiles brought as they are, each scaled by its
/// weight.
fn brought_gcc_profiles(dirs: &StageDirs) -> Result<Vec<Vec<gcov_afdo::Instance>>> {
    let mut profiles = Vec::new();
    for file in find_files(&raw_dir(dirs), GCC_BROUGHT_EXTENSION) {
        let functions = gcov_afdo_read::read(&fs_err::read(&file)?)
            .map_err(|why| anyhow::anyhow!("reading {}: {why}", file.display()))?;
        profiles.push(weighted(dirs, &file, functions)?);
    }
    Ok(profiles)
}

/// `functions`, read from `file`, scaled by the weight of its workload.
fn weighted(
    dirs: &StageDirs,
    file: &Path,
    mut functions: Vec<gcov_afdo::Instance>,
) -> Result<Vec<gcov_afdo::Instance>> {
    let weight = u64::from(weights::of(dirs, file)?);
    if weight != 1 {
        for f in &mut functions {
            f.scale(weight);
        }
    }
    Ok(functions)
}

impl Round for GccAutoFdo {
    fn name(&self) -> &'static str {
        "gcc-autofdo"
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        flags
            .cflags
            .extend(GCC_DEBUG_FLAGS.iter().map(|f| (*f).to_owned()));
    }

    fn sampler(&self) -> Option<&'static Sampler> {
        Some(&SAMPLER)
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn merged_extension(&self) -> &'static str {
        GCC_MERGED_EXTENSION
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            formats: &[Format::PERF_DATA, Format::GCC_AFDO],
            said: "perf recordings (perf.data) or gcc AutoFDO profiles (.afdo)",
        }
    }

    fn sampled_functions(&self, files: &[PathBuf]) -> Result<Option<Counts>> {
        let mut counts = Counts::new();
        for file in files {
            let functions = gcov_afdo_read::read(&fs_err::read(file)?)
                .map_err(|why| anyhow::anyhow!("reading {}: {why}", file.display()))?;
            super::add_instances(functions, &mut counts);
        }
        Ok(Some(counts))
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let reader = check_gcc()?;
        let mut profiles = brought_gcc_profiles(dirs)?;
        let recordings = !find_files(&raw_dir(dirs), RAW_EXTENSION).is_empty();
        let converted = if recordings || profiles.is_empty() {
            merge::convert_recordings(
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
            let (functions, bad) = gcov_afdo::parse_llvm_text_counting(&read_lossy(file)?)
                .with_context(|| format!("reading {}", file.display()))?;
            garbled += bad;
            profiles.push(weighted(dirs, file, functions)?);
        }
        if garbled > 0 {
            crate::progress::warn(format_args!(
                "create_llvm_prof wrote {garbled} inlined callee names garbled (a bug of autofdo 0.19 on gcc binaries); their samples are left out of the gcc profile, the rest is kept"
            ));
        }
        let mut merged = gcov_afdo::merge(profiles);
        reader.prepare(&mut merged);
        let inlined = target_inlines::add(&mut merged);
        if inlined > 0 {
            crate::progress::info(format_args!(
                "gcc profile: {inlined} calls through pointers given their most-called target as an inlined copy (gcc promotes only those)"
            ));
        }
        let staging = dirs.profile.join("merging.tmp");
        fs_err::write(&staging, gcov_afdo::write_layout(&merged, reader.layout()))?;
        Ok(vec![store_merged(
            &dirs.profile,
            &staging,
            GCC_MERGED_EXTENSION,
        )?])
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
