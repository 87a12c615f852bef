//! [`SharedMap`]: a JSON object that is cheap to copy and to leave empty.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A JSON object (a [`serde_json::Map`]) shared between its copies until
/// one of them writes to it.
///
/// It reads as a `Map` (it dereferences to one: `m.get("k")`, `m["k"]`,
/// `m.is_empty()`, iteration) and is written as one (`m.insert(k, v)`
/// through [`DerefMut`]). What makes it different is the cost: an empty one
/// holds no allocation, a clone is a reference count, and the first write
/// to a copy that is shared copies the map (copy on write, as
/// [`Arc::make_mut`]). Results that every call carries the same way (the
/// server's identity in `_meta` of the stateless revision) are handed out
/// as clones of one map, not copies.
///
/// ```
/// use claude_code_agent_mcp::types::SharedMap;
/// use serde_json::json;
///
/// let mut meta = SharedMap::new();
/// assert!(meta.is_empty());
/// meta.insert("k".into(), json!(1));
/// let copy = meta.clone(); // shares the map
/// meta.insert("l".into(), json!(2)); // copies it: `copy` is unchanged
/// assert_eq!(copy.len(), 1);
/// assert_eq!(meta["l"], 2);
/// assert_eq!(serde_json::to_value(&meta).unwrap(), json!({"k": 1, "l": 2}));
/// ```
#[derive(Clone, Default)]
pub struct SharedMap(Option<Arc<Map<String, Value>>>);

/// What an empty [`SharedMap`] dereferences to.
static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

impl SharedMap {
    /// An empty map (no allocation).
    pub fn new() -> Self {
        Self(None)
    }

    /// The map itself: taken when no copy shares it, copied when one does.
    pub fn into_map(self) -> Map<String, Value> {
        match self.0 {
            None => Map::new(),
            Some(map) => Arc::try_unwrap(map).unwrap_or_else(|shared| (*shared).clone()),
        }
    }

    /// Whether `self` and `other` share one map (both empty counts).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Deref for SharedMap {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl DerefMut for SharedMap {
    /// The map to write to, copied first if another copy shares it.
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        Arc::make_mut(self.0.get_or_insert_default())
    }
}

impl From<Map<String, Value>> for SharedMap {
    fn from(map: Map<String, Value>) -> Self {
        if map.is_empty() {
            Self(None)
        } else {
            Self(Some(Arc::new(map)))
        }
    }
}

impl From<SharedMap> for Map<String, Value> {
    fn from(map: SharedMap) -> Self {
        map.into_map()
    }
}

impl FromIterator<(String, Value)> for SharedMap {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Map::from_iter(iter).into()
    }
}

impl<'a> IntoIterator for &'a SharedMap {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl PartialEq for SharedMap {
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other) || **self == **other
    }
}

impl PartialEq<Map<String, Value>> for SharedMap {
    fn eq(&self, other: &Map<String, Value>) -> bool {
        **self == *other
    }
}

impl fmt::Debug for SharedMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for SharedMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SharedMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_write_to_a_shared_copy_leaves_the_others_alone() {
        let original: SharedMap = [("a".to_owned(), json!(1))].into_iter().collect();
        let mut copy = original.clone();
        assert!(copy.ptr_eq(&original));
        copy.insert("b".into(), json!(2));
        assert!(!copy.ptr_eq(&original));
        assert_eq!(original.len(), 1);
        assert_eq!(copy.len(), 2);
        // Taken, not copied, once nothing shares it.
        assert_eq!(copy.into_map()["b"], 2);
        assert_eq!(original.clone().into_map(), *original);
    }

    #[test]
    fn empty_holds_nothing_and_equals_an_empty_map() {
        let empty = SharedMap::from(Map::new());
        assert!(empty.0.is_none());
        assert_eq!(empty, SharedMap::new());
        assert_eq!(empty, Map::new());
        assert_eq!(serde_json::to_value(&empty).unwrap(), json!({}));
        let back: SharedMap = serde_json::from_value(json!({"x": [1]})).unwrap();
        assert_eq!(back["x"], json!([1]));
        assert_eq!(format!("{back:?}"), format!("{:?}", *back));
    }
}
