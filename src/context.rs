//! A loaded experiment and its work directory, as every phase takes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::build;
use crate::experiment::{self, Bindings, Experiment, Variant};
use crate::toolchain::Stage;
use crate::workdir::Workdir;

/// Options shared by every phase.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Apply the experiment's `[quick]` overrides.
    pub quick: bool,
    /// Work directory; `.afterburner/` beside the experiment file when unset.
    pub workdir: Option<PathBuf>,
}

/// A loaded experiment and its work directory.
#[derive(Debug, Clone)]
pub struct Context {
    pub experiment: Experiment,
    pub workdir: Workdir,
}

impl Context {
    pub fn open(file: &Path, options: &Options) -> Result<Self> {
        let experiment = experiment::load(file, options.quick)?;
        let root = options
            .workdir
            .clone()
            .unwrap_or_else(|| experiment.default_workdir());
        let root = std::path::absolute(&root).unwrap_or(root);
        fs_err::create_dir_all(&root)?;
        Ok(Self {
            experiment,
            workdir: Workdir::new(root),
        })
    }

    /// Bindings of a variant's binaries for `stage`, which its build
    /// directory must hold now.
    pub fn bindings(&self, variant: &Variant, stage: Stage) -> Result<Bindings> {
        let mut params = self.experiment.params.clone();
        params.extend(variant.params.clone());
        if let Some(binaries) = &variant.prebuilt {
            return Ok(Bindings {
                binaries: binaries.clone(),
                params,
                profile: None,
                ports: BTreeMap::new(),
                port: None,
                ..Bindings::default()
            });
        }
        let record = build::current(&self.workdir, &variant.name, stage).with_context(|| {
            let phase = if stage == Stage::FIRST || !variant.needs_profile() { "build" } else { "train" };
            format!(
                "variant `{}` has no {} build in {}\nhint: run `afterburner {phase}` first (or `afterburner run`)",
                variant.name,
                stage.name(),
                self.workdir.root.display()
            )
        })?;
        Ok(Bindings {
            binaries: record.binaries,
            params,
            profile: None,
            ports: BTreeMap::new(),
            port: None,
            ..Bindings::default()
        })
    }
}
