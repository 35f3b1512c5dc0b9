//! Requests as templates: words with `{name}` placeholders fed by variables
//! (`uniform:LO:HI`, `zipf:LO:HI[:THETA]`, `seq:LO:HI`, `csv:FILE:COLUMN`),
//! expanded without allocating once the buffers have grown.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context as _, Result};

use afterburner_leaves::rng::Rng;

pub mod mix;
pub mod sql;

/// One request's words, in one buffer.
#[derive(Debug, Clone, Default)]
pub struct Words {
    buf: Vec<u8>,
    ends: Vec<usize>,
}

impl Words {
    pub fn push(&mut self, word: &[u8]) {
        self.buf.extend_from_slice(word);
        self.ends.push(self.buf.len());
    }
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.buf[start..self.ends[i]]
    }
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|i| self.get(i))
    }
    fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
    }
}

/// Where a variable's values come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Integers drawn uniformly from `lo..=hi`.
    Uniform { lo: u64, hi: u64 },
    /// Integers from `lo..=hi`, `lo` the most frequent (Gray et al.'s
    /// generator, as in YCSB; `theta` 0.99 by default). `zetan` is the
    /// normalising ζ(n, θ) over the n = hi − lo + 1 ranks, computed once
    /// when the source is read, before any load starts.
    Zipf {
        lo: u64,
        hi: u64,
        theta: f64,
        zetan: f64,
    },
    /// `lo, lo+1, …, hi`, then again from `lo`.
    Seq { lo: u64, hi: u64 },
    /// The values of a CSV column, in order, then again from the first.
    Values(Arc<Vec<String>>),
}

impl Source {
    /// Parse `KIND:ARGS`; relative CSV paths resolve against `dir`.
    pub fn parse(spec: &str, dir: &Path) -> Result<Self> {
        let parts: Vec<&str> = spec.split(':').collect();
        let int = |s: &str| -> Result<u64> {
            s.trim()
                .parse()
                .with_context(|| format!("`{s}` is not a non-negative integer"))
        };
        let range = || -> Result<(u64, u64)> {
            let (lo, hi) = (int(parts[1])?, int(parts[2])?);
            if lo > hi {
                bail!("the range {lo}..{hi} is empty");
            }
            if hi - lo == u64::MAX {
                bail!("the range {lo}..{hi} has more than 2^64 - 1 values\nhint: narrow it");
            }
            Ok((lo, hi))
        };
        Ok(match (parts[0], parts.len()) {
            ("uniform", 3) => {
                let (lo, hi) = range()?;
                Source::Uniform { lo, hi }
            }
            ("seq", 3) => {
                let (lo, hi) = range()?;
                Source::Seq { lo, hi }
            }
            ("zipf", 3 | 4) => {
                let (lo, hi) = range()?;
                let theta = match parts.get(3) {
                    Some(t) => t
                        .parse::<f64>()
                        .ok()
                        .filter(|t| *t > 0.0 && *t < 1.0)
                        .with_context(|| format!("zipf theta `{t}` must be in (0, 1)"))?,
                    None => 0.99,
                };
                Source::Zipf {
                    lo,
                    hi,
                    theta,
                    zetan: zeta(hi - lo + 1, theta),
                }
            }
            ("csv", 3) => {
                Source::Values(Arc::new(csv_column(&dir.join(parts[1]), parts[2])?))
            }
            _ => bail!(
                "`{spec}` is not a variable source\nhint: use uniform:LO:HI, zipf:LO:HI[:THETA], seq:LO:HI or csv:FILE:COLUMN"
            ),
        })
    }
}

/// The values of `column` (a header name) in a CSV file without quoting.
fn csv_column(path: &Path, column: &str) -> Result<Vec<String>> {
    let text = fs_err::read_to_string(path)?;
    let mut lines = text.lines();
    let header = lines
        .next()
        .with_context(|| format!("{} is empty", path.display()))?;
    let index = header
        .split(',')
        .position(|h| h.trim() == column)
        .with_context(|| {
            format!(
                "{}: no column `{column}` in the header `{header}`",
                path.display()
            )
        })?;
    let values: Vec<String> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').nth(index).unwrap_or("").trim().to_owned())
        .collect();
    if values.is_empty() {
        bail!("{}: column `{column}` has no values", path.display());
    }
    Ok(values)
}

