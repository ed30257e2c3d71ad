//! The guide under the toolbar: a short form of `docs/guide.md` (what the
//! model assumes, how to read the charts, how to calibrate, and the
//! capacity review's checklist mapped to the page), built when first opened.

use leptos::prelude::*;

use crate::panels::LazyDetails;

/// One section of the guide: a heading and its paragraphs.
pub struct GuideSection {
    pub title: &'static str,
    pub paragraphs: &'static [&'static str],
}

/// The guide's sections, in the order of `docs/guide.md`.
pub const SECTIONS: [GuideSection; 3] = [
    GuideSection {
        title: "What the model assumes",
        paragraphs: &[
            "Every request goes through a vLLM-like engine step by step: batch-Poisson arrivals per class (shaped by hour of the day), prompt and output lengths from your distributions, chunked prefill and continuous batching within max_num_seqs and the token budget, a paged KV cache whose overflow preempts the latest request, which later recomputes what the cache no longer holds (with prefix caching off, as vLLM V0, all of it), n identical replicas behind a router. A class can instead send a fixed count, all at once (offline), as closed-loop clients, or replay a trace request by request (its \"Load\" menu; \"Import trace\" reads a CSV of requests). A request misses when it completes after its deadline, is rejected, times out or never finishes.",
            "Limits: the step time is a model (the per-operation defaults are within 8% on dense models' published throughput and inter-token latency at the median (84 measurements), eight figures off by 35-72% (one source contradicts itself; four are one lab's vLLM BF16 runs on an H100; two a 32B model's long prompts on two H100s, where a 1% larger or smaller KV cache moves the replay by half; one vLLM's pre-0.6 engine), mixtures of experts overstated, AMD efficiencies checked on MI300X in FP8 only): calibrate before trusting absolute numbers. The fleet is static (no autoscaling; the reserve is costed, not simulated), one day plus a drain stands for every day, and only open traffic can be planned. Details: docs/engine.md, docs/planner.md and docs/calibration.md in the repository.",
        ],
    },
    GuideSection {
        title: "Reading the charts",
        paragraphs: &[
            "Sojourn-time CDF: the fraction of requests done within each time (log scale); where a class's curve crosses its deadline line, one minus its height is its miss rate. The fleet over time: queues that build and clear are bursts, a queue that only grows is overload. Memory bar: weights, runtime reserve and KV cache per replica; \"tight\" means the KV cache, not max_num_seqs, limits concurrency.",
            "The plan appears in two steps: the search's choice, marked provisional, as soon as the search has decided, then the complete plan once its demand cases, service curve and sensitivity have run (the service curve can add replicas). Cost against P(miss): every fleet the planner decided, the frontier marked and the cheapest fleet meeting every target chosen. Service curve: goodput and P(miss) as the load is scaled; the knee is where goodput stops following the load, the operating point keeps headroom below it and within the SLA limit. Tornado: each input moved ±20% alone on the plan's fleet, sorted by impact; a failing bar is the assumption to measure first.",
        ],
    },
    GuideSection {
        title: "Calibrating from your measurements",
        paragraphs: &[
            "Choose the per-operation step-time model under \"Serving engine and cluster\" and replay your benchmark as a scenario (one class, fixed lengths, closed-loop clients for a concurrency sweep). Set CUDA graphs to what your engine does (vLLM V1 pads small steps, TensorRT engines and vLLM's enforce-eager mode do not). Compare the inter-token latency first, then preemptions (is the KV cache's precision right?), then TTFT (warm-up). A long prefill alone fixes the GEMM efficiency; a lone decode the weight-bandwidth efficiency and the step overhead; large decode batches at long context the KV-bandwidth efficiency and the per-sequence cost; a TP sweep the interconnect. The calibration example shows a published benchmark replayed.",
        ],
    },
];

/// The capacity review's decision checklist (the capacity-planning seed's),
/// each question with where the page answers it.
pub const CHECKLIST: [(&str, &str); 8] = [
    (
        "What workload distributions and bursts must be supported?",
        "Workload: batch arrivals and sizes, time of day, length distributions. Results: the fleet over time; best and worst cases.",
    ),
    (
        "What device memory is reserved for weights, KV, buffers, and safety margin?",
        "Hardware: the memory bar. Warnings when the KV cache limits concurrency; the plan's KV threshold.",
    ),
    (
        "What Goodput operating point meets p95/p99 SLOs?",
        "SLA targets and what the plan compares (hardware, disciplines, engine settings); the plan's service curve with its knee, SLA limit and operating point.",
    ),
    (
        "How much reserve covers failure, rollout, and burst?",
        "Prices and reserve: failure and warm reserve. The plan: steady + reserve, admission limit, the cost of covering high demand.",
    ),
    (
        "How long does new capacity take to become ready?",
        "Not modelled (the fleet is static): the plan's scale-up thresholds say when to add capacity.",
    ),
    (
        "Which costs are fixed, variable, shared, or external?",
        "Prices and reserve: price, date, region, fixed costs. The budget: failed work, recomputation, idle, cost per success.",
    ),
    (
        "What sensitivity variables can change the plan most?",
        "The tornado, and low, expected and high demand each re-planned.",
    ),
    (
        "How often is the forecast reconciled with production?",
        "Your process: the link or JSON records every assumption; calibration replays your measurements.",
    ),
];

/// The guide, closed until asked for.
#[component]
pub fn Guide() -> impl IntoView {
    view! {
        <LazyDetails summary="Guide: assumptions, charts, calibration, checklist" class="guide">
            <div class="guide-body">
                {SECTIONS.iter().map(section).collect_view()} <section class="guide-checklist">
                    <h3>"The capacity review's checklist"</h3>
                    <dl class="checklist">{CHECKLIST.iter().map(checklist_item).collect_view()}</dl>
                </section>
                <p class="guide-more">
                    "The full guide is docs/guide.md; the examples' write-ups are in scenarios/README.md."
                </p>
            </div>
        </LazyDetails>
    }
}

fn section(section: &GuideSection) -> impl IntoView {
    view! {
        <section>
            <h3>{section.title}</h3>
            {section.paragraphs.iter().map(|text| view! { <p>{*text}</p> }).collect_view()}
        </section>
    }
}

fn checklist_item((question, answer): &(&'static str, &'static str)) -> impl IntoView {
    view! {
        <div>
            <dt>{*question}</dt>
            <dd>{*answer}</dd>
        </div>
    }
}
