//! Number formatting shared by the table renderers: one scale per table,
//! chosen from the values, so columns line up and compare at a glance.

/// A unit scale for one table.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub factor: f64,
    pub unit: &'static str,
    pub decimals: usize,
}

/// Pick a scale for values of `unit` whose typical magnitude is `typical`.
pub fn scale_for(unit: &str, typical: f64) -> Scale {
    let typical = typical.abs();
    match unit {
        "s" if typical < 1e-3 => Scale {
            factor: 1e6,
            unit: "µs",
            decimals: 1,
        },
        "s" if typical < 1.0 => Scale {
            factor: 1e3,
            unit: "ms",
            decimals: 2,
        },
        "s" => Scale {
            factor: 1.0,
            unit: "s",
            decimals: 3,
        },
        // Exact counts are shown whole: their differences are the point.
        "instructions" => Scale {
            factor: 1.0,
            unit: "instr",
            decimals: 0,
        },
        "KiB" => Scale {
            factor: 1.0 / 1024.0,
            unit: "MiB",
            decimals: 1,
        },
        _ => Scale {
            factor: 1.0,
            unit: "",
            decimals: if typical >= 100.0 { 1 } else { 3 },
        },
    }
}

impl Scale {
    pub fn show(&self, value: f64) -> String {
        format!("{:.*}", self.decimals, value * self.factor)
    }

    /// The unit label, falling back to the metric's own unit.
    pub fn label<'a>(&'a self, fallback: &'a str) -> &'a str {
        if self.unit.is_empty() {
            fallback
        } else {
            self.unit
        }
    }
}

/// A p-value as reports show it.
pub fn p_value(p: Option<f64>) -> String {
    match p {
        None => "n/a".to_owned(),
        Some(p) if p < 0.0001 => "< 0.0001".to_owned(),
        Some(p) => format!("{p:.4}"),
    }
}

/// "12.3% better" / "4.0% worse" / "no change".
pub fn improvement(pct: f64) -> String {
    if pct > 0.0 {
        format!("{pct:.1}% better")
    } else if pct < 0.0 {
        format!("{:.1}% worse", -pct)
    } else {
        "no change".to_owned()
    }
}
