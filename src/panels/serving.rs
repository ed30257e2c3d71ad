//! The serving-engine, cluster and simulation panels, with the rarely
//! changed knobs (step-time model, sequence limits, warm-up, drain) under
//! "Advanced".

use leptos::prelude::*;
use sojourn_engine::{CudaGraphs, Discipline, OperationsParams, Router, StepTimeParams};

use crate::panels::at::{At, at};
use crate::panels::calibration::FitMeasurements;
use crate::panels::fields::{choice, fields, menu, number, options};
use crate::panels::{LazyDetails, Panel};
use crate::registry::{OPERATIONS, Words, enum_text, inputs, step_time_kind, step_time_numbers};
use crate::state::AppState;

/// The service disciplines in words, in the planner's order.
pub const DISCIPLINES: [(Discipline, &str); 4] = [
    (Discipline::Fcfs, "First come, first served"),
    (Discipline::Priority, "Priority"),
    (Discipline::ShortestInputFirst, "Shortest input first"),
    (Discipline::EarliestDeadlineFirst, "Earliest deadline first"),
];

/// The routers in words.
pub const ROUTERS: [(Router, &str); 3] = [
    (Router::JoinShortestQueue, "Join shortest queue"),
    (Router::LeastKvLoad, "Least KV load"),
    (Router::RoundRobin, "Round robin"),
];

/// Menu options for an enum's (value, words) pairs.
fn labelled_options<T: serde::Serialize>(values: &[(T, &str)]) -> Vec<(String, String)> {
    values
        .iter()
        .map(|(value, label)| (enum_text(value), label.to_string()))
        .collect()
}

#[component]
pub fn ServingPanel(state: AppState) -> impl IntoView {
    let rows = vec![
        number(at!(cluster.replicas), &inputs::CLUSTER_REPLICAS),
        choice(at!(cluster.router), &inputs::CLUSTER_ROUTER, |_| {
            labelled_options(&ROUTERS)
        }),
        number(at!(engine.max_num_seqs), &inputs::ENGINE_MAX_NUM_SEQS),
        number(
            at!(engine.max_num_batched_tokens),
            &inputs::ENGINE_MAX_NUM_BATCHED_TOKENS,
        ),
        number(
            at!(engine.long_prefill_threshold),
            &inputs::ENGINE_LONG_PREFILL_THRESHOLD,
        ),
        choice(at!(engine.discipline), &inputs::ENGINE_DISCIPLINE, |_| {
            labelled_options(&DISCIPLINES)
        }),
        number(at!(engine.max_waiting), &inputs::ENGINE_MAX_WAITING).placeholder("unbounded"),
    ];
    let advanced = move || {
        let rows = vec![
            number(at!(engine.block_size), &inputs::ENGINE_BLOCK_SIZE),
            number(at!(engine.max_model_len), &inputs::ENGINE_MAX_MODEL_LEN)
                .placeholder("what fits"),
            choice(at!(engine.schedule), &inputs::ENGINE_SCHEDULE, |_| {
                options(&[
                    ("decode_first", "Decodes first, chunked prefill (vLLM V1)"),
                    ("prefill_first", "Prefills first, whole prompts (vLLM V0)"),
                ])
            }),
            menu(
                at!(engine.prefix_caching).map(
                    |on| if on { "on" } else { "off" }.to_string(),
                    |text: String| Some(text == "on"),
                ),
                &inputs::ENGINE_PREFIX_CACHING,
                |_| options(&[("on", "On (vLLM V1)"), ("off", "Off (vLLM V0)")]),
            ),
            number(at!(step_time_scale), &inputs::STEP_TIME_SCALE),
            menu(
                At::new(
                    "step_time.kind",
                    |p| Some(step_time_kind(&p.step_time).to_string()),
                    |p, kind| {
                        if kind != step_time_kind(&p.step_time) {
                            match kind.as_str() {
                                "roofline" => p.step_time = StepTimeParams::default(),
                                "operations" => {
                                    p.step_time =
                                        StepTimeParams::Operations(OperationsParams::default())
                                }
                                "alpha_beta" => p.step_time = ALPHA_BETA,
                                _ => {}
                            }
                        }
                    },
                ),
                &inputs::STEP_TIME_KIND,
                |p| {
                    let mut choices = vec![
                        ("roofline", "Roofline (from model and hardware)"),
                        (
                            "operations",
                            "Per operation (calibrated by accelerator family)",
                        ),
                        ("alpha_beta", "Alpha-beta (per token, per step)"),
                    ];
                    if step_time_kind(&p.step_time) == "table" {
                        choices.push(("table", "Measured table (edit in a JSON file)"));
                    }
                    options(&choices)
                },
            ),
        ];
        view! {
            <div class="grid">{fields(state, rows)} <StepTimeFields state /></div>
            <FitMeasurements state />
        }
    };
    view! {
        <Panel id="serving" title="Serving engine and cluster">
            <p class="panel-note">
                "vLLM-style continuous batching with chunked prefill and paged KV cache."
            </p>
            <div class="grid">{fields(state, rows)}</div>
            <LazyDetails summary="Advanced: KV blocks, sequence length, step-time model">
                {advanced()}
            </LazyDetails>
        </Panel>
    }
}

