//! Small hand-made states for the simulator's unit tests: a request, a
//! replica's configuration, a context with records.

use std::sync::OnceLock;

use crate::model::class::Class;
use crate::model::scenario::Scenario;
use crate::model::step_time::StepTimeModel;
use crate::params::{Discipline, ScenarioParams, Schedule};
use crate::sim::state::{Active, ReqId};
use crate::sim::workload::RequestSpec;
use crate::sim::{Ctx, ReplicaConfig, RequestRecord};

/// A request of the default scenario's first class that arrived at `id`
/// seconds with an `input`-token prompt (none of it cached) and `output`
/// output tokens to produce.
pub fn request(id: ReqId, input: u64, output: u32) -> Active {
    static CLASS: OnceLock<Class> = OnceLock::new();
    let class = CLASS.get_or_init(|| {
        let scenario = Scenario::try_from(ScenarioParams::overnight_batch()).expect("valid");
        scenario.classes()[0].clone()
    });
    Active::arriving(id, &spec(id, input, output), class)
}

fn spec(id: ReqId, input: u64, output: u32) -> RequestSpec {
    RequestSpec {
        class: 0,
        arrival_s: id as f64,
        input_tokens: input as u32,
        cached_tokens: 0,
        output_tokens: output,
    }
}

/// A request that has just computed its whole `context`-token prompt (and
/// sampled its first token) with `left` output tokens still to decode.
pub fn decoding(id: ReqId, context: u64, left: u32) -> Active {
    let mut d = request(id, context, left + 1);
    d.computed = context;
    d.generated = 1;
    d
}

/// A request that has computed `computed` tokens of an `input`-token
/// prompt, with `output` tokens to produce.
pub fn prefilling(id: ReqId, input: u64, computed: u64, output: u32) -> Active {
    let mut p = request(id, input, output);
    p.computed = computed;
    p
}

/// A replica with `total_blocks` blocks of `block_size` tokens, room for
/// 64 sequences and 4,096 tokens a step, no prefill limit, no timeouts,
/// decodes first and steps of 10 ms plus 1 ms per prefill token
/// (alpha/beta; a step without decodes lasts 1 ms per prefill token).
pub fn config(block_size: u64, total_blocks: u32, discipline: Discipline) -> ReplicaConfig {
    ReplicaConfig {
        max_num_seqs: 64,
        budget: 4096,
        threshold: u64::MAX,
        block_size: crate::sim::rules::BlockSize::new(block_size),
        total_blocks,
        discipline,
        timeouts: false,
        schedule: Schedule::DecodeFirst,
        prefix_caching: false,
        step_time: StepTimeModel::AlphaBeta {
            alpha: 0.001,
            beta: 0.01,
            overhead: 0.0,
        },
    }
}

/// A context with `n` pending records.
pub fn ctx(n: usize) -> Ctx {
    let mut ctx = Ctx::new(n, u64::MAX, 0);
    ctx.records = vec![RequestRecord::arriving(&spec(0, 1, 1)); n];
    ctx
}
