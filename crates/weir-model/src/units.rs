//! Sizes, rates and durations as operators write them, parsed once and carried with units.
//!
//! Seastar's conventions are kept because users copy values between io_tester job files,
//! io-properties.yaml and weir: a size suffix `k K M G T` is a *binary* power (io_tester's
//! `256kB` is 262,144 bytes; io-properties' `95k` IOPS is 97,280), and an optional trailing
//! `i`, `iB` or `B` is ignored. Durations take `ns us ms s m h`; a bare number is seconds.

use std::fmt;
use std::time::Duration;

/// Why a size, rate or duration could not be read. The message names the accepted forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    /// The text that could not be read.
    pub input: String,
    /// The forms accepted, finishing "expected ...".
    pub expected: &'static str,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not {}", self.input, self.expected)
    }
}

impl std::error::Error for UnitError {}

const SIZE_FORMS: &str = "a size: a whole number with an optional binary suffix k, M, G or T \
     (optionally followed by i, iB or B), e.g. 4096, 4k, 128KiB, 1M";
const DURATION_FORMS: &str =
    "a duration: a number followed by ns, us (or µs), ms, s, m or h, e.g. \
     500us, 0.75ms, 10s (a bare number means seconds)";

/// Parses a byte count or a count with a binary suffix: `4096`, `4k`, `128kB`, `1MiB`, `2G`.
/// Fractions are accepted when the result is whole (`1.5k` = 1536).
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let err = || UnitError {
        input: input.to_string(),
        expected: SIZE_FORMS,
    };
    let s = input.trim();
    let s = s
        .strip_suffix("iB")
        .or_else(|| s.strip_suffix('B'))
        .or_else(|| s.strip_suffix('i'))
        .unwrap_or(s);
    let (number, shift) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c {
                'k' | 'K' => 10,
                'M' | 'm' => 20,
                'G' | 'g' => 30,
                'T' | 't' => 40,
                _ => return Err(err()),
            };
            (&s[..i], shift)
        }
        _ => (s, 0),
    };
    let number = number.trim();
    if number.is_empty() || number.starts_with('-') || number.starts_with('+') {
        return Err(err());
    }
    if let Ok(whole) = number.parse::<u64>() {
        return whole
            .checked_shl(shift)
            .filter(|v| v >> shift == whole)
            .ok_or_else(err);
    }
    let value: f64 = number.parse().map_err(|_| err())?;
    let scaled = value * (1u64 << shift) as f64;
    if !scaled.is_finite() || scaled < 0.0 || scaled.fract() != 0.0 || scaled > u64::MAX as f64 {
        return Err(err());
    }
    Ok(scaled as u64)
}

/// Parses `10s`, `500ms`, `0.75ms`, `100us` (or `100µs`), `250ns`, `2m`, `1h`; a bare number
/// is seconds.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let err = || UnitError {
        input: input.to_string(),
        expected: DURATION_FORMS,
    };
    let s = input.trim();
    // The unit starts at the first letter of any script: the micro sign of `5µs` is a letter
    // but not an ASCII one, and splitting at the `s` left `5µ` as the number.
    let split = s.find(char::is_alphabetic).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number.trim().parse().map_err(|_| err())?;
    let seconds_per_unit = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ns" => 1e-9,
        // The micro sign (U+00B5) and the Greek letter mu (U+03BC) look the same.
        "us" | "\u{b5}s" | "\u{3bc}s" => 1e-6,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(err()),
    };
    let seconds = value * seconds_per_unit;
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(err());
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| err())
}

/// Formats bytes with a binary suffix, exact when it can be: 4096 -> "4 KiB", 1536 -> "1.5 KiB".
pub fn format_bytes(bytes: u64) -> String {
    const SUFFIXES: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut index = 0;
    while value >= 1024.0 && index + 1 < SUFFIXES.len() {
        value /= 1024.0;
        index += 1;
    }
    if value.fract() == 0.0 {
        format!("{} {}", value as u64, SUFFIXES[index])
    } else {
        format!("{:.1} {}", value, SUFFIXES[index])
    }
}

/// Formats a duration in the largest unit that keeps it readable: "157 us", "4.75 ms", "10.0 s".
pub fn format_duration(duration: Duration) -> String {
    let ns = duration.as_nanos();
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.0} us", ns as f64 / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} s", ns as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_binary_prefixes_like_seastar() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("256kB").unwrap(), 262_144);
        assert_eq!(parse_size("128KiB").unwrap(), 131_072);
        assert_eq!(parse_size("95k").unwrap(), 97_280);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size(" 512B ").unwrap(), 512);
    }

    #[test]
    fn bad_sizes_are_errors_naming_the_forms() {
        for bad in ["", "k", "-4k", "4x", "1.3", "4 kilobytes", "99999999999T"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.to_string().contains("binary suffix"), "{bad}: {e}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(
            parse_duration("0.75ms").unwrap(),
            Duration::from_micros(750)
        );
        assert_eq!(parse_duration("100us").unwrap(), Duration::from_micros(100));
        assert_eq!(
            parse_duration("5\u{b5}s").unwrap(),
            Duration::from_micros(5)
        );
        assert_eq!(
            parse_duration("5\u{3bc}s").unwrap(),
            Duration::from_micros(5)
        );
        assert_eq!(parse_duration("5 us").unwrap(), Duration::from_micros(5));
        assert_eq!(parse_duration("250ns").unwrap(), Duration::from_nanos(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("3 weeks").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(4096), "4 KiB");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_duration(Duration::from_micros(157)), "157 us");
        assert_eq!(format_duration(Duration::from_micros(4750)), "4.75 ms");
    }
}
