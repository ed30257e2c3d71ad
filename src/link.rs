//! Share links: the whole scenario in one versioned query parameter.
//!
//! `?s=1.<payload>` where `1` is the link format and the payload is the
//! scenario's JSON ([`ScenarioParams`], with its own `version` field inside),
//! compressed with zlib (whose Adler-32 checksum catches tampering) and
//! written in unpadded base64url. Every field is written, defaults included,
//! so a link means the same scenario after the engine's defaults change.
//!
//! Old formats keep decoding: `tests/golden/links.json` holds a link made by
//! each released format, and the tests decode every one of them.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sojourn_engine::ScenarioParams;

/// The query parameter that holds the scenario.
pub const LINK_PARAM: &str = "s";

/// The link format this build writes (and the newest it reads).
pub const LINK_FORMAT: u32 = 1;

/// Largest scenario JSON a link may inflate to [bytes]: guards against a
/// crafted link that would expand to gigabytes.
pub const MAX_SCENARIO_BYTES: usize = 4 * 1024 * 1024;

/// Why a link could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkError {
    /// No `<format>.` prefix.
    NoFormat,
    /// A format this build does not know: newer, or not a number.
    UnknownFormat(String),
    /// The payload is not base64url (cut or edited by hand).
    NotBase64,
    /// The payload does not inflate, or its checksum fails.
    Corrupt,
    /// The payload would inflate beyond [`MAX_SCENARIO_BYTES`].
    TooLarge,
    /// It inflates, but the JSON is not a scenario (the reason from serde).
    NotAScenario(String),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::NoFormat => f.write_str("it does not start with a format number"),
            LinkError::UnknownFormat(format) => match format.parse::<u32>() {
                Ok(n) if n > LINK_FORMAT => write!(
                    f,
                    "it was made by a newer version of Sojourn (link format {n}; this page reads 1 to {LINK_FORMAT})"
                ),
                _ => write!(f, "its format \"{format}\" is unknown"),
            },
            LinkError::NotBase64 => {
                f.write_str("it is cut short or was edited (not valid base64url)")
            }
            LinkError::Corrupt => {
                f.write_str("it is cut short or was edited (the checksum does not match)")
            }
            LinkError::TooLarge => write!(
                f,
                "the scenario inside is larger than {} MiB",
                MAX_SCENARIO_BYTES / (1024 * 1024)
            ),
            LinkError::NotAScenario(reason) => write!(f, "it does not hold a scenario ({reason})"),
        }
    }
}

impl std::error::Error for LinkError {}

/// The link value (`1.<payload>`) for `params`.
pub fn encode(params: &ScenarioParams) -> String {
    // Serialising plain data cannot fail; an empty payload would only make a
    // link that reports itself broken.
    let json = serde_json::to_vec(params).unwrap_or_default();
    let compressed = miniz_oxide::deflate::compress_to_vec_zlib(&json, 9);
    format!("{LINK_FORMAT}.{}", URL_SAFE_NO_PAD.encode(compressed))
}

/// The scenario in a link value. The scenario may still be invalid (the
/// sender's inputs were): [`sojourn_engine::Scenario::try_from`] says why.
pub fn decode(value: &str) -> Result<ScenarioParams, LinkError> {
    let (format, payload) = value.trim().split_once('.').ok_or(LinkError::NoFormat)?;
    match format {
        "1" => decode_v1(payload),
        other => Err(LinkError::UnknownFormat(other.to_string())),
    }
}

/// Format 1: zlib-compressed JSON in unpadded base64url.
fn decode_v1(payload: &str) -> Result<ScenarioParams, LinkError> {
    let compressed = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| LinkError::NotBase64)?;
    let json =
        miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&compressed, MAX_SCENARIO_BYTES)
            .map_err(|error| match error.status {
                miniz_oxide::inflate::TINFLStatus::HasMoreOutput => LinkError::TooLarge,
                _ => LinkError::Corrupt,
            })?;
    sojourn_engine::scenario_params_from_json(&json)
        .map_err(|error| LinkError::NotAScenario(error.to_string()))
}

/// The value of the link parameter in a query string (`?a=b&s=1.xyz`), if any.
pub fn find_in_query(query: &str) -> Option<String> {
    query
        .trim_start_matches('?')
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == LINK_PARAM)
        .map(|(_, value)| value.to_string())
}

/// `query` with the link parameter set to `value`, other parameters kept.
pub fn replace_in_query(query: &str, value: &str) -> String {
    let mut pairs: Vec<String> = query
        .trim_start_matches('?')
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter(|pair| pair.split_once('=').map_or(*pair, |(key, _)| key) != LINK_PARAM)
        .map(str::to_string)
        .collect();
    pairs.push(format!("{LINK_PARAM}={value}"));
    format!("?{}", pairs.join("&"))
}
