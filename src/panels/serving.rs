//! The serving-engine, cluster and simulation panels, with the rarely
//! changed knobs (step-time model, sequence limits, warm-up, drain) under
//! "Advanced".

use leptos::prelude::*;
use sojourn_engine::StepTimeParams;

use crate::form::{enum_parse, enum_text};
use crate::help;
use crate::panels::fields::{Kind, LazyDetails, NumberField, SelectField};
use crate::panels::model::count_u32;
use crate::state::AppState;

#[component]
pub fn ServingPanel(state: AppState) -> impl IntoView {
    view! {
        <section class="panel" aria-labelledby="serving-heading">
            <h2 id="serving-heading">"Serving engine and cluster"</h2>
            <p class="panel-note">
                "vLLM-style continuous batching with chunked prefill and paged KV cache."
            </p>
            <div class="grid">
                <NumberField
                    state
                    path="cluster.replicas"
                    label="Replicas"
                    help=help::REPLICAS
                    kind=Kind::Count
                    get=|p| Some(p.cluster.replicas as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.cluster.replicas = count_u32(v);
                        }
                    }
                />
                <SelectField
                    state
                    path="cluster.router"
                    label="Router"
                    help=help::ROUTER
                    options=|_| {
                        vec![
                            ("join_shortest_queue".to_string(), "Join shortest queue".to_string()),
                            ("least_kv_load".to_string(), "Least KV load".to_string()),
                            ("round_robin".to_string(), "Round robin".to_string()),
                        ]
                    }
                    get=|p| enum_text(&p.cluster.router)
                    set=|p, v| {
                        if let Some(r) = enum_parse(v) {
                            p.cluster.router = r;
                        }
                    }
                />
                <NumberField
                    state
                    path="engine.max_num_seqs"
                    label="Max sequences per step"
                    help=help::MAX_NUM_SEQS
                    kind=Kind::Count
                    get=|p| Some(p.engine.max_num_seqs as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.engine.max_num_seqs = count_u32(v);
                        }
                    }
                />
                <NumberField
                    state
                    path="engine.max_num_batched_tokens"
                    label="Token budget per step"
                    unit="tokens"
                    help=help::MAX_BATCHED_TOKENS
                    kind=Kind::Count
                    get=|p| Some(p.engine.max_num_batched_tokens as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.engine.max_num_batched_tokens = count_u32(v);
                        }
                    }
                />
                <NumberField
                    state
                    path="engine.long_prefill_threshold"
                    label="Prefill chunk per request"
                    unit="tokens"
                    help=help::CHUNK_THRESHOLD
                    kind=Kind::Count
                    get=|p| Some(p.engine.long_prefill_threshold as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.engine.long_prefill_threshold = count_u32(v);
                        }
                    }
                />
                <SelectField
                    state
                    path="engine.discipline"
                    label="Queue discipline"
                    help=help::DISCIPLINE
                    options=|_| {
                        vec![
                            ("fcfs".to_string(), "First come, first served".to_string()),
                            ("priority".to_string(), "Priority".to_string()),
                            (
                                "shortest_input_first".to_string(),
                                "Shortest input first".to_string(),
                            ),
                            (
                                "earliest_deadline_first".to_string(),
                                "Earliest deadline first".to_string(),
                            ),
                        ]
                    }
                    get=|p| enum_text(&p.engine.discipline)
                    set=|p, v| {
                        if let Some(d) = enum_parse(v) {
                            p.engine.discipline = d;
                        }
                    }
                />
                <NumberField
                    state
                    path="engine.max_waiting"
                    label="Queue bound per replica"
                    unit="requests"
                    help=help::QUEUE_BOUND
                    kind=Kind::Count
                    optional=true
                    placeholder="unbounded"
                    get=|p| p.engine.max_waiting.map(f64::from)
                    set=|p, v| p.engine.max_waiting = v.map(count_u32)
                />
            </div>
            <LazyDetails summary="Advanced: KV blocks, sequence length, step-time model">
                <div class="grid">
                    <NumberField
                        state
                        path="engine.block_size"
                        label="KV block size"
                        unit="tokens"
                        help=help::BLOCK_SIZE
                        kind=Kind::Count
                        get=|p| Some(p.engine.block_size as f64)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.engine.block_size = count_u32(v);
                            }
                        }
                    />
                    <NumberField
                        state
                        path="engine.max_model_len"
                        label="Longest sequence"
                        unit="tokens"
                        help=help::MAX_MODEL_LEN
                        kind=Kind::Count
                        optional=true
                        placeholder="what fits"
                        get=|p| p.engine.max_model_len.map(f64::from)
                        set=|p, v| p.engine.max_model_len = v.map(count_u32)
                    />
                    <NumberField
                        state
                        path="step_time_scale"
                        label="Step-time calibration"
                        unit="x"
                        help=help::STEP_TIME_SCALE
                        get=|p| Some(p.step_time_scale)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.step_time_scale = v;
                            }
                        }
                    />
                    <SelectField
                        state
                        path="step_time.kind"
                        label="Step-time model"
                        help=help::STEP_TIME
                        options=|p| {
                            let mut options = vec![
                                (
                                    "roofline".to_string(),
                                    "Roofline (from model and hardware)".to_string(),
                                ),
                                (
                                    "alpha_beta".to_string(),
                                    "Alpha-beta (per token, per step)".to_string(),
                                ),
                            ];
                            if matches!(p.step_time, StepTimeParams::Table { .. }) {
                                options
                                    .push((
                                        "table".to_string(),
                                        "Measured table (edit in a JSON file)".to_string(),
                                    ));
                            }
                            options
                        }
                        get=|p| {
                            match p.step_time {
                                StepTimeParams::Roofline { .. } => "roofline",
                                StepTimeParams::AlphaBeta { .. } => "alpha_beta",
                                StepTimeParams::Table { .. } => "table",
                            }
                                .to_string()
                        }
                        set=|p, kind| match kind {
                            "roofline" if !matches!(
                                p.step_time,
                                StepTimeParams::Roofline { .. }
                            ) => p.step_time = StepTimeParams::default(),
                            "alpha_beta" if !matches!(
                                p.step_time,
                                StepTimeParams::AlphaBeta { .. }
                            ) => {
                                p.step_time = StepTimeParams::AlphaBeta {
                                    alpha_s_per_token: 1e-4,
                                    beta_s_per_step: 0.02,
                                    overhead_s: 0.002,
                                };
                            }
                            _ => {}
                        }
                    />
                    <StepTimeFields state />
                </div>
            </LazyDetails>
        </section>
    }
}

