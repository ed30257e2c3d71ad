//! The engine's field paths in the page's words. The engine names a bad
//! value by its path in the scenario's JSON
//! (`classes[0].load.requests[1].input_tokens`); a user reads the form,
//! so every message the page shows about a field away from its box (Run's
//! reason, a refused share link, an imported file's problems, a lengths
//! preview, a failed case) names it as the form labels it:
//! `Class "chat", trace request 2, input tokens`. (A field's own box shows
//! the reason alone.)
//! Items count from 1, as the form's legends do ("Target 2"). A path this
//! does not know still reads: its names spaced out, its indexes counted
//! from 1; nothing is dropped.

use sojourn_engine::{
    ClassParams, DistParams, FieldError, LoadParams, PlanError, ScenarioError, ScenarioParams,
    SensitivityInput, StepTimeParams,
};

use crate::registry::{
    self, dist_label, dist_title, enum_parse, inputs, shape_fields, shape_lists, step_time_labels,
};

/// `error` as the page shows it: the field in words, then the engine's
/// reason (`params`, when known, names classes and tells load modes apart).
pub fn field_message(error: &FieldError, params: Option<&ScenarioParams>) -> String {
    message(&error.field, &error.reason, params)
}

/// The field at `path` in words, then `reason`; the reason alone when the
/// path is empty (malformed JSON has no field).
pub fn message(path: &str, reason: &str, params: Option<&ScenarioParams>) -> String {
    if path.is_empty() {
        reason.to_string()
    } else {
        format!("{}: {reason}", field_words(path, params))
    }
}

/// Every problem of `error`, one message each.
pub fn scenario_messages(error: &ScenarioError, params: Option<&ScenarioParams>) -> Vec<String> {
    error
        .errors
        .iter()
        .map(|e| field_message(e, params))
        .collect()
}

/// `error` in one line, its problems joined as the engine joins them.
pub fn scenario_message(error: &ScenarioError, params: Option<&ScenarioParams>) -> String {
    scenario_messages(error, params).join("; ")
}

/// Why a plan failed, in the form's words: a case that is not a valid
/// scenario names its fields as the form does, a class the planner cannot
/// plan (not an open stream) says so and what to do, and every field path
/// in the engine's advice (`lower classes[0].batches_per_hour`) reads as
/// the form labels it.
pub fn plan_error_message(error: &PlanError, params: Option<&ScenarioParams>) -> String {
    match error {
        PlanError::InvalidCase { case, error } => {
            if let Some(refusal) = unplannable_load(error, params) {
                return refusal;
            }
            format!(
                "the case \"{case}\" is not a valid scenario: {}",
                scenario_message(error, params)
            )
        }
        other => paths_in_words(&other.to_string(), params),
    }
}

/// The planner's refusal of a class that is not an open stream (its
/// error is on `classes[i].load`), said as what it is and what to do.
fn unplannable_load(error: &ScenarioError, params: Option<&ScenarioParams>) -> Option<String> {
    let [only] = error.errors.as_slice() else {
        return None;
    };
    let index: usize = only
        .field
        .strip_prefix("classes[")?
        .strip_suffix("].load")?
        .parse()
        .ok()?;
    let class = params?.classes.get(index)?;
    let mode = match class.load {
        LoadParams::Open => return None,
        LoadParams::ClosedLoop { .. } => {
            "a closed loop of clients, each sending when its last request returns"
        }
        LoadParams::FixedCount { .. } => "a fixed count of requests",
        LoadParams::Offline { .. } => "a fixed count of requests at time 0",
        LoadParams::Trace { .. } => "a replayed trace",
    };
    Some(format!(
        "planning refuses classes that are not open streams, and class \"{}\" is {mode}: the planner scales arrival rates and prices the fleet per hour of the horizon. The run above is this scenario as it is; to plan a fleet, set the class's Load to \"open (Poisson batches)\" under Workload at the rate you expect.",
        class.name
    ))
}

