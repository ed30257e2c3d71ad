//! The accelerators: memory, bandwidth, dense BF16/FP8/FP4 peaks, the
//! intra-node link (one direction, per GPU) and quoted prices.

use super::{HardwarePreset, Price, READ, SHARED_FACTS, read, unverified};
use crate::params::plan::PricingModel;
use crate::params::{HardwareParams, Interconnect, InterconnectParams};

fn gpu(name: &str, memory_gib: f64, bandwidth_gb_s: f64, peak_tflops: f64) -> HardwareParams {
    HardwareParams {
        name: name.to_string(),
        memory_gib,
        bandwidth_gb_s,
        peak_tflops,
        peak_fp8_tflops: None,
        peak_fp4_tflops: None,
        interconnect: None,
    }
}

/// The accelerator with its FP8 peak and its link (`gb_s` one direction).
fn with(
    hardware: HardwareParams,
    fp8_tflops: Option<f64>,
    kind: Interconnect,
    gb_s: f64,
) -> HardwareParams {
    HardwareParams {
        peak_fp8_tflops: fp8_tflops,
        interconnect: Some(InterconnectParams { kind, gb_s }),
        ..hardware
    }
}

/// The H100 SXM, the default accelerator (preset `h100-sxm`).
pub fn h100_sxm() -> HardwareParams {
    with(
        gpu("H100 SXM5 80GB", 79.19, 3350.0, 989.4),
        Some(1978.9),
        Interconnect::Nvlink,
        450.0,
    )
}

fn price(
    usd_per_gpu_hour: f64,
    pricing_model: PricingModel,
    provider_region: &'static str,
    price_date: &'static str,
    source: &'static str,
) -> Price {
    Price {
        usd_per_gpu_hour,
        pricing_model,
        provider_region,
        price_date,
        source: read("price", source, READ),
    }
}

/// Lambda's and Modal's list prices as one page compared them.
const PRICE_MATRIX: &str = "techbytes.app/posts/serverless-gpu-pricing-matrix-modal-replicate-lambda-2026 (\"Prices verified on May 7, 2026 from official vendor pricing\"; third-party page)";

fn on_demand(usd: f64, provider: &'static str, date: &'static str, source: &'static str) -> Price {
    price(usd, PricingModel::OnDemand, provider, date, source)
}

/// When the memory each card reports to the engine was read: the figure
/// `gpu_memory_utilization` takes its share of, 1-1.5% below an HBM card's
/// nominal size and 7.5-8% below a GDDR card's (whose "GB" are decimal).
const REPORTED: &str = "2026-11-27";

/// PCIe 4.0 x16 without NVLink: 64 GB/s both directions, 32 one way.
const PCIE4_GB_S: f64 = 32.0;

