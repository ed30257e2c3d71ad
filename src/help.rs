//! The short explanations shown on hover and keyboard focus, one per
//! concept, in one place so the words stay consistent.

pub const SOJOURN: &str = "Sojourn time: from a request's arrival to its completion, queueing plus service. The SLA is about this whole time.";
pub const DEADLINE: &str = "The SLA deadline on the sojourn time. A request misses when it completes after its deadline, is rejected (queue full, too long), times out, or is still unfinished when the run ends.";
pub const P_MISS: &str = "P(miss): the fraction of arrived requests that missed their deadline (late, rejected, timed out or unfinished). The 95% interval is the sampling error of this one run.";
pub const GOODPUT: &str = "Goodput: requests per hour that met their deadline. Throughput that misses the SLA does not count.";
pub const COST_PER_SUCCESS: &str = "The fleet's cost over the measured window (steady replicas, reserve and prorated fixed costs) divided by the requests that met their deadline. Failed work and idle time are part of it.";
pub const UTILIZATION: &str = "Busy time, not load: the fraction of the replicas' time spent executing engine steps. A step takes about as long for one request as for dozens (decoding reads every weight either way), so a fleet can be busy nearly all the time while far from full: Concurrency says how full its batches are.";
pub const CONCURRENCY: &str = "Requests running on a replica at once, on average over the measured window, beside the load estimate's concurrency at saturation (what max_num_seqs, the token budget and the KV cache allow). Far below it, the fleet has room for more load even when Utilization is high; near it, queues grow with any burst.";
pub const KV_CACHE: &str = "KV cache: the attention keys and values of every token a running request holds, kept in accelerator memory. Its size caps how many sequences run at once; when it fills, requests are preempted and recomputed.";
pub const MEMORY_BAR: &str = "Per replica: model weights, the runtime reserve (activations, CUDA graphs, workspace) and the KV cache share the memory the engine may use (gpu_memory_utilization of the device). Fits: the KV cache holds max_num_seqs typical requests; tight: the KV cache, not max_num_seqs, limits concurrency.";
pub const STEP_TIME: &str = "Step-time model: how long one engine step takes. Per operation (calibrated against published measurements, docs/calibration.md): linear layers, attention, KV writes and tensor-parallel all-reduces one after another, each bound by compute or memory with its own efficiency. Roofline: the slower of compute (FLOPs / peak x MFU) and memory traffic (bytes / bandwidth x MBU) plus a fixed overhead. Alpha-beta: alpha per prefill token plus beta per step that decodes. The calibration multiplier scales every step.";
pub const CDF: &str = "The sojourn-time CDF: for each time t (log scale), the fraction of requests done within t. Where a curve crosses a deadline line, one minus its height is the miss rate of that class. Best and worst cases apply their multipliers to the same fleet.";
pub const BATCH_ARRIVALS: &str = "Batches of requests arrive as a Poisson process; every request of a batch arrives at once. A constant batch size of 1 is plain Poisson traffic.";
pub const BATCH_SIZE: &str =
    "Requests per batch (X). Large batches arrive as a burst the fleet works through over time.";
pub const TIME_OF_DAY: &str = "Multipliers on the batch rate for each hour of the day (hour 0 is midnight), e.g. to send batch jobs overnight. The average over the day scales the daily volume.";
pub const INPUT_TOKENS: &str = "Prompt length in tokens. Prefill computes these (minus prefix-cache hits) before the first output token.";
pub const OUTPUT_TOKENS: &str = "Output length in tokens, generated one per engine step (decode).";
pub const LENGTHS: &str = "How prompt and output lengths go together. Independent (the default): each drawn from its own distribution. Correlated: both log-normal, with correlation rho between their logarithms. Table of pairs: each request takes one (prompt, output) row, e.g. from a trace.";
pub const LENGTHS_RHO: &str = "Correlation between the logarithms of prompt and output lengths, between -1 and 1 (excluded): positive when long prompts get long answers (summaries of long documents), negative when they get short ones.";
pub const LENGTHS_PAIRS: &str = "One request per line as input,output or input,output,weight (commas, semicolons or tabs, as the first line has them; decimal commas with semicolons or tabs; a header line is optional). Each request draws a row, in proportion to its weight if given. Paste a trace's lengths here.";
pub const PREFIX_CACHE: &str = "Fraction of each prompt already in the prefix cache: those tokens skip prefill (the last prompt token is always computed).";
pub const PRIORITY: &str =
    "Scheduling priority under the priority discipline: lower is more urgent (vLLM's convention).";
pub const TIMEOUT: &str =
    "The client abandons a request not finished after this long. Empty: never.";
