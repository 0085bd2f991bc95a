//! A task's `extra`: the fields of another format that planc has no place
//! for, held out of line. Almost every task has none, so an empty `extra`
//! allocates nothing and takes one word in the task (a `serde_json::Map`
//! takes 72 bytes even when empty; docs/performance.md, "Memory").

use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A JSON object of fields (see the module doc): reads and writes as a
/// `serde_json::Map` through `Deref`; the map is allocated when first
/// written.
#[derive(Clone, Debug, Default)]
pub struct Extra(Option<Box<Map<String, Value>>>);

/// The map an `Extra` without fields reads as.
fn empty() -> &'static Map<String, Value> {
    static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

impl Deref for Extra {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        match &self.0 {
            Some(map) => map,
            None => empty(),
        }
    }
}

impl DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Box::default)
    }
}

impl PartialEq for Extra {
    fn eq(&self, other: &Extra) -> bool {
        **self == **other
    }
}

impl From<Map<String, Value>> for Extra {
    fn from(map: Map<String, Value>) -> Extra {
        Extra((!map.is_empty()).then(|| Box::new(map)))
    }
}

impl From<Extra> for Map<String, Value> {
    fn from(extra: Extra) -> Map<String, Value> {
        extra.0.map(|map| *map).unwrap_or_default()
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Extra {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Extra, D::Error> {
        Map::deserialize(deserializer).map(Extra::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_extra_allocates_nothing_and_reads_and_writes_as_a_map() {
        let mut extra = Extra::default();
        assert!(extra.0.is_none() && extra.is_empty());
        assert_eq!(serde_json::to_string(&extra).unwrap(), "{}");
        extra.insert("details".to_owned(), Value::from("x"));
        assert_eq!(serde_json::to_string(&extra).unwrap(), r#"{"details":"x"}"#);
        extra.shift_remove("details");
        assert_eq!(extra, Extra::default());
        let read: Extra = serde_json::from_str("{}").unwrap();
        assert!(read.0.is_none());
        assert_eq!(std::mem::size_of::<Extra>(), 8);
    }
}
