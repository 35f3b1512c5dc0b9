//! `results.json`: the [`Results`] as pretty JSON.

use anyhow::Result;

use super::exporter::Exporter;
use crate::analysis::Results;

/// Renders results as JSON.
pub struct Json;

impl Exporter for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn describe(&self) -> &'static str {
        "results.json: every figure, interval, verdict and the machine (schema in docs/results.schema.json)"
    }

    fn render(&self, results: &Results) -> Result<Vec<u8>> {
        let mut out = serde_json::to_vec_pretty(results)?;
        out.push(b'\n');
        Ok(out)
    }
}

/// The JSON Schema of `results.json`, generated from the Rust types.
pub fn schema() -> String {
    let schema = schemars::schema_for!(Results);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in schema must be what the types generate: a change to
    /// the results format shows up as a diff in review.
    #[test]
    fn checked_in_schema_matches_the_types() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results.schema.json");
        let generated = schema();
        if std::env::var_os("AFTERBURNER_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == generated,
            "{} differs from the schema the Rust types generate\nhint: if the change is intended, run AFTERBURNER_UPDATE_SCHEMA=1 cargo test --lib checked_in_schema, review the diff, and bump SCHEMA_VERSION if a field changed meaning or disappeared",
            path.display()
        );
    }

    #[test]
    fn the_schema_describes_every_top_level_field() {
        let schema: serde_json::Value = serde_json::from_str(&schema()).unwrap();
        let properties = schema["properties"].as_object().unwrap();
        for field in [
            "schema_version",
            "environment",
            "measurements",
            "comparisons",
            "loads",
        ] {
            assert!(properties.contains_key(field), "{field}");
        }
        // Doc comments become descriptions.
        assert!(properties["schema_version"]["description"].is_string());
    }
}
