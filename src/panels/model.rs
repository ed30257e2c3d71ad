//! The model and hardware panels: presets that fill every field (with their
//! assumptions and sources), the architecture, the accelerator, the replica
//! layout, and the memory bar.

use leptos::prelude::*;
use sojourn_engine::presets;
use sojourn_engine::{Dtype, Fit, MemoryBudget, ScenarioParams};

use crate::form::{
    SourceLine, expert_layout_note, hardware_preset_id, hardware_sources, model_preset_id,
    model_sources, typical_seq_tokens,
};
use crate::format::format_gib;
use crate::help;
use crate::panels::at::{At, at};
use crate::panels::fields::{Info, choice, fields, menu, number, text};
use crate::panels::{LazyDetails, Panel};
use crate::registry::{enum_text, inputs};
use crate::state::AppState;

const DTYPES: [Dtype; 7] = [
    Dtype::Bf16,
    Dtype::Fp16,
    Dtype::Fp32,
    Dtype::Fp8,
    Dtype::Int8,
    Dtype::Int4,
    Dtype::Fp4,
];

fn dtype_options(_: &ScenarioParams) -> Vec<(String, String)> {
    DTYPES
        .iter()
        .map(|d| (enum_text(d), format!("{} ({} B)", enum_text(d), d.bytes())))
        .collect()
}

#[component]
pub fn ModelPanel(state: AppState) -> impl IntoView {
    let preset = preset_at("model.preset", model_preset_id, presets::model, |p, m| {
        p.model = m
    });
    let preset_options = |_: &ScenarioParams| {
        let models = presets::models().into_iter();
        with_custom(
            models.map(|m| (m.id.to_string(), m.params.name)),
            "Custom architecture",
        )
    };
    let rows = vec![
        menu(preset, &inputs::MODEL_PRESET, preset_options),
        text(at!(model.name), &inputs::MODEL_NAME),
        number(at!(model.params_b), &inputs::MODEL_PARAMS_B),
        number(at!(model.active_params_b), &inputs::MODEL_ACTIVE_PARAMS_B).placeholder("dense"),
        number(at!(model.layers), &inputs::MODEL_LAYERS),
        number(at!(model.q_heads), &inputs::MODEL_Q_HEADS),
        number(at!(model.kv_heads), &inputs::MODEL_KV_HEADS),
        number(at!(model.head_dim), &inputs::MODEL_HEAD_DIM),
        number(at!(model.kv_latent_dim), &inputs::MODEL_KV_LATENT_DIM).placeholder("none"),
        choice(
            at!(model.weight_dtype),
            &inputs::MODEL_WEIGHT_DTYPE,
            dtype_options,
        ),
        choice(at!(model.kv_dtype), &inputs::MODEL_KV_DTYPE, dtype_options),
    ];
    let sources = Memo::new(move |_| state.params.with(model_sources));
    let layout_note = move || {
        state
            .params
            .with(|p| expert_layout_note(&p.model))
            .map(|note| view! { <p class="panel-note">{note}</p> })
    };
    view! {
        <Panel id="model" title="Model">
            <div class="grid">{fields(state, rows)}</div>
            {layout_note}
            <Sources lines=sources />
        </Panel>
    }
}

/// A preset menu's place: it shows the preset the fields equal (`current`)
/// or "custom", and choosing a preset `apply`s what `find` gives for it.
fn preset_at<T: 'static>(
    path: &'static str,
    current: fn(&ScenarioParams) -> Option<&'static str>,
    find: fn(&str) -> Option<T>,
    apply: fn(&mut ScenarioParams, T),
) -> At<String> {
    At::new(
        path,
        move |p| Some(current(p).unwrap_or("custom").to_string()),
        move |p, id| {
            if let Some(preset) = find(&id) {
                apply(p, preset);
            }
        },
    )
}

/// Preset menu options: the presets, (id, name), then "custom" named `custom`.
fn with_custom(
    presets: impl Iterator<Item = (String, String)>,
    custom: &str,
) -> Vec<(String, String)> {
    presets
        .chain([("custom".to_string(), custom.to_string())])
        .collect()
}

#[component]
pub fn HardwarePanel(state: AppState) -> impl IntoView {
    let sources = Memo::new(move |_| state.params.with(hardware_sources));
    let preset_note = move || {
        let unverified = sources.with(|s| s.iter().flatten().any(|line| !line.verified));
        unverified
            .then_some("Some figures of this preset are unverified: see Assumptions and sources.")
    };
    let preset = preset_at(
        "hardware.preset",
        hardware_preset_id,
        presets::hardware,
        |p, h| p.hardware = h,
    );
    let preset_options = |_: &ScenarioParams| {
        let named = presets::hardware_presets().into_iter().map(|h| {
            let name = if h.verified() {
                h.params.name
            } else {
                format!("{} (unverified)", h.params.name)
            };
            (h.id.to_string(), name)
        });
        with_custom(named, "Custom accelerator")
    };
    let rows = vec![
        menu(preset, &inputs::HARDWARE_PRESET, preset_options),
        text(at!(hardware.name), &inputs::HARDWARE_NAME),
        number(at!(hardware.memory_gib), &inputs::HARDWARE_MEMORY_GIB),
        number(
            at!(hardware.bandwidth_gb_s),
            &inputs::HARDWARE_BANDWIDTH_GB_S,
        ),
        number(at!(hardware.peak_tflops), &inputs::HARDWARE_PEAK_TFLOPS),
        number(
            at!(replica.gpus_per_replica),
            &inputs::REPLICA_GPUS_PER_REPLICA,
        ),
        number(
            at!(replica.gpu_memory_utilization),
            &inputs::REPLICA_GPU_MEMORY_UTILIZATION,
        ),
        number(
            at!(replica.runtime_reserve_gib),
            &inputs::REPLICA_RUNTIME_RESERVE_GIB,
        )
        .placeholder("as vLLM profiles"),
    ];
    view! {
        <Panel id="hardware" title="Hardware">
            <div class="grid">{fields(state, rows)}</div>
            <p class="panel-note">{preset_note}</p>
            <Sources lines=sources />
            <MemoryBar state />
        </Panel>
    }
}