#[component]
fn StepTimeFields(state: AppState) -> impl IntoView {
    let kind = Memo::new(move |_| {
        state.params.with(|p| match p.step_time {
            StepTimeParams::Roofline { .. } => 0,
            StepTimeParams::AlphaBeta { .. } => 1,
            StepTimeParams::Table { .. } => 2,
        })
    });
    move || match kind.get() {
        0 => view! {
            <NumberField
                state
                path="step_time.mfu"
                label="Compute utilisation (MFU)"
                unit="%"
                help=help::MFU
                kind=Kind::Percent
                get=|p| match p.step_time {
                    StepTimeParams::Roofline { mfu, .. } => Some(mfu),
                    _ => None,
                }
                set=|p, v| {
                    if let (StepTimeParams::Roofline { mfu, .. }, Some(v)) = (&mut p.step_time, v) {
                        *mfu = v;
                    }
                }
            />
            <NumberField
                state
                path="step_time.mbu"
                label="Bandwidth utilisation (MBU)"
                unit="%"
                help=help::MBU
                kind=Kind::Percent
                get=|p| match p.step_time {
                    StepTimeParams::Roofline { mbu, .. } => Some(mbu),
                    _ => None,
                }
                set=|p, v| {
                    if let (StepTimeParams::Roofline { mbu, .. }, Some(v)) = (&mut p.step_time, v) {
                        *mbu = v;
                    }
                }
            />
            <NumberField
                state
                path="step_time.overhead_s"
                label="Overhead per step"
                unit="s"
                help=help::OVERHEAD
                get=|p| match p.step_time {
                    StepTimeParams::Roofline { overhead_s, .. } => Some(overhead_s),
                    _ => None,
                }
                set=|p, v| {
                    if let (StepTimeParams::Roofline { overhead_s, .. }, Some(v)) = (
                        &mut p.step_time,
                        v,
                    ) {
                        *overhead_s = v;
                    }
                }
            />
        }
        .into_any(),
        1 => view! {
            <NumberField
                state
                path="step_time.alpha_s_per_token"
                label="Alpha"
                unit="s/token"
                help=help::ALPHA
                get=|p| match p.step_time {
                    StepTimeParams::AlphaBeta { alpha_s_per_token, .. } => Some(alpha_s_per_token),
                    _ => None,
                }
                set=|p, v| {
                    if let (StepTimeParams::AlphaBeta { alpha_s_per_token, .. }, Some(v)) = (
                        &mut p.step_time,
                        v,
                    ) {
                        *alpha_s_per_token = v;
                    }
                }
            />
            <NumberField
                state
                path="step_time.beta_s_per_step"
                label="Beta"
                unit="s/step"
                help=help::BETA
                get=|p| match p.step_time {
                    StepTimeParams::AlphaBeta { beta_s_per_step, .. } => Some(beta_s_per_step),
                    _ => None,
                }
                set=|p, v| {
                    if let (StepTimeParams::AlphaBeta { beta_s_per_step, .. }, Some(v)) = (
                        &mut p.step_time,
                        v,
                    ) {
                        *beta_s_per_step = v;
                    }
                }
            />
            <NumberField
                state
                path="step_time.overhead_s"
                label="Overhead per step"
                unit="s"
                help=help::OVERHEAD
                get=|p| match p.step_time {
                    StepTimeParams::AlphaBeta { overhead_s, .. } => Some(overhead_s),
                    _ => None,
                }
                set=|p, v| {
                    if let (StepTimeParams::AlphaBeta { overhead_s, .. }, Some(v)) = (
                        &mut p.step_time,
                        v,
                    ) {
                        *overhead_s = v;
                    }
                }
            />
        }
        .into_any(),
        _ => view! {
            <p class="panel-note">
                "A measured step-time table: import a scenario file to change it."
            </p>
        }
        .into_any(),
    }
}