/// The alpha-beta model a user switching to it starts from.
const ALPHA_BETA: StepTimeParams = StepTimeParams::AlphaBeta {
    alpha_s_per_token: 1e-4,
    beta_s_per_step: 0.02,
    overhead_s: 0.002,
};

/// The number `field` of the step-time model, if the model has one (read
/// through [`step_time_slot`], so reading and writing name the same numbers).
fn step_time_number(step_time: &StepTimeParams, field: &str) -> Option<f64> {
    step_time_slot(&mut step_time.clone(), field).copied()
}

/// Where the number `field` of the step-time model is kept, if it has one.
fn step_time_slot<'a>(step_time: &'a mut StepTimeParams, field: &str) -> Option<&'a mut f64> {
    match (step_time, field) {
        (StepTimeParams::Roofline { mfu, .. }, "mfu") => Some(mfu),
        (StepTimeParams::Roofline { mbu, .. }, "mbu") => Some(mbu),
        (
            StepTimeParams::Roofline { overhead_s, .. }
            | StepTimeParams::AlphaBeta { overhead_s, .. },
            "overhead_s",
        ) => Some(overhead_s),
        (
            StepTimeParams::AlphaBeta {
                alpha_s_per_token, ..
            },
            "alpha_s_per_token",
        ) => Some(alpha_s_per_token),
        (
            StepTimeParams::AlphaBeta {
                beta_s_per_step, ..
            },
            "beta_s_per_step",
        ) => Some(beta_s_per_step),
        _ => None,
    }
}

/// Where the per-operation model keeps `field`, if the model is that one.
fn operations_slot<'a>(
    step_time: &'a mut StepTimeParams,
    field: &str,
) -> Option<&'a mut Option<f64>> {
    let StepTimeParams::Operations(o) = step_time else {
        return None;
    };
    Some(match field {
        "gemm_efficiency" => &mut o.gemm_efficiency,
        "weight_bandwidth_efficiency" => &mut o.weight_bandwidth_efficiency,
        "attention_efficiency" => &mut o.attention_efficiency,
        "kv_bandwidth_efficiency" => &mut o.kv_bandwidth_efficiency,
        "per_sequence_s" => &mut o.per_sequence_s,
        "overhead_s" => &mut o.overhead_s,
        "interconnect_efficiency" => &mut o.interconnect_efficiency,
        "allreduce_latency_s" => &mut o.allreduce_latency_s,
        _ => return None,
    })
}

/// The menu value of an engine's CUDA graphs.
fn graphs_name(graphs: &CudaGraphs) -> &'static str {
    match graphs {
        CudaGraphs::Piecewise => "piecewise",
        CudaGraphs::DecodeOnly => "decode_only",
        CudaGraphs::DecodeBatchSizes(_) => "decode_batch_sizes",
        CudaGraphs::Off => "off",
    }
}

/// The per-operation model's boxes.
fn operations_fields(state: AppState) -> impl IntoView {
    let rows = OPERATIONS
        .iter()
        .map(|&(field, label, unit, reads, help)| {
            let at = At::new(
                format!("step_time.{field}"),
                move |p| operations_slot(&mut p.step_time.clone(), field).map(|v| *v),
                move |p, value| {
                    if let Some(slot) = operations_slot(&mut p.step_time, field) {
                        *slot = value;
                    }
                },
            );
            number(at, Words::new(label, unit, help))
                .reads_as(reads)
                .placeholder("accelerator's default")
        })
        .chain([menu(
            At::new(
                "step_time.cuda_graphs",
                |p| match &p.step_time {
                    StepTimeParams::Operations(o) => Some(graphs_name(&o.cuda_graphs).to_string()),
                    _ => None,
                },
                |p, name: String| {
                    if let StepTimeParams::Operations(o) = &mut p.step_time {
                        match name.as_str() {
                            "piecewise" => o.cuda_graphs = CudaGraphs::Piecewise,
                            "decode_only" => o.cuda_graphs = CudaGraphs::DecodeOnly,
                            "off" => o.cuda_graphs = CudaGraphs::Off,
                            // The file's own sizes stay as they are.
                            _ => {}
                        }
                    }
                },
            ),
            &inputs::STEP_TIME_CUDA_GRAPHS,
            |p| {
                let mut choices = vec![
                    ("piecewise", "vLLM V1: steps up to 512 tokens"),
                    ("decode_only", "vLLM V0: decode-only steps"),
                    ("off", "None: eager, TensorRT engines"),
                ];
                if let StepTimeParams::Operations(o) = &p.step_time
                    && matches!(o.cuda_graphs, CudaGraphs::DecodeBatchSizes(_))
                {
                    choices.push(("decode_batch_sizes", "Decode-only steps, the file's sizes"));
                }
                options(&choices)
            },
        )])
        .collect();
    fields(state, rows)
}

