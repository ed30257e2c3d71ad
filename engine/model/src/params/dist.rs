//! Distributions of token counts and batch sizes as a scenario writes them,
//! parameterised the way planners think (median and p90, or mean and
//! standard deviation). [`Dist`](crate::model::Dist) (in `model`) is the validated sampler
//! built from a [`DistParams`].

use serde::{Deserialize, Serialize};

/// The shape of a distribution. Every parameter is in the unit of the sampled
/// quantity (tokens, or requests per batch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// Always `value`.
    Constant { value: f64 },
    /// Uniform on `\[low, high\]`.
    Uniform { low: f64, high: f64 },
    /// Exponential with the given mean.
    Exponential { mean: f64 },
    /// Geometric on {1, 2, ...} with the given mean (success probability 1/mean).
    Geometric { mean: f64 },
    /// Lognormal given by its median and 90th percentile.
    LogNormal { median: f64, p90: f64 },
    /// Lognormal given by its mean and standard deviation.
    LogNormalMoments { mean: f64, std_dev: f64 },
    /// Gamma given by its mean and standard deviation.
    Gamma { mean: f64, std_dev: f64 },
    /// Each of `values` with equal probability (e.g. lengths from a trace).
    Empirical { values: Vec<f64> },
    /// Bin `i` spans `[edges\[i\], edges\[i+1\])` with probability proportional to
    /// `weights\[i\]`; uniform within a bin.
    Histogram { edges: Vec<f64>, weights: Vec<f64> },
}

impl Shape {
    /// The same family with every value multiplied by `factor` (a scale
    /// change: the coefficient of variation is unchanged).
    pub fn scaled(&self, factor: f64) -> Shape {
        let f = factor;
        match self {
            Shape::Constant { value } => Shape::Constant { value: value * f },
            Shape::Uniform { low, high } => Shape::Uniform {
                low: low * f,
                high: high * f,
            },
            Shape::Exponential { mean } => Shape::Exponential { mean: mean * f },
            // A geometric count scaled stays geometric only approximately: keep
            // the family and scale the mean (never below 1, its smallest value).
            Shape::Geometric { mean } => Shape::Geometric {
                mean: (mean * f).max(1.0),
            },
            Shape::LogNormal { median, p90 } => Shape::LogNormal {
                median: median * f,
                p90: p90 * f,
            },
            Shape::LogNormalMoments { mean, std_dev } => Shape::LogNormalMoments {
                mean: mean * f,
                std_dev: std_dev * f,
            },
            Shape::Gamma { mean, std_dev } => Shape::Gamma {
                mean: mean * f,
                std_dev: std_dev * f,
            },
            Shape::Empirical { values } => Shape::Empirical {
                values: values.iter().map(|v| v * f).collect(),
            },
            Shape::Histogram { edges, weights } => Shape::Histogram {
                edges: edges.iter().map(|e| e * f).collect(),
                weights: weights.clone(),
            },
        }
    }
}

/// A distribution with optional clamps, as written in a scenario. It reads
/// through `RawDist`, so that a key its kind does not have is an error
/// naming the key (`#\[serde(flatten)\]` would ignore it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "RawDist")]
pub struct DistParams {
    #[serde(flatten)]
    pub shape: Shape,
    /// Samples below `min` become `min`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Samples above `max` become `max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// What a distribution reads as: each kind with exactly its own keys and the
/// clamps, unknown keys refused.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum RawDist {
    Constant {
        value: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    Uniform {
        low: f64,
        high: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    Exponential {
        mean: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    Geometric {
        mean: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    LogNormal {
        median: f64,
        p90: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    LogNormalMoments {
        mean: f64,
        std_dev: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    Gamma {
        mean: f64,
        std_dev: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    Empirical {
        values: Vec<f64>,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    Histogram {
        edges: Vec<f64>,
        weights: Vec<f64>,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
}

impl From<RawDist> for DistParams {
    fn from(raw: RawDist) -> DistParams {
        let (shape, min, max) = match raw {
            RawDist::Constant { value, min, max } => (Shape::Constant { value }, min, max),
            RawDist::Uniform {
                low,
                high,
                min,
                max,
            } => (Shape::Uniform { low, high }, min, max),
            RawDist::Exponential { mean, min, max } => (Shape::Exponential { mean }, min, max),
            RawDist::Geometric { mean, min, max } => (Shape::Geometric { mean }, min, max),
            RawDist::LogNormal {
                median,
                p90,
                min,
                max,
            } => (Shape::LogNormal { median, p90 }, min, max),
            RawDist::LogNormalMoments {
                mean,
                std_dev,
                min,
                max,
            } => (Shape::LogNormalMoments { mean, std_dev }, min, max),
            RawDist::Gamma {
                mean,
                std_dev,
                min,
                max,
            } => (Shape::Gamma { mean, std_dev }, min, max),
            RawDist::Empirical { values, min, max } => (Shape::Empirical { values }, min, max),
            RawDist::Histogram {
                edges,
                weights,
                min,
                max,
            } => (Shape::Histogram { edges, weights }, min, max),
        };
        DistParams { shape, min, max }
    }
}

impl DistParams {
    pub fn constant(value: f64) -> Self {
        Self::new(Shape::Constant { value })
    }

    /// A lognormal given by its median and 90th percentile.
    pub fn log_normal(median: f64, p90: f64) -> Self {
        Self::new(Shape::LogNormal { median, p90 })
    }

    pub fn new(shape: Shape) -> Self {
        DistParams {
            shape,
            min: None,
            max: None,
        }
    }

    pub fn clamped(mut self, min: Option<f64>, max: Option<f64>) -> Self {
        self.min = min;
        self.max = max;
        self
    }

    /// The distribution of `factor` x X: the shape and both clamps scaled, so
    /// that every draw is (before rounding) `factor` times the original one.
    /// For small counts rounding dominates: a constant 1 scaled by 1.4 still
    /// draws 1, and scaled by 1.5 draws 2.
    pub fn scaled(&self, factor: f64) -> DistParams {
        DistParams {
            shape: self.shape.scaled(factor),
            min: self.min.map(|m| m * factor),
            max: self.max.map(|m| m * factor),
        }
    }
}
