//! Share links: the whole scenario in one versioned query parameter.
//!
//! `?s=2.<payload>` where `2` is the link format and the payload, in
//! unpadded base64url, is the first [`DIGEST_BYTES`] bytes of the SHA-256
//! of the scenario's JSON ([`ScenarioParams`], with its own `version` field
//! inside) followed by that JSON compressed with zlib. Every field is
//! written, defaults included, so a link means the same scenario after the
//! engine's defaults change.
//!
//! Format 1 (`1.<payload>`, zlib alone) relied on zlib's Adler-32, which a
//! one-bit edit can pass (5 of 200,000 bit-flipped links decoded to other
//! scenarios); format 2's digest refuses a damaged link except with
//! probability 2^-96. Format-1 links keep opening, without that guarantee.
//!
//! One size limit, [`MAX_SCENARIO_BYTES`] of JSON, holds on both sides:
//! [`encode`] refuses a larger scenario (the page then says to use Export),
//! and [`decode`] refuses a link that would inflate beyond it.
//!
//! Old formats keep decoding: `tests/golden/links.json` holds a link made by
//! each released format, and the tests decode every one of them.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use sojourn_engine::ScenarioParams;

/// The query parameter that holds the scenario.
pub const LINK_PARAM: &str = "s";

/// The link format this build writes (and the newest it reads).
pub const LINK_FORMAT: u32 = 2;

/// Bytes of the scenario's SHA-256 a format-2 link carries (96 bits: 16
/// characters of the link; a damaged link passes with probability 2^-96).
pub const DIGEST_BYTES: usize = 12;

/// Largest scenario JSON kept in the browser's storage \[bytes\]: a scenario
/// too large for a link is still remembered (storage holds about 5 MB of
/// text, and the compressed form is far smaller than the JSON).
pub const MAX_STORED_SCENARIO_BYTES: usize = 64 * 1024 * 1024;

/// Largest scenario JSON a link may inflate to \[bytes\]: guards against a
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
    /// The payload does not inflate, or its checksum or digest fails.
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
                "the scenario is larger than {} MiB, too large for a link (use Export to share it as a file)",
                MAX_SCENARIO_BYTES / (1024 * 1024)
            ),
            LinkError::NotAScenario(reason) => write!(f, "it does not hold a scenario ({reason})"),
        }
    }
}

impl std::error::Error for LinkError {}

/// The link value (`2.<payload>`) for `params`, or [`LinkError::TooLarge`]
/// when its JSON is over [`MAX_SCENARIO_BYTES`] (no link could open it).
pub fn encode(params: &ScenarioParams) -> Result<String, LinkError> {
    encode_within(params, MAX_SCENARIO_BYTES)
}

/// [`encode`] for the browser's storage, which takes scenarios up to
/// [`MAX_STORED_SCENARIO_BYTES`].
pub fn encode_for_storage(params: &ScenarioParams) -> Result<String, LinkError> {
    encode_within(params, MAX_STORED_SCENARIO_BYTES)
}

fn encode_within(params: &ScenarioParams, limit: usize) -> Result<String, LinkError> {
    // Serialising plain data cannot fail; an empty payload would only make a
    // link that reports itself broken.
    let json = serde_json::to_vec(params).unwrap_or_default();
    if json.len() > limit {
        return Err(LinkError::TooLarge);
    }
    let mut payload = Sha256::digest(&json)[..DIGEST_BYTES].to_vec();
    payload.extend(miniz_oxide::deflate::compress_to_vec_zlib(&json, 9));
    Ok(format!("{LINK_FORMAT}.{}", URL_SAFE_NO_PAD.encode(payload)))
}

/// The scenario in a link value. The scenario may still be invalid (the
/// sender's inputs were): [`sojourn_engine::Scenario::try_from`] says why.
pub fn decode(value: &str) -> Result<ScenarioParams, LinkError> {
    decode_within(value, MAX_SCENARIO_BYTES)
}

/// [`decode`] of what [`encode_for_storage`] wrote.
pub fn decode_from_storage(value: &str) -> Result<ScenarioParams, LinkError> {
    decode_within(value, MAX_STORED_SCENARIO_BYTES)
}

fn decode_within(value: &str, limit: usize) -> Result<ScenarioParams, LinkError> {
    let (format, payload) = value.trim().split_once('.').ok_or(LinkError::NoFormat)?;
    let bytes = || {
        URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| LinkError::NotBase64)
    };
    let json = match format {
        "1" => inflate(&bytes()?, limit)?,
        "2" => {
            let bytes = bytes()?;
            if bytes.len() <= DIGEST_BYTES {
                return Err(LinkError::Corrupt);
            }
            let (digest, compressed) = bytes.split_at(DIGEST_BYTES);
            let json = inflate(compressed, limit)?;
            if Sha256::digest(&json)[..DIGEST_BYTES] != *digest {
                return Err(LinkError::Corrupt);
            }
            json
        }
        other => return Err(LinkError::UnknownFormat(other.to_string())),
    };
    sojourn_engine::scenario_params_from_json(&json)
        .map_err(|error| LinkError::NotAScenario(crate::words::field_message(&error, None)))
}

/// zlib-compressed bytes, inflated to at most `limit` bytes.
fn inflate(compressed: &[u8], limit: usize) -> Result<Vec<u8>, LinkError> {
    miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(compressed, limit).map_err(|error| {
        match error.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => LinkError::TooLarge,
            _ => LinkError::Corrupt,
        }
    })
}

/// The pairs of a query string (`?a=b&s=1.xyz`, as `location.search`
/// gives it: one leading `?`, then `application/x-www-form-urlencoded`).
/// [`find_in_query`] and [`replace_in_query`] both read through this one
/// parser, so they agree on every query.
fn query_pairs(query: &str) -> form_urlencoded::Parse<'_> {
    form_urlencoded::parse(query.strip_prefix('?').unwrap_or(query).as_bytes())
}

/// The value of the link parameter in a query string, if any (the first).
pub fn find_in_query(query: &str) -> Option<String> {
    query_pairs(query)
        .find(|(key, _)| key == LINK_PARAM)
        .map(|(_, value)| value.into_owned())
}

/// `query` with the link parameter set to `value`, other parameters kept
/// (every pair the parser reads, re-encoded; an empty key-less pair dropped).
/// `None` for `value` removes the link parameter.
pub fn set_in_query(query: &str, value: Option<&str>) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (key, other) in query_pairs(query) {
        if key != LINK_PARAM && !(key.is_empty() && other.is_empty()) {
            out.append_pair(&key, &other);
        }
    }
    if let Some(value) = value {
        out.append_pair(LINK_PARAM, value);
    }
    let pairs = out.finish();
    if pairs.is_empty() {
        String::new()
    } else {
        format!("?{pairs}")
    }
}

/// `query` with the link parameter set to `value`, other parameters kept.
pub fn replace_in_query(query: &str, value: &str) -> String {
    set_in_query(query, Some(value))
}