/// Every accelerator preset. `peak_tflops` is dense BF16/FP16 (no 2:4
/// sparsity) in all of them.
pub fn hardware_presets() -> Vec<HardwarePreset> {
    vec![
        HardwarePreset {
            id: "h100-sxm",
            params: h100_sxm(),
            sources: vec![
                read(
                    "80 GB, bandwidth (3.35 TB/s), BF16 989.4 and FP8 1,978.9 dense, NVLink 900 GB/s both directions",
                    "glennklockwood.com/garden/processors/h100 (spec list and TFLOPS table)",
                    READ,
                ),
                read(
                    "memory 79.19 GiB: what the card reports to the engine, which gpu_memory_utilization takes a share of (vLLM 0.19's logs; 79.22 in vLLM's own of December 2024)",
                    "llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs @ d3121e05 (\"Free memory on device ... on startup\"); vllm-project/vllm pull 10511 (\"total_gpu_memory 79.22GiB\")",
                    REPORTED,
                ),
                read(
                    "80 GB, about 1,000 TFLOPS FP16",
                    "microsoft/vidur vidur/config/device_sku_config.py @ 7d47513",
                    SHARED_FACTS,
                ),
            ],
            prices: vec![
                on_demand(
                    3.78,
                    "Lambda, 1x H100 SXM on-demand",
                    "2026-05-07",
                    PRICE_MATRIX,
                ),
                price(
                    1.79,
                    PricingModel::Reserved,
                    "CoreWeave, 1-year reserved",
                    "2026 (month not stated)",
                    "gridstackhub.ai/learn/reserved-vs-spot-vs-on-demand-gpu (table \"H100, CoreWeave, 2026\"; third-party page)",
                ),
            ],
        },
        HardwarePreset {
            id: "h100-pcie",
            params: with(
                gpu("H100 PCIe 80GB", 80.0, 2000.0, 756.0),
                Some(1513.0),
                Interconnect::Pcie,
                64.0,
            ),
            sources: vec![
                read(
                    "memory (80 GB, nominal: what the PCIe card reports to the engine was not found; the SXM reports 79.19 GiB), bandwidth (\"greater than 2,000 gigabytes per second\"), PCIe Gen5 card",
                    "NVIDIA H100 PCIe product brief PB-11133-001_v02 (copy at manuals.plus)",
                    READ,
                ),
                unverified(
                    "BF16 756 and FP8 1,513 dense",
                    "NVIDIA's H100 datasheet as commonly quoted (not read)",
                    SHARED_FACTS,
                ),
                read(
                    "PCIe Gen5 x16, 128 GB/s both directions (the optional two-card NVLink bridge is not modelled)",
                    "glennklockwood.com/garden/processors/h100 (\"128 GB/s PCIe Gen5\")",
                    READ,
                ),
            ],
            prices: vec![on_demand(
                2.86,
                "Lambda, 1x H100 PCIe on-demand",
                "2026-05-07",
                PRICE_MATRIX,
            )],
        },
        HardwarePreset {
            id: "h200-sxm",
            params: with(
                gpu("H200 SXM 141GB", 139.81, 4800.0, 989.0),
                Some(1979.0),
                Interconnect::Nvlink,
                450.0,
            ),
            sources: vec![
                read(
                    "memory, bandwidth, BF16 989 and FP8 1,979 dense (same GH100 compute as H100 SXM)",
                    "lzwjava.github.io/nvidia-h200-gpu-specs-en; aiwiki.ai/wiki/nvidia_h200",
                    SHARED_FACTS,
                ),
                unverified(
                    "NVLink 900 GB/s both directions",
                    "the H100 SXM's NVLink 4, commonly quoted for the H200 (not read for it)",
                    READ,
                ),
                read(
                    "memory 139.81 GiB: what the card reports (PyTorch's \"total capacity of 139.81 GiB\" on an NVIDIA H200)",
                    "sungwon-chae/arxiv_confi etu_logging.md @ 3906c481",
                    REPORTED,
                ),
            ],
            prices: vec![on_demand(
                3.50,
                "Nebius AI Cloud, 1 GPU VM (preset 1gpu-16vcpu-200gb) pay-as-you-go",
                "2025-10-22",
                "docs.nebius.com/signup-billing/billing-changes-oct-2025 (provider's documentation)",
            )],
        },
        HardwarePreset {
            id: "a100-40gb",
            params: with(
                gpu("A100 40GB", 39.56, 1555.0, 312.0),
                None,
                Interconnect::Nvlink,
                300.0,
            ),
            sources: vec![
                read(
                    "memory, bandwidth 1,555 GB/s, 312 TFLOPS dense, no FP8",
                    "huataihuang/cloud-atlas nvidia_a100.rst; gist mikasenghaas accelerator-intensity",
                    SHARED_FACTS,
                ),
                unverified(
                    "NVLink 600 GB/s both directions (assumes the SXM4 module)",
                    "read for the A100 SXM 80GB (pricegpu.pages.dev); NVIDIA's A100 datasheet not read",
                    READ,
                ),
                read(
                    "memory 39.56 GiB: what the card reports (PyTorch's \"total capacty of 39.56 GiB\" on an A100-SXM4-40GB)",
                    "threestudio-project/threestudio issue 402 (2024-01-06)",
                    REPORTED,
                ),
            ],
            prices: vec![on_demand(
                1.48,
                "Lambda, A100 40GB on-demand",
                "2026-05-07",
                PRICE_MATRIX,
            )],
        },
        HardwarePreset {
            id: "a100-80gb",
            params: with(
                gpu("A100 80GB SXM4", 79.15, 2039.0, 312.0),
                None,
                Interconnect::Nvlink,
                300.0,
            ),
            sources: vec![
                read(
                    "memory, bandwidth 2,039 GB/s, 312 TFLOPS dense, no FP8",
                    "huataihuang/cloud-atlas (SXM 2,039 GB/s); microsoft/vidur a100 SKU; calculon-ai/calculon systems/a100_80g.json",
                    SHARED_FACTS,
                ),
                read(
                    "NVLink 600 GB/s both directions",
                    "pricegpu.pages.dev/blog/h100-vs-a100-cloud-price (spec table)",
                    READ,
                ),
                read(
                    "memory 79.15 GiB: what the card reports (PyTorch's \"total capacity of 79.15 GiB\" on an A100 80GB, SXM or PCIe not stated; vLLM 0.9.2 read 79.25)",
                    "vllm-project/vllm issue 4408 (2024-04-27); ovg-project/kvcached issue 110 (2025-09-09)",
                    REPORTED,
                ),
            ],
            prices: vec![on_demand(
                2.4984,
                "Modal, A100 80GB (billed per second of use)",
                "2026-05-07",
                PRICE_MATRIX,
            )],
        },
        HardwarePreset {
            id: "l40s",
            params: with(
                gpu("L40S 48GB", 44.40, 864.0, 362.0),
                Some(733.0),
                Interconnect::Pcie,
                PCIE4_GB_S,
            ),
            sources: vec![
                read(
                    "48 GB GDDR6, 864 GB/s, BF16 362.05 and FP8 733 dense (733 and 1,466 with sparsity), PCIe Gen4 x16 64 GB/s both directions, no NVLink",
                    "NVIDIA's L40/L40S table as copied by mullet.se (product 355414) and itcreations.com; ai-hpc.github.io quotes half these TFLOPS as dense, against NVIDIA's table",
                    READ,
                ),
                read(
                    "memory 44.40 GiB: what the card reports (PyTorch's \"total capacity of 44.40 GiB\" in a vLLM 0.10.1 log on an L40S; nvidia-smi 46,068 MiB)",
                    "vllm-project/vllm issue 23230 (2025-08-20); modal-labs/modal-client pull 2797 (nvidia-smi)",
                    REPORTED,
                ),
            ],
            prices: vec![on_demand(
                1.9512,
                "Modal, L40S (billed per second of use)",
                "2026-05-07",
                PRICE_MATRIX,
            )],
        },
        HardwarePreset {
            id: "l4",
            params: with(
                gpu("L4 24GB", 22.03, 300.0, 121.0),
                Some(242.0),
                Interconnect::Pcie,
                PCIE4_GB_S,
            ),
            sources: vec![
                read(
                    "24 GB GDDR6, 300 GB/s, BF16 121 and FP8 242 dense (242 and 485 with sparsity), PCIe 4.0 x16",
                    "store.sourcecode.com L4/L40S comparison (memory, bandwidth, interface); yobitel.com/knowledge-base/nvidia-l4 (TFLOPS)",
                    READ,
                ),
                unverified(
                    "memory 22.03 GiB: what the card reports to PyTorch (nvidia-smi's 23,034 MiB, read, less the 0.5-0.6 GiB the H100 and L40S lose between the two)",
                    "nvidia-smi: modal-labs/modal-client pull 2797; \"total capacity of 22.03 GiB\" in copies of L4 logs whose repositories were not identified",
                    REPORTED,
                ),
            ],
            prices: vec![on_demand(
                0.7992,
                "Modal, L4 (billed per second of use)",
                "2026-05-07",
                PRICE_MATRIX,
            )],
        },
        HardwarePreset {
            id: "b200",
            params: HardwareParams {
                peak_fp4_tflops: Some(9000.0),
                ..with(
                    gpu("B200 180GB", 178.36, 8000.0, 2250.0),
                    Some(4500.0),
                    Interconnect::Nvlink,
                    900.0,
                )
            },
            sources: vec![
                read(
                    "8 TB/s; HGX B200 at 1,000 W: BF16 2,250, FP8 4,500, FP4 9,000 dense; NVLink 5 2 x 900 GB/s",
                    "glennklockwood.com/garden/processors/B200 (spec list and HGX TFLOPS table)",
                    READ,
                ),
                read(
                    "180 GB per GPU (the page above lists 192 GB of HBM3e on the package)",
                    "MLPerf Inference v4.1 system name B200-SXM-180GB (mlcommons/inference_results_v4.1)",
                    SHARED_FACTS,
                ),
                read(
                    "memory 178.36 GiB: what the card reports (PyTorch's \"total capacity of 178.36 GiB\" on an NVIDIA B200; a device query's 178.35)",
                    "PrimeIntellect-ai/prime-rl benchmarks/baselines (8xb200 Qwen3-235B log) @ 559b4477; pytorch/ao pull 4002",
                    REPORTED,
                ),
            ],
            prices: vec![on_demand(
                3.75,
                "packet.ai, B200 SXM on-demand",
                "2026-06",
                "packet.ai/blog/gpu-pricing-models-compared (provider's blog; its banner quotes $5.6/h for bare metal)",
            )],
        },
        HardwarePreset {
            id: "mi300x",
            params: with(
                gpu("MI300X 192GB", 191.98, 5300.0, 1307.0),
                Some(2614.9),
                Interconnect::Xgmi,
                448.0,
            ),
            sources: vec![
                read(
                    "192 GB HBM3, 5.3 TB/s, FP16 1,307 TFLOPS",
                    "docs.vultr.com/inference-cookbook/rocm/getting-started/hardware-requirements",
                    SHARED_FACTS,
                ),
                unverified(
                    "FP8 2,614.9 dense",
                    "read for the MI325X (same CDNA 3 compute; awesomeagents.ai/hardware/amd-mi325x); AMD's MI300X datasheet not read",
                    READ,
                ),
                read(
                    "xGMI: 7 links of 128 GB/s both directions, 896 GB/s in all (448 GB/s one way; one link, 64 GB/s, to each peer of an 8-GPU node)",
                    "gpu.blog/gpus/instinct-mi300x-mi300x (xGMI 896 GB/s); emergentmind.com/topics/amd-mi300x-gpu (128 GB/s per link)",
                    READ,
                ),
                read(
                    "memory 191.98 GiB: what the card reports to vLLM",
                    "vllm-project/vllm issue 53961 (2026-08-26)",
                    REPORTED,
                ),
            ],
            prices: vec![on_demand(
                1.85,
                "Vultr, MI300X on-demand",
                "not stated",
                "gpu.blog/gpus/instinct-mi300x-mi300x (provider list; third-party page)",
            )],
        },
        HardwarePreset {
            id: "mi325x",
            params: with(
                gpu("MI325X 256GB", 255.98, 6000.0, 1307.0),
                Some(2614.9),
                Interconnect::Xgmi,
                448.0,
            ),
            sources: vec![
                read(
                    "256 GB HBM3E, 6.0 TB/s, BF16 1,307.4 and FP8 2,614.9 dense",
                    "awesomeagents.ai/hardware/amd-mi325x (spec table); docs.vultr.com inference cookbook",
                    READ,
                ),
                read(
                    "seven Infinity Fabric links per GPU (at the MI300X's 128 GB/s each)",
                    "wiaix.com/amd-instincttm-mi325x-accelerators",
                    READ,
                ),
                read(
                    "memory 255.98 GiB: what the card reports (PyTorch's \"total capacity of 255.98 GiB\" in a vLLM ROCm log on MI325X)",
                    "vllm-project/vllm issue 41962 (2026-05-07)",
                    REPORTED,
                ),
            ],
            prices: vec![],
        },
        HardwarePreset {
            id: "tpu-v5e",
            params: gpu("TPU v5e (per chip)", 16.0, 819.0, 197.0),
            sources: vec![read(
                "16 GB HBM2, 819 GB/s, 197 TFLOPS bf16 (Int8 393 TOPS, no FP8)",
                "cloud.google.com/tpu/docs/v5e",
                SHARED_FACTS,
            )],
            prices: vec![],
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::presets::Source;

    /// Every preset says where its figures come from, and every price is
    /// dated and placed: a figure without a source is what this catalog is
    /// for avoiding.
    #[test]
    fn every_accelerator_figure_has_a_dated_source() {
        let sourced =
            |s: &Source| !s.figures.is_empty() && !s.source.is_empty() && !s.retrieved.is_empty();
        for preset in hardware_presets() {
            assert!(!preset.sources.is_empty(), "{}", preset.id);
            assert!(preset.sources.iter().all(sourced), "{}", preset.id);
            for price in &preset.prices {
                assert!(price.usd_per_gpu_hour > 0.0, "{}", preset.id);
                assert!(!price.price_date.is_empty(), "{}", preset.id);
                assert!(!price.provider_region.is_empty(), "{}", preset.id);
                assert!(sourced(&price.source), "{}", preset.id);
            }
        }
    }

    /// The catalog's lower precisions are faster than BF16 and the links
    /// slower than memory: a slip of a digit (or a sparse figure taken for a
    /// dense one twice over) breaks one of these.
    #[test]
    fn accelerator_figures_are_in_proportion() {
        for preset in hardware_presets() {
            let h = &preset.params;
            if let Some(fp8) = h.peak_fp8_tflops {
                assert_eq!((fp8 / h.peak_tflops).round(), 2.0, "{}", preset.id);
            }
            if let (Some(fp4), Some(fp8)) = (h.peak_fp4_tflops, h.peak_fp8_tflops) {
                assert_eq!(fp4 / fp8, 2.0, "{}", preset.id);
            }
            if let Some(link) = &h.interconnect {
                assert!(link.gb_s < h.bandwidth_gb_s / 2.0, "{}", preset.id);
            }
        }
    }
}
