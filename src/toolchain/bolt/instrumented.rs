//! BOLT, instrumented (needs no PMU): link with `--emit-relocs`, rewrite each
//! binary with `llvm-bolt -instrument`, train, merge the per-process
//! profiles with `merge-fdata`, then rewrite the freshly built binary with
//! `llvm-bolt -data=…` ([`super::optimize`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;

use super::{
    file_name, find_tool, keep_relocations, merge_fdata, merged_path, optimize, rewrite, FDATA,
};
use crate::toolchain::formats::brought::Format;
use crate::toolchain::matching::Counts;
use crate::toolchain::round::{Accepts, Round};
use crate::toolchain::{find_files, no_profile_error, raw_dir, weights, Flags, Phase, StageDirs};

/// `llvm-bolt` from an instrumented training run.
pub struct Bolt;

impl Round for Bolt {
    fn name(&self) -> &'static str {
        "bolt"
    }

    fn raw_extension(&self) -> &'static str {
        FDATA
    }

    fn merged_extension(&self) -> &'static str {
        FDATA
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            formats: &[Format::FDATA],
            said: "an .fdata file",
        }
    }

    fn sampled_functions(&self, files: &[PathBuf]) -> Result<Option<Counts>> {
        super::sampled_functions(files).map(Some)
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        keep_relocations(flags);
    }

    fn merge(&self, dirs: &StageDirs, _binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        // Instrumented binaries write `raw/<binary>.<pid>.fdata`.
        let mut by_binary: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
        for file in find_files(&raw_dir(dirs), FDATA) {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let stem = name.trim_end_matches(&format!(".{FDATA}"));
            let binary = stem.rsplit_once('.').map_or(stem, |(b, _pid)| b).to_owned();
            by_binary.entry(binary).or_default().push(file);
        }
        if by_binary.is_empty() {
            return Err(no_profile_error(&raw_dir(dirs), FDATA));
        }
        let mut merged = Vec::new();
        for (binary, files) in by_binary {
            let path = merged_path(&dirs.profile, &binary);
            merge_fdata(&weights::repeated(dirs, &files)?, &path, &binary)?;
            merged.push(path);
        }
        Ok(merged)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        self.instrument(flags, dirs);
    }

    fn post_link(&self, phase: Phase, binaries: &[PathBuf], dirs: &StageDirs) -> Result<()> {
        match phase {
            Phase::Off => Ok(()),
            Phase::Instrument => {
                let bolt = find_tool("llvm-bolt")?;
                fs_err::create_dir_all(raw_dir(dirs))?;
                for binary in binaries {
                    let output = raw_dir(dirs).join(file_name(binary));
                    let args = [
                        "-instrument".to_owned(),
                        format!("--instrumentation-file={}", output.display()),
                        // One profile per process, so concurrent runs never clobber.
                        "--instrumentation-file-append-pid".to_owned(),
                    ];
                    let _ = rewrite(&bolt, binary, &args, "-instrument")?;
                }
                Ok(())
            }
            Phase::Use => optimize(binaries, dirs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relocations_are_kept_at_both_stages() {
        let dirs = StageDirs {
            build: "/b".into(),
            profile: "/p".into(),
        };
        let mut flags = Flags::default();
        Bolt.instrument(&mut flags, &dirs);
        assert_eq!(flags.ldflags, vec!["-Wl,--emit-relocs"]);
        assert_eq!(
            merged_path(std::path::Path::new("/p"), "app"),
            PathBuf::from("/p/merged-app.fdata")
        );
    }
}
