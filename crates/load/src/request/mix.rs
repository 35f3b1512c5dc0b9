//! A load's requests: one template, or several drawn by weight, as
//! memtier's `--ratio` or a wrk script's choice of request sends them
//! (memaslap's 9:1 of gets and sets): `-r A -r B --mix 9:1` on the
//! command line, `request = [A, B]` with `mix = [9, 1]` in an experiment.
//! Each request draws its template from the load's generator
//! ([`super::Generator`]), so the same seed sends the same
//! sequence.

use serde::ser::SerializeSeq as _;
use serde::{Serialize, Serializer};

use super::{Generator, RequestTemplate};

/// The most requests one mix holds.
pub const MAX_TEMPLATES: usize = 1024;
/// The largest weight of one request of a mix.
pub const MAX_WEIGHT: i64 = 1_000_000;

/// The requests of a load and the weight of each (1 each by default).
#[derive(Debug, Clone)]
pub struct RequestMix {
    templates: Vec<RequestTemplate>,
    weights: Vec<u32>,
}

/// Why requests and weights make no mix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MixError {
    #[error("the load has no request")]
    Empty,
    #[error("{weights} weights for {requests} requests")]
    Counts { requests: usize, weights: usize },
    #[error("weight {value}, the {} of the mix, is not a whole number from 1 to {MAX_WEIGHT}", ordinal(*index))]
    Weight { index: usize, value: i64 },
    #[error("a mix of {0} requests is more than {MAX_TEMPLATES}")]
    TooMany(usize),
    #[error("the {driver} driver prepares one statement per client, so it sends one request, not a mix of {requests}")]
    Unsupported {
        driver: &'static str,
        requests: usize,
    },
}

impl MixError {
    /// What to write instead, for the command line (`cli`) or the
    /// experiment file.
    pub fn hint(&self, cli: bool) -> String {
        match (self, cli) {
            (MixError::Empty, _) => "give a request".to_owned(),
            (MixError::Counts { requests, .. }, true) => format!(
                "give --mix one weight per -r, in their order: {requests} weights, e.g. --mix {}",
                example(*requests)
            ),
            (MixError::Counts { requests, .. }, false) => format!(
                "give mix one weight per request, in their order: {requests} weights, e.g. mix = [{}]",
                example(*requests).replace(':', ", ")
            ),
            (MixError::Weight { .. }, _) => {
                "weights are relative: 9 and 1 send nine of the first for one of the second"
                    .to_owned()
            }
            (MixError::TooMany(_), _) => "merge requests that differ only in a value into one with a {variable}".to_owned(),
            (MixError::Unsupported { .. }, _) => {
                "run one load per statement (a workload each), or put the statements in one that the server runs (a stored procedure)"
                    .to_owned()
            }
        }
    }
}