pub const CLASS_NAME: &str =
    "A name for this request class (tenant, product); targets refer to classes by name.";
pub const BATCHES_PER_HOUR: &str =
    "Mean number of batches arriving per hour, before the time-of-day profile.";
pub const MODEL: &str = "The model's architecture, from which weight memory, KV bytes per token and FLOPs follow. Presets fill every field; edit any of them.";
pub const PARAMS_B: &str =
    "Total parameters in billions; every expert of a mixture of experts is resident in memory.";
pub const ACTIVE_PARAMS_B: &str =
    "Parameters active per token for a mixture of experts, in billions. Empty for a dense model.";
pub const LAYERS: &str = "Transformer layers.";
pub const Q_HEADS: &str = "Query (attention) heads.";
pub const KV_HEADS: &str = "Key/value heads; fewer than query heads under grouped-query attention. They set the KV bytes per token.";
pub const HEAD_DIM: &str = "Dimension of each attention head.";
pub const KV_LATENT: &str = "Multi-head latent attention (DeepSeek): elements cached per token per layer, replacing 2 x KV heads x head dim. Empty otherwise.";
pub const DTYPE: &str = "Numeric precision: bytes per weight or per cached KV element.";
pub const HARDWARE: &str =
    "One accelerator. Unverified presets come from vendor headline figures; check them.";
pub const MEMORY_GIB: &str = "Device memory per accelerator.";
pub const BANDWIDTH: &str = "Memory bandwidth per accelerator, GB/s (10^9 bytes per second).";
pub const PEAK_TFLOPS: &str =
    "Peak dense matrix throughput per accelerator at the compute precision.";
pub const GPUS_PER_REPLICA: &str = "Accelerators per serving replica (tensor-parallel degree).";
pub const GPU_MEMORY_UTILIZATION: &str =
    "Fraction of each accelerator's memory the engine may use (vLLM's gpu_memory_utilization).";
pub const RUNTIME_RESERVE: &str = "Memory per accelerator the engine keeps outside the KV cache: its profiling pass's activation peak and NCCL buffers. Empty: what vLLM 0.19's profiling takes, from the vocabulary, the sequence slots and tensor parallelism (the memory bar shows it).";
pub const MAX_NUM_SEQS: &str = "Most sequences in one engine step's batch (vLLM max_num_seqs).";
pub const MAX_BATCHED_TOKENS: &str = "Token budget per engine step: decodes take one token each, prefills take chunks (vLLM max_num_batched_tokens).";
pub const CHUNK_THRESHOLD: &str = "Most prompt tokens one request may prefill in a step (chunked prefill); 0 means no per-request limit.";
pub const BLOCK_SIZE: &str =
    "KV cache block size in tokens; memory is allocated a block at a time.";
pub const DISCIPLINE: &str = "The order in which waiting requests are admitted.";
pub const QUEUE_BOUND: &str = "Bound on each replica's waiting queue; arrivals beyond it are rejected (and count as misses). Empty: unbounded.";
pub const SCHEDULE: &str = "What a step takes first. Decodes first: every running decode, then prompts in chunks up to the token budget. Prefills first: waiting prompts run whole in steps of their own while decodes wait; a sequence longer than the token budget is rejected on arrival.";
pub const PREFIX_CACHING: &str = "vLLM V1 caches KV blocks by content (on by default). For a preempted request that means its blocks stay cached until other requests need the space, and it recomputes only what was evicted; off, every preemption recomputes the whole context. Prompt prefixes shared between requests are each class's prefix-cache hit rate.";
pub const MAX_MODEL_LEN: &str = "Longest sequence (prompt + output) served; longer requests are rejected on arrival. Empty: whatever fits in the KV cache.";
pub const REPLICAS: &str =
    "Serving replicas in the simulated fleet (the planner searches its own fleet sizes).";
pub const ROUTER: &str = "How arrivals are spread over replicas.";
pub const HORIZON: &str = "Arrivals are generated over this simulated time. After it the fleet keeps working until every request's SLA outcome is settled.";
pub const WARMUP: &str =
    "Requests arriving before this are simulated but left out of the statistics.";
pub const SEED: &str = "Seed of the random draws. The same scenario and seed give the same numbers on every machine; a shared link carries it.";
pub const SERIES_INTERVAL: &str = "Width of one time-series sample.";
pub const DRAIN: &str = "How long the fleet keeps working after the horizon. Empty: the longest deadline, after which every outcome is settled.";
pub const PRICE: &str = "Price of one accelerator for one hour (the effective rate of the pricing model). Empty: costs are given in GPU-hours only.";
pub const PRICING_MODEL: &str =
    "How the price was agreed; it labels the cost (enter the effective rate).";
