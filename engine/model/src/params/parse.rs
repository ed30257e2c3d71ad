//! Reading a scenario's JSON: every error names the field it is about.
//!
//! serde's own messages end in "at line 1 column 33" of a JSON text the
//! user may never have seen (a share link, a form). `serde_path_to_error`
//! tracks the path through the document, so the message names the field as
//! the rest of the engine does (`engine.max_num_seqs`,
//! `classes\[0\].input_tokens.maxx`).

use serde_path_to_error::{Path, Segment};

use crate::error::FieldError;
use crate::params::ScenarioParams;

/// The scenario in `json`, or the first problem with the field it is in.
///
/// Type errors name the field holding the wrong value; an unknown key or a
/// missing one names the key itself. Malformed JSON, which has no field, names the line and column
/// (`field` is empty).
pub fn scenario_params_from_json(json: &[u8]) -> Result<ScenarioParams, FieldError> {
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let params: ScenarioParams =
        serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
            let path = dotted(error.path());
            field_error(path, error.into_inner())
        })?;
    deserializer
        .end()
        .map_err(|error| field_error(String::new(), error))?;
    Ok(params)
}

fn field_error(path: String, error: serde_json::Error) -> FieldError {
    let message = error.to_string();
    // An unknown, missing or repeated key: name it in the path, as
    // validation names fields. (The path already ends with an unknown key,
    // except inside a distribution, whose kind tag makes serde read the
    // object before the path is tracked; a missing or repeated key's path
    // stops at its object.)
    let key = unknown_key(&message)
        .or_else(|| missing_key(&message))
        .or_else(|| duplicate_key(&message));
    let field = match key {
        Some(key) if path.is_empty() => key.to_string(),
        Some(key) if path != key && !path.ends_with(&format!(".{key}")) => format!("{path}.{key}"),
        _ => path,
    };
    // serde_json appends " at line L column C": useful only without a field.
    let reason = match (field.is_empty(), message.rfind(" at line ")) {
        (false, Some(at)) => message[..at].to_string(),
        _ => message,
    };
    FieldError { field, reason }
}

/// The key of serde's "unknown field `maxx`, expected ..." message.
fn unknown_key(reason: &str) -> Option<&str> {
    let rest = reason.strip_prefix("unknown field `")?;
    rest.split_once('`').map(|(key, _)| key)
}

/// The key of serde's "missing field `classes`" message.
fn missing_key(reason: &str) -> Option<&str> {
    let rest = reason.strip_prefix("missing field `")?;
    rest.split_once('`').map(|(key, _)| key)
}

/// The key of serde's "duplicate field `run`" message (a key written twice
/// in one object: the path stops at the object).
fn duplicate_key(reason: &str) -> Option<&str> {
    let rest = reason.strip_prefix("duplicate field `")?;
    rest.split_once('`').map(|(key, _)| key)
}

/// `classes\[0\].input_tokens` from serde_path_to_error's segments.
fn dotted(path: &Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Enum { variant } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(variant);
            }
            Segment::Unknown => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(json: &str) -> FieldError {
        match scenario_params_from_json(json.as_bytes()) {
            Ok(_) => panic!("{json} was accepted"),
            Err(e) => e,
        }
    }

    #[test]
    fn an_exported_files_provenance_is_read_and_left_out() {
        let scenario = ScenarioParams::overnight_batch();
        let mut value = serde_json::to_value(&scenario).expect("serialises");
        assert!(value.get("provenance").is_none(), "never written");
        value["provenance"] = serde_json::json!({"scenario": "x", "exported": "2026-11-26"});
        let json = serde_json::to_vec(&value).expect("JSON");
        let back = scenario_params_from_json(&json).expect("reads");
        assert_eq!(back, scenario);
        // Other unknown keys are still refused.
        value["provenanse"] = serde_json::json!(1);
        let e = error_of(&serde_json::to_string(&value).expect("JSON"));
        assert_eq!(e.field, "provenanse", "{e}");
    }

    #[test]
    fn a_wrong_type_names_its_field_without_line_and_column() {
        // r10 of the review: "invalid type: string \"256\", expected u32 at line 1 column 33".
        let e = error_of(r#"{"engine": {"max_num_seqs": "256"}}"#);
        assert_eq!(e.field, "engine.max_num_seqs");
        assert!(e.reason.starts_with("invalid type: string \"256\""), "{e}");
        assert!(!e.reason.contains("line"), "{e}");
    }

    #[test]
    fn unknown_keys_inside_a_distribution_are_named() {
        // r04: "maxx" on a log-normal, "median" on a constant.
        let e = error_of(
            r#"{"classes": [{"name": "api", "batches_per_hour": 1, "input_tokens": {"kind": "log_normal", "median": 800, "p90": 3000, "maxx": 100}}]}"#,
        );
        assert_eq!(e.field, "classes[0].input_tokens.maxx", "{e}");
        let e = error_of(
            r#"{"classes": [{"name": "api", "batches_per_hour": 1, "input_tokens": {"kind": "constant", "value": 1}, "output_tokens": {"kind": "constant", "value": 200, "median": 5}}]}"#,
        );
        assert_eq!(e.field, "classes[0].output_tokens.median", "{e}");
        // A known kind with its own keys and clamps still reads: the first
        // problem is the next key, missing after it.
        let e = error_of(
            r#"{"classes": [{"name": "api", "batches_per_hour": 1, "input_tokens": {"kind": "log_normal", "median": 800, "p90": 3000, "max": 100}}]}"#,
        );
        assert_eq!(e.field, "classes[0].output_tokens", "{e}");
    }

    #[test]
    fn errors_in_lists_and_nested_sections_name_the_path() {
        let e = error_of(
            r#"{"classes": [{"name": "a", "batches_per_hour": 1,
                "input_tokens": {"kind": "constant", "value": 1},
                "output_tokens": {"kind": "constant", "value": 1}},
               {"name": "b", "deadline_s": "soon"}]}"#,
        );
        assert_eq!(e.field, "classes[1].deadline_s");
        // A missing key is named with its path.
        let e = error_of(r#"{"classes": [{"name": "a", "batches_per_hour": 1}]}"#);
        assert_eq!(e.field, "classes[0].input_tokens", "{e}");
        let e = error_of(r#"{"nmae": "typo"}"#);
        assert_eq!(e.field, "nmae");
        assert!(e.reason.contains("unknown field"), "{e}");
    }

    #[test]
    fn a_key_written_twice_is_named() {
        // n10 of the second review: "not a scenario: : duplicate field `run`".
        let e = error_of(r#"{"run": {"horizon_s": 60}, "run": {"horizon_s": 120}}"#);
        assert_eq!(e.field, "run", "{e}");
        assert!(e.reason.starts_with("duplicate field `run`"), "{e}");
        assert!(!e.reason.contains("line"), "{e}");
        let e = error_of(r#"{"engine": {"max_num_seqs": 1, "max_num_seqs": 2}}"#);
        assert_eq!(e.field, "engine.max_num_seqs", "{e}");
    }

    #[test]
    fn malformed_json_says_where() {
        let e = error_of(r#"{"name": "x",,}"#);
        assert_eq!(e.field, "");
        assert!(e.reason.contains("line 1"), "{e}");
        // Text after a whole scenario (a missing key would be named first).
        let whole = serde_json::to_string(&ScenarioParams::overnight_batch()).expect("JSON");
        let e = error_of(&format!("{whole} trailing"));
        assert_eq!(e.field, "");
        assert!(e.reason.contains("line 1"), "{e}");
    }
}
