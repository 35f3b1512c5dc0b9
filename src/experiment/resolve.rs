//! Validation: raw experiment file → [`Experiment`], every error naming the
//! file, the line and what to do.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;

use super::raw::{
    RawBench, RawExperiment, RawFigure, RawQuick, RawRepetitions, RawSource, RawTarget, RawWorkload,
};
use super::{
    resolve_path, Bench, Experiment, ExperimentError, Figure, Race, Role, Sequential, Source,
    Target, Template, Workload,
};
use crate::metric::Builtin;
use crate::toolchain::{weights, Compiler};
use crate::units::parse_duration;

mod brought_profile;
mod cargo;
mod cluster;
mod each;
mod matrix;
mod profile_from;
mod race;
mod recordings;
use recordings::recorded_names;
mod report;
mod screen;
mod services;
mod shares;
mod variants;

pub use report::report_settings;

/// Load and validate an experiment file; `quick` applies its `[quick]` overrides.
pub fn load(path: &Path, quick: bool) -> Result<Experiment, ExperimentError> {
    let text = fs_err::read_to_string(path).map_err(|source| ExperimentError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    load_str(path, &text, quick)
}

/// Validate experiment text that came from `path`.
pub fn load_str(path: &Path, text: &str, quick: bool) -> Result<Experiment, ExperimentError> {
    let raw: RawExperiment = toml::from_str(text).map_err(|e| ExperimentError::Parse {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = absolute
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let cx = Cx { path, text };
    let mut raw = raw;
    let quick_section = std::mem::take(&mut raw.quick);
    let params = cx.params(&raw.params, quick.then_some(&quick_section))?;
    let mut target = cx.target(&raw.target, &params, &dir)?;
    target.services = cx.services(&raw.target.services, &target, &params, &dir)?;
    let (raw_workloads, workload_sets) =
        cx.expand_each(std::mem::take(&mut raw.workloads), &dir)?;
    let mut raw_variants = std::mem::take(&mut raw.variants);
    raw_variants.extend(cx.expand_matrices(&raw.matrices)?);
    let trains_with_profile = trains_with_profile(&raw_workloads, &raw.target.services);
    let mut left_out = Vec::new();
    if let Some(race) = &raw.race {
        cx.race_axes_given(race)?;
    }
    if let Some(axes) = raw.race.as_ref().and_then(super::raw::RawRace::axes) {
        let (candidates, left) = cx.race_candidates(&axes, |v| {
            cx.variants(v, &target, &params, &dir, trains_with_profile)
        })?;
        raw_variants.extend(candidates);
        left_out = left;
    }
    let raw_variants = cx.expand_recordings(raw_variants)?;
    let mut variants = cx.variants(&raw_variants, &target, &params, &dir, trains_with_profile)?;
    let variants_before_quick: Vec<String> = variants.iter().map(|v| v.name.clone()).collect();
    if quick {
        variants = cx.quick_keep(variants, quick_section.variants.as_ref(), "variant", |v| {
            &v.name
        })?;
    }
    shares::assign(&mut variants);
    let mut workloads = cx.workloads(&raw_workloads, &target, &params, &dir)?;
    if quick {
        workloads = cx.quick_keep(
            workloads,
            quick_section.workloads.as_ref(),
            "workload",
            |w| &w.name,
        )?;
    }
    let bench = cx.bench(&raw.bench, quick.then_some(&quick_section))?;
    let cluster = raw
        .cluster
        .as_ref()
        .map(|c| cx.cluster(c, &bench, &dir, (&target, &workloads)))
        .transpose()?;
    // Against every variant the file defines, `--quick` or not: the file
    // is valid or not whatever the flag.
    let recorded = recorded_names(&raw_variants);
    let report = cx.report(
        &raw.report,
        variants_before_quick.iter().map(String::as_str),
        &recorded.iter().map(String::as_str).collect::<Vec<_>>(),
    )?;
    let mut race = match &raw.race {
        Some(r) => cx.race(r, bench.repetitions)?,
        None => Race::defaults(bench.repetitions),
    };
    race.left_out = left_out;
    cx.check_screen(raw.race.as_ref(), &race, &bench, &workloads)?;
    Ok(Experiment {
        file: absolute,
        dir,
        target,
        variants,
        workloads,
        workload_sets,
        bench,
        params,
        cluster,
        report,
        race,
    })
}

/// Whether a training run writes a profile of its own where `{profile}`
/// points: a training workload's command, or a service's start command.
fn trains_with_profile(
    workloads: &[super::raw::RawWorkload],
    services: &[super::raw::RawService],
) -> bool {
    let has = |t: &str| t.contains("{profile}");
    workloads.iter().any(|w| {
        let bench_only = w.role.as_ref().is_some_and(|r| r.get_ref() == "bench");
        let command = w.train_run.as_ref().or(w.run.as_ref());
        !bench_only && command.is_some_and(|c| has(c.get_ref()))
    }) || services.iter().any(|s| has(s.start.get_ref()))
}

/// The fewest rounds before a sequential plan's first look: the exact
/// signed-rank test of 8 rounds reaches p = 2/2⁸ ≈ 0.008, below the first
/// look's nominal level (about 0.015 with the default 10–50 rounds).
const MIN_SEQUENTIAL_ROUNDS: u32 = 8;
/// The most rounds a sequential plan may have.
const MAX_SEQUENTIAL_ROUNDS: u32 = 10_000;

const DEFAULT_BUILD_TIMEOUT: Duration = Duration::from_hours(1);
const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_mins(10);

struct Cx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Cx<'_> {
    /// A `cpus = "…"` list, checked.
    pub(super) fn cpus(
        &self,
        raw: Option<&Spanned<String>>,
    ) -> Result<Option<crate::pinning::CpuSet>, ExperimentError> {
        raw.map(|c| {
            crate::pinning::CpuSet::parse(c.get_ref()).map_err(|e| {
                self.invalid(
                    c.span(),
                    format!("{e:#}"),
                    "write the CPUs as Linux lists them, e.g. cpus = \"1\" or \"2-3\" (`nproc` tells how many there are)",
                )
            })
        })
        .transpose()
    }

    /// A target binary's path: relative, and inside the build directory
    /// (afterburner rewrites binaries in place for BOLT and copies the
    /// tree per variant; a path out of it would be shared or overwritten).
    fn binary_path(&self, name: &str, raw: &Spanned<String>) -> Result<PathBuf, ExperimentError> {
        let path = PathBuf::from(raw.get_ref());
        let escapes = path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
        if path.is_absolute() || escapes || raw.get_ref().trim().is_empty() {
            let file = path
                .file_name()
                .map_or_else(|| "app".to_owned(), |f| f.to_string_lossy().into_owned());
            return Err(self.invalid(
                raw.span(),
                format!(
                    "binary `{name}` = \"{}\" is not inside the build directory",
                    raw.get_ref()
                ),
                format!(
                    "give its path relative to the build directory, without `..` (e.g. {name} = \"{file}\" or \"src/{file}\"); a binary built elsewhere is a variant's prebuilt = {{ {name} = \"/path\" }}"
                ),
            ));
        }
        Ok(path)
    }

    /// The 1-based line where `span` starts.
    fn line_of(&self, span: Range<usize>) -> usize {
        self.text[..span.start.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn invalid(
        &self,
        span: Range<usize>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> ExperimentError {
        let line = self.line_of(span);
        ExperimentError::Invalid {
            path: self.path.to_path_buf(),
            line,
            message: message.into(),
            hint: hint.into(),
        }
    }

    fn duration(
        &self,
        value: Option<&Spanned<String>>,
        default: Duration,
    ) -> Result<Duration, ExperimentError> {
        let Some(value) = value else {
            return Ok(default);
        };
        parse_duration(value.get_ref()).ok_or_else(|| {
            self.invalid(
                value.span(),
                format!("`{}` is not a duration", value.get_ref()),
                "write a number with a unit: \"500ms\", \"30s\", \"10m\" or \"1h\"",
            )
        })
    }

    fn params(
        &self,
        params: &BTreeMap<String, Spanned<toml::Value>>,
        quick: Option<&RawQuick>,
    ) -> Result<BTreeMap<String, String>, ExperimentError> {
        let mut out = BTreeMap::new();
        for (key, value) in params {
            out.insert(key.clone(), self.param_text(value)?);
        }
        for (key, value) in quick.map(|q| &q.params).into_iter().flatten() {
            if !out.contains_key(key) {
                return Err(self.invalid(
                    value.span(),
                    format!("[quick.params] sets `{key}`, which [params] does not define"),
                    format!("add `{key} = …` to [params] so runs without --quick have a value too"),
                ));
            }
            out.insert(key.clone(), self.param_text(value)?);
        }
        Ok(out)
    }

    fn param_text(&self, value: &Spanned<toml::Value>) -> Result<String, ExperimentError> {
        match value.get_ref() {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(i) => Ok(i.to_string()),
            toml::Value::Float(f) => Ok(f.to_string()),
            toml::Value::Boolean(b) => Ok(b.to_string()),
            _ => Err(self.invalid(
                value.span(),
                "a parameter must be a string, number or boolean",
                "params are pasted into command lines; write `size = 5` or `mode = \"fast\"`",
            )),
        }
    }

    fn target(
        &self,
        raw: &RawTarget,
        params: &BTreeMap<String, String>,
        dir: &Path,
    ) -> Result<Target, ExperimentError> {
        let name = raw.name.get_ref().trim().to_owned();
        if name.is_empty() {
            return Err(self.invalid(
                raw.name.span(),
                "target name is empty",
                "give the target a name, e.g. name = \"sqlite\"",
            ));
        }
        let source = self.source(&raw.source, dir)?;
        let how = if let Some(cargo) = &raw.cargo {
            self.cargo_target(raw, cargo)?
        } else {
            let (build, binaries) = self.build_and_binaries(raw, params)?;
            let compiler = match &raw.compiler {
                None => Compiler::Gcc,
                Some(c) => self.compiler(c)?,
            };
            if let Some(c) = raw
                .compiler
                .as_ref()
                .filter(|_| compiler == Compiler::Rustc)
            {
                return Err(self.invalid(
                    c.span(),
                    "compiler = \"rustc\" is a cargo target's",
                    "write cargo = { bins = [\"NAME\"] } instead of build, binaries and compiler: afterburner runs cargo itself",
                ));
            }
            cargo::HowBuilt {
                build,
                binaries,
                cargo: None,
                compiler,
            }
        };
        Ok(Target {
            name,
            source,
            exclude: raw.source.get_ref().exclude.clone(),
            build: how.build,
            binaries: how.binaries,
            cargo: how.cargo,
            compiler: how.compiler,
            cflags: raw.cflags.clone().unwrap_or_else(|| "-O2".to_owned()),
            ldflags: raw.ldflags.clone().unwrap_or_default(),
            build_timeout: self.duration(raw.build_timeout.as_ref(), DEFAULT_BUILD_TIMEOUT)?,
            packages: raw.packages.clone(),
            services: Vec::new(),
        })
    }

    /// The build command and binaries of a target that is not a cargo
    /// package.
    fn build_and_binaries(
        &self,
        raw: &RawTarget,
        params: &BTreeMap<String, String>,
    ) -> Result<(String, BTreeMap<String, PathBuf>), ExperimentError> {
        let Some(build) = raw.build.as_ref() else {
            return Err(self.invalid(
                raw.name.span(),
                "the target has no `build`",
                "write the shell command that builds the binaries (build = \"make\"), or for a Rust package, cargo = { bins = [\"NAME\"] } and afterburner runs cargo",
            ));
        };
        if build.get_ref().trim().is_empty() {
            return Err(self.invalid(
                build.span(),
                "build command is empty",
                "write the shell command that builds the binaries, e.g. build = \"make\"",
            ));
        }
        cargo::cargo_build_refused(build)
            .map_err(|hint| self.invalid(build.span(), "the build command runs cargo", hint))?;
        Template::new(build.get_ref().clone())
            .check(|kind, name| kind == "params" && name.is_some_and(|p| params.contains_key(p)))
            .map_err(|e| {
                let known: Vec<String> = params.keys().map(|p| format!("{{params.{p}}}")).collect();
                self.invalid(
                    build.span(),
                    format!("{e} in the build command"),
                    format!(
                        "the build command may use {{params.KEY}}, which a variant's params = {{ … }} overrides (known: {}); write shell variables as $NAME",
                        if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                    ),
                )
            })?;
        let Some(listed) = raw.binaries.as_ref().filter(|b| !b.get_ref().is_empty()) else {
            return Err(self.invalid(
                raw.binaries.as_ref().map_or(raw.name.span(), Spanned::span),
                "no binaries listed",
                "name what the build yields: binaries = { app = \"path/in/build/dir\" }",
            ));
        };
        let mut binaries = BTreeMap::new();
        for (name, path) in listed.get_ref() {
            binaries.insert(name.clone(), self.binary_path(name, path)?);
        }
        Ok((build.get_ref().clone(), binaries))
    }

    fn source(&self, raw: &Spanned<RawSource>, dir: &Path) -> Result<Source, ExperimentError> {
        let s = raw.get_ref();
        let kinds = [
            s.path.is_some(),
            s.apt.is_some(),
            s.git.is_some(),
            s.url.is_some(),
            s.krate.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() != 1 {
            return Err(self.invalid(
                raw.span(),
                "source must name exactly one of path, apt, git, url, crate",
                "write source = { path = \".\" }, { apt = \"sqlite3\" }, { git = \"URL\", rev = \"…\" }, { url = \"…\", sha256 = \"…\" } or { crate = \"NAME\", version = \"X.Y.Z\" }",
            ));
        }
        if s.rev.is_some() && s.git.is_none() {
            return Err(self.invalid(
                raw.span(),
                "`rev` only applies to a git source",
                "remove rev, or use source = { git = \"URL\", rev = \"…\" }",
            ));
        }
        if !s.exclude.is_empty() && s.path.is_none() {
            return Err(self.invalid(
                raw.span(),
                "`exclude` only applies to a path source",
                "remove exclude: a fetched source does not change once fetched",
            ));
        }
        for pattern in &s.exclude {
            if let Err(e) = ignore::gitignore::GitignoreBuilder::new(dir).add_line(None, pattern) {
                return Err(self.invalid(
                    raw.span(),
                    format!("exclude pattern `{pattern}` is invalid: {e}"),
                    "write gitignore patterns, e.g. exclude = [\"data/\", \"*.log\"]",
                ));
            }
        }
        if s.sha256.is_some() && s.url.is_none() {
            return Err(self.invalid(
                raw.span(),
                "`sha256` only applies to a url source",
                "remove sha256, or use source = { url = \"…\", sha256 = \"…\" }",
            ));
        }
        if s.version.is_some() && s.krate.is_none() {
            return Err(self.invalid(
                raw.span(),
                "`version` only applies to a crate source",
                "remove version, or use source = { crate = \"NAME\", version = \"X.Y.Z\" }",
            ));
        }
        Ok(if let Some(path) = &s.path {
            Source::Path(resolve_path(dir, path))
        } else if let Some(package) = &s.apt {
            Source::Apt(package.clone())
        } else if let Some(url) = &s.git {
            Source::Git {
                url: url.clone(),
                rev: s.rev.clone(),
            }
        } else if let Some(name) = &s.krate {
            Source::from_crate(name, s.version.as_deref())
                .map_err(|(message, hint)| self.invalid(raw.span(), message, hint))?
        } else {
            let url = s.url.clone().unwrap_or_default();
            let sha256 = s.sha256.clone().unwrap_or_default().to_ascii_lowercase();
            if sha256.len() != 64 || !sha256.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(self.invalid(raw.span(), "a url source needs its sha256 (64 hex digits)", format!("download it once and run `sha256sum` on it, then add sha256 = \"…\" beside url = \"{url}\"")));
            }
            Source::Url { url, sha256 }
        })
    }

    fn compiler(&self, name: &Spanned<String>) -> Result<Compiler, ExperimentError> {
        Compiler::from_name(name.get_ref()).ok_or_else(|| {
            self.invalid(
                name.span(),
                format!("unknown compiler `{}`", name.get_ref()),
                "use compiler = \"gcc\", \"clang\" or \"go\" (a Rust package is a cargo target: [target] cargo = { bins = [\"NAME\"] })",
            )
        })
    }

    /// The entries `names` (a `[quick]` list) keeps, in file order (the
    /// baseline stays first); every name must be one of them. `what` is
    /// the entry's kind ("variant"), `name` reads an entry's name.
    fn quick_keep<T>(
        &self,
        entries: Vec<T>,
        names: Option<&Vec<Spanned<String>>>,
        what: &str,
        name: impl Fn(&T) -> &str,
    ) -> Result<Vec<T>, ExperimentError> {
        let Some(names) = names else {
            return Ok(entries);
        };
        for wanted in names {
            if !entries.iter().any(|e| name(e) == wanted.get_ref()) {
                return Err(self.invalid(
                    wanted.span(),
                    format!(
                        "[quick] names {what} `{}`, which is not defined",
                        wanted.get_ref()
                    ),
                    format!("list names of [[{what}]] entries"),
                ));
            }
        }
        Ok(entries
            .into_iter()
            .filter(|e| names.iter().any(|n| n.get_ref() == name(e)))
            .collect())
    }

    fn workloads(
        &self,
        raw: &[RawWorkload],
        target: &Target,
        params: &BTreeMap<String, String>,
        dir: &Path,
    ) -> Result<Vec<Workload>, ExperimentError> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for w in raw {
            let name = w.name.get_ref();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_+.-".contains(c))
            {
                return Err(self.invalid(
                    w.name.span(),
                    format!("workload name `{name}` is not usable as a file name"),
                    "use letters, digits, '_', '+', '.' and '-' only",
                ));
            }
            if !seen.insert(name.clone()) {
                return Err(self.invalid(
                    w.name.span(),
                    format!("workload `{name}` is defined twice"),
                    "give each [[workload]] its own name",
                ));
            }
            let role = match w.role.as_ref().map(|r| (r.get_ref().as_str(), r.span())) {
                None | Some(("both", _)) => Role::Both,
                Some(("train", _)) => Role::Train,
                Some(("bench", _)) => Role::Bench,
                Some((other, span)) => {
                    return Err(self.invalid(
                        span,
                        format!("unknown role `{other}`"),
                        "use role = \"train\", \"bench\" or \"both\"",
                    ))
                }
            };
            let (run, load) = match (&w.run, &w.load) {
                (Some(run), None) => (Some(self.template(run, target, params)?), None),
                (None, Some(load)) => (None, Some(self.load(load, target, params, dir)?)),
                (Some(run), Some(_)) => {
                    return Err(self.invalid(
                        run.span(),
                        format!("workload `{name}` has both run and load"),
                        "a workload either runs a command (run = \"…\") or sends requests ([workload.load]); split it in two",
                    ))
                }
                (None, None) => {
                    return Err(self.invalid(
                        w.name.span(),
                        format!("workload `{name}` has neither run nor load"),
                        format!("add run = \"{{bin.app}} …\", or a [workload.load] section with driver = one of {}", crate::load::Driver::names()),
                    ))
                }
            };
            let train_run = w
                .train_run
                .as_ref()
                .map(|t| self.template(t, target, params))
                .transpose()?;
            let before = w
                .before
                .as_ref()
                .map(|t| self.template(t, target, params))
                .transpose()?;
            let after = w
                .after
                .as_ref()
                .map(|t| self.template(t, target, params))
                .transpose()?;
            let figures = w
                .figures
                .iter()
                .map(|f| self.figure(f))
                .collect::<Result<_, _>>()?;
            out.push(Workload {
                name: name.clone(),
                role,
                run,
                load,
                train_run,
                before,
                after,
                timeout: self.duration(w.timeout.as_ref(), DEFAULT_RUN_TIMEOUT)?,
                figures,
                cpus: self.cpus(w.cpus.as_ref())?,
                weight: self.weight(w.weight.as_ref(), role, name)?,
            });
        }
        if !out.iter().any(|w| w.role.benches()) {
            return Err(self.invalid(
                0..0,
                "no workload to benchmark",
                "add a [[workload]] with run = \"…\" and role = \"bench\" or \"both\"",
            ));
        }
        Ok(out)
    }

    /// A training workload's `weight`: 1 by default, 1 to
    /// [`weights::MAX`], and only on a workload that trains.
    fn weight(
        &self,
        raw: Option<&Spanned<i64>>,
        role: Role,
        name: &str,
    ) -> Result<u32, ExperimentError> {
        let Some(raw) = raw else { return Ok(1) };
        if !role.trains() {
            return Err(self.invalid(
                raw.span(),
                format!("workload `{name}` has a weight but does not train (role = \"bench\")"),
                "a weight says how much a workload's profile counts in the merged one: drop it, or use role = \"both\" or \"train\"",
            ));
        }
        u32::try_from(*raw.get_ref())
            .ok()
            .filter(|w| (1..=weights::MAX).contains(w))
            .ok_or_else(|| {
                self.invalid(
                    raw.span(),
                    format!("weight = {} is out of range", raw.get_ref()),
                    format!("use a whole number from 1 to {} (how many times the workload's profile counts)", weights::MAX),
                )
            })
    }

    fn template(
        &self,
        raw: &Spanned<String>,
        target: &Target,
        params: &BTreeMap<String, String>,
    ) -> Result<Template, ExperimentError> {
        let services: Vec<&str> = target.services.iter().map(|s| s.name.as_str()).collect();
        self.template_with(raw, target, params, &services)
    }

    /// A command template whose placeholders name `target`'s binaries,
    /// `params` and the `services`.
    fn template_with(
        &self,
        raw: &Spanned<String>,
        target: &Target,
        params: &BTreeMap<String, String>,
        services: &[&str],
    ) -> Result<Template, ExperimentError> {
        let template = Template::new(raw.get_ref().clone());
        if template.text.trim().is_empty() {
            return Err(self.invalid(
                raw.span(),
                "command is empty",
                "write the command to run, e.g. run = \"{bin.app} --input data\"",
            ));
        }
        template
            .check(|kind, name| match (kind, name) {
                ("bin", Some(b)) => target.binaries.contains_key(b),
                ("params", Some(p)) => params.contains_key(p),
                ("profile" | "instance" | "host", None) => true,
                ("port" | "state", None) => !services.is_empty(),
                ("port" | "state", Some(s)) => services.contains(&s),
                _ => false,
            })
            .map_err(|e| {
                let bins = target.binaries.keys().map(|b| format!("{{bin.{b}}}"));
                let ps = params.keys().map(|p| format!("{{params.{p}}}"));
                let ports = services
                    .iter()
                    .flat_map(|s| [format!("{{port.{s}}}"), format!("{{state.{s}}}")])
                    .chain(
                        (!services.is_empty())
                            .then(|| ["{port}".to_owned(), "{state}".to_owned()])
                            .into_iter()
                            .flatten(),
                    );
                let known: Vec<String> = bins
                    .chain(ps)
                    .chain(ports)
                    .chain(["{profile}".to_owned(), "{instance}".to_owned()])
                    .collect();
                self.invalid(
                    raw.span(),
                    e.to_string(),
                    format!("known placeholders: {}", known.join(", ")),
                )
            })?;
        Ok(template)
    }

    fn figure(&self, raw: &RawFigure) -> Result<Figure, ExperimentError> {
        if let Some(builtin) = Builtin::from_name(raw.name.get_ref()) {
            // Its runs' values would be the built-in's, not the figure's.
            return Err(self.invalid(
                raw.name.span(),
                format!("a figure may not be named `{builtin:?}`: a built-in metric is"),
                "name the figure otherwise, e.g. after the number it reads",
            ));
        }
        let regex = regex::Regex::new(raw.regex.get_ref()).map_err(|e| {
            self.invalid(
                raw.regex.span(),
                format!("bad regex: {e}"),
                "write a regex whose first group captures the number",
            )
        })?;
        if regex.captures_len() < 2 {
            return Err(self.invalid(
                raw.regex.span(),
                "the regex has no capture group",
                "wrap the number in parentheses, e.g. \"([0-9.]+) per sec\"",
            ));
        }
        let higher_is_better = match raw
            .better
            .as_ref()
            .map(|b| (b.get_ref().as_str(), b.span()))
        {
            None | Some(("lower", _)) => false,
            Some(("higher", _)) => true,
            Some((other, span)) => {
                return Err(self.invalid(
                    span,
                    format!("unknown direction `{other}`"),
                    "use better = \"higher\" or \"lower\"",
                ))
            }
        };
        Ok(Figure {
            name: raw.name.get_ref().clone(),
            regex,
            unit: raw.unit.clone().unwrap_or_default(),
            higher_is_better,
            primary: raw.primary.unwrap_or(false),
        })
    }

    fn bench(&self, raw: &RawBench, quick: Option<&RawQuick>) -> Result<Bench, ExperimentError> {
        let (repetitions, sequential) = match quick.and_then(|q| q.repetitions.as_ref()) {
            Some(count) => (self.positive(Some(count), 10, "repetitions")?, None),
            None => self.repetitions(raw)?,
        };
        let instruction_repetitions = quick
            .and_then(|q| q.instruction_repetitions.as_ref())
            .or(raw.instruction_repetitions.as_ref());
        let instruction_repetitions =
            self.positive(instruction_repetitions, 3, "instruction_repetitions")?;
        let metrics = match &raw.metrics {
            None => Builtin::defaults(),
            Some(list) => list
                .iter()
                .map(|m| {
                    Builtin::from_name(m.get_ref()).ok_or_else(|| {
                        self.invalid(
                            m.span(),
                            format!("unknown metric `{}`", m.get_ref()),
                            format!("known metrics: {}", Builtin::names()),
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let confidence = match &raw.confidence {
            None => 0.95,
            Some(c) if *c.get_ref() > 0.5 && *c.get_ref() < 1.0 => *c.get_ref(),
            Some(c) => {
                return Err(self.invalid(
                    c.span(),
                    format!("confidence {} is out of range", c.get_ref()),
                    "use a level between 0.5 and 1, e.g. 0.95",
                ))
            }
        };
        let equivalence = match &raw.equivalence {
            None => crate::stats::DEFAULT_EQUIVALENCE,
            Some(e) if (0.0..0.5).contains(e.get_ref()) => *e.get_ref(),
            Some(e) => {
                return Err(self.invalid(
                    e.span(),
                    format!("equivalence {} is out of range", e.get_ref()),
                    "use a fraction from 0 to 0.5, e.g. 0.01 for ±1% (0 never says \"same\")",
                ))
            }
        };
        Ok(Bench {
            repetitions,
            sequential,
            warmup: quick.and_then(|q| q.warmup).or(raw.warmup).unwrap_or(1),
            primary_instructions: self.primary(raw, &metrics)?,
            metrics,
            confidence,
            equivalence,
            pin: raw.pin.unwrap_or(true),
            aslr: raw.aslr.unwrap_or(true),
            seed: raw.seed,
            instruction_repetitions: instruction_repetitions.min(repetitions),
            race: None,
        })
    }

    /// `primary = "instructions"`: the instruction count heads the report
    /// instead of time (for CI on shared runners, where time is noise).
    fn primary(&self, raw: &RawBench, metrics: &[Builtin]) -> Result<bool, ExperimentError> {
        let Some(word) = &raw.primary else {
            return Ok(false);
        };
        if !Builtin::INSTRUCTIONS.is(word.get_ref()) {
            return Err(self.invalid(
                word.span(),
                format!("primary = \"{}\" is not a metric the headline can use", word.get_ref()),
                "remove it (the headline is time: wall, or a workload's figure declared primary = true), or write primary = \"instructions\" to headline the instruction count",
            ));
        }
        if !metrics.contains(&Builtin::INSTRUCTIONS) {
            return Err(self.invalid(
                word.span(),
                "primary = \"instructions\" but instructions are not counted",
                "add \"instructions\" to metrics under [bench]",
            ));
        }
        Ok(true)
    }

    /// `repetitions`: a count, or "auto" with `budget`, `min` and `max`.
    fn repetitions(&self, raw: &RawBench) -> Result<(u32, Option<Sequential>), ExperimentError> {
        let auto_only = [
            ("budget", raw.budget.as_ref().map(Spanned::span)),
            ("min", raw.min.as_ref().map(Spanned::span)),
            ("max", raw.max.as_ref().map(Spanned::span)),
        ];
        let Some(value) = &raw.repetitions else {
            if let Some((key, Some(span))) = auto_only.iter().find(|(_, s)| s.is_some()) {
                return Err(self.invalid(span.clone(), format!("{key} applies to repetitions = \"auto\" only"), "set repetitions = \"auto\" to let rounds go on until every verdict is decided, or remove it"));
            }
            return Ok((10, None));
        };
        let word = match value.get_ref() {
            RawRepetitions::Count(n) => {
                let count = Spanned::new(value.span(), *n);
                if let Some((key, Some(span))) = auto_only.iter().find(|(_, s)| s.is_some()) {
                    return Err(self.invalid(
                        span.clone(),
                        format!("{key} applies to repetitions = \"auto\" only"),
                        format!("set repetitions = \"auto\" instead of {n}, or remove {key}"),
                    ));
                }
                return Ok((self.positive(Some(&count), 10, "repetitions")?, None));
            }
            RawRepetitions::Word(word) => word,
        };
        if word != "auto" {
            return Err(self.invalid(
                value.span(),
                format!("repetitions = \"{word}\" is neither a count nor \"auto\""),
                "write repetitions = 10, or repetitions = \"auto\" with budget = \"15m\"",
            ));
        }
        let budget = self.duration(raw.budget.as_ref(), Duration::from_mins(15))?;
        if budget.is_zero() || budget > Duration::from_hours(7 * 24) {
            let span = raw.budget.as_ref().map_or(value.span(), Spanned::span);
            return Err(self.invalid(
                span,
                "budget must be more than 0 and at most 7 days",
                "write budget = \"15m\"",
            ));
        }
        let min = self.positive(raw.min.as_ref(), 10, "min")?;
        let max = self.positive(raw.max.as_ref(), 50, "max")?;
        if min < MIN_SEQUENTIAL_ROUNDS {
            let span = raw.min.as_ref().map_or(value.span(), Spanned::span);
            return Err(self.invalid(span, format!("min = {min} is too few rounds for a first look"), format!("set min = {MIN_SEQUENTIAL_ROUNDS} or more: the signed-rank test of fewer paired rounds cannot reach the first look's level (about 1.5%)")));
        }
        if max < min || max > MAX_SEQUENTIAL_ROUNDS {
            let span = raw.max.as_ref().map_or(value.span(), Spanned::span);
            return Err(self.invalid(
                span,
                format!("max = {max} must lie between min ({min}) and {MAX_SEQUENTIAL_ROUNDS}"),
                format!("set max = {} or more", min.max(50)),
            ));
        }
        Ok((
            max,
            Some(Sequential {
                budget,
                min,
                max,
                gate: None,
            }),
        ))
    }

    fn positive(
        &self,
        value: Option<&Spanned<u32>>,
        default: u32,
        key: &str,
    ) -> Result<u32, ExperimentError> {
        match value {
            None => Ok(default),
            Some(v) if *v.get_ref() > 0 => Ok(*v.get_ref()),
            Some(v) => Err(self.invalid(
                v.span(),
                format!("{key} must be at least 1"),
                format!("set {key} = {default} or more"),
            )),
        }
    }
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