pub const FIXED_COSTS: &str = "Fixed monthly costs (storage, network, operations), prorated over the measured window (a month is 730 h).";
pub const PRICE_DATE: &str = "When the price was read. Every cost carries it: prices change.";
pub const PROVIDER_REGION: &str = "Where the price applies (provider, region, instance).";
pub const FAILURE_RESERVE: &str =
    "N + k: replicas kept to absorb k failures, costed apart from steady demand.";
pub const WARM_IDLE: &str =
    "Warm idle replicas for bursts and rollouts, costed apart from steady demand.";
pub const TARGETS: &str = "SLA targets: the planned fleet must meet every one. A miss-probability target bounds P(sojourn > class deadline); percentile targets bound a percentile of sojourn, TTFT or TPOT.";
pub const CANDIDATES: &str = "Hardware and parallelism options to compare; the planner picks the cheapest that meets every target. Off: the configured hardware alone.";
pub const SEARCH_SPACE: &str = "Every hardware option is searched over replicas with each combination of the settings below; the plan buys the cheapest that meets every target. Pin a setting to plan faster, open one to let the plan choose it.";
pub const SEARCH_DISCIPLINES: &str = "A discipline the plan compares. Leaving out the scenario's own leaves the plan no fleet with its own settings to compare its choice with, and the configured fleet is then not judged.";
pub const SEARCH_MAX_NUM_SEQS: &str = "Values of the most sequences per step to compare, separated by commas (64, 256, 1024). Empty: the scenario's own. Each must fit the token budgets and the accelerator's memory.";
pub const SEARCH_TOKEN_BUDGETS: &str = "Per-step token budgets to compare, separated by commas (2048, 8192). Empty: the scenario's own. Each must be at least every sequence limit compared.";
pub const SEARCH_QUEUE_BOUNDS: &str = "Queue bounds per replica (admission limits) to compare, separated by commas; none is no bound (none, 500). Empty: the scenario's own.";
pub const SEARCH_ROUTERS: &str =
    "A router the plan compares. None ticked but the scenario's own: the router is not searched.";
pub const MIN_REPLICATIONS: &str = "Seeds every decided fleet starts with; the plan doubles them, up to Replications, only while a target is uncertain.";
pub const CURVE_REPLICATIONS: &str = "Seeds per service-curve point. Empty: each point is decided like a fleet (replications to start with, doubled while a target is uncertain).";
pub const SENSITIVITY_INPUTS: &str = "An input the sensitivity analysis lowers and raises in turn. Untick inputs you are sure of to plan faster; none ticked skips the analysis.";
pub const MULTIPLIERS: &str =
    "Best and worst cases as multipliers on the base: 1 is unchanged, 1.3 is 30% more.";
pub const SENSITIVITY: &str = "Each input is lowered and raised by this fraction in turn, one at a time, and the change in cost per success and P(miss) is measured.";
pub const REPLICATIONS: &str =
    "Independent seeds per evaluated fleet; the planner reports intervals over them.";
pub const MAX_REPLICAS: &str = "Largest fleet the capacity search considers.";
pub const MAX_BUSY: &str = "Most of the fleet's capacity the offered work may take (its work at a saturated replica's speed); above it a backlog builds from one day to the next.";
pub const DECISION: &str = "Whether the mean over replications, or the upper end of its 95% interval, must meet each target.";
pub const LOAD_MULTIPLIERS: &str =
    "Offered loads of the service curve, as multiples of the base arrival rate.";
pub const HEADROOM: &str = "Keep the operating point this fraction below the saturation knee.";
pub const SERVICE_CURVE: &str = "The target that binds (the first to fail as load grows) against offered load on the smallest fleet meeting every target, with its bound; goodput on the right axis. 1x is today's load; the SLA limit is where the target fails; the knee is where extra load stops turning into goodput; the operating point stays below both.";
pub const PARETO: &str = "Every fleet the planner's search decided (each configuration at each fleet size it settled), by monthly cost with the reserve and how far it is from its targets: its worst target's value (the upper 95% bound the decision reads) over that target's bound, on a log scale, over every target (latency percentiles, P(miss), sustainability). Below the dashed 1x line every target is met. Green met every target, amber is uncertain, red did not. The frontier joins the fleets that no other fleet beats on both cost and margin; the ring marks the plan's choice, which is always on it.";
pub const CONFIGURATION: &str = "What the planner chose beyond the replica count: the hardware and GPUs per replica, the service discipline, and any engine or cluster setting it searched. It is the cheapest configuration whose fleet meets every target.";
pub const TORNADO: &str = "One input at a time lowered and raised on the plan's fixed fleet; bars show how much cost per success (or P(miss)) moves, the longest first. The table under it re-plans the fleet for the inputs with the largest impact: the largest effect on cost per success, P(miss) or the target closest to its bound.";
pub const STEP_TIME_SCALE: &str = "Calibration multiplier on every step time: 1.2 means steps take 20% longer than modelled (e.g. fitted to a benchmark).";
pub const MFU: &str =
    "Model FLOPs utilisation: fraction of peak compute a prefill-heavy step achieves.";