#[derive(Debug, Clone)]
enum Segment {
    Literal(Vec<u8>),
    Var(usize),
}

/// A parsed request template.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    pub text: String,
    words: Vec<Vec<Segment>>,
    sources: Vec<Source>,
}

impl RequestTemplate {
    /// Split `text` into shell-quoted words and bind each `{name}` to `vars`.
    pub fn new(text: &str, vars: &BTreeMap<String, Source>) -> Result<Self> {
        let split = shell_words::split(text)
            .with_context(|| format!("request `{text}` has unbalanced quotes"))?;
        if split.is_empty() {
            bail!("the request is empty");
        }
        Self::from_words(text, &split, vars)
    }

    /// A SQL request: the words are the values of its `{name}`
    /// placeholders, which the statement takes as `$1`, `$2`, …
    pub fn sql(text: &str, vars: &BTreeMap<String, Source>) -> Result<Self> {
        if text.trim().is_empty() {
            bail!("the request is empty");
        }
        let sql = sql::Sql::parse(text, sql::Style::Numbered);
        let words: Vec<String> = sql.params.iter().map(|p| format!("{{{p}}}")).collect();
        Self::from_words(text, &words, vars)
    }

    fn from_words(text: &str, split: &[String], vars: &BTreeMap<String, Source>) -> Result<Self> {
        let names: Vec<&String> = vars.keys().collect();
        let mut words = Vec::new();
        for word in split {
            let mut segments = Vec::new();
            let mut literal = Vec::new();
            let mut rest = word.as_str();
            while let Some(open) = rest.find(['{', '}']) {
                literal.extend_from_slice(&rest.as_bytes()[..open]);
                // `{{` and `}}` are a literal brace (a JSON body).
                let brace = &rest[open..=open];
                if rest[open + 1..].starts_with(brace) {
                    literal.extend_from_slice(brace.as_bytes());
                    rest = &rest[open + 2..];
                    continue;
                }
                if brace == "}" {
                    bail!("request `{text}`: `}}` without an opening `{{`\nhint: write a literal brace as `{{{{` or `}}}}`");
                }
                let close = rest[open..]
                    .find('}')
                    .map(|c| open + c)
                    .with_context(|| format!("request `{text}`: `{{` without a closing `}}`\nhint: write a literal brace as `{{{{` or `}}}}`"))?;
                if !literal.is_empty() {
                    segments.push(Segment::Literal(std::mem::take(&mut literal)));
                }
                let name = &rest[open + 1..close];
                let index = names.iter().position(|n| *n == name).with_context(|| {
                    let mut known = String::new();
                    for n in &names {
                        let _ = write!(known, " {n}");
                    }
                    format!(
                        "request `{text}` uses `{{{name}}}`, which is not a variable\nhint: define it (e.g. {name} = \"uniform:1:1000\"); defined:{}",
                        if known.is_empty() { " none".to_owned() } else { known }
                    )
                })?;
                segments.push(Segment::Var(index));
                rest = &rest[close + 1..];
            }
            literal.extend_from_slice(rest.as_bytes());
            if !literal.is_empty() {
                segments.push(Segment::Literal(literal));
            }
            words.push(segments);
        }
        Ok(Self {
            text: text.to_owned(),
            words,
            sources: vars.values().cloned().collect(),
        })
    }

    /// A generator for one client thread: `index` of `count` threads, so
    /// sequences interleave instead of repeating.
    pub fn generator(&self, seed: u64, index: u64, count: u64) -> Generator {
        Generator::new(std::slice::from_ref(self), &[1], seed, index, count)
    }
}

/// Expands a template again and again; for a mix, first draws which.
#[derive(Debug, Clone)]
pub struct Generator {
    /// Each template's words (all bound to the same variables).
    templates: Vec<Vec<Vec<Segment>>>,
    sources: Vec<Source>,
    /// A mix's running sums of the weights; empty for one template, which
    /// draws nothing for its choice (a load of one request sends the
    /// sequence it always sent).
    cumulative: Vec<u64>,
    /// The template of the last request.
    chosen: usize,
    rng: Rng,
    position: Vec<u64>,
    stride: u64,
    zipf: Vec<Option<Zipf>>,
    words: Words,
    /// This request's value of each variable.
    drawn: Vec<u64>,
}

