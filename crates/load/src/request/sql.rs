//! What the SQL drivers (postgres, mysql) share: a request's `{name}`
//! placeholders turned into the driver's parameters.

use std::fmt::Write as _;

/// How a driver writes its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// PostgreSQL's `$1`, `$2`, …: a name used twice is one parameter.
    Numbered,
    /// MySQL's `?`: one per placeholder, in order.
    Positional,
}

/// A request's SQL with parameters, and the variable behind each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sql {
    pub text: String,
    /// The variables, each once, in the order they first appear: the
    /// request's words.
    pub params: Vec<String>,
    /// For each placeholder in order, the index of its variable in `params`.
    pub slots: Vec<usize>,
}

impl Sql {
    /// Turn `{name}` placeholders into parameters written in `style`; a
    /// brace that is not a name (`{x y}`) is left as it is.
    pub fn parse(template: &str, style: Style) -> Self {
        let mut text = String::new();
        let mut params: Vec<String> = Vec::new();
        let mut slots = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else {
                break;
            };
            let name = &rest[open + 1..close];
            let valid =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            text.push_str(&rest[..open]);
            if valid {
                let n = params.iter().position(|p| p == name).unwrap_or_else(|| {
                    params.push(name.to_owned());
                    params.len() - 1
                });
                slots.push(n);
                match style {
                    Style::Numbered => {
                        let _ = write!(text, "${}", n + 1);
                    }
                    Style::Positional => text.push('?'),
                }
            } else {
                text.push_str(&rest[open..=close]);
            }
            rest = &rest[close + 1..];
        }
        text.push_str(rest);
        Self {
            text,
            params,
            slots,
        }
    }
}