#[component]
pub fn SimulationPanel(state: AppState) -> impl IntoView {
    view! {
        <section class="panel" aria-labelledby="simulation-heading">
            <h2 id="simulation-heading">"Simulation"</h2>
            <div class="grid">
                <NumberField
                    state
                    path="run.horizon_s"
                    label="Horizon"
                    help=help::HORIZON
                    kind=Kind::Duration
                    get=|p| Some(p.run.horizon_s)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.run.horizon_s = v;
                        }
                    }
                />
                <NumberField
                    state
                    path="run.seed"
                    label="Seed"
                    help=help::SEED
                    kind=Kind::Count
                    get=|p| Some(p.run.seed as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.run.seed = v as u64;
                        }
                    }
                />
            </div>
            <LazyDetails summary="Advanced: warm-up, drain, sampling">
                <div class="grid">
                    <NumberField
                        state
                        path="run.warmup_s"
                        label="Warm-up"
                        help=help::WARMUP
                        kind=Kind::Duration
                        get=|p| Some(p.run.warmup_s)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.run.warmup_s = v;
                            }
                        }
                    />
                    <NumberField
                        state
                        path="run.drain_s"
                        label="Drain after the horizon"
                        help=help::DRAIN
                        kind=Kind::Duration
                        optional=true
                        placeholder="longest deadline"
                        get=|p| p.run.drain_s
                        set=|p, v| p.run.drain_s = v
                    />
                    <NumberField
                        state
                        path="run.series_interval_s"
                        label="Time-series interval"
                        help=help::SERIES_INTERVAL
                        kind=Kind::Duration
                        get=|p| Some(p.run.series_interval_s)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.run.series_interval_s = v;
                            }
                        }
                    />
                </div>
            </LazyDetails>
        </section>
    }
}