impl Generator {
    /// `templates` drawn by `weights` (as many, each at least 1; the
    /// templates parsed against the same variables), for thread `index`
    /// of `count`.
    pub(super) fn new(
        templates: &[RequestTemplate],
        weights: &[u32],
        seed: u64,
        index: u64,
        count: u64,
    ) -> Self {
        let sources = templates
            .first()
            .map(|t| t.sources.clone())
            .unwrap_or_default();
        let cumulative = if templates.len() > 1 {
            weights
                .iter()
                .scan(0u64, |sum, w| {
                    *sum += u64::from(*w);
                    Some(*sum)
                })
                .collect()
        } else {
            Vec::new()
        };
        Self {
            templates: templates.iter().map(|t| t.words.clone()).collect(),
            rng: Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            position: vec![index; sources.len()],
            stride: count.max(1),
            zipf: sources
                .iter()
                .map(|s| match s {
                    Source::Zipf {
                        lo,
                        hi,
                        theta,
                        zetan,
                    } => Some(Zipf::new(hi - lo + 1, *theta, *zetan)),
                    _ => None,
                })
                .collect(),
            drawn: vec![0; sources.len()],
            sources,
            cumulative,
            chosen: 0,
            words: Words::default(),
        }
    }

    /// Which template the last request was (its index in the mix).
    pub fn chosen(&self) -> usize {
        self.chosen
    }

    /// The next request's words.
    pub fn next_request(&mut self) -> &Words {
        if let Some(&total) = self.cumulative.last() {
            let pick = self.rng.below(usize::try_from(total).unwrap_or(usize::MAX)) as u64;
            self.chosen = self.cumulative.partition_point(|&c| c <= pick);
        }
        // One draw per variable per request, however often it appears.
        for (i, source) in self.sources.iter().enumerate() {
            let position = self.position[i];
            self.position[i] += self.stride;
            self.drawn[i] = match source {
                Source::Uniform { lo, hi } => {
                    let span = usize::try_from(hi - lo + 1).unwrap_or(usize::MAX);
                    lo + self.rng.below(span) as u64
                }
                Source::Zipf { lo, .. } => {
                    let zipf = self.zipf[i]
                        .as_ref()
                        .expect("invariant: built with the source");
                    lo + zipf.draw(self.rng.next_f64()) - 1
                }
                Source::Seq { lo, hi } => lo + position % (hi - lo + 1),
                Source::Values(values) => position % values.len() as u64,
            };
        }
        self.words.clear();
        for segments in &self.templates[self.chosen] {
            for segment in segments {
                match segment {
                    Segment::Literal(bytes) => self.words.buf.extend_from_slice(bytes),
                    Segment::Var(i) => {
                        if let Source::Values(values) = &self.sources[*i] {
                            let index = usize::try_from(self.drawn[*i]).unwrap_or(0);
                            self.words.buf.extend_from_slice(values[index].as_bytes());
                        } else {
                            push_decimal(&mut self.words.buf, self.drawn[*i]);
                        }
                    }
                }
            }
            self.words.ends.push(self.words.buf.len());
        }
        &self.words
    }
}

/// Zipfian ranks 1..=n (J. Gray et al., "Quickly generating billion-record
/// synthetic databases", SIGMOD 1994), as YCSB draws them.
#[derive(Debug, Clone)]
struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

/// Below this many ranks ζ(n, θ) is summed term by term.
const ZETA_EXACT_UP_TO: u64 = 10_000;
/// The Euler–Maclaurin tail starts after this many exact terms.
const ZETA_HEAD: u64 = 1_000;

