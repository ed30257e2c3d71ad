//! Buckets of f64 values and the first pass over a sample.
//!
//! Selection and CDF counting work on buckets: the top 16 bits of an
//! order-preserving key (sign, exponent and 4 mantissa bits, so sixteen
//! buckets per octave). One [`Summary`] pass counts the values per bucket
//! (besides their count, sum, smallest and largest); the gather pass
//! (`select.rs`) then reads only the values of the buckets it needs.

use std::ops::Range;

/// Samples from this size on (all parts together) are counted by buckets.
pub const BUCKETS: usize = 1 << 16;

/// Maps f64 to u64 so that integer order is `total_cmp` order.
fn key(v: f64) -> u64 {
    let bits = v.to_bits();
    bits ^ ((((bits as i64) >> 63) as u64) | (1 << 63))
}

/// The f64 whose [`key`] is `key`.
pub fn from_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key ^ (1 << 63)
    } else {
        !key
    })
}

/// The bucket of `v`: the top 16 bits of its [`key`] (sign, exponent and 4
/// mantissa bits, so sixteen buckets per octave), in the order of the values.
fn bucket(v: f64) -> usize {
    (key(v) >> 48) as usize
}

/// The slot of `v`: the top 16 bits of its bits, one shift. Histograms and
/// plans are indexed by slot (per value) and walked by bucket (per bucket):
/// the slot of bucket `b` is [`slot_of_bucket`]`(b)`.
pub fn slot(v: f64) -> usize {
    (v.to_bits() >> 48) as usize
}

/// The slot of the values of bucket `b` (below [`BUCKETS`]): the key flips
/// every bit of a negative value and the sign bit of the others.
pub fn slot_of_bucket(b: usize) -> usize {
    b ^ if b & 0x8000 != 0 { 0x8000 } else { 0xFFFF }
}

/// Turns the bits of values of one bucket (so of one sign) into their
/// [`key`]s in place: one xor with the same mask for all, cheaper than
/// [`key`] per value, and integers then select faster than `total_cmp`.
pub fn to_keys(bits: &mut [u64]) {
    let mask = match bits.first() {
        Some(b) if b >> 63 == 1 => u64::MAX,
        _ => 1 << 63,
    };
    for b in bits {
        *b ^= mask;
    }
}

/// What one pass over a sample learns.
pub struct Summary {
    pub n: usize,
    /// Sum in reading order, as `Iterator::sum` gives it.
    pub sum: f64,
    /// Smallest value, NaNs aside (infinite when there are none; the sign
    /// of a zero unspecified, as with `f64::min`).
    pub min: f64,
    /// Largest value, NaNs aside (NaN when there are none), as
    /// `fold(f64::NAN, f64::max)` gives it.
    pub max: f64,
    /// Values per bucket, or empty when not counted.
    pub counts: Vec<u32>,
}

impl Summary {
    /// Nothing read yet.
    fn empty() -> Summary {
        Summary {
            n: 0,
            sum: -0.0,
            min: f64::INFINITY,
            max: f64::NAN,
            counts: Vec::new(),
        }
    }

    /// Nothing read yet, with the largest value at -inf: plain comparisons
    /// (one instruction each) then keep the smallest and largest values.
    fn start() -> Summary {
        Summary {
            max: f64::NEG_INFINITY,
            ..Summary::empty()
        }
    }

    /// One pass over the values of `parts` in order: their count, sum,
    /// smallest and largest and, when `histogram`, counts per bucket.
    pub fn of(parts: &[&[f64]], histogram: bool) -> Summary {
        let mut s = Summary::start();
        let mut counts = if histogram {
            vec![0; BUCKETS]
        } else {
            Vec::new()
        };
        for part in parts {
            match <&mut [u32; BUCKETS]>::try_from(&mut counts[..]) {
                Ok(counts) => s.read_counting(part, counts),
                Err(_) => s.read(part),
            }
        }
        s.counts = counts;
        // -inf stands for "none" only if no value is -inf.
        let infinite = |p: &&[f64]| p.contains(&f64::NEG_INFINITY);
        if s.max == f64::NEG_INFINITY && !parts.iter().any(infinite) {
            s.max = f64::NAN;
        }
        s
    }

    /// Adds `values` to count, sum, smallest and largest (NaNs never
    /// compare smaller or larger, so they leave both as they are).
    fn read(&mut self, values: &[f64]) {
        let (mut sum, mut min, mut max) = (self.sum, self.min, self.max);
        for &v in values {
            sum += v;
            min = if v < min { v } else { min };
            max = if v > max { v } else { max };
        }
        (self.n, self.sum, self.min, self.max) = (self.n + values.len(), sum, min, max);
    }

    /// [`Summary::read`], also counting the values per bucket.
    fn read_counting(&mut self, values: &[f64], counts: &mut [u32; BUCKETS]) {
        let (mut sum, mut min, mut max) = (self.sum, self.min, self.max);
        for &v in values {
            sum += v;
            min = if v < min { v } else { min };
            max = if v > max { v } else { max };
            counts[slot(v)] += 1;
        }
        (self.n, self.sum, self.min, self.max) = (self.n + values.len(), sum, min, max);
    }

    /// The buckets that hold every value: from the smallest's to the
    /// largest's, unless some lie outside (NaNs, or a zero of the other
    /// sign), and then all of them.
    pub fn occupied(&self) -> Range<usize> {
        if self.min <= self.max {
            let range = bucket(self.min)..bucket(self.max) + 1;
            let count = |b| {
                self.counts
                    .get(slot_of_bucket(b))
                    .map_or(0, |&c| c as usize)
            };
            if range.clone().map(count).sum::<usize>() == self.n {
                return range;
            }
        }
        0..self.counts.len()
    }

    /// The summary of all `parts` together: counts and sums added, bucket
    /// counts too when every part has them.
    pub fn combine(parts: &[Summary]) -> Summary {
        let mut s = Summary::empty();
        for p in parts {
            s.n += p.n;
            s.sum += p.sum;
            s.min = s.min.min(p.min);
            s.max = s.max.max(p.max);
        }
        if !parts.is_empty() && parts.iter().all(|p| p.counts.len() == BUCKETS) {
            s.counts = vec![0; BUCKETS];
            for p in parts {
                for (c, &d) in s.counts.iter_mut().zip(&p.counts) {
                    *c += d;
                }
            }
        }
        s
    }
}
