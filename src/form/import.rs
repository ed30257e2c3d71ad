//! Reading the files a user opens into a scenario: a scenario's JSON
//! (with the engine's problems, in the form's words) and a request trace's
//! CSV (classes that replay it exactly). No DOM; tested natively.

use sojourn_engine::{Scenario, ScenarioParams};

use crate::words;

/// Reads an imported file: the scenario, plus the engine's problems with it.
pub fn import_scenario(text: &str) -> Result<(ScenarioParams, Vec<String>), String> {
    let params: ScenarioParams = sojourn_engine::scenario_params_from_json(text.as_bytes())
        .map_err(|e| {
            format!(
                "it is not a Sojourn scenario: {}",
                words::field_message(&e, None)
            )
        })?;
    let problems = match Scenario::try_from(params.clone()) {
        Ok(_) => Vec::new(),
        Err(error) => words::scenario_messages(&error, Some(&params)),
    };
    Ok((params, problems))
}

/// `params` with its classes replaced by ones replaying a request trace
/// exactly, their distributions fitted to it (CSV: `arrival_s`,
/// `input_tokens`, `output_tokens`, optionally `class` and `prefix_hit`),
/// and what the notice says; or why the trace does not
/// read (naming its row and column). Deadlines, priorities and timeouts of
/// a class whose name the scenario already has are kept.
pub fn import_trace(
    params: &ScenarioParams,
    text: &str,
) -> Result<(ScenarioParams, String), String> {
    let requests = sojourn_engine::parse_trace_csv(text).map_err(|e| e.to_string())?;
    let mut fitted = sojourn_engine::replay_trace_classes(&requests);
    for class in &mut fitted {
        if let Some(old) = params.classes.iter().find(|c| c.name == class.name) {
            class.deadline_s = old.deadline_s;
            class.priority = old.priority;
            class.timeout_s = old.timeout_s;
        }
    }
    let names: Vec<String> = fitted.iter().map(|c| format!("\"{}\"", c.name)).collect();
    let summary = format!(
        "{} requests replayed exactly in {} class(es): {}, with their rates and lengths fitted beside (a class switched to an open stream draws from them).",
        requests.len(),
        fitted.len(),
        names.join(", ")
    );
    let mut out = params.clone();
    out.classes = fitted;
    Ok((out, summary))
}
