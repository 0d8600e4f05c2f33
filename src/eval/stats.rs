//! The figures `portcullis eval` prints: proportions with Wilson intervals, and percentiles.

use std::time::Duration;

use serde::Serialize;

/// `hits` of `of`, with its 95% Wilson score interval (sound at 0 and at `of`, unlike the
/// normal approximation, and the corpora are small).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub hits: usize,
    pub of: usize,
    /// `None` when `of` is 0: there is nothing to measure.
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// The normal quantile for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

impl Rate {
    pub fn new(hits: usize, of: usize) -> Rate {
        if of == 0 {
            return Rate { hits, of, value: None, low: None, high: None };
        }
        let (n, p, z2) = (of as f64, hits as f64 / of as f64, Z95 * Z95);
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        Rate {
            hits,
            of,
            value: Some(p),
            low: Some((centre - half).max(0.0)),
            high: Some((centre + half).min(1.0)),
        }
    }

    /// `83.3% [72.1–90.6] (50/60)`, or `n/a (0/0)`.
    pub fn show(&self) -> String {
        match (self.value, self.low, self.high) {
            (Some(v), Some(l), Some(h)) => {
                format!("{:.1}% [{:.1}–{:.1}] ({}/{})", v * 100.0, l * 100.0, h * 100.0, self.hits, self.of)
            }
            _ => format!("n/a ({}/{})", self.hits, self.of),
        }
    }
}

/// The nearest-rank `q` quantile (0 < q ≤ 1) of `samples`; `None` when there are none.
pub fn percentile(samples: &[Duration], q: f64) -> Option<Duration> {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len().max(1)) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 5e-4)
    }

    #[test]
    fn wilson_intervals_match_the_published_values() {
        // Newcombe (1998), table I: 81/263 → 0.2553–0.3662; 15/148 → 0.0624–0.1605.
        let r = Rate::new(81, 263);
        assert!(close(r.low, 0.2553) && close(r.high, 0.3662), "{r:?}");
        let r = Rate::new(15, 148);
        assert!(close(r.low, 0.0624) && close(r.high, 0.1605), "{r:?}");
        // The ends stay inside [0, 1] and are not degenerate: 0/10 → 0–0.2775.
        let r = Rate::new(0, 10);
        assert!(close(r.low, 0.0) && close(r.high, 0.2775), "{r:?}");
        let r = Rate::new(10, 10);
        assert!(close(r.low, 0.7225) && close(r.high, 1.0), "{r:?}");
        assert_eq!(Rate::new(0, 0).show(), "n/a (0/0)");
        assert_eq!(Rate::new(1, 2).show(), "50.0% [9.5–90.5] (1/2)");
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let ms = |v: &[u64]| v.iter().map(|&m| Duration::from_millis(m)).collect::<Vec<_>>();
        let s = ms(&[40, 10, 30, 20, 50, 60, 70, 80, 90, 100]);
        assert_eq!(percentile(&s, 0.5), Some(Duration::from_millis(50)));
        assert_eq!(percentile(&s, 0.95), Some(Duration::from_millis(100)));
        assert_eq!(percentile(&ms(&[7]), 0.95), Some(Duration::from_millis(7)));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
