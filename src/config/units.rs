//! Human units in config: durations (`250ms`, `10s`, `5m`, `1h`) and sizes (`4MiB`, `512KiB`, `1000`).

use std::time::Duration;

/// Parses `250ms`, `10s`, `5m`, `1h` (a bare number is refused: the unit is the meaning).
pub fn duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("duration {s:?} needs a unit (ms, s, m or h)"))?;
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("duration {s:?} does not start with a number"))?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        _ => return Err(format!("duration {s:?} has unknown unit {unit:?} (use ms, s, m or h)")),
    };
    Ok(d)
}

/// Parses `4MiB`, `512KiB`, `1GiB`, `10kB`, `1MB` or a plain byte count.
pub fn size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("size {s:?} does not start with a number"))?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "kB" | "KB" => 1_000,
        "KiB" => 1 << 10,
        "MB" => 1_000_000,
        "MiB" => 1 << 20,
        "GB" => 1_000_000_000,
        "GiB" => 1 << 30,
        u => return Err(format!("size {s:?} has unknown unit {u:?} (use B, KiB, MiB, GiB, kB, MB, GB)")),
    };
    n.checked_mul(mult).ok_or_else(|| format!("size {s:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_only() {
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(duration("10").is_err());
        assert!(duration("s").is_err());
        assert!(duration("3 weeks").is_err());
    }

    #[test]
    fn sizes_parse_binary_and_decimal_units() {
        assert_eq!(size("4MiB"), Ok(4 << 20));
        assert_eq!(size("10kB"), Ok(10_000));
        assert_eq!(size("123"), Ok(123));
        assert!(size("1TiB").is_err());
        assert!(size("99999999999999999999GiB").is_err());
    }
}
