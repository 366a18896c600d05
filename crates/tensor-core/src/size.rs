//! Byte counts as people write them (`8GiB`, `500MB`, `1000000`): the one syntax the
//! command line, the library and the Python package take.

use crate::error::{Error, Result};

/// Parses a byte count: a whole number with an optional unit — `B`; `KB`, `MB`, `GB`, `TB`
/// (or `K`, `M`, `G`, `T`) in powers of 1000; `KiB`, `MiB`, `GiB`, `TiB` in powers of 1024 —
/// in any case, with spaces around or between them.
///
/// ```
/// assert_eq!(tensor_core::size::parse("8GiB")?, 8 << 30);
/// assert_eq!(tensor_core::size::parse(" 5 gb ")?, 5_000_000_000);
/// assert!(tensor_core::size::parse("1.5GB").is_err());
/// # Ok::<(), tensor_core::Error>(())
/// ```
pub fn parse(text: &str) -> Result<u64> {
    let invalid = |why: String| Error::InvalidArgument(why);
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits.parse().map_err(|_| {
        invalid(format!(
            "{text:?} is not a byte count (e.g. 8GiB, 500MB, 1000000)"
        ))
    })?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "t" | "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        other => return Err(invalid(format!("unknown unit {other:?} in {text:?}"))),
    };
    n.checked_mul(scale)
        .ok_or_else(|| invalid(format!("{text:?} is too large")))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn units_scale_in_powers_of_1000_and_1024() {
        assert_eq!(parse("1000").unwrap(), 1000);
        assert_eq!(parse("2KiB").unwrap(), 2048);
        assert_eq!(parse("3mb").unwrap(), 3_000_000);
        assert_eq!(parse("1 TiB").unwrap(), 1 << 40);
        assert!(parse("").is_err());
        assert!(parse("5XB").is_err());
        assert!(parse("-5").is_err());
        assert!(parse("20000000TB").is_err(), "overflow");
    }
}
