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
    /// Only this variant (a cluster's per-variant build and train jobs).
    pub variant: Option<String>,
}

/// A loaded experiment and its work directory.
#[derive(Debug, Clone)]
pub struct Context {
    pub experiment: Experiment,
    pub workdir: Workdir,
}

impl Context {
    pub fn open(file: &Path, options: &Options) -> Result<Self> {
        let mut experiment = experiment::load(file, options.quick)?;
        if let Some(name) = &options.variant {
            let known: Vec<&str> = experiment
                .variants
                .iter()
                .map(|v| v.name.as_str())
                .collect();
            anyhow::ensure!(
                known.contains(&name.as_str()),
                "{} has no variant `{name}`\nhint: the variants are {}",
                file.display(),
                known.join(", ")
            );
            experiment.variants.retain(|v| &v.name == name);
        }
        let root = options
            .workdir
            .clone()
            .unwrap_or_else(|| experiment.default_workdir());
        let root = std::path::absolute(&root).unwrap_or(root);
        fs_err::create_dir_all(&root)?;
        let mut workdir = Workdir::new(root);
        workdir.scope.clone_from(&options.variant);
        Ok(Self {
            experiment,
            workdir,
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