/// The numbers of the chosen step-time model; a measured table is edited
/// in a file.
#[component]
fn StepTimeFields(state: AppState) -> impl IntoView {
    let kind = Memo::new(move |_| state.params.with(|p| step_time_kind(&p.step_time)));
    move || {
        let kind = kind.get();
        if kind == "operations" {
            return operations_fields(state).into_any();
        }
        if kind == "table" {
            return view! {
                <p class="panel-note">
                    "A measured step-time table: import a scenario file to change it."
                </p>
            }
            .into_any();
        }
        let rows = step_time_numbers(kind)
            .iter()
            .map(|&(field, label, unit, reads, help)| {
                let at = At::new(
                    format!("step_time.{field}"),
                    move |p| step_time_number(&p.step_time, field),
                    move |p, value| {
                        if let Some(slot) = step_time_slot(&mut p.step_time, field) {
                            *slot = value;
                        }
                    },
                );
                number(at, Words::new(label, unit, help)).reads_as(reads)
            })
            .collect();
        fields(state, rows)
    }
}

#[component]
pub fn SimulationPanel(state: AppState) -> impl IntoView {
    let rows = vec![
        number(at!(run.horizon_s), &inputs::RUN_HORIZON_S),
        number(at!(run.seed), &inputs::RUN_SEED),
    ];
    let advanced = move || {
        let rows = vec![
            number(at!(run.warmup_s), &inputs::RUN_WARMUP_S),
            number(at!(run.drain_s), &inputs::RUN_DRAIN_S).placeholder("longest deadline"),
            number(at!(run.series_interval_s), &inputs::RUN_SERIES_INTERVAL_S),
        ];
        view! { <div class="grid">{fields(state, rows)}</div> }
    };
    view! {
        <Panel id="simulation" title="Simulation">
            <div class="grid">{fields(state, rows)}</div>
            <LazyDetails summary="Advanced: warm-up, drain, sampling">{advanced()}</LazyDetails>
        </Panel>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The CUDA-graph menu's values are the names a scenario file writes.
    #[test]
    fn the_cuda_graph_menu_names_what_files_write() {
        for graphs in [
            CudaGraphs::Piecewise,
            CudaGraphs::DecodeOnly,
            CudaGraphs::Off,
        ] {
            let written = serde_json::to_value(&graphs).expect("json");
            assert_eq!(written, graphs_name(&graphs), "{graphs:?}");
        }
        let listed = serde_json::to_value(CudaGraphs::DecodeBatchSizes(vec![1, 8])).expect("json");
        assert_eq!(
            listed
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>()),
            Some(vec![
                graphs_name(&CudaGraphs::DecodeBatchSizes(vec![])).to_string()
            ])
        );
    }

    // The boxes of a step-time model read and write its numbers by name:
    // every name the menu's model shows must reach a number of that model.
    #[test]
    fn every_step_time_box_reads_and_writes_a_number_of_its_model() {
        for model in [StepTimeParams::default(), ALPHA_BETA] {
            let kind = step_time_kind(&model);
            assert_eq!(step_time_numbers(kind).len(), 3, "{kind}");
            for &(field, ..) in step_time_numbers(kind) {
                let mut edited = model.clone();
                assert!(step_time_number(&edited, field).is_some(), "{kind} {field}");
                if let Some(slot) = step_time_slot(&mut edited, field) {
                    *slot = 0.125;
                }
                assert_eq!(
                    step_time_number(&edited, field),
                    Some(0.125),
                    "{kind} {field}"
                );
                assert_ne!(edited, model, "{kind} {field}");
            }
        }
    }

    // Every box of the per-operation model starts empty (the family's
    // default) and writes its own field, and only that one.
    #[test]
    fn every_operations_box_writes_its_own_efficiency() {
        let model = StepTimeParams::Operations(OperationsParams::default());
        for (i, &(field, ..)) in OPERATIONS.iter().enumerate() {
            let mut edited = model.clone();
            let slot = operations_slot(&mut edited, field).expect(field);
            assert_eq!(*slot, None, "{field}");
            *slot = Some(0.5 + i as f64);
            let json = serde_json::to_value(&edited).expect("json");
            assert_eq!(json[field], serde_json::json!(0.5 + i as f64), "{field}");
            assert_eq!(
                json.as_object().map(|o| o.len()),
                Some(2),
                "{field}: {json}"
            );
        }
        assert!(operations_slot(&mut StepTimeParams::default(), "gemm_efficiency").is_none());
    }
}
