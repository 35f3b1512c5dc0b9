//! `[[matrix]]`: variants as the product of axes (`compiler`, `optimize`,
//! `params.KEY`, `env.KEY`), less the combinations `exclude` names. Each
//! combination becomes a raw variant, validated like one written by hand,
//! that remembers its axis values so reports can group by them.

use std::collections::BTreeMap;
use std::ops::Range;

use toml::Spanned;

use super::super::raw::{RawMatrix, RawVariant};
use super::Cx;
use crate::experiment::ExperimentError;

/// One axis: its key (`compiler`, `optimize`, `params.threads`) and values.
struct Axis {
    key: String,
    span: Range<usize>,
    values: Vec<Value>,
}

/// One value of an axis: as the name shows it and as `exclude` compares it.
#[derive(Clone)]
struct Value {
    label: String,
    toml: toml::Value,
    span: Range<usize>,
    /// The `optimize` words, for that axis.
    words: Vec<Spanned<String>>,
}

impl Cx<'_> {
    /// Every variant of every matrix, in order.
    pub(super) fn expand_matrices(
        &self,
        matrices: &[RawMatrix],
    ) -> Result<Vec<RawVariant>, ExperimentError> {
        let mut out = Vec::new();
        for m in matrices {
            out.extend(self.expand(m)?);
        }
        Ok(out)
    }

    pub(super) fn expand(&self, m: &RawMatrix) -> Result<Vec<RawVariant>, ExperimentError> {
        let axes = self.axes(m)?;
        let excludes = m
            .exclude
            .iter()
            .map(|e| self.exclusion(e, &axes))
            .collect::<Result<Vec<_>, _>>()?;
        let mut used = vec![false; excludes.len()];
        let mut out = Vec::new();
        for combo in product(&axes) {
            let values: BTreeMap<&str, &Value> = axes
                .iter()
                .zip(&combo)
                .map(|(a, v)| (a.key.as_str(), *v))
                .collect();
            let mut left_out = false;
            for (i, e) in excludes.iter().enumerate() {
                if e.iter()
                    .all(|(k, v)| values.get(k.as_str()).is_some_and(|x| x.toml == *v))
                {
                    used[i] = true;
                    left_out = true;
                }
            }
            if !left_out {
                out.push(self.variant(m, &axes, &combo)?);
            }
        }
        if let Some(i) = used.iter().position(|u| !u) {
            return Err(self.invalid(
                m.exclude[i].span(),
                "this exclude matches no combination of the matrix",
                "give each axis value exactly as the axis lists it (numbers as numbers, optimize as a list or words joined by +)",
            ));
        }
        Ok(out)
    }

    fn axes(&self, m: &RawMatrix) -> Result<Vec<Axis>, ExperimentError> {
        let mut axes = Vec::new();
        if !m.compiler.is_empty() {
            axes.push(Axis {
                key: "compiler".to_owned(),
                span: m.compiler[0].span(),
                values: m
                    .compiler
                    .iter()
                    .map(|c| text_value(c.get_ref(), c.span()))
                    .collect(),
            });
        }
        if !m.optimize.is_empty() {
            let values = m.optimize.iter().map(|stack| {
                let words = stack.get_ref().words();
                Value {
                    label: stack.get_ref().label(),
                    toml: toml::Value::Array(
                        words.iter().cloned().map(toml::Value::String).collect(),
                    ),
                    span: stack.span(),
                    words: words
                        .into_iter()
                        .map(|w| Spanned::new(stack.span(), w))
                        .collect(),
                }
            });
            axes.push(Axis {
                key: "optimize".to_owned(),
                span: m.optimize[0].span(),
                values: values.collect(),
            });
        }
        for (key, list) in &m.params {
            let values = list
                .get_ref()
                .iter()
                .map(|v| {
                    Ok(Value {
                        label: self.param_text(v)?,
                        toml: v.get_ref().clone(),
                        span: v.span(),
                        words: Vec::new(),
                    })
                })
                .collect::<Result<_, ExperimentError>>()?;
            axes.push(Axis {
                key: format!("params.{key}"),
                span: list.span(),
                values,
            });
        }
        for (key, list) in &m.env {
            let values = list
                .get_ref()
                .iter()
                .map(|v| text_value(v.get_ref(), v.span()));
            axes.push(Axis {
                key: format!("env.{key}"),
                span: list.span(),
                values: values.collect(),
            });
        }
        let span = m.name.as_ref().map_or(0..0, Spanned::span);
        if axes.is_empty() {
            return Err(self.invalid(
                span,
                "a [[matrix]] without axes makes no variant",
                "give it at least one axis: compiler = [...], optimize = [[...], ...], params.KEY = [...] or env.KEY = [...]",
            ));
        }
        if let Some(empty) = axes.iter().find(|a| a.values.is_empty()) {
            return Err(self.invalid(
                empty.span.clone(),
                format!("matrix axis `{}` has no values", empty.key),
                "list at least one value, or remove the axis",
            ));
        }
        Ok(axes)
    }

    /// One `exclude` entry as axis key → value; an unknown axis is an error.
    fn exclusion(
        &self,
        raw: &Spanned<toml::Table>,
        axes: &[Axis],
    ) -> Result<Vec<(String, toml::Value)>, ExperimentError> {
        let mut out = Vec::new();
        for (key, value) in raw.get_ref() {
            match (key.as_str(), value) {
                ("params" | "env", toml::Value::Table(inner)) => {
                    out.extend(inner.iter().map(|(k, v)| (format!("{key}.{k}"), v.clone())));
                }
                // A stack as its words, however it is written.
                ("optimize", toml::Value::String(joined)) => {
                    let words = super::super::raw::RawStack::Joined(joined.clone()).words();
                    out.push((
                        key.clone(),
                        toml::Value::Array(words.into_iter().map(toml::Value::String).collect()),
                    ));
                }
                _ => out.push((key.clone(), value.clone())),
            }
        }
        if let Some((key, _)) = out.iter().find(|(k, _)| !axes.iter().any(|a| a.key == *k)) {
            return Err(self.invalid(
                raw.span(),
                format!("exclude names `{key}`, which is not an axis of this matrix"),
                format!(
                    "the axes: {}",
                    axes.iter()
                        .map(|a| a.key.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(out)
    }

    /// The raw variant of one combination.
    fn variant(
        &self,
        m: &RawMatrix,
        axes: &[Axis],
        combo: &[&Value],
    ) -> Result<RawVariant, ExperimentError> {
        let name = match &m.name {
            Some(template) => {
                Spanned::new(template.span(), self.matrix_name(template, axes, combo)?)
            }
            None => Spanned::new(axes[0].span.clone(), default_name(axes, combo)),
        };
        let mut variant = RawVariant {
            name,
            compiler: None,
            optimize: Vec::new(),
            cflags: m.cflags.clone(),
            ldflags: m.ldflags.clone(),
            env: BTreeMap::new(),
            prebuilt: None,
            params: BTreeMap::new(),
            partial_training: None,
            sample_event: None,
            call_chains: None,
            bolt_profile: None,
            pgo_source: None,
            march: None,
            train_stop: None,
            system: BTreeMap::new(),
            profile_from: None,
            source: None,
            profile: None,
            recordings: None,
            recording: None,
            axes: BTreeMap::new(),
        };
        for (axis, value) in axes.iter().zip(combo) {
            variant.axes.insert(axis.key.clone(), value.label.clone());
            match axis.key.split_once('.') {
                None if axis.key == "compiler" => {
                    variant.compiler = Some(Spanned::new(value.span.clone(), value.label.clone()));
                }
                None => variant.optimize.clone_from(&value.words),
                Some(("params", key)) => {
                    variant.params.insert(
                        key.to_owned(),
                        Spanned::new(value.span.clone(), value.toml.clone()),
                    );
                }
                Some((_, key)) => {
                    variant.env.insert(key.to_owned(), value.label.clone());
                }
            }
        }
        Ok(variant)
    }

    /// The name `template` gives one combination.
    fn matrix_name(
        &self,
        template: &Spanned<String>,
        axes: &[Axis],
        combo: &[&Value],
    ) -> Result<String, ExperimentError> {
        let mut name = template.get_ref().clone();
        for (axis, value) in axes.iter().zip(combo) {
            name = name.replace(&format!("{{{}}}", axis.key), &value.label);
        }
        if let Some(start) = name.find('{') {
            let placeholder: String = name[start..].chars().take_while(|c| *c != '}').collect();
            return Err(self.invalid(
                template.span(),
                format!("the matrix name names `{placeholder}}}`, which is not one of its axes"),
                format!(
                    "use the axes: {}",
                    axes.iter()
                        .map(|a| format!("{{{}}}", a.key))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(name)
    }
}

fn text_value(text: &str, span: Range<usize>) -> Value {
    Value {
        label: text.to_owned(),
        toml: toml::Value::String(text.to_owned()),
        span,
        words: Vec::new(),
    }
}

/// Axis values joined with `-`, a `params`/`env` value after its key
/// (`gcc-pgo+lto-threads_4`), every character a variant name may not hold
/// made `_`.
fn default_name(axes: &[Axis], combo: &[&Value]) -> String {
    let parts: Vec<String> = axes
        .iter()
        .zip(combo)
        .map(|(axis, value)| match axis.key.split_once('.') {
            Some((_, key)) => format!("{key}_{}", value.label),
            None => value.label.clone(),
        })
        .collect();
    parts
        .join("-")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_+.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Every combination of one value per axis, the first axis slowest.
fn product(axes: &[Axis]) -> Vec<Vec<&Value>> {
    let mut combos: Vec<Vec<&Value>> = vec![Vec::new()];
    for axis in axes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                axis.values.iter().map(move |v| {
                    let mut next = c.clone();
                    next.push(v);
                    next
                })
            })
            .collect();
    }
    combos
}
