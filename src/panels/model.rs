//! The model and hardware panels: presets that fill every field, the
//! architecture, the accelerator, the replica layout, and the memory bar.

use leptos::prelude::*;
use sojourn_engine::presets;
use sojourn_engine::{Dtype, Fit, MemoryBudget, ScenarioParams};

use crate::form::{enum_parse, enum_text, hardware_preset_id, model_preset_id, typical_seq_tokens};
use crate::format::format_gib;
use crate::help;
use crate::panels::fields::{Info, Kind, NumberField, SelectField, TextField};
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
    view! {
        <section class="panel" aria-labelledby="model-heading">
            <h2 id="model-heading">"Model"</h2>
            <div class="grid">
                <SelectField
                    state
                    path="model.preset"
                    label="Preset"
                    help=help::MODEL
                    options=|_| {
                        let mut options: Vec<(String, String)> = presets::models()
                            .into_iter()
                            .map(|m| (m.id.to_string(), m.params.name.clone()))
                            .collect();
                        options.push(("custom".to_string(), "Custom architecture".to_string()));
                        options
                    }
                    get=|p| model_preset_id(p).unwrap_or("custom").to_string()
                    set=|p, id| {
                        if let Some(model) = presets::model(id) {
                            p.model = model;
                        }
                    }
                />
                <TextField
                    state
                    path="model.name"
                    label="Name"
                    help=help::MODEL
                    get=|p| p.model.name.clone()
                    set=|p, v| p.model.name = v
                />
                <NumberField
                    state
                    path="model.params_b"
                    label="Parameters"
                    unit="B"
                    help=help::PARAMS_B
                    get=|p| Some(p.model.params_b)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.model.params_b = v;
                        }
                    }
                />
                <NumberField
                    state
                    path="model.active_params_b"
                    label="Active parameters (MoE)"
                    unit="B"
                    help=help::ACTIVE_PARAMS_B
                    optional=true
                    placeholder="dense"
                    get=|p| p.model.active_params_b
                    set=|p, v| p.model.active_params_b = v
                />
                <NumberField
                    state
                    path="model.layers"
                    label="Layers"
                    help=help::LAYERS
                    kind=Kind::Count
                    get=|p| Some(p.model.layers as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.model.layers = count_u32(v);
                        }
                    }
                />
                <NumberField
                    state
                    path="model.q_heads"
                    label="Query heads"
                    help=help::Q_HEADS
                    kind=Kind::Count
                    get=|p| Some(p.model.q_heads as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.model.q_heads = count_u32(v);
                        }
                    }
                />
                <NumberField
                    state
                    path="model.kv_heads"
                    label="KV heads"
                    help=help::KV_HEADS
                    kind=Kind::Count
                    get=|p| Some(p.model.kv_heads as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.model.kv_heads = count_u32(v);
                        }
                    }
                />
                <NumberField
                    state
                    path="model.head_dim"
                    label="Head dimension"
                    help=help::HEAD_DIM
                    kind=Kind::Count
                    get=|p| Some(p.model.head_dim as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.model.head_dim = count_u32(v);
                        }
                    }
                />
                <NumberField
                    state
                    path="model.kv_latent_dim"
                    label="Latent KV dimension (MLA)"
                    help=help::KV_LATENT
                    kind=Kind::Count
                    optional=true
                    placeholder="none"
                    get=|p| p.model.kv_latent_dim.map(f64::from)
                    set=|p, v| p.model.kv_latent_dim = v.map(count_u32)
                />
                <SelectField
                    state
                    path="model.weight_dtype"
                    label="Weight precision"
                    help=help::DTYPE
                    options=dtype_options
                    get=|p| enum_text(&p.model.weight_dtype)
                    set=|p, v| {
                        if let Some(d) = enum_parse(v) {
                            p.model.weight_dtype = d;
                        }
                    }
                />
                <SelectField
                    state
                    path="model.kv_dtype"
                    label="KV cache precision"
                    help=help::DTYPE
                    options=dtype_options
                    get=|p| enum_text(&p.model.kv_dtype)
                    set=|p, v| {
                        if let Some(d) = enum_parse(v) {
                            p.model.kv_dtype = d;
                        }
                    }
                />
            </div>
        </section>
    }
}

