//! What the library records about itself in `_reserved_`: encoder name and version, the
//! time (ISO-8601 UTC, whole seconds) and a random version-4 UUID.

use crate::metadata::Map;
use crate::metadata::MetaValue as Value;
use std::time::{SystemTime, UNIX_EPOCH};

/// The provenance written to a message's `_reserved_`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// `_reserved_.encoder.name`.
    pub encoder_name: String,
    /// `_reserved_.encoder.version`.
    pub encoder_version: String,
    /// `_reserved_.time`, e.g. `2026-11-22T03:37:38Z`; left out when `None`.
    pub time: Option<String>,
    /// `_reserved_.uuid`; left out when `None`.
    pub uuid: Option<String>,
}

impl Provenance {
    /// The writer a message names in its `_reserved_` (encoder name and version, time,
    /// uuid), to be recorded again when the message is re-framed (migrated, edited).
    #[must_use]
    pub fn recorded(reserved: &Map) -> Option<Self> {
        let text = |v: Option<&Value>| v.and_then(Value::as_text).map(str::to_owned);
        let encoder = reserved.get("encoder")?;
        Some(Provenance {
            encoder_name: text(crate::metadata::field(encoder, "name"))?,
            encoder_version: text(crate::metadata::field(encoder, "version")).unwrap_or_default(),
            time: text(reserved.get("time")),
            uuid: text(reserved.get("uuid")),
        })
    }

    /// tensorkit, this crate's version, the current time and a fresh random UUID.
    ///
    /// For reproducible output, set `SOURCE_DATE_EPOCH` (seconds since 1970, the
    /// reproducible-builds convention): the time is then that instant and no UUID is written,
    /// so the same input gives the same bytes.
    #[must_use]
    pub fn now() -> Self {
        let fixed = std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        let secs = fixed.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
        Provenance {
            encoder_name: "tensorkit".into(),
            encoder_version: env!("CARGO_PKG_VERSION").into(),
            time: Some(iso8601(secs)),
            uuid: if fixed.is_some() { None } else { random_uuid() },
        }
    }

    /// Provenance with fixed values, for output that must not change from run to run.
    #[must_use]
    pub fn fixed(name: &str, version: &str, time: &str, uuid: &str) -> Self {
        Provenance {
            encoder_name: name.into(),
            encoder_version: version.into(),
            time: Some(time.into()),
            uuid: Some(uuid.into()),
        }
    }

    /// The `_reserved_` map.
    #[must_use]
    pub fn to_map(&self) -> Map {
        let mut m = Map::new();
        m.insert(
            "encoder".into(),
            Value::Map(vec![
                (
                    Value::Text("name".into()),
                    Value::Text(self.encoder_name.clone()),
                ),
                (
                    Value::Text("version".into()),
                    Value::Text(self.encoder_version.clone()),
                ),
            ]),
        );
        if let Some(t) = &self.time {
            m.insert("time".into(), Value::Text(t.clone()));
        }
        if let Some(u) = &self.uuid {
            m.insert("uuid".into(), Value::Text(u.clone()));
        }
        m
    }
}

/// `secs` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC).
#[must_use]
pub(crate) fn iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (year, month, day) = tensor_core::civil::civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A random version-4 UUID, or `None` when the system has no randomness to give.
fn random_uuid() -> Option<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).ok()?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = tensor_core::hex::encode(&b);
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_uuids_have_the_reference_shape() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(1_795_318_658), "2026-11-22T03:37:38Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        let u = random_uuid().unwrap();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_ne!(u, random_uuid().unwrap());
    }
}
