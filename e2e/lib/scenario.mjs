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