/// A whole number for a `u32` field (the engine checks its range).
pub fn count_u32(value: f64) -> u32 {
    value.clamp(0.0, u32::MAX as f64) as u32
}

#[component]
pub fn HardwarePanel(state: AppState) -> impl IntoView {
    let preset_note = Memo::new(move |_| {
        state.params.with(|p| {
            let id = hardware_preset_id(p)?;
            presets::hardware_presets()
                .into_iter()
                .find(|h| h.id == id)
                .map(|h| {
                    if h.verified {
                        format!("Source: {}", h.source)
                    } else {
                        format!("Unverified preset: {}. Check these figures.", h.source)
                    }
                })
        })
    });
    view! {
        <section class="panel" aria-labelledby="hardware-heading">
            <h2 id="hardware-heading">"Hardware"</h2>
            <div class="grid">
                <SelectField
                    state
                    path="hardware.preset"
                    label="Accelerator preset"
                    help=help::HARDWARE
                    options=|_| {
                        let mut options: Vec<(String, String)> = presets::hardware_presets()
                            .into_iter()
                            .map(|h| {
                                let label = if h.verified {
                                    h.params.name.clone()
                                } else {
                                    format!("{} (unverified)", h.params.name)
                                };
                                (h.id.to_string(), label)
                            })
                            .collect();
                        options.push(("custom".to_string(), "Custom accelerator".to_string()));
                        options
                    }
                    get=|p| hardware_preset_id(p).unwrap_or("custom").to_string()
                    set=|p, id| {
                        if let Some(h) = presets::hardware(id) {
                            p.hardware = h;
                        }
                    }
                />
                <TextField
                    state
                    path="hardware.name"
                    label="Name"
                    help=help::HARDWARE
                    get=|p| p.hardware.name.clone()
                    set=|p, v| p.hardware.name = v
                />
                <NumberField
                    state
                    path="hardware.memory_gib"
                    label="Memory"
                    unit="GiB"
                    help=help::MEMORY_GIB
                    get=|p| Some(p.hardware.memory_gib)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.hardware.memory_gib = v;
                        }
                    }
                />
                <NumberField
                    state
                    path="hardware.bandwidth_gb_s"
                    label="Memory bandwidth"
                    unit="GB/s"
                    help=help::BANDWIDTH
                    get=|p| Some(p.hardware.bandwidth_gb_s)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.hardware.bandwidth_gb_s = v;
                        }
                    }
                />
                <NumberField
                    state
                    path="hardware.peak_tflops"
                    label="Peak compute"
                    unit="TFLOP/s"
                    help=help::PEAK_TFLOPS
                    get=|p| Some(p.hardware.peak_tflops)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.hardware.peak_tflops = v;
                        }
                    }
                />
                <NumberField
                    state
                    path="replica.gpus_per_replica"
                    label="GPUs per replica"
                    help=help::GPUS_PER_REPLICA
                    kind=Kind::Count
                    get=|p| Some(p.replica.gpus_per_replica as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.replica.gpus_per_replica = count_u32(v);
                        }
                    }
                />
                <NumberField
                    state
                    path="replica.gpu_memory_utilization"
                    label="Memory the engine may use"
                    unit="%"
                    help=help::GPU_MEMORY_UTILIZATION
                    kind=Kind::Percent
                    get=|p| Some(p.replica.gpu_memory_utilization)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.replica.gpu_memory_utilization = v;
                        }
                    }
                />
                <NumberField
                    state
                    path="replica.runtime_reserve_gib"
                    label="Runtime reserve per GPU"
                    unit="GiB"
                    help=help::RUNTIME_RESERVE
                    get=|p| Some(p.replica.runtime_reserve_gib)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.replica.runtime_reserve_gib = v;
                        }
                    }
                />
            </div>
            <p class="panel-note">{move || preset_note.get()}</p>
            <MemoryBar state />
        </section>
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