fn ordinal(index: usize) -> String {
    let n = index + 1;
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// `9:1:1:…`, `count` weights.
fn example(count: usize) -> String {
    let mut weights = vec!["1"; count.max(1)];
    weights[0] = "9";
    weights.join(":")
}

/// Weights written `9:1` (the command line's `--mix`).
pub fn parse_weights(text: &str) -> Result<Vec<i64>, String> {
    text.split(':')
        .map(|w| {
            w.trim().parse::<i64>().map_err(|_| {
                format!("--mix `{text}`: `{w}` is not a whole number\nhint: write the weights in the order of the -r requests, e.g. --mix 9:1")
            })
        })
        .collect()
}

impl RequestMix {
    /// One request, sent every time.
    pub fn one(template: RequestTemplate) -> Self {
        Self {
            templates: vec![template],
            weights: vec![1],
        }
    }

    /// `templates` drawn by `weights` (in their order; equal when `None`).
    /// A driver that prepares one statement takes one request only:
    /// `Driver::mix` refuses a mix for it.
    pub fn new(templates: Vec<RequestTemplate>, weights: Option<&[i64]>) -> Result<Self, MixError> {
        if templates.is_empty() {
            return Err(MixError::Empty);
        }
        if templates.len() > MAX_TEMPLATES {
            return Err(MixError::TooMany(templates.len()));
        }
        let weights = match weights {
            None => vec![1; templates.len()],
            Some(given) if given.len() != templates.len() => {
                return Err(MixError::Counts {
                    requests: templates.len(),
                    weights: given.len(),
                })
            }
            Some(given) => given
                .iter()
                .enumerate()
                .map(|(index, &value)| {
                    u32::try_from(value)
                        .ok()
                        .filter(|w| (1..=MAX_WEIGHT).contains(&i64::from(*w)))
                        .ok_or(MixError::Weight { index, value })
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(Self { templates, weights })
    }

    /// Whether the load draws from more than one request.
    pub fn is_mix(&self) -> bool {
        self.templates.len() > 1
    }

    /// The request, where there is one only.
    pub fn single(&self) -> Option<&RequestTemplate> {
        match self.templates.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// The one statement a SQL driver (`driver`) prepares; a mix is
    /// refused before a load is made, this is the last guard.
    pub fn statement(&self, driver: &'static str) -> anyhow::Result<&str> {
        let one = self.single().ok_or_else(|| {
            let err = MixError::Unsupported {
                driver,
                requests: self.templates.len(),
            };
            anyhow::anyhow!("{err}\nhint: {}", err.hint(true))
        })?;
        Ok(&one.text)
    }

    /// Each request's text and weight, in order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, u32)> {
        self.templates
            .iter()
            .map(|t| t.text.as_str())
            .zip(self.weights.iter().copied())
    }

    /// For a summary line: `` `GET k` `` or `` `get k` ×9, `set k v` ×1 ``.
    pub fn describe(&self) -> String {
        if let Some(one) = self.single() {
            return format!("`{}`", one.text);
        }
        self.entries()
            .map(|(text, weight)| format!("`{text}` ×{weight}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A generator for one client thread, `index` of `count`
    /// ([`RequestTemplate::generator`]).
    pub fn generator(&self, seed: u64, index: u64, count: u64) -> Generator {
        Generator::new(&self.templates, &self.weights, seed, index, count)
    }
}

/// One request as its text (what the experiment file said); a mix as a
/// list of `{request, weight}`.
impl Serialize for RequestMix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Entry<'a> {
            request: &'a str,
            weight: u32,
        }
        if let Some(one) = self.single() {
            return s.serialize_str(&one.text);
        }
        let mut seq = s.serialize_seq(Some(self.templates.len()))?;
        for (request, weight) in self.entries() {
            seq.serialize_element(&Entry { request, weight })?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use super::*;
    use crate::request::Source;

    fn templates(texts: &[&str]) -> Vec<RequestTemplate> {
        let vars: BTreeMap<String, Source> = [(
            "k".to_owned(),
            Source::parse("seq:1:1000", Path::new(".")).unwrap(),
        )]
        .into();
        texts
            .iter()
            .map(|t| RequestTemplate::new(t, &vars).unwrap())
            .collect()
    }

    fn draw(mix: &RequestMix, seed: u64, n: usize) -> Vec<String> {
        let mut g = mix.generator(seed, 0, 1);
        (0..n)
            .map(|_| String::from_utf8_lossy(g.next_request().get(0)).into_owned())
            .collect()
    }

    /// 9:1 over 100,000 draws: the share of the first is 0.9 within five
    /// standard errors (sqrt(0.9 · 0.1 / 100,000) ≈ 0.00095), and the
    /// chosen template is the one whose words came out.
    #[test]
    fn a_mix_draws_each_request_by_its_weight() {
        let mix = RequestMix::new(templates(&["get k{k}", "set k{k} v"]), Some(&[9, 1])).unwrap();
        let mut g = mix.generator(7, 0, 1);
        let mut gets = 0u32;
        for _ in 0..100_000 {
            let first = g.next_request().get(0).to_vec();
            let chosen = g.chosen();
            assert_eq!(first, if chosen == 0 { b"get" } else { b"set" }.to_vec());
            gets += u32::from(chosen == 0);
        }
        let share = f64::from(gets) / 100_000.0;
        assert!((share - 0.9).abs() < 5.0 * 0.00095, "{share}");
        // Equal weights by default.
        let even = RequestMix::new(templates(&["GET a", "GET b", "GET c"]), None).unwrap();
        let mut g = even.generator(3, 0, 1);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            g.next_request();
            counts[g.chosen()] += 1;
        }
        assert!(
            counts.iter().all(|c| (9_500..10_500).contains(c)),
            "{counts:?}"
        );
    }

    /// The same seed sends the same sequence, another seed another; one
    /// request draws nothing for its choice, so a load of one request
    /// sends what it sent before mixes existed.
    #[test]
    fn the_same_seed_draws_the_same_sequence() {
        let mix = RequestMix::new(templates(&["get k{k}", "set k{k} v"]), Some(&[9, 1])).unwrap();
        assert_eq!(draw(&mix, 11, 500), draw(&mix, 11, 500));
        assert_ne!(draw(&mix, 11, 500), draw(&mix, 12, 500));
        let one = templates(&["GET k{k}"]).remove(0);
        let mut alone = one.generator(5, 0, 1);
        let mut mixed = RequestMix::one(one).generator(5, 0, 1);
        for _ in 0..10 {
            assert_eq!(
                alone.next_request().get(1).to_vec(),
                mixed.next_request().get(1).to_vec()
            );
        }
    }

    #[test]
    fn counts_and_weights_are_refused_with_a_way_out() {
        let two = || templates(&["GET a", "GET b"]);
        let err = RequestMix::new(two(), Some(&[9, 1, 1])).unwrap_err();
        assert_eq!(
            err,
            MixError::Counts {
                requests: 2,
                weights: 3
            }
        );
        assert!(err.hint(true).contains("--mix 9:1"), "{}", err.hint(true));
        assert!(
            err.hint(false).contains("mix = [9, 1]"),
            "{}",
            err.hint(false)
        );
        for bad in [0, -1, MAX_WEIGHT + 1] {
            let err = RequestMix::new(two(), Some(&[1, bad])).unwrap_err();
            assert_eq!(
                err,
                MixError::Weight {
                    index: 1,
                    value: bad
                }
            );
            assert!(err.to_string().contains("the 2nd of the mix"), "{err}");
        }
        assert_eq!(parse_weights("9:1").unwrap(), [9, 1]);
        assert!(parse_weights("9:x").unwrap_err().contains("hint:"));
        assert_eq!(
            RequestMix::new(two(), Some(&[9, 1])).unwrap().describe(),
            "`GET a` ×9, `GET b` ×1"
        );
    }

    #[test]
    fn one_request_serializes_as_its_text_a_mix_as_a_list() {
        let one = RequestMix::one(templates(&["GET a"]).remove(0));
        assert_eq!(serde_json::to_string(&one).unwrap(), r#""GET a""#);
        let mix = RequestMix::new(templates(&["GET a", "SET a 1"]), Some(&[3, 1])).unwrap();
        assert_eq!(
            serde_json::to_string(&mix).unwrap(),
            r#"[{"request":"GET a","weight":3},{"request":"SET a 1","weight":1}]"#
        );
    }
}