/// `text` with every field path in it (`classes[0].batches_per_hour`,
/// `run.horizon_s`, `plan.search`) replaced by the field as the form
/// names it (`Class "chat", batches per hour`), in quotes.
pub fn paths_in_words(text: &str, params: Option<&ScenarioParams>) -> String {
    const ROOTS: [&str; 9] = [
        "classes[",
        "run.",
        "plan.",
        "model.",
        "hardware.",
        "engine.",
        "cluster.",
        "replica.",
        "step_time.",
    ];
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = ROOTS
        .iter()
        .filter_map(|root| {
            // A path starts after a word's end and goes on past its root
            // ("run." ending a sentence is not one).
            rest.match_indices(root).map(|(i, _)| i).find(|&i| {
                rest[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !is_path_char(c))
                    && rest[i + root.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        })
        .min()
    {
        let len = rest[start..]
            .find(|c: char| !is_path_char(c))
            .unwrap_or(rest.len() - start);
        // A sentence's full stop is not part of the path.
        let path = rest[start..start + len].trim_end_matches('.');
        out.push_str(&rest[..start]);
        out.push_str(&format!("\u{201c}{}\u{201d}", field_words(path, params)));
        rest = &rest[start + path.len()..];
    }
    out.push_str(rest);
    out
}

/// The field at `path` as the form names it: the section or item first
/// (`Class "chat"`, `SLA target 2`, `Model`), then the field's label.
pub fn field_words(path: &str, params: Option<&ScenarioParams>) -> String {
    let segments = segments(path);
    let mut words = scenario_words(&segments, params);
    if let Some(first) = words.first_mut() {
        *first = capitalised(first);
    }
    words.join(", ")
}

/// The field at `path` of a class (`input_tokens.p90`), as the class's
/// own editor names it (no class before it).
pub fn class_field_words(path: &str, class: Option<&ClassParams>) -> String {
    let words = class_words(&segments(path), class);
    capitalised(&words.join(", "))
}

/// One step of a path: a field's name or a list's index.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Segment<'a> {
    Name(&'a str),
    Index(usize),
}

use Segment::{Index, Name};

/// `classes[0].lengths.pairs[3][1]` as names and indexes.
fn segments(path: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !name.is_empty() {
            out.push(Name(name));
        }
        while let Some(inside) = rest.strip_prefix('[') {
            let end = inside.find(']').unwrap_or(inside.len());
            let key = &inside[..end];
            out.push(key.parse().map_or(Name(key), Index));
            rest = inside.get(end + 1..).unwrap_or("");
        }
    }
    out
}

/// A path's words from the scenario's top level.
fn scenario_words(path: &[Segment], params: Option<&ScenarioParams>) -> Vec<String> {
    let [Name(section), rest @ ..] = path else {
        return rest_words(path);
    };
    let within = |title: &str, section: &str| {
        let mut words = vec![title.to_string()];
        words.extend(labelled(rest, section));
        words
    };
    match *section {
        "version" => vec!["format version".to_string()],
        "name" if rest.is_empty() => vec![after_comma(inputs::NAME.label)],
        "classes" => classes_words(rest, params),
        "model" => within("Model", "model"),
        "hardware" => within("Hardware", "hardware"),
        "replica" => within("Hardware", "replica"),
        "engine" => within("Serving engine", "engine"),
        "cluster" => within("Cluster", "cluster"),
        "step_time" => step_time_words(rest, params.map(|p| &p.step_time)),
        "step_time_scale" => vec![after_comma(inputs::STEP_TIME_SCALE.label)],
        "run" => within("Simulation", "run"),
        "plan" => plan_words(rest),
        _ => rest_words(path),
    }
}

/// `classes`, `classes[i]` and a class's fields: the class by its name.
fn classes_words(path: &[Segment], params: Option<&ScenarioParams>) -> Vec<String> {
    let [Index(i), rest @ ..] = path else {
        let mut words = vec!["request classes".to_string()];
        words.extend(rest_words(path));
        return words;
    };
    let class = params.and_then(|p| p.classes.get(*i));
    let name = match class.map(|c| c.name.trim()) {
        Some(name) if !name.is_empty() => format!("Class \"{name}\""),
        _ => format!("Class {}", i + 1),
    };
    let mut words = vec![name];
    words.extend(class_words(rest, class));
    words
}

/// A class's field, as its editor labels it.
fn class_words(path: &[Segment], class: Option<&ClassParams>) -> Vec<String> {
    let [Name(field), rest @ ..] = path else {
        return rest_words(path);
    };
    let dist = |dist: Option<&DistParams>| {
        let mut words = vec![dist_title(field).map_or_else(|| spaced(field), after_comma)];
        words.extend(dist_words(rest, dist));
        words
    };
    match *field {
        "batch_size" => dist(class.map(|c| &c.batch_size)),
        "input_tokens" => dist(class.map(|c| &c.input_tokens)),
        "output_tokens" => dist(class.map(|c| &c.output_tokens)),
        "time_of_day" => {
            let mut words = vec!["time of day".to_string()];
            if let [Index(hour), ..] = rest {
                words.push(format!("{hour:02}h"));
            }
            words
        }
        "lengths" => {
            let mut words = vec!["prompt and output together".to_string()];
            words.extend(lengths_words(rest));
            words
        }
        "load" => load_words(rest, class.map(|c| &c.load)),
        _ => labelled(path, "classes[]"),
    }
}

/// A distribution's field (`p90`, `values[3]`, `max`), with the form's
/// label for it in the distribution's shape.
fn dist_words(path: &[Segment], dist: Option<&DistParams>) -> Vec<String> {
    let [Name(field), rest @ ..] = path else {
        return rest_words(path);
    };
    let shape_label = dist.and_then(|d| {
        let numbers = shape_fields(&d.shape).iter().map(|&(f, label)| (f, label));
        let lists = shape_lists(&d.shape)
            .iter()
            .map(|&(f, label, ..)| (f, label));
        numbers
            .chain(lists)
            .find(|&(f, _)| f == *field)
            .map(|(_, l)| l)
    });
    match shape_label {
        Some(label) => {
            let mut words = vec![after_comma(label)];
            words.extend(rest_words(rest));
            words
        }
        None => labelled(path, "dist"),
    }
}

/// How the two lengths go together: the correlation or the table's cells.
fn lengths_words(path: &[Segment]) -> Vec<String> {
    match path {
        [Name("pairs"), Index(row), Index(column), ..] => {
            let column = PAIR_COLUMNS.get(*column).copied().unwrap_or("column");
            vec![format!("pairs, row {}, {column}", row + 1)]
        }
        [Name("pairs"), Index(row), ..] => vec![format!("pairs, row {}", row + 1)],
        _ => labelled(path, "classes[].lengths"),
    }
}

/// The columns of a table of pairs, as its box explains them.
const PAIR_COLUMNS: [&str; 3] = ["input", "output", "weight"];

/// A class's load: its mode's boxes, or a trace's request by number.
fn load_words(path: &[Segment], load: Option<&LoadParams>) -> Vec<String> {
    match path {
        [] | [Name("kind")] => vec![after_comma(inputs::CLASS_LOAD_KIND.label)],
        [Name("requests"), Index(i), rest @ ..] => {
            let mut words = vec![format!("trace request {}", i + 1)];
            words.extend(labelled(rest, "classes[].load.requests[]"));
            words
        }
        [Name("requests")] => match load {
            Some(LoadParams::ClosedLoop { .. }) => {
                vec![after_comma(inputs::CLASS_LOAD_REQUESTS_IN_ALL.label)]
            }
            Some(LoadParams::Trace { .. }) => vec!["trace requests".to_string()],
            _ => vec![after_comma(inputs::CLASS_LOAD_REQUESTS.label)],
        },
        [Name("think_ms"), rest @ ..] => {
            let think = match load {
                Some(LoadParams::ClosedLoop { think_ms, .. }) => think_ms.as_ref(),
                _ => None,
            };
            let mut words = vec![after_comma(inputs::CLASS_LOAD_THINK_MS.label)];
            words.extend(dist_words(rest, think));
            words
        }
        _ => labelled(path, "classes[].load"),
    }
}

/// The step-time model's fields, labelled as the serving panel's boxes.
fn step_time_words(path: &[Segment], model: Option<&StepTimeParams>) -> Vec<String> {
    let mut words = vec![inputs::STEP_TIME_KIND.label.to_string()];
    match path {
        [] | [Name("kind")] => {}
        [Name("step_s"), Index(row), Index(column), ..] => words.push(format!(
            "measured table, row {}, column {}",
            row + 1,
            column + 1
        )),
        [Name("step_s"), Index(row), ..] => words.push(format!("measured table, row {}", row + 1)),
        [Name(field), rest @ ..] => {
            let label = model
                .and_then(|m| step_time_labels(m).find(|&(f, _)| f == *field))
                .map(|(_, label)| label)
                .or_else(|| registry::input(&format!("step_time.{field}")).map(|i| i.label));
            match label {
                Some(label) => {
                    words.push(after_comma(label));
                    words.extend(rest_words(rest));
                }
                None => words.extend(rest_words(path)),
            }
        }
        _ => words.extend(rest_words(path)),
    }
    words
}

/// The plan's fields, as the prices, targets and cases panels label them.
fn plan_words(path: &[Segment]) -> Vec<String> {
    let (first, rest) = match path {
        [Name(first), rest @ ..] => (*first, rest),
        _ => return rest_words(path),
    };
    let within = |title: &str, section: &str| {
        let mut words = vec![title.to_string()];
        words.extend(labelled(rest, section));
        words
    };
    match (first, rest) {
        ("pricing", _) => within("Prices", "plan.pricing"),
        ("reserve", _) => within("Reserve", "plan.reserve"),
        ("targets", [Index(i), rest @ ..]) => {
            let mut words = vec![format!("SLA target {}", i + 1)];
            words.extend(labelled(rest, "plan.targets[]"));
            words
        }
        ("targets", _) => within("SLA targets", "plan.targets"),
        ("candidates", [Index(i), rest @ ..]) => {
            let mut words = vec![format!("Hardware option {}", i + 1)];
            words.extend(labelled(rest, "plan.candidates[]"));
            words
        }
        ("candidates", _) => within("Hardware options", "plan.candidates"),
        ("best" | "worst", [Name(input), ..]) => {
            let case = if first == "best" { "Best" } else { "Worst" };
            let input = enum_parse::<SensitivityInput>(input).map_or(*input, |i| i.label());
            vec![format!("{case} case"), input.to_string()]
        }
        ("sensitivity", _) => within("Sensitivity", "plan.sensitivity"),
        ("service_curve", _) => within("Service curve", "plan.service_curve"),
        ("search", _) => within("What the plan compares", "plan.search"),
        _ => {
            let mut words = vec!["Capacity plan".to_string()];
            words.extend(labelled(path, "plan"));
            words
        }
    }
}

/// `path`'s first name as labelled in `section` (`model`, `classes[]`; a
/// path with `[]` for any item), spaced out if not there, then the rest.
fn labelled(path: &[Segment], section: &str) -> Vec<String> {
    match path {
        [Name(name), rest @ ..] => {
            let mut words = vec![label_at(section, name).unwrap_or_else(|| spaced(name))];
            words.extend(rest_words(rest));
            words
        }
        _ => rest_words(path),
    }
}

/// The label of field `name` of `section`, as it reads after a comma: the
/// registry's input there, or a field the form leaves to files.
fn label_at(section: &str, name: &str) -> Option<String> {
    if section == "dist"
        && let Some(label) = dist_label(name)
    {
        return Some(after_comma(label));
    }
    let path = format!("{section}.{name}");
    match registry::input(&path) {
        Some(input) => Some(after_comma(input.label)),
        None => LEFT_TO_FILES
            .iter()
            .find(|(field, _)| *field == path)
            .map(|(_, label)| label.to_string()),
    }
}

/// A path no table knows, still readable: names spaced out, indexes
/// counted from 1.
fn rest_words(path: &[Segment]) -> Vec<String> {
    path.iter()
        .map(|segment| match segment {
            Name(name) => spaced(name),
            Index(i) => format!("entry {}", i + 1),
        })
        .collect()
}

/// `max_num_seqs` as "max num seqs".
fn spaced(name: &str) -> String {
    name.replace('_', " ")
}

/// `text` with its first letter upper-case (it starts the message).
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A label as it reads after a comma: lower-case, unless it starts with an
/// abbreviation ("KV heads", "GPUs per replica").
fn after_comma(label: &str) -> String {
    let mut chars = label.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if second.is_lowercase() || second == ' ' => first
            .to_lowercase()
            .chain(label[first.len_utf8()..].chars())
            .collect(),
        _ => label.to_string(),
    }
}

/// The words of fields no box edits (the form leaves them to files, or
/// edits them as a whole: a list of checkboxes, a table of pairs), as
/// they read after a comma; `dist` is any distribution. Every field a box
/// edits is named by its input in the registry.
const LEFT_TO_FILES: &[(&str, &str)] = &[
    ("model.moe", "mixture of experts"),
    ("model.mla", "MLA"),
    ("dist.min", "floor (min)"),
    ("classes[].lengths.pairs", "pairs"),
    ("classes[].load.requests[].arrival_s", "arrival time"),
    ("classes[].load.requests[].input_tokens", "input tokens"),
    ("classes[].load.requests[].output_tokens", "output tokens"),
    ("classes[].load.requests[].prefix_hit", "prefix cache hit"),
    ("plan.candidates[].hardware", "accelerator"),
    ("plan.search.disciplines", "disciplines"),
    ("plan.search.routers", "routers"),
];

#[cfg(test)]
mod tests;