/// "Assumptions and sources": where each figure of the chosen preset was
/// read and when, unverified ones marked; nothing to cite for custom values.
#[component]
fn Sources(lines: Memo<Option<Vec<SourceLine>>>) -> impl IntoView {
    view! {
        <LazyDetails summary="Assumptions and sources" class="sources">
            {move || match lines.get() {
                None => {
                    view! { <p>"Custom values: no preset, so no sources to show."</p> }.into_any()
                }
                Some(lines) => {
                    view! {
                        <ul>
                            {lines
                                .into_iter()
                                .map(|line| {
                                    view! {
                                        <li class:unverified=!line
                                            .verified>
                                            {(!line.verified)
                                                .then_some(view! { <strong>"Unverified: "</strong> })}
                                            {line.text}
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                        .into_any()
                }
            }}
        </LazyDetails>
    }
}

/// Weights, runtime reserve and KV cache against the replica's memory.
#[component]
fn MemoryBar(state: AppState) -> impl IntoView {
    let budget = Memo::new(move |_| {
        state.params.with(|p| {
            let budget = MemoryBudget::compute(p);
            let fit = budget.fit(p.engine.max_num_seqs, typical_seq_tokens(p));
            (budget, fit)
        })
    });
    let segments = move || {
        let (b, _) = budget.get();
        let total = b.device_bytes.max(1.0);
        let share = |bytes: f64| (bytes.max(0.0) / total * 100.0).min(100.0);
        let kv = b.kv_pool_bytes.max(0.0);
        let unused = (b.device_bytes - b.usable_bytes).max(0.0);
        let over = (b.weight_bytes + b.reserve_bytes - b.usable_bytes).max(0.0);
        vec![
            (
                "weights",
                share(b.weight_bytes.min(total)),
                format!("weights {}", format_gib(b.weight_bytes)),
            ),
            (
                "reserve",
                share(b.reserve_bytes),
                format!("reserve {}", format_gib(b.reserve_bytes)),
            ),
            ("kv", share(kv), format!("KV cache {}", format_gib(kv))),
            (
                "unused",
                share(unused),
                format!("held back {}", format_gib(unused)),
            ),
            (
                "over",
                share(over),
                if over > 0.0 {
                    format!("short by {}", format_gib(over))
                } else {
                    String::new()
                },
            ),
        ]
    };
    let verdict = move || {
        let (b, fit) = budget.get();
        let tokens = b.kv_capacity_tokens();
        match fit {
            Fit::Fits => (
                "fits",
                format!(
                    "Fits: the KV cache holds {} tokens per replica.",
                    crate::format::format_count(tokens)
                ),
            ),
            Fit::Tight => (
                "tight",
                format!(
                    "Tight: the KV cache holds {} tokens per replica, fewer than max_num_seqs typical requests need; KV, not max_num_seqs, limits concurrency.",
                    crate::format::format_count(tokens)
                ),
            ),
            Fit::DoesNotFit => (
                "does-not-fit",
                format!(
                    "Does not fit: weights and reserve need {} but the engine may use {}.",
                    format_gib(b.weight_bytes + b.reserve_bytes),
                    format_gib(b.usable_bytes)
                ),
            ),
        }
    };
    let label = move || {
        let (b, _) = budget.get();
        format!(
            "Memory per replica ({} of {}): {}",
            format_gib(b.usable_bytes),
            format_gib(b.device_bytes),
            segments()
                .iter()
                .filter(|(_, s, _)| *s > 0.0)
                .map(|(_, _, t)| t.clone())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    view! {
        <div class="memory">
            <div class="memory-head">
                <span>"Memory per replica"</span>
                <Info topic="the memory bar" text=help::MEMORY_BAR />
                <Info topic="the KV cache" text=help::KV_CACHE />
            </div>
            <div class="memory-bar" role="img" aria-label=label>
                {move || {
                    segments()
                        .into_iter()
                        .map(|(class, width, title)| {
                            view! {
                                <span
                                    class=format!("seg seg-{class}")
                                    style:width=format!("{width:.2}%")
                                    title=title
                                ></span>
                            }
                        })
                        .collect_view()
                }}
            </div>
            <ul class="memory-legend">
                {move || {
                    segments()
                        .into_iter()
                        .filter(|(_, _, t)| !t.is_empty())
                        .map(|(class, _, text)| {
                            view! {
                                <li>
                                    <span class=format!("swatch seg-{class}")></span>
                                    {text}
                                </li>
                            }
                        })
                        .collect_view()
                }}
            </ul>
            <p class=move || format!("memory-verdict {}", verdict().0) role="status">
                {move || verdict().1}
            </p>
        </div>
    }
}
