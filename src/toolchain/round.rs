//! One training round of a profile-based technique, behind [`Round`]:
//! instrument → collect (training runs) → merge → use, and everything else
//! the rest of afterburner asks of a round — which brought files can stand
//! in for its training ([`Round::accepts`]), how its profile's functions are
//! listed and matched against the binaries ([`Round::matched`]), whether it
//! samples with perf ([`Round::sampler`]). Nothing outside a technique's
//! folder matches on a round's name.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::formats::brought::Format;
use super::matching::{self, Counts, Matched};
use super::recorded::Switch;
use super::sampling::{self, Sampler};
use super::{require_merged, stash_raw, Flags, Phase, StageDirs};

/// The brought files that can stand in for a round's training (a profile
/// collected elsewhere, `profile =` on a variant).
#[derive(Debug, Clone, Copy)]
pub struct Accepts {
    /// The formats of file its merge reads.
    pub formats: &'static [Format],
    /// How they are said in a refusal ("a .gcda tree or a tar archive of
    /// one").
    pub said: &'static str,
}

impl Accepts {
    /// A round that takes no brought profile.
    pub const NOTHING: Accepts = Accepts {
        formats: &[],
        said: "",
    };
}

/// A profile-guided optimizer, one training round of a variant:
/// instrument → collect (training runs) → merge → use. One implementation
/// per compiler and kind, in its technique's folder. Only the name, the
/// raw and merged extensions, the merge and the use are required; a round
/// that samples with perf says so with [`Round::sampler`] and gets the
/// sampled training for free.
pub trait Round: Sync {
    /// Short name; the round's profile directory is `profile/<name>/`.
    fn name(&self) -> &'static str;
    /// Add the instrumented (or profiled) build's flags; none by default.
    fn instrument(&self, _flags: &mut Flags, _dirs: &StageDirs) {}
    /// Environment for training runs of the instrumented binaries; none by
    /// default.
    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }
    /// How training samples with `perf record`, for a sampled round
    /// (AutoFDO, BOLT from perf, Go PGO from perf): its part in the
    /// messages, its default event, whether with call stacks. `None` (the
    /// default): training runs instrumented binaries.
    fn sampler(&self) -> Option<&'static Sampler> {
        None
    }
    /// Whether training samples the binaries with perf (rather than
    /// running instrumented ones), so services can be recorded by
    /// attaching to them.
    fn samples(&self) -> bool {
        self.sampler().is_some()
    }
    /// A command that training runs (and services) are started under:
    /// `perf record … --` with the variant's `sample_event` (and
    /// `call_chains`) for a sampled round, nothing for the others.
    fn training_prefix(&self, dirs: &StageDirs, asked: sampling::Asked) -> Result<Vec<String>> {
        match self.sampler() {
            Some(sampler) => sampling::start(dirs, asked, sampler),
            None => Ok(Vec::new()),
        }
    }
    /// After one training workload: keep what it wrote under
    /// `raw/<workload>/`, so each workload's profile stays on disk.
    fn collect(&self, dirs: &StageDirs, workload: &str) -> Result<()> {
        stash_raw(dirs, self.raw_extension(), workload)
    }
    /// The extension of the files training runs write
    /// ([`sampling::RAW_EXTENSION`] for a sampled round).
    fn raw_extension(&self) -> &'static str;
    /// After training: merge every workload's files into what the next
    /// build reads; returns those files. Fails, saying why, when training
    /// left none. `binaries` are the ones training ran.
    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>>;
    /// The extension of the merged profile's files (`merged-*.<ext>`).
    fn merged_extension(&self) -> &'static str;
    /// The merged profile's files, for the build key; fails when absent.
    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        require_merged(profile_dir, self.merged_extension())
    }
    /// Add the flags of a build that uses the merged profile.
    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs);
    /// What the flags it `added` in `phase` leave in the compiler's record
    /// of each object's command line, checked after the build: by default
    /// each compile flag as the compilers record it
    /// ([`Switch::from_flags`]).
    fn recorded(&self, _phase: Phase, added: &Flags) -> Vec<Switch> {
        Switch::from_flags(added)
    }
    /// Prefixes of the symbols its instrumented build's runtime defines
    /// (`__gcov_`): a build without any ignored the instrumentation flags,
    /// and training would write no profile. None by default (a sampled
    /// round, or one that instruments after the link).
    fn instrumentation_symbols(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether the instrumented build must be the finished code (the whole
    /// stack applied), because the profile describes that code.
    fn instruments_final_code(&self) -> bool {
        false
    }
    /// Whether this round's merged profile includes the earlier round's,
    /// so that builds use only this one.
    fn replaces_earlier(&self) -> bool {
        false
    }
    /// Rewrite the linked binaries in place (BOLT); most rounds work at
    /// compile time and do nothing here.
    fn post_link(&self, _phase: Phase, _binaries: &[PathBuf], _dirs: &StageDirs) -> Result<()> {
        Ok(())
    }
    /// Whether training runs C or C++ binaries instrumented by the
    /// compiler, whose counters the dump shim can have written while they
    /// run (`train_stop = "dump"`).
    fn dumps_counters(&self) -> bool {
        false
    }
    /// The brought files that can stand in for this round's training;
    /// none by default.
    fn accepts(&self) -> Accepts {
        Accepts::NOTHING
    }
    /// The functions the merged profile (`files`) names by symbol, with
    /// their counts, under their compared names ([`Round::compared_name`]);
    /// `None` (the default) for a profile that names them otherwise.
    fn sampled_functions(&self, _files: &[PathBuf]) -> Result<Option<Counts>> {
        Ok(None)
    }
    /// A name of this round's profile or binaries as the two are compared:
    /// as C and C++ readers compare them by default
    /// ([`matching::c_symbol`]).
    fn compared_name<'a>(&self, name: &'a str) -> &'a str {
        matching::c_symbol(name)
    }
    /// How much of the merged profile (`files`) the `binaries` it is
    /// applied to have: the profile's functions with their counts, and
    /// those found. By default a sampled profile's functions
    /// ([`Round::sampled_functions`]) against the symbols the binaries
    /// define; `None` where the round's profile is not checked.
    fn matched(&self, files: &[PathBuf], binaries: &[PathBuf]) -> Result<Option<Matched>> {
        let Some(counts) = self.sampled_functions(files)? else {
            return Ok(None);
        };
        let mut defined = BTreeSet::new();
        for binary in binaries {
            for symbol in matching::symbols(binary)? {
                defined.insert(self.compared_name(&symbol).to_owned());
            }
        }
        let found = counts
            .keys()
            .filter(|f| defined.contains(*f))
            .cloned()
            .collect();
        Ok(Some(Matched {
            method: "symbols",
            counts,
            found,
        }))
    }
}
