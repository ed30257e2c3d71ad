//! Where a downloaded file comes from: the scenario's name, the link that
//! reopens it (and so reproduces every number), when it was exported and by
//! which version of Sojourn. A table's CSV starts with these as `#` comment
//! lines (read by pandas with `comment="#"`, by R with `comment.char`); the
//! results' JSON holds them under `provenance`.

use serde::Serialize;
use sojourn_engine::ScenarioParams;

/// The version of Sojourn that wrote a file.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a downloaded file says of where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provenance {
    /// The scenario's name.
    pub scenario: String,
    /// The share link of the scenario the numbers are for (absent when the
    /// scenario is too large for a link).
    pub link: Option<String>,
    /// When the file was exported (ISO 8601, UTC).
    pub exported: String,
    /// "Sojourn 0.1.0".
    pub generator: String,
}

impl Provenance {
    pub fn new(scenario: &str, link: Option<String>, exported: &str) -> Provenance {
        Provenance {
            scenario: scenario.to_string(),
            link,
            exported: exported.to_string(),
            generator: format!("Sojourn {VERSION}"),
        }
    }

    /// `scenario` as the JSON a file holds, its provenance last (the engine
    /// reads a file's `provenance` and ignores it, so the file imports as
    /// it is).
    pub fn scenario_json(&self, scenario: &ScenarioParams) -> String {
        let json = serde_json::to_string_pretty(scenario).unwrap_or_default();
        let provenance = serde_json::to_string_pretty(self)
            .unwrap_or_default()
            .replace('\n', "\n  ");
        match json.trim_end().strip_suffix('}') {
            Some(body) => format!("{},\n  \"provenance\": {provenance}\n}}\n", body.trim_end()),
            None => json,
        }
    }

    /// `csv` (a table named `title`) after the provenance as comment lines.
    pub fn csv(&self, title: &str, csv: &str) -> String {
        let link = self
            .link
            .as_deref()
            .unwrap_or("none (too large for a link)");
        let mut out = String::new();
        for (key, value) in [
            ("table", title),
            ("scenario", &self.scenario),
            ("link", link),
            ("exported", &self.exported),
            ("generator", &self.generator),
        ] {
            // A line break in a name would end the comment.
            let value = value.replace(['\r', '\n'], " ");
            // CRLF, as the table's own lines (RFC 4180).
            out.push_str(&format!("# {key}: {value}\r\n"));
        }
        out.push_str(csv);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_starts_with_the_provenance_as_comments() {
        let provenance = Provenance::new(
            "Chat\nfleet",
            Some("https://example.org/?s=2.abc".to_string()),
            "2026-11-26T14:00:00.000Z",
        );
        let csv = provenance.csv("Per class", "class,met\r\napi,3\r\n");
        let lines: Vec<&str> = csv.split_terminator("\r\n").collect();
        assert_eq!(
            lines,
            [
                "# table: Per class",
                "# scenario: Chat fleet",
                "# link: https://example.org/?s=2.abc",
                "# exported: 2026-11-26T14:00:00.000Z",
                &format!("# generator: Sojourn {VERSION}"),
                "class,met",
                "api,3",
            ]
        );
        let unlinked = Provenance::new("x", None, "t").csv("t", "");
        assert!(unlinked.contains("# link: none (too large for a link)"));
    }

    #[test]
    fn an_exported_scenario_carries_its_provenance_and_imports_as_it_is() {
        let scenario = ScenarioParams::overnight_batch();
        let provenance = Provenance::new(&scenario.name, None, "2026-11-26T14:00:00.000Z");
        let json = provenance.scenario_json(&scenario);
        let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(value["provenance"]["exported"], "2026-11-26T14:00:00.000Z");
        assert_eq!(value["provenance"]["scenario"], scenario.name.as_str());
        let back = sojourn_engine::scenario_params_from_json(json.as_bytes()).expect("imports");
        assert_eq!(back, scenario);
    }
}