pub const MBU: &str =
    "Memory bandwidth utilisation: fraction of peak bandwidth a decode step achieves.";
pub const OVERHEAD: &str = "Fixed cost of every engine step (scheduling, kernel launches).";
pub const ALPHA: &str = "Seconds per prefill token.";
pub const BETA: &str = "Seconds per engine step that decodes.";
pub const OPS_GEMM: &str = "Share of the accelerator's peak FLOP/s the linear layers reach (at the weights' precision: FP8 weights use the FP8 peak). Empty: the accelerator family's default.";
pub const OPS_WEIGHTS: &str = "Share of the memory bandwidth reached streaming the weights once per step (and writing KV). Empty: the family's default.";
pub const OPS_ATTENTION: &str =
    "Share of the BF16 peak FLOP/s attention reaches (long prefills). Empty: the family's default.";
pub const OPS_KV: &str = "Share of the memory bandwidth attention reaches reading the KV cache: what makes large decode batches and long contexts slow. Empty: the family's default.";
pub const OPS_PER_SEQUENCE: &str = "Attention kernel cost per decoding sequence per step, in seconds. Empty: the family's default.";
pub const OPS_INTERCONNECT: &str = "Share of the intra-node link's bandwidth a tensor-parallel all-reduce reaches (two per layer). Empty: the family's default.";
pub const OPS_ALLREDUCE_LATENCY: &str =
    "Fixed cost of one all-reduce, in seconds. Empty: the family's default.";
pub const OPS_CUDA_GRAPHS: &str = "Engines replay small steps as captured CUDA graphs, each made for a fixed number of tokens, so such a step runs padded up to the next captured size (1, 2, 4, multiples of 8, then of 16 from 256): its linear layers and all-reduces compute the padding. vLLM V1 pads every step of at most 512 tokens (2 x max sequences, at most 512), V0 only decode-only steps of at most 256; TensorRT engines and vLLM's enforce-eager mode do not pad. TensorRT-LLM's PyTorch backend pads decode-only steps to its own batch sizes: list them in a scenario file (step_time.cuda_graphs.decode_batch_sizes).";
pub const LOAD: &str = "How the class sends: an open stream of batches over the horizon, a fixed number of requests, all at time 0 (offline benchmarks), or closed-loop clients that send again when their request returns.";
pub const LOAD_REQUESTS: &str =
    "Requests the class sends in all; the run lasts until they are served.";
pub const LOAD_CLIENTS: &str =
    "Concurrent clients, each with one request out at a time (a benchmark's concurrency).";
pub const LOAD_TOTAL: &str =
    "Requests sent in all, the earliest sends first. Empty: the clients send until the horizon.";
pub const THINK: &str = "How long a client waits after its request returns before sending the next, in milliseconds (whole, at least 1).";

/// Escape hides the help tip shown on hover or focus until the pointer or
/// the focus moves on to another (WCAG 1.4.13: such content must be
/// dismissible without moving either). The tips are CSS-only, so the page's
/// root carries `data-tips="closed"`, which the style sheet reads.
pub fn close_tips_on_escape() {
    use leptos::ev;
    use leptos::prelude::window_event_listener;
    use std::cell::RefCell;
    use wasm_bindgen::JsCast;

    thread_local! {
        /// The field or "?" whose tip the pointer was last over.
        static POINTED: RefCell<Option<web_sys::Element>> = const { RefCell::new(None) };
    }
    let set_closed = |closed: bool| {
        let root = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element());
        if let Some(root) = root {
            let _ = if closed {
                root.set_attribute("data-tips", "closed")
            } else {
                root.remove_attribute("data-tips")
            };
        }
    };
    window_event_listener(ev::keydown, move |event| {
        if event.key() == "Escape" {
            set_closed(true);
        }
    });
    window_event_listener(ev::focusin, move |_| set_closed(false));
    window_event_listener(ev::mouseover, move |event| {
        let owner = event
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest(".field, .info").ok().flatten());
        let moved_on = POINTED.with(|p| p.replace(owner.clone()) != owner);
        if moved_on {
            set_closed(false);
        }
    });
}
