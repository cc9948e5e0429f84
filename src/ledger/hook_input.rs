//! Reading an agent's hook event without trusting its size or shape.
//!
//! A hook event is a few KB of JSON (a `Write` carries the whole file, so a
//! few MB at most). Parsing it into a generic `serde_json::Value` costs about
//! a hundred times its size for arrays of small values (a 16 MB array peaked
//! at 1.8 GB), so the event is read into [`Loose`] values instead: only the
//! keys the hook uses are kept, everything else is skipped by the parser
//! without being built, and a known key holding an unexpected type is kept as
//! [`Loose::Other`] (treated as absent) rather than failing the parse. Memory
//! is then bounded by the input, which the caller caps with
//! [`crate::bounded::read_stream`].

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The keys the hook reads, at the top level and inside `tool_input`.
const KNOWN_KEYS: &[&str] = &[
    "hook_event_name",
    "cwd",
    "workspace_roots",
    "tool_name",
    "tool_input",
    "tool_use_id",
    "generation_id",
    "file_path",
    "notebook_path",
    "path",
    "target_file",
    "command",
    "cmd",
    "patch",
    "input",
];

/// A JSON value as far as the hook cares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Loose {
    Str(String),
    /// An array whose items are all strings (argv, `workspace_roots`).
    Strs(Vec<String>),
    /// An object, with only the [`KNOWN_KEYS`] kept.
    Map(Vec<(String, Loose)>),
    /// Anything else (numbers, booleans, null, mixed arrays), skipped.
    #[default]
    Other,
}

impl Loose {
    /// The value of `key` in an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Loose> {
        match self {
            Loose::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Loose::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_strs(&self) -> Option<&[String]> {
        match self {
            Loose::Strs(v) => Some(v),
            _ => None,
        }
    }

    /// The first of `keys` that holds a string.
    pub(crate) fn str_at(&self, keys: &[&str]) -> Option<&str> {
        keys.iter().find_map(|k| self.get(k).and_then(Loose::as_str))
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Loose;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E>(self, v: &str) -> Result<Loose, E> {
        Ok(Loose::Str(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Loose, E> {
        Ok(Loose::Str(v))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Loose, E> {
        Ok(Loose::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Loose, E> {
        Ok(Loose::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Loose, E> {
        Ok(Loose::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Loose, E> {
        Ok(Loose::Other)
    }

    fn visit_unit<E>(self) -> Result<Loose, E> {
        Ok(Loose::Other)
    }

    fn visit_none<E>(self) -> Result<Loose, E> {
        Ok(Loose::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Loose, A::Error> {
        // Strings are kept while every item is one; after the first other
        // item the rest is skipped unbuilt.
        let mut strs = Some(Vec::new());
        while strs.is_some() {
            match seq.next_element::<Loose>()? {
                None => return Ok(Loose::Strs(strs.unwrap_or_default())),
                Some(Loose::Str(s)) => strs.as_mut().map(|v| v.push(s)).unwrap_or(()),
                Some(_) => strs = None,
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Loose, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if KNOWN_KEYS.contains(&key.as_str()) {
                let value = map.next_value::<Loose>()?;
                entries.push((key, value));
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Loose::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Loose, D::Error> {
        d.deserialize_any(LooseVisitor)
    }
}

/// Parses a hook event; `Err` carries serde's message.
pub(crate) fn parse(input: &[u8]) -> Result<Loose, String> {
    serde_json::from_slice::<Loose>(input).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_known_keys_and_skips_the_rest() {
        let v = parse(
            br#"{"cwd": "/r", "tool_input": {"file_path": "a", "content": "big", "edits": [{"x": 1}]},
            "workspace_roots": ["/a", "/b"], "extra": [1, 2, {"k": "v"}], "tool_name": 7}"#,
        )
        .unwrap();
        assert_eq!(v.str_at(&["cwd"]), Some("/r"));
        assert_eq!(v.get("tool_input").and_then(|t| t.str_at(&["file_path"])), Some("a"));
        assert!(v.get("tool_input").and_then(|t| t.get("content")).is_none(), "unknown keys are not kept");
        assert_eq!(
            v.get("workspace_roots").and_then(Loose::as_strs),
            Some(&["/a".to_string(), "/b".into()][..])
        );
        assert!(v.get("extra").is_none());
        assert_eq!(v.get("tool_name"), Some(&Loose::Other), "a wrong type is kept as absent");
        let mixed = parse(br#"{"command": ["a", 1, "b"]}"#).unwrap();
        assert_eq!(mixed.get("command"), Some(&Loose::Other));
    }

    #[test]
    fn bad_json_is_an_error() {
        assert!(parse(b"{\"cwd\": ").unwrap_err().contains("EOF"));
    }
}
