//! A document read back: its `schema_version` first (which also checks that it is JSON), then
//! the typed report, never a tree of JSON values.

use super::{Report, SCHEMA_VERSION};
use serde::{Deserialize, Deserializer};

/// Why a document could not be read back as a [`Report`].
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("not a JSON document ({0})")]
    Json(serde_json::Error),
    #[error("no schema_version: not a peakbench results document")]
    NoVersion,
    #[error(
        "schema_version {0} is not one this peakbench reads (1 to {SCHEMA_VERSION}); read it with the peakbench that wrote it"
    )]
    Version(u64),
    #[error("not a peakbench results document ({0})")]
    Shape(serde_json::Error),
}

/// What [`Report::from_json`] reads first: the document's `schema_version` where it is an
/// object with a whole, non-negative one; everything else in it is skipped unkept
/// ([`serde::de::IgnoredAny`]).
struct Head {
    schema_version: Option<u64>,
}

impl<'de> Deserialize<'de> for Head {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(HeadVisitor)
    }
}

/// Reads a [`Head`] from any JSON value: only an object can have a version.
struct HeadVisitor;

impl<'de> serde::de::Visitor<'de> for HeadVisitor {
    type Value = Head;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON document")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut schema_version = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "schema_version" {
                // The last one counts, as a JSON object's later key replaces the earlier one.
                schema_version = map.next_value::<Version>()?.0;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(Head { schema_version })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Head, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Head {
            schema_version: None,
        })
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Head, E> {
        Ok(Head {
            schema_version: None,
        })
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Head, E> {
        self.visit_bool(false)
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Head, E> {
        self.visit_bool(false)
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Head, E> {
        self.visit_bool(false)
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Head, E> {
        self.visit_bool(false)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Head, E> {
        self.visit_bool(false)
    }
}

/// A `schema_version`'s value: the number where it is a whole, non-negative one (None for
/// anything else, which is skipped unkept).
struct Version(Option<u64>);

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(VersionVisitor)
    }
}

struct VersionVisitor;

impl<'de> serde::de::Visitor<'de> for VersionVisitor {
    type Value = Version;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a schema version")
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Version, E> {
        Ok(Version(Some(v)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Version, E> {
        Ok(Version(u64::try_from(v).ok()))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Version, E> {
        Ok(Version(None))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Version, E> {
        Ok(Version(None))
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Version, E> {
        Ok(Version(None))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Version, E> {
        Ok(Version(None))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Version, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Version(None))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Version, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(Version(None))
    }
}

impl Report {
    /// Reads a document written by `--json` (any schema version up to this one: later versions
    /// only added fields and values).
    ///
    /// The document is read twice from `bytes`, never as a tree of JSON values (which costs
    /// some twenty times an array of numbers): once for its schema version alone (which also
    /// checks that it is JSON), then into the typed report.
    pub fn from_json(bytes: &[u8]) -> Result<Report, ReadError> {
        let head: Head = serde_json::from_slice(bytes).map_err(ReadError::Json)?;
        let version = head.schema_version.ok_or(ReadError::NoVersion)?;
        if version == 0 || version > SCHEMA_VERSION as u64 {
            return Err(ReadError::Version(version));
        }
        let report: Report = serde_json::from_slice(bytes).map_err(ReadError::Shape)?;
        Ok(report.upgraded())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The version is read alone, the rest skipped: what is not an object with a whole,
    /// non-negative version has none; what is not JSON is said so; of two versions the last
    /// counts, as of any two values of one key.
    #[test]
    fn the_version_is_read_alone() {
        let version = |s: &str| serde_json::from_str::<Head>(s).map(|h| h.schema_version);
        assert_eq!(
            version(r#"{"a": [1, {"b": "c"}], "schema_version": 4, "d": null}"#).unwrap(),
            Some(4)
        );
        for none in [
            "[0, 0, 0]",
            "0",
            r#""4""#,
            "null",
            r#"{"schema_version": "4"}"#,
            r#"{"schema_version": -1}"#,
            r#"{"schema_version": 4.0}"#,
            r#"{"schema_version": [4]}"#,
            r#"{"schema_version": {"v": 4}}"#,
        ] {
            assert_eq!(version(none).unwrap(), None, "{none}");
        }
        assert_eq!(
            version(r#"{"schema_version": 9, "schema_version": 3}"#).unwrap(),
            Some(3)
        );
        for broken in ["[0, 0", r#"{"schema_version": 4} x"#, r#"{"a": 1,}"#] {
            assert!(version(broken).is_err(), "{broken}");
        }
        assert!(matches!(
            Report::from_json(b"[0, 0, 0]"),
            Err(ReadError::NoVersion)
        ));
        assert!(matches!(
            Report::from_json(br#"{"schema_version": 4, "results": [0"#),
            Err(ReadError::Json(_))
        ));
    }
}
