//! `afterburner load URL`: ad-hoc load on a running server, like wrk2 or oha,
//! with any driver and any model.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use clap::Args;

use super::drivers::{parse_url, Driver};
use super::engine::recorder::{feedsim_csv, series_csv, Summary};
use super::models::sla::Sla;
use super::models::{Given, Model, Pacing};
use super::refusal::Refusal;
use super::request::mix::{parse_weights, RequestMix};
use super::run::{run, search_sla};
use super::spec::LoadSpec;
use super::{request_template, sources};
use afterburner_leaves::units::parse_duration;

/// Each driver's request syntax, with an example, from the drivers' own
/// declarations; `load --help` prints it and the README has the same table.
pub use super::drivers::request_syntax;

/// `load --help`'s closing text: the models, then each driver's request
/// syntax.
pub fn help() -> String {
    super::models::help() + &request_syntax()
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The server: each driver's URL form (listed from the drivers).
    #[arg(help = super::drivers::url_forms())]
    pub url: String,
    /// The request, with {NAME} placeholders (default: PING, `get key`, GET PATH); repeat it for a mix.
    #[arg(short, long)]
    pub request: Vec<String>,
    /// Weights of the -r requests in their order, e.g. 9:1 for nine of the first to one of the second (default: equal).
    #[arg(long, value_name = "W:W…")]
    pub mix: Option<String>,
    /// A placeholder's source: NAME=uniform:LO:HI, zipf:LO:HI[:THETA], seq:LO:HI, csv:FILE:COLUMN.
    #[arg(long = "var", value_name = "NAME=SOURCE")]
    pub vars: Vec<String>,
    /// Concurrent connections (clients).
    #[arg(short, long, default_value_t = 10)]
    pub clients: usize,
    /// How long to send, after the warmup.
    #[arg(short, long, default_value = "10s", value_parser = duration)]
    pub duration: Duration,
    /// Send this many requests instead of running for a duration (closed loop).
    #[arg(short = 'n', long)]
    pub requests: Option<u64>,
    /// The load model (default: sla with --sla, rate with -R, else closed); the models are listed below.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Open loop at this many requests/s; latency counts from each request's intended start.
    #[arg(short = 'R', long)]
    pub rate: Option<f64>,
    /// Search the highest rate that keeps a percentile under a bound, e.g. "p95<5ms", then confirm it.
    #[arg(long)]
    pub sla: Option<String>,
    /// Length of each probe of the sla search.
    #[arg(long, default_value = "3s", value_parser = duration)]
    pub probe: Duration,
    /// First rate of the sla search, requests/s.
    #[arg(long, default_value_t = 100.0)]
    pub start_rate: f64,
    /// Sent but not counted, before the measured period.
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub warmup: Duration,
    /// A request unanswered this long counts as a timeout.
    #[arg(long, default_value = "5s", value_parser = duration)]
    pub timeout: Duration,
    /// Requests in flight per connection.
    #[arg(short = 'P', long, default_value_t = 1)]
    pub pipeline: usize,
    /// Event-loop threads.
    #[arg(short, long, default_value_t = 1)]
    pub threads: usize,
    /// Time-series interval.
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub interval: Duration,
    /// Seed of the variables' draws and of a model's random gaps.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the per-interval time series here as CSV.
    #[arg(long)]
    pub series: Option<PathBuf>,
    /// Write the per-interval series here in FeedSim's CSV columns
    /// (`duration_secs`, `total_queries`, …, `rx_MBps`, …, `99.9p_ms`).
    #[arg(long, value_name = "FILE")]
    pub feedsim: Option<PathBuf>,
    /// Write the summary (and time series) here as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

fn duration(text: &str) -> Result<Duration, String> {
    parse_duration(text).ok_or_else(|| format!("`{text}` is not a duration (e.g. 500ms, 10s, 2m)"))
}

/// Parse `pXX<BOUND` (also `<=`), e.g. `p95<5ms`, `p99.9<=500ms`.
pub fn parse_sla(text: &str) -> Result<(f64, f64)> {
    let hint = "write the bound like p95<5ms or p99.9<=500ms";
    let (left, right) = text
        .split_once("<=")
        .or_else(|| text.split_once('<'))
        .with_context(|| format!("`{text}` is not a latency bound\nhint: {hint}"))?;
    let percentile: f64 = left
        .trim()
        .strip_prefix('p')
        .and_then(|p| p.parse().ok())
        .with_context(|| format!("`{left}` is not a percentile\nhint: {hint}"))?;
    if !Sla::PERCENTILES.contains(&percentile) {
        bail!("percentile {percentile} is not one of p50, p90, p95, p99, p99.9\nhint: {hint}");
    }
    let bound = parse_duration(right)
        .with_context(|| format!("`{right}` is not a duration\nhint: {hint}"))?;
    Ok((percentile, bound.as_secs_f64() * 1000.0))
}

/// The load the arguments describe, every number checked against its range
/// ([`super::limits`]) before anything connects.
pub fn prepare(args: &LoadArgs) -> Result<LoadSpec> {
    let (driver, address, path) = parse_url(&args.url)?;
    let texts = match (args.request.as_slice(), driver.default_request(&path)) {
        ([], Some(r)) => vec![r],
        ([], None) => bail!("the exec driver needs --request COMMAND"),
        (given, _) => given.to_vec(),
    };
    let weights = args
        .mix
        .as_deref()
        .map(parse_weights)
        .transpose()
        .map_err(|e| anyhow::anyhow!(e))?;
    let vars = args
        .vars
        .iter()
        .map(|v| {
            v.split_once('=')
                .map(|(k, s)| (k.to_owned(), s.to_owned()))
                .with_context(|| format!("--var `{v}`: write NAME=SOURCE, e.g. key=uniform:1:1000"))
        })
        .collect::<Result<BTreeMap<_, _>>>()?;
    let cwd = std::env::current_dir()?;
    let refused =
        |r: super::limits::Refusal| anyhow::anyhow!("--{}: {r}", r.setting.replace('_', "-"));
    let model = model_of(args).map_err(refused)?;
    super::limits::check(&super::limits::Settings {
        driver,
        model: model.clone(),
        warmup: args.warmup,
        timeout: args.timeout,
        pipeline: args.pipeline,
        threads: args.threads,
        interval: args.interval,
        instances: 1,
    })
    .map_err(refused)?;
    let spec = LoadSpec {
        driver,
        address,
        requests: requests(driver, &texts, weights.as_deref(), &vars, &cwd)?,
        model,
        warmup: args.warmup,
        timeout: args.timeout,
        depth: args.pipeline,
        threads: args.threads,
        interval: args.interval,
        seed: args.seed,
        cwd: Some(cwd),
    };
    Ok(spec)
}

/// The requests of the load: each -r parsed against the variables, drawn by
/// the --mix weights.
fn requests(
    driver: Driver,
    texts: &[String],
    weights: Option<&[i64]>,
    vars: &BTreeMap<String, String>,
    cwd: &std::path::Path,
) -> Result<RequestMix> {
    let hinted = |e: anyhow::Error| {
        let text = format!("{e:#}");
        if text.contains("hint:") {
            e
        } else {
            anyhow::anyhow!(
                "{text}\nhint: give each --var as NAME=SOURCE: uniform:LO:HI, zipf:LO:HI[:THETA], seq:LO:HI or csv:FILE:COLUMN (a readable file)"
            )
        }
    };
    let sources = sources(vars, cwd).map_err(hinted)?;
    let templates = texts
        .iter()
        .map(|text| request_template(driver, text, &sources).map_err(hinted))
        .collect::<Result<Vec<_>>>()?;
    driver
        .mix(templates, weights)
        .map_err(|e| anyhow::anyhow!("--mix: {e}\nhint: {}", e.hint(true)))
}

/// The load model the arguments ask for: `--model`'s, else the one the
/// flags given imply.
fn model_of(args: &LoadArgs) -> Result<Model, Refusal> {
    let implied = if args.sla.is_some() {
        Pacing::SLA
    } else if args.rate.is_some() {
        Pacing::RATE
    } else {
        Pacing::CLOSED
    };
    let pacing = match args.model.as_deref() {
        None => implied,
        Some(name) => Pacing::from_name(name).ok_or_else(|| Refusal {
            setting: "model",
            message: format!("unknown load model `{name}`"),
            hint: format!("use {}", Pacing::names()),
        })?,
    };
    let sla = match &args.sla {
        Some(text) => {
            let (percentile, max_ms) = parse_sla(text).map_err(|e| {
                let text = format!("{e:#}");
                let (message, hint) = text.split_once("\nhint: ").unwrap_or((&text, ""));
                Refusal {
                    setting: "sla",
                    message: message.to_owned(),
                    hint: hint.to_owned(),
                }
            })?;
            Some(Sla {
                percentile,
                max_ms,
                start_rps: args.start_rate,
                probe: args.probe,
                precision: 0.05,
            })
        }
        None => None,
    };
    pacing.read(&Given {
        clients: args.clients,
        duration: args.duration,
        requests: args.requests,
        rate: args.rate,
        sla,
    })
}

pub fn main(args: &LoadArgs) -> Result<()> {
    let spec = prepare(args)?;
    let outcome = if let Some(bound) = &spec.model.sla {
        let percentile = bound.percentile;
        let max_ms = bound.max_ms;
        let found = search_sla(
            &spec,
            bound,
            |p| {
                eprintln!(
                "probe {:>10.1} req/s: achieved {:>10.1}, p{} {:.3} ms, errors {}, timeouts {} -> {}",
                p.requested_rps,
                p.achieved_rps,
                percentile,
                p.latency_ms,
                p.errors,
                p.timeouts,
                if p.met { "met" } else { "broken" }
            );
            },
            None,
        )?;
        afterburner_leaves::stdout::line(format_args!(
            "highest rate with p{percentile} <= {max_ms} ms: {:.1} requests/s ({})",
            found.rate_rps,
            if found.confirmed {
                "confirmed by the final run"
            } else {
                "NOT confirmed by the final run"
            }
        ))?;
        found.confirm
    } else {
        run(&spec)?
    };
    if let Some(path) = &args.feedsim {
        fs_err::write(path, feedsim_csv(&outcome.series))?;
    }
    if let Some(path) = &args.series {
        fs_err::write(path, series_csv(&outcome.series))?;
    }
    if let Some(path) = &args.json {
        fs_err::write(path, serde_json::to_vec_pretty(&outcome)?)?;
    }
    let s = &outcome.summary;
    if s.requests == 0 {
        bail!(
            "no successful requests to {}: {} errors, {} timeouts in {:.2} s{}\nhint: is the server up, and does it speak the {} protocol at that address?",
            args.url,
            s.errors,
            s.timeouts,
            s.duration_s,
            s.first_error
                .as_deref()
                .map(|e| format!("; first error: {e}"))
                .unwrap_or_default(),
            spec.driver.name()
        );
    }
    afterburner_leaves::stdout::print(format_args!("{}", render(&args.url, &spec, s)))?;
    Ok(())
}

/// A wrk-like summary.
pub fn render(url: &str, spec: &LoadSpec, s: &Summary) -> String {
    let mut out = String::new();
    let model = spec.model.describe(s.requested_rps);
    let _ = writeln!(out, "{url}: {}, {model}", spec.requests.describe());
    let _ = writeln!(
        out,
        "  {} requests in {:.2} s: {:.1} requests/s{}",
        s.requests,
        s.duration_s,
        s.achieved_rps,
        s.requested_rps
            .map(|r| format!(" (asked {r:.1})"))
            .unwrap_or_default()
    );
    let attempted = s.requests + s.errors + s.timeouts;
    let share = |n: u64| n as f64 * 100.0 / attempted.max(1) as f64;
    let kinds: Vec<String> = s
        .errors_by_kind
        .iter()
        .map(|(kind, n)| format!("{} {n}", kind.name()))
        .collect();
    let _ = writeln!(
        out,
        "  errors {} ({:.2}%{}), timeouts {} ({:.2}%{}) of {attempted} attempted",
        s.errors,
        share(s.errors),
        if kinds.is_empty() {
            String::new()
        } else {
            format!(": {}", kinds.join(", "))
        },
        s.timeouts,
        share(s.timeouts),
        if s.timeouts > 0 {
            format!(
                ", in the latency at the {} ms timeout",
                spec.timeout.as_millis()
            )
        } else {
            String::new()
        },
    );
    if let (Some(hits), Some(misses), Some(rate)) = (s.hits, s.misses, s.hit_rate) {
        let _ = writeln!(
            out,
            "  keys looked up: {hits} hits, {misses} misses, hit rate {:.1}%",
            rate * 100.0
        );
    }
    if !s.mix.is_empty() {
        let sent: u64 = s
            .mix
            .iter()
            .map(|m| m.requests + m.errors + m.timeouts)
            .sum();
        for m in &s.mix {
            let _ = writeln!(
                out,
                "  `{}` ×{}: {} requests ({:.1}%), errors {}, timeouts {}",
                m.request,
                m.weight,
                m.requests,
                (m.requests + m.errors + m.timeouts) as f64 * 100.0 / sent.max(1) as f64,
                m.errors,
                m.timeouts
            );
        }
    }
    if let Some(e) = &s.first_error {
        let _ = writeln!(out, "  first error: {e}");
    }
    let l = &s.latency_ms;
    let _ = writeln!(
        out,
        "  latency ms: min {:.3}  mean {:.3}  p50 {:.3}  p90 {:.3}  p95 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
        l.min, l.mean, l.p50, l.p90, l.p95, l.p99, l.p999, l.max
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_latency_bounds() {
        assert_eq!(parse_sla("p95<5ms").unwrap(), (95.0, 5.0));
        assert_eq!(parse_sla("p99.9<=0.5s").unwrap(), (99.9, 500.0));
        assert!(format!("{:#}", parse_sla("p97<5ms").unwrap_err()).contains("p99.9"));
        assert!(parse_sla("95<5ms").is_err());
        assert!(parse_sla("p95<fast").is_err());
    }
}

/// Random argument sets for `afterburner load`, at and beyond every bound:
/// parsing and checking never panic, and every refusal says what to do.
#[cfg(test)]
mod property {
    use clap::Parser;

    use afterburner_leaves::rng::Rng;

    /// `afterburner load` as the command line parses it.
    #[derive(Parser)]
    #[command(name = "afterburner")]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(clap::Subcommand)]
    enum Command {
        Load(super::LoadArgs),
    }

    const DURATIONS: [&str; 12] = [
        "0s",
        "1ms",
        "0.5ms",
        "1s",
        "10s",
        "7d",
        "168h",
        "169h",
        "99999999999s",
        "1e400s",
        "-1s",
        "soon",
    ];
    const COUNTS: [&str; 10] = [
        "0",
        "1",
        "2",
        "1024",
        "1025",
        "100000",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "x",
    ];
    const RATES: [&str; 9] = [
        "0", "-5", "0.0001", "1", "20000", "1e8", "1e9", "inf", "NaN",
    ];
    const VARS: [&str; 9] = [
        "k=uniform:1:1000",
        "k=uniform:9:1",
        "k=uniform:0:18446744073709551615",
        "k=zipf:1:10000000000",
        "k=zipf:5:5:0.5",
        "k=zipf:1:10:1.5",
        "k=seq:0:0",
        "k=csv:/nonexistent:a",
        "k",
    ];
    const URLS: [&str; 6] = [
        "redis://127.0.0.1:1",
        "memcached://127.0.0.1:1",
        "http://127.0.0.1:1/",
        "postgres://u@127.0.0.1:1/db",
        "exec",
        "gopher://x",
    ];

    fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
        from[rng.below(from.len())]
    }

    #[test]
    fn ten_thousand_argument_sets_never_panic_and_refusals_explain() {
        let mut rng = Rng::new(20_261_125);
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..10_000 {
            let mut args = vec!["afterburner", "load", pick(&mut rng, &URLS)];
            args.extend(["-r", "GET key:{k}"]);
            for (flag, values) in [
                ("-d", &DURATIONS[..]),
                ("--interval", &DURATIONS[..]),
                ("--timeout", &DURATIONS[..]),
                ("--warmup", &DURATIONS[..]),
                ("--probe", &DURATIONS[..]),
                ("-c", &COUNTS[..]),
                ("-n", &COUNTS[..]),
                ("-P", &COUNTS[..]),
                ("-t", &COUNTS[..]),
                ("-R", &RATES[..]),
                ("--start-rate", &RATES[..]),
                ("--var", &VARS[..]),
            ] {
                if rng.below(3) == 0 {
                    args.extend([flag, pick(&mut rng, values)]);
                }
            }
            if rng.below(8) == 0 {
                args.extend(["--sla", "p99<5ms"]);
            }
            let outcome = std::panic::catch_unwind(|| {
                Cli::try_parse_from(&args).map(|cli| match cli.command {
                    Command::Load(a) => super::prepare(&a).map(drop),
                })
            });
            let Ok(parsed) = outcome else {
                panic!("panicked on {args:?}");
            };
            match parsed {
                // clap's own refusal names the flag and the value.
                Err(e) => {
                    refused += 1;
                    assert!(e.to_string().contains("error:"), "{args:?}: {e}");
                }
                Ok(Err(e)) => {
                    refused += 1;
                    let text = format!("{e:#}");
                    assert!(
                        text.contains("hint:") || text.contains("write ") || text.contains("use "),
                        "{args:?}: a refusal without a way out: {text}"
                    );
                }
                Ok(Ok(())) => accepted += 1,
            }
        }
        // Both kinds occur: the generator reaches inside and outside.
        assert!(
            accepted > 100 && refused > 1000,
            "{accepted} accepted, {refused} refused"
        );
    }
}
