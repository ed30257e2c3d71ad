//! Serde for `f64` values JSON cannot hold: NaN and the infinities.
//!
//! A percentile that falls among requests that never finished is infinite; a
//! statistic of no requests is NaN. JSON has neither, so such numbers travel
//! as `null` (NaN), `"inf"` and `"-inf"`, and read back exactly. Finite
//! numbers are plain JSON numbers.

/// Serialises any `f64`: finite values as JSON numbers, NaN as `null`,
/// infinities as the strings `"inf"` and `"-inf"`.
pub mod nonfinite {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Wire {
        Number(f64),
        Text(String),
        Null(()),
    }

    pub fn to_wire(x: f64) -> serde_json::Value {
        if x.is_finite() {
            serde_json::Value::from(x)
        } else if x.is_nan() {
            serde_json::Value::Null
        } else if x > 0.0 {
            serde_json::Value::from("inf")
        } else {
            serde_json::Value::from("-inf")
        }
    }

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        to_wire(*x).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(match Option::<Wire>::deserialize(d)? {
            Some(Wire::Number(x)) => x,
            Some(Wire::Text(t)) if t == "inf" => f64::INFINITY,
            Some(Wire::Text(t)) if t == "-inf" => f64::NEG_INFINITY,
            _ => f64::NAN,
        })
    }
}

/// [`nonfinite`] for a pair.
pub mod nonfinite_pair {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(x: &[f64; 2], s: S) -> Result<S::Ok, S::Error> {
        [
            super::nonfinite::to_wire(x[0]),
            super::nonfinite::to_wire(x[1]),
        ]
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
        #[derive(Deserialize)]
        struct Pair(
            #[serde(with = "super::nonfinite")] f64,
            #[serde(with = "super::nonfinite")] f64,
        );
        let Pair(a, b) = Pair::deserialize(d)?;
        Ok([a, b])
    }
}

/// [`nonfinite`] as a `serde_with` adapter, so that it composes:
/// `#\[serde_as(as = "Option<NonFinite>")\]`, `"\[NonFinite; 2\]"`,
/// `"Vec<\[NonFinite; 2\]>"`. Every `f64` a report or a plan result holds
/// travels this way (checked by a round-trip test in
/// `tests/engine/invariants.rs`).
pub struct NonFinite;

impl serde_with::SerializeAs<f64> for NonFinite {
    fn serialize_as<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        nonfinite::serialize(x, s)
    }
}

impl<'de> serde_with::DeserializeAs<'de, f64> for NonFinite {
    fn deserialize_as<D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        nonfinite::deserialize(d)
    }
}