/// The generalised harmonic number ζ(n, θ) = Σ_{i=1}^{n} i^−θ, θ in (0, 1):
/// exact up to 10,000 terms; above, the first 999 terms exactly and the
/// rest by the Euler–Maclaurin formula to the B₆ term,
/// `Σ_{i=m}^{n} f(i) = ∫_m^n f + (f(m) + f(n))/2 + Σ_k B₂ₖ/(2k)!·(f⁽²ᵏ⁻¹⁾(n) − f⁽²ᵏ⁻¹⁾(m))`,
/// whose remainder at m = 1000 is below 10⁻²⁰ of the sum: O(1) work for
/// any n, where the sum was O(n) (10¹⁰ keys: minutes).
pub fn zeta(n: u64, theta: f64) -> f64 {
    let f = |x: f64| x.powf(-theta);
    if n <= ZETA_EXACT_UP_TO {
        return (1..=n).map(|i| f(i as f64)).sum();
    }
    let head: f64 = (1..ZETA_HEAD).map(|i| f(i as f64)).sum();
    let (m, n) = (ZETA_HEAD as f64, n as f64);
    let integral = (n.powf(1.0 - theta) - m.powf(1.0 - theta)) / (1.0 - theta);
    // Odd derivatives of x^−θ: f' = −θ x^(−θ−1), f''' = −θ(θ+1)(θ+2) x^(−θ−3), …
    let derivative = |order: i32, x: f64| -> f64 {
        let coefficient: f64 = (0..order).map(|k| -(theta + f64::from(k))).product();
        coefficient * x.powf(-theta - f64::from(order))
    };
    let corrections = [(1, 1.0 / 12.0), (3, -1.0 / 720.0), (5, 1.0 / 30_240.0)]
        .iter()
        .map(|&(order, b)| b * (derivative(order, n) - derivative(order, m)))
        .sum::<f64>();
    head + integral + f64::midpoint(f(m), f(n)) + corrections
}

impl Zipf {
    fn new(n: u64, theta: f64, zetan: f64) -> Self {
        let zeta_two = zeta(2.min(n), theta);
        let eta = if n > 1 {
            (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta_two / zetan)
        } else {
            0.0
        };
        Self {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta,
        }
    }

