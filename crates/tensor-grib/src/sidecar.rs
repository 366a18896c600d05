//! Inventories that archives keep beside GRIB files, telling where each message starts: a
//! wgrib2 inventory (`FILE.idx`, NCEP's and others': `1:0:d=2026112000:TMP:500 mb:anl:`,
//! one line per field, its byte offset second) and an ECMWF index (`FILE.index`, ECMWF's
//! open data: one JSON object per line with `"_offset"` and `"_length"`).
//!
//! A reader that fetches a remote file by ranges asks for every message's headers at once
//! from them, instead of walking the messages one round trip each. The offsets are hints:
//! the messages are read and checked as they are without one, so a stale inventory costs
//! requests, never a wrong field.

/// The names a sidecar has: the GRIB file's name with one of these appended, in the order
/// they are looked for.
pub const SUFFIXES: [&str; 2] = [".idx", ".index"];

/// The message offsets an inventory lists, in order, each once; `None` when `text` is
/// neither kind of inventory.
#[must_use]
pub fn message_offsets(text: &[u8]) -> Option<Vec<u64>> {
    let text = std::str::from_utf8(text).ok()?;
    let mut offsets = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        offsets.push(if line.starts_with('{') {
            ecmwf_offset(line)?
        } else {
            wgrib2_offset(line)?
        });
    }
    offsets.sort_unstable();
    offsets.dedup();
    (!offsets.is_empty()).then_some(offsets)
}

/// `n:offset:...` (a field of a message holding several is numbered `n.k`, at its
/// message's offset).
fn wgrib2_offset(line: &str) -> Option<u64> {
    let mut parts = line.split(':');
    let number = parts.next()?;
    if !number
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    parts.next()?.parse().ok()
}

/// The number after `"_offset":` in one JSON object.
fn ecmwf_offset(line: &str) -> Option<u64> {
    let rest = &line[line.find("\"_offset\"")? + "\"_offset\"".len()..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgrib2_inventories_give_their_offsets() {
        let idx = b"1:0:d=2026112000:TMP:500 mb:anl:\n2:5520:d=2026112000:UGRD:500 mb:anl:\n2.2:5520:d=2026112000:VGRD:500 mb:anl:\n";
        assert_eq!(message_offsets(idx), Some(vec![0, 5520]));
    }

    #[test]
    fn ecmwf_indexes_give_their_offsets() {
        let index = br#"{"domain": "g", "param": "t", "_offset": 1234, "_length": 600}
{"param": "u", "_offset":0, "_length": 1234}
"#;
        assert_eq!(message_offsets(index), Some(vec![0, 1234]));
    }

    #[test]
    fn anything_else_is_no_inventory() {
        for text in [
            &b""[..],
            b"<html>not found</html>",
            b"GRIB\x00\x00",
            b"x:12:",
            b"{\"a\": 1}",
        ] {
            assert_eq!(message_offsets(text), None, "{text:?}");
        }
    }
}
