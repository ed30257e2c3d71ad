//! Named models and accelerators, each figure with where it was read and
//! when (`docs/catalog.md` has the same tables). A preset fills every field;
//! the user may edit any of them afterwards.
//!
//! A figure that was not read in any source (a commonly quoted vendor
//! number) is kept but marked unverified, naming where it is quoted; the
//! page shows the sources under "Assumptions and sources".

use serde::Serialize;

use crate::params::plan::PricingModel;
use crate::params::{HardwareParams, ModelParams};

mod hardware;
mod models;

pub use hardware::{h100_sxm, hardware_presets};
pub use models::{llama_3_1_8b, models};

/// Where some figures of a preset come from.
#[derive(Clone, Debug, Serialize)]
pub struct Source {
    /// The figures it gives, in words ("memory, bandwidth").
    pub figures: &'static str,
    /// Where they were read: the document, page or file, with its version.
    pub source: &'static str,
    /// When they were read: a date (YYYY-MM-DD) or "before" one.
    pub retrieved: &'static str,
    /// False for a figure not read in any source; `source` then says where
    /// it is commonly quoted.
    pub verified: bool,
}

/// A model preset with the source of each group of figures.
#[derive(Clone, Debug, Serialize)]
pub struct ModelPreset {
    pub id: &'static str,
    pub params: ModelParams,
    pub sources: Vec<Source>,
}

/// An accelerator preset with its sources and catalog prices.
#[derive(Clone, Debug, Serialize)]
pub struct HardwarePreset {
    pub id: &'static str,
    pub params: HardwareParams,
    pub sources: Vec<Source>,
    /// Quoted prices per GPU-hour, on-demand first; empty where none was
    /// found. They are references to compare quotes with: choosing the
    /// preset leaves the scenario's own price as it is.
    pub prices: Vec<Price>,
}

/// A price per GPU-hour as one provider quoted it.
#[derive(Clone, Debug, Serialize)]
pub struct Price {
    pub usd_per_gpu_hour: f64,
    pub pricing_model: PricingModel,
    /// The provider, region or offer, and for a reservation its term.
    pub provider_region: &'static str,
    /// When the price applied, as its source dates it.
    pub price_date: &'static str,
    pub source: Source,
}

impl ModelPreset {
    /// Whether every figure was read in its source.
    pub fn verified(&self) -> bool {
        all_verified(&self.sources)
    }
}

impl HardwarePreset {
    /// Whether every figure of the accelerator (prices aside) was read in
    /// its source.
    pub fn verified(&self) -> bool {
        all_verified(&self.sources)
    }
}

fn all_verified(sources: &[Source]) -> bool {
    sources.iter().all(|s| s.verified)
}

/// Figures read for this catalog.
const READ: &str = "2026-11-26";
/// Figures from the team's shared facts, read before the first presets were
/// committed (the facts do not record the day).
const SHARED_FACTS: &str = "before 2026-11-24";

/// Figures read in `source`.
fn read(figures: &'static str, source: &'static str, retrieved: &'static str) -> Source {
    Source {
        figures,
        source,
        retrieved,
        verified: true,
    }
}

/// Figures not read in any source; `quoted` says where they are quoted.
fn unverified(figures: &'static str, quoted: &'static str, retrieved: &'static str) -> Source {
    Source {
        verified: false,
        ..read(figures, quoted, retrieved)
    }
}

/// The model preset called `id`.
pub fn model(id: &str) -> Option<ModelParams> {
    models().into_iter().find(|m| m.id == id).map(|m| m.params)
}

/// The accelerator preset called `id`.
pub fn hardware(id: &str) -> Option<HardwareParams> {
    hardware_presets()
        .into_iter()
        .find(|h| h.id == id)
        .map(|h| h.params)
}

/// Whether `model` is the preset `preset`: equal, or equal in every field a
/// scenario saved before the catalog gave architecture shapes, when it has
/// none of them (so such scenarios still show their preset).
pub fn is_model_preset(preset: &ModelParams, model: &ModelParams) -> bool {
    let without_shapes = |m: &ModelParams| ModelParams {
        hidden_size: None,
        intermediate_size: None,
        vocab_size: None,
        moe: None,
        mla: None,
        sliding_window: None,
        ..m.clone()
    };
    preset == model || (without_shapes(model) == *model && without_shapes(preset) == *model)
}

/// Memory a preset had before the catalog took what the card reports to
/// the engine (2026-11-27), by the preset's name: the nominal figures. A
/// scenario saved with one is still that preset.
const EARLIER_MEMORY_GIB: [(&str, f64); 9] = [
    ("H100 SXM5 80GB", 80.0),
    ("H200 SXM 141GB", 141.0),
    ("A100 40GB", 40.0),
    ("A100 80GB SXM4", 80.0),
    ("L40S 48GB", 48.0),
    ("L4 24GB", 24.0),
    ("B200 180GB", 180.0),
    ("MI300X 192GB", 192.0),
    ("MI325X 256GB", 256.0),
];

/// Whether `hardware` is the preset `preset`: equal, or equal in every field
/// a scenario saved before the catalog gave FP8/FP4 peaks and the
/// interconnect, when it has none of them; the preset's earlier memory
/// figure counts as its own.
pub fn is_hardware_preset(preset: &HardwareParams, hardware: &HardwareParams) -> bool {
    let earlier = EARLIER_MEMORY_GIB.iter().any(|&(name, gib)| {
        name == preset.name && name == hardware.name && hardware.memory_gib == gib
    });
    let hardware = &HardwareParams {
        memory_gib: if earlier {
            preset.memory_gib
        } else {
            hardware.memory_gib
        },
        ..hardware.clone()
    };
    let without_new = |h: &HardwareParams| HardwareParams {
        peak_fp8_tflops: None,
        peak_fp4_tflops: None,
        interconnect: None,
        ..h.clone()
    };
    preset == hardware || (without_new(hardware) == *hardware && without_new(preset) == *hardware)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each preset's earlier nominal memory names a preset whose reported
    /// figure is below it and within 2.5% of it, read as GiB or as GB (the
    /// GDDR cards' "48 GB" is decimal, 44.7 GiB; HBM's "80 GB" is 80 GiB): a
    /// slipped digit breaks that. A scenario saved with the nominal figure
    /// is still that preset; any other figure is not.
    #[test]
    fn a_scenario_saved_with_the_nominal_memory_is_still_the_preset() {
        let presets = hardware_presets();
        for (name, gib) in EARLIER_MEMORY_GIB {
            let preset = presets
                .iter()
                .find(|p| p.params.name == name)
                .unwrap_or_else(|| panic!("no preset named {name}"));
            let reported = preset.params.memory_gib;
            let decimal = gib * 1e9 / f64::from(1u32 << 30);
            assert!(
                reported < gib && reported > 0.975 * decimal,
                "{name}: {reported}"
            );
            let saved = |memory_gib| HardwareParams {
                memory_gib,
                ..preset.params.clone()
            };
            assert!(is_hardware_preset(&preset.params, &saved(gib)), "{name}");
            assert!(
                !is_hardware_preset(&preset.params, &saved(gib - 1.0)),
                "{name}"
            );
        }
    }
}
