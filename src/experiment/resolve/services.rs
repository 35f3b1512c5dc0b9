//! Validation of `[[target.service]]` and `[workload.load]`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use toml::Spanned;

use super::super::raw::{RawLoad, RawService};
use super::super::{resolve_path, Load, Ready, Recorded, RunAs, Service, Target, Template};
use super::Cx;
use crate::experiment::ExperimentError;
use crate::load::command::parse_sla;
use crate::load::drivers::ready_forms;
use crate::load::models::sla::Sla;
use crate::load::models::{Given, Pacing};
use crate::load::{request_template, Driver, MixError, Model, RequestMix, Source};

const SIGNALS: [(&str, i32); 5] = [
    ("TERM", libc::SIGTERM),
    ("INT", libc::SIGINT),
    ("QUIT", libc::SIGQUIT),
    ("HUP", libc::SIGHUP),
    ("KILL", libc::SIGKILL),
];

impl Cx<'_> {
    pub(super) fn services(
        &self,
        raw: &[RawService],
        target: &Target,
        params: &BTreeMap<String, String>,
        dir: &Path,
    ) -> Result<Vec<Service>, ExperimentError> {
        let names: Vec<&str> = raw.iter().map(|s| s.name.get_ref().as_str()).collect();
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for s in raw {
            let name = s.name.get_ref();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
            {
                return Err(self.invalid(
                    s.name.span(),
                    format!("service name `{name}` is not usable in {{port.{name}}}"),
                    "use letters, digits, '_' and '-' only",
                ));
            }
            if !seen.insert(name.clone()) {
                return Err(self.invalid(
                    s.name.span(),
                    format!("service `{name}` is defined twice"),
                    "give each [[target.service]] its own name",
                ));
            }
            let start = self.template_with(&s.start, target, params, &names)?;
            let setup = s
                .setup
                .as_ref()
                .map(|t| self.template_with(t, target, params, &names))
                .transpose()?;
            let ready = match &s.ready {
                None => Ready::Tcp,
                Some(r) => self.ready(r, target, params, &names)?,
            };
            let stop_signal = match &s.stop_signal {
                None => ("TERM", libc::SIGTERM),
                Some(sig) => {
                    let word = sig
                        .get_ref()
                        .trim()
                        .trim_start_matches("SIG")
                        .to_ascii_uppercase();
                    *SIGNALS.iter().find(|(n, _)| *n == word).ok_or_else(|| {
                        self.invalid(
                            sig.span(),
                            format!("unknown stop signal `{}`", sig.get_ref()),
                            "use TERM, INT, QUIT, HUP or KILL",
                        )
                    })?
                }
            };
            out.push(Service {
                name: name.clone(),
                start,
                setup,
                user: s.user.as_ref().map(|u| self.run_as(u)).transpose()?,
                ready,
                ready_timeout: self.duration(s.ready_timeout.as_ref(), Duration::from_secs(30))?,
                stop_signal: (stop_signal.1, stop_signal.0.to_owned()),
                stop_timeout: self.duration(s.stop_timeout.as_ref(), Duration::from_secs(10))?,
                cwd: s.cwd.as_deref().map(|c| resolve_path(dir, c)),
                env: s.env.clone(),
                cpus: self.cpus(s.cpus.as_ref())?,
                record: self.recorded(s.record.as_ref())?,
            });
        }
        Ok(out)
    }

    /// `record = "window" | "life"`.
    fn recorded(&self, raw: Option<&Spanned<String>>) -> Result<Recorded, ExperimentError> {
        match raw.map(|r| r.get_ref().trim()) {
            None | Some("window") => Ok(Recorded::Window),
            Some("life") => Ok(Recorded::Life),
            Some(other) => Err(self.invalid(
                raw.map_or(0..0, Spanned::span),
                format!("unknown record `{other}`"),
                "use record = \"window\" (the default: each workload's window, once the service is ready and warmed up) or \"life\" (start to stop, start-up included)",
            )),
        }
    }

    /// `user = "postgres"`: the name and where it is written; the user is
    /// looked up when the service starts ([`RunAs::ids`]), so a recipe
    /// validates on a machine that lacks the user.
    fn run_as(&self, raw: &Spanned<String>) -> Result<RunAs, ExperimentError> {
        let name = raw.get_ref();
        if name.trim().is_empty() {
            return Err(self.invalid(
                raw.span(),
                "user is empty",
                "name the user the service runs as, e.g. user = \"postgres\", or remove user",
            ));
        }
        Ok(RunAs {
            name: name.clone(),
            file: self.path.to_path_buf(),
            line: self.line_of(raw.span()),
        })
    }

    fn ready(
        &self,
        raw: &Spanned<String>,
        target: &Target,
        params: &BTreeMap<String, String>,
        names: &[&str],
    ) -> Result<Ready, ExperimentError> {
        let text = raw.get_ref().trim();
        let hint = || {
            format!(
                "use ready = \"tcp\", \"log:REGEX\", \"command:CMD\", {}",
                ready_forms()
            )
        };
        let (word, arg) = match text.split_once(':') {
            Some((word, arg)) => (word, Some(arg)),
            None => (text, None),
        };
        Ok(match (word, arg) {
            ("tcp", None) => Ready::Tcp,
            ("log", Some(regex)) => Ready::Log(regex::Regex::new(regex).map_err(|e| {
                self.invalid(raw.span(), format!("bad regex in ready: {e}"), hint())
            })?),
            ("command", Some(command)) => {
                let spanned = Spanned::new(raw.span(), command.to_owned());
                Ready::Command(self.template_with(&spanned, target, params, names)?)
            }
            // A driver's own check: `redis`, `memcached`, `http:/PATH`.
            _ => {
                let ping = Driver::from_name(word).and_then(|driver| {
                    let request = driver.ready_request(arg)?;
                    Some(Ready::Ping { driver, request })
                });
                ping.ok_or_else(|| {
                    self.invalid(
                        raw.span(),
                        format!("unknown readiness check `{text}`"),
                        hint(),
                    )
                })?
            }
        })
    }

    #[allow(clippy::too_many_lines)] // one field after another
    pub(super) fn load(
        &self,
        raw: &Spanned<RawLoad>,
        target: &Target,
        params: &BTreeMap<String, String>,
        dir: &Path,
    ) -> Result<Load, ExperimentError> {
        let l = raw.get_ref();
        let driver = Driver::from_name(l.driver.get_ref()).ok_or_else(|| {
            self.invalid(
                l.driver.span(),
                format!("unknown driver `{}`", l.driver.get_ref()),
                format!("use one of the drivers: {}", Driver::names()),
            )
        })?;
        let address = match &l.address {
            Some(a) => self.template(a, target, params)?,
            None if !driver.over_network() => Template::new(""),
            None if target.services.is_empty() => return Err(self.invalid(
                l.driver.span(),
                "the load has no address and the target starts no service",
                "add address = \"HOST:PORT\", or a [[target.service]] whose {port} the load uses",
            )),
            None => Template::new("{host}:{port}"),
        };
        let mut vars = BTreeMap::new();
        for (name, spec) in &l.vars {
            let source = Source::parse(spec.get_ref(), dir).map_err(|e| {
                self.invalid(
                    spec.span(),
                    format!("variable `{name}`: {e:#}"),
                    "write uniform:LO:HI, zipf:LO:HI[:THETA], seq:LO:HI or csv:FILE:COLUMN",
                )
            })?;
            vars.insert(name.clone(), source);
        }
        let request = self.requests(l, driver, &vars)?;
        let positive = |v: &Option<Spanned<usize>>, default: usize, what: &str| match v {
            None => Ok(default),
            Some(v) if *v.get_ref() > 0 => Ok(*v.get_ref()),
            Some(v) => Err(self.invalid(
                v.span(),
                format!("{what} must be at least 1"),
                format!("write {what} = 1 or more"),
            )),
        };
        let clients = positive(&l.clients, 10, "clients")?;
        let pipeline = positive(&l.pipeline, 1, "pipeline")?;
        let threads = positive(&l.threads, 1, "threads")?;
        let instances = positive(&l.instances, 1, "instances")?;
        if instances > 1 && target.services.is_empty() {
            return Err(self.invalid(
                l.instances.as_ref().map_or(l.driver.span(), Spanned::span),
                "instances copies the target's services, and it starts none",
                "add a [[target.service]], or drop instances",
            ));
        }
        let duration = self.duration(l.duration.as_ref(), Duration::from_secs(10))?;
        let model = self.model(l, clients, duration)?;
        let load = Load {
            driver,
            address,
            request,
            model,
            warmup: self.duration(l.warmup.as_ref(), Duration::from_secs(1))?,
            timeout: self.duration(l.timeout.as_ref(), Duration::from_secs(5))?,
            pipeline,
            threads,
            interval: self.duration(l.interval.as_ref(), Duration::from_secs(1))?,
            instances,
        };
        self.check_limits(l, &load)?;
        Ok(load)
    }

    /// The load's request, or its mix (`request = [A, B]`, `mix = [9, 1]`),
    /// each parsed against `vars`; an error names the line of `request` or
    /// of `mix`.
    fn requests(
        &self,
        l: &RawLoad,
        driver: Driver,
        vars: &BTreeMap<String, Source>,
    ) -> Result<RequestMix, ExperimentError> {
        let (texts, span) = match (&l.request, driver.default_request("/")) {
            (Some(r), _) => (r.get_ref().texts(), r.span()),
            (None, Some(r)) => (vec![r], l.driver.span()),
            (None, None) => {
                return Err(self.invalid(
                    l.driver.span(),
                    "the exec driver needs a request (the command to run)",
                    "add request = \"{bin.client} --once\"-style command, without afterburner placeholders",
                ))
            }
        };
        let templates = texts
            .iter()
            .map(|text| {
                request_template(driver, text, vars).map_err(|e| {
                    let text = format!("{e:#}");
                    let (message, hint) = text
                        .split_once("\nhint: ")
                        .unwrap_or((text.as_str(), "define each {name} the request uses in vars"));
                    self.invalid(span.clone(), message.to_owned(), hint.to_owned())
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let weights = l.mix.as_ref().map(|m| m.get_ref().as_slice());
        driver.mix(templates, weights).map_err(|e| {
            let at = match (&e, &l.mix) {
                (MixError::Counts { .. } | MixError::Weight { .. }, Some(m)) => m.span(),
                _ => span.clone(),
            };
            self.invalid(at, e.to_string(), e.hint(false))
        })
    }

    /// The load's model (`model = "…"`, one of the load's `models!`) read
    /// from the keys it needs, a missing one named at `model`.
    fn model(
        &self,
        l: &RawLoad,
        clients: usize,
        duration: Duration,
    ) -> Result<Model, ExperimentError> {
        let model_span = l.model.as_ref().map_or(l.driver.span(), Spanned::span);
        let word = l.model.as_ref().map_or("closed", |m| m.get_ref().as_str());
        let pacing = Pacing::from_name(word).ok_or_else(|| {
            self.invalid(
                model_span.clone(),
                format!("unknown load model `{word}`"),
                format!("use model = {}", Pacing::names()),
            )
        })?;
        let sla = match &l.sla {
            Some(bound) => {
                let (percentile, max_ms) = parse_sla(bound.get_ref()).map_err(|e| {
                    let text = format!("{e:#}");
                    let (m, h) = text.split_once("\nhint: ").unwrap_or((text.as_str(), ""));
                    self.invalid(bound.span(), m.to_owned(), h.to_owned())
                })?;
                Some(Sla {
                    percentile,
                    max_ms,
                    start_rps: l.start_rate.as_ref().map_or(100.0, |r| *r.get_ref()),
                    probe: self.duration(l.probe.as_ref(), Duration::from_secs(3))?,
                    precision: 0.05,
                })
            }
            None => None,
        };
        let given = Given {
            clients,
            duration,
            requests: l.requests.as_ref().map(|r| *r.get_ref()),
            rate: l.rate.as_ref().map(|r| *r.get_ref()),
            sla,
        };
        pacing.read(&given).map_err(|r| {
            let at = match r.setting {
                "rate" => l.rate.as_ref().map(Spanned::span),
                _ => None,
            };
            self.invalid(at.unwrap_or(model_span), r.message, r.hint)
        })
    }

    /// Every number of the load within its range ([`crate::load::limits`]),
    /// the refusal pointing at the key that is out of it.
    fn check_limits(&self, l: &RawLoad, load: &Load) -> Result<(), ExperimentError> {
        crate::load::limits::check(&crate::load::limits::Settings {
            driver: load.driver,
            model: load.model.clone(),
            warmup: load.warmup,
            timeout: load.timeout,
            pipeline: load.pipeline,
            threads: load.threads,
            interval: load.interval,
            instances: load.instances,
        })
        .map_err(|r| {
            let span = match r.setting {
                "duration" => l.duration.as_ref().map(Spanned::span),
                "warmup" => l.warmup.as_ref().map(Spanned::span),
                "timeout" => l.timeout.as_ref().map(Spanned::span),
                "interval" => l.interval.as_ref().map(Spanned::span),
                "requests" => l.requests.as_ref().map(Spanned::span),
                "rate" => l.rate.as_ref().map(Spanned::span),
                "clients" => l.clients.as_ref().map(Spanned::span),
                "pipeline" => l.pipeline.as_ref().map(Spanned::span),
                "threads" => l.threads.as_ref().map(Spanned::span),
                "probe" => l.probe.as_ref().map(Spanned::span),
                "start_rate" => l.start_rate.as_ref().map(Spanned::span),
                _ => None,
            };
            self.invalid(span.unwrap_or(l.driver.span()), r.message, r.hint)
        })
    }
}
