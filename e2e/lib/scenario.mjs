// Share links built in Node exactly as the page builds them (link format 2:
// the first 12 bytes of the SHA-256 of the scenario's JSON, then the JSON
// zlib-compressed, all in unpadded base64url), from the default scenario
// kept in the app's golden links.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
const golden = JSON.parse(
  readFileSync(path.join(here, '..', '..', 'tests', 'golden', 'links.json'), 'utf8'),
);

/** A fresh copy of the default scenario (format 1). */
export function defaultScenario() {
  const entry = golden.links.find((l) => l.format === 1 && l.description === 'the default scenario');
  return structuredClone(entry.scenario);
}

/** The `?s=...` query for `scenario`. */
export function linkQuery(scenario) {
  const json = Buffer.from(JSON.stringify(scenario));
  const digest = createHash('sha256').update(json).digest().subarray(0, 12);
  const packed = deflateSync(json, { level: 9 });
  return `?s=2.${Buffer.concat([digest, packed]).toString('base64url')}`;
}

/** A scenario small enough to simulate and plan in a few seconds. */
export function quickScenario() {
  const s = defaultScenario();
  s.name = 'Quick e2e scenario';
  s.run.horizon_s = 2 * 3600;
  s.run.seed = 11;
  s.plan.pricing.usd_per_gpu_hour = 2.5;
  s.plan.pricing.price_date = '2025-09-01';
  s.plan.pricing.provider_region = 'example region';
  s.plan.replications = 2;
  s.plan.max_replicas = 32;
  s.plan.sensitivity.inputs = ['arrival_rate', 'output_tokens', 'price'];
  s.plan.sensitivity.replications = 1;
  s.plan.service_curve.load_multipliers = [0.5, 1, 2];
  return s;
}

/**
 * The issue-40 planning case, shortened to two hours: Llama 3.1 70B (FP8)
 * on H100 x4 against H200 x2, a chat class under p99 TTFT <= 2 s and p99
 * TPOT <= 80 ms beside a batch class of 300-request jobs. A latency target
 * sets the fleet: P(miss) is about zero on every fleet decided.
 */
export function chat70bScenario() {
  const s = JSON.parse(readFileSync(path.join(here, '..', '..', 'scenarios', 'interactive-chat.json'), 'utf8'));
  s.name = '70B chat beside a nightly batch: H100 x4 against H200 x2';
  const chat = s.classes[0];
  chat.batches_per_hour = 3600;
  delete chat.time_of_day;
  const batch = {
    ...structuredClone(chat),
    name: 'nightly batch',
    batches_per_hour: 1,
    batch_size: { kind: 'constant', value: 300 },
    input_tokens: { kind: 'log_normal', median: 2000, p90: 6000, max: 32000 },
    output_tokens: { kind: 'log_normal', median: 400, p90: 1200, max: 4000 },
    prefix_cache_hit: 0,
    deadline_s: 6 * 3600,
  };
  delete batch.timeout_s;
  s.classes.push(batch);
  s.replica.gpus_per_replica = 4;
  s.cluster.replicas = 2;
  s.run.horizon_s = 2 * 3600;
  s.run.series_interval_s = 120;
  s.plan.targets = [
    { metric: 'ttft_percentile', class: 'chat', percentile: 0.99, bound_s: 2 },
    { metric: 'tpot_percentile', class: 'chat', percentile: 0.99, bound_s: 0.08 },
    { metric: 'miss_probability', class: 'chat', epsilon: 0.01 },
    { metric: 'miss_probability', class: 'nightly batch', epsilon: 0.01 },
  ];
  s.plan.candidates = [
    { name: 'H100 SXM x4', hardware_preset: 'h100-sxm', gpus_per_replica: 4, usd_per_gpu_hour: 3.78 },
    { name: 'H200 SXM x2', hardware_preset: 'h200-sxm', gpus_per_replica: 2, usd_per_gpu_hour: 3.5 },
  ];
  s.plan.search = { disciplines: ['fcfs'] };
  s.plan.replications = 4;
  s.plan.min_replications = 2;
  s.plan.max_replicas = 32;
  return s;
}

/**
 * Chat beside a batch class of long prompts (Llama 3.1 8B on H100, 15
 * minutes): chat's p99 TPOT sets the fleet because the batch prompts are
 * prefilled in the steps chat decodes in, and a smaller token budget meets
 * every target with fewer replicas (the engine's fixture for issue 40,
 * item 6: engine/tests/data/levers.json).
 */
export function sharedPrefillScenario() {
  return JSON.parse(
    readFileSync(path.join(here, '..', '..', 'engine', 'tests', 'data', 'levers.json'), 'utf8'),
  );
}

/** The 70B link, its configured fleet one replica short (a "not met" row),
 * with long names: the scenario's, a class's and the configurations'. */
export function longNames70b() {
  const s = chat70bScenario();
  s.name = 'Llama-3.1-70B-Instruct-FP8_chat-assistant-beside-the-nightly-batch_H100-SXM-x4-against-H200-SXM-x2_2025-09';
  const chat = 'chat_assistant_interactive_premium_tier_eu_west_customer_facing_v2';
  s.classes[0].name = chat;
  for (const target of s.plan.targets) {
    if (target.class === 'chat') target.class = chat;
  }
  s.plan.candidates[0].name = 'H100-SXM5-80GB-x4-reserved-eu-west-1-2025Q3_three_year_commitment_with_support';
  s.plan.candidates[1].name = 'H200-SXM-141GB-x2-on-demand-us-east-1-2025Q3';
  s.cluster.replicas = 1;
  return s;
}