    /// A rank from a uniform draw `u` in [0, 1).
    fn draw(&self, u: f64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 || self.n == 1 {
            return 1;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 2;
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // in 1..=n
        let rank = 1 + (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        rank.min(self.n)
    }
}

/// Append `n` in decimal, without the formatting machinery (it runs for
/// every request: lengths in RESP and memcached, numbers drawn for
/// variables).
pub fn push_decimal(out: &mut Vec<u8>, n: u64) {
    let mut n = n;
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + u8::try_from(n % 10).unwrap_or(0);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_as_display_writes_them() {
        for n in [0u64, 7, 10, 99_999, u64::MAX] {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}").as_bytes());
        }
    }

    fn vars(list: &[(&str, &str)]) -> BTreeMap<String, Source> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), Source::parse(v, Path::new(".")).unwrap()))
            .collect()
    }

    fn strings(words: &Words) -> Vec<String> {
        words
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect()
    }

    #[test]
    fn expands_variables_inside_words() {
        let t = RequestTemplate::new(
            "SET 'key {k}' v{n}",
            &vars(&[("k", "seq:1:3"), ("n", "seq:7:7")]),
        )
        .unwrap();
        let mut g = t.generator(1, 0, 1);
        assert_eq!(strings(g.next_request()), ["SET", "key 1", "v7"]);
        assert_eq!(strings(g.next_request()), ["SET", "key 2", "v7"]);
        assert_eq!(strings(g.next_request()), ["SET", "key 3", "v7"]);
        assert_eq!(strings(g.next_request()), ["SET", "key 1", "v7"]);
    }

    #[test]
    fn doubled_braces_are_literal_braces_for_json_bodies() {
        let t = RequestTemplate::new(r#"POST /items '{{"id": {k}}}'"#, &vars(&[("k", "seq:7:7")]))
            .unwrap();
        let mut g = t.generator(1, 0, 1);
        assert_eq!(
            strings(g.next_request()),
            ["POST", "/items", r#"{"id": 7}"#]
        );
        let lone = RequestTemplate::new("GET }", &vars(&[])).unwrap_err();
        assert!(format!("{lone:#}").contains("literal brace"), "{lone:#}");
    }

    #[test]
    fn a_variable_used_twice_has_one_value_per_request() {
        let t = RequestTemplate::new("SET k{k} v{k}", &vars(&[("k", "seq:1:9")])).unwrap();
        let mut g = t.generator(1, 0, 1);
        assert_eq!(strings(g.next_request()), ["SET", "k1", "v1"]);
        assert_eq!(strings(g.next_request()), ["SET", "k2", "v2"]);
    }

    #[test]
    fn threads_interleave_a_sequence() {
        let t = RequestTemplate::new("GET {k}", &vars(&[("k", "seq:0:9")])).unwrap();
        let mut a = t.generator(1, 0, 2);
        let mut b = t.generator(1, 1, 2);
        assert_eq!(strings(a.next_request())[1], "0");
        assert_eq!(strings(b.next_request())[1], "1");
        assert_eq!(strings(a.next_request())[1], "2");
    }

    #[test]
    fn uniform_draws_stay_in_range_and_cover_it() {
        let t = RequestTemplate::new("GET {k}", &vars(&[("k", "uniform:5:8")])).unwrap();
        let mut g = t.generator(42, 0, 1);
        let mut seen = [0u32; 4];
        for _ in 0..4000 {
            let n: u64 = strings(g.next_request())[1].parse().unwrap();
            seen[usize::try_from(n - 5).unwrap()] += 1;
        }
        assert!(seen.iter().all(|c| (800..1200).contains(c)), "{seen:?}");
    }

    #[test]
    fn zipf_favours_the_first_keys() {
        let z = Zipf::new(1000, 0.99, zeta(1000, 0.99));
        let mut rng = Rng::new(7);
        let mut counts = vec![0u32; 1001];
        for _ in 0..100_000 {
            let r = z.draw(rng.next_f64());
            assert!((1..=1000).contains(&r));
            counts[usize::try_from(r).unwrap()] += 1;
        }
        // P(rank 1) = 1/zeta(1000, 0.99) ≈ 0.133.
        let p1 = f64::from(counts[1]) / 100_000.0;
        assert!((0.12..0.15).contains(&p1), "{p1}");
        assert!(counts[1] > counts[2] && counts[2] > counts[10] && counts[10] > counts[500]);
    }

    /// Euler–Maclaurin against the term-by-term sum at 10⁶ (the issue's
    /// reference; relative error < 10⁻⁹), for several θ.
    #[test]
    fn zeta_matches_the_exact_sum_at_a_million() {
        for theta in [0.01, 0.5, 0.8, 0.99] {
            let n = 1_000_000_u64;
            let exact: f64 = (1..=n).map(|i| (i as f64).powf(-theta)).sum();
            let fast = zeta(n, theta);
            assert!(
                ((fast - exact) / exact).abs() < 1e-9,
                "theta {theta}: {fast} vs {exact}"
            );
        }
        // Just above the exact threshold, and the small cases.
        let exact: f64 = (1..=10_001_u64).map(|i| (i as f64).powf(-0.99)).sum();
        assert!(((zeta(10_001, 0.99) - exact) / exact).abs() < 1e-12);
        assert!((zeta(1, 0.5) - 1.0).abs() < 1e-15);
        assert!((zeta(2, 0.5) - (1.0 + 0.5_f64.sqrt())).abs() < 1e-15);
    }

    /// 10¹⁰ keys: the source is read without summing 10¹⁰ terms, and its
    /// draws stay in the range, favouring the first keys.
    #[test]
    fn zipf_over_ten_billion_keys_is_read_at_once() {
        let source = Source::parse("zipf:1:10000000000", Path::new(".")).unwrap();
        let Source::Zipf { zetan, .. } = source else {
            panic!("{source:?}")
        };
        // ζ(10¹⁰, 0.99) ≈ ζ(0.99) … between the 10⁶ sum and ln-like growth.
        assert!(zetan > zeta(1_000_000, 0.99) && zetan < 40.0, "{zetan}");
        let z = Zipf::new(10_000_000_000, 0.99, zetan);
        let mut rng = Rng::new(3);
        let draws: Vec<u64> = (0..10_000).map(|_| z.draw(rng.next_f64())).collect();
        assert!(draws.iter().all(|r| (1..=10_000_000_000).contains(r)));
        let ones = draws.iter().filter(|r| **r == 1).count();
        // P(rank 1) = 1/ζ ≈ 0.04.
        assert!((250..=600).contains(&ones), "{ones}");
        assert!(Source::parse("uniform:0:18446744073709551615", Path::new(".")).is_err());
    }

    #[test]
    fn unknown_variables_and_bad_sources_are_named() {
        let err = RequestTemplate::new("GET {key}", &vars(&[("k", "seq:1:2")])).unwrap_err();
        assert!(format!("{err:#}").contains("`{key}`"), "{err:#}");
        let err = Source::parse("normal:1:2", Path::new(".")).unwrap_err();
        assert!(format!("{err:#}").contains("zipf:LO:HI"), "{err:#}");
        assert!(Source::parse("uniform:9:1", Path::new(".")).is_err());
    }
}
