//! Lossless JSON decoding helpers shared by the message and protocol types.
//!
//! Every wire struct is decoded from an owned [`Value`] by *moving* its known
//! fields out of the JSON object (no second parse, no string copies); whatever
//! is left — unknown keys, `null`s, and values of an unexpected type — stays in
//! the struct's `extra` map, so serializing the struct again gives back an
//! equal JSON object.
//!
//! Field kinds used by [`wire_struct!`]:
//! * `req` — `T`; must be present, non-null and of the right type, otherwise
//!   decoding the struct fails (the caller then keeps the raw JSON as an
//!   `Unknown` variant). Only used for types whose [`Wire::accepts`] is exact.
//! * `opt` — `Option<T>`; `null`, absent or undecodable → `None` (the raw
//!   value, if any, stays in `extra`). Written only when `Some`.
//! * `nul` — `Option<T>`; always written, as `null` when `None` (for keys the
//!   CLI expects to see, like `"hooks": null`).
//! * `def` — `T: Default`; absent/`null` → default; always written.

mod enums;

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::Serializer;
use serde_json::{Map, Value};

/// Lossless conversion from an owned JSON value.
pub(crate) trait Wire: Sized + Serialize {
    /// Converts `v`, handing it back untouched when it does not fit.
    fn from_wire(v: Value) -> Result<Self, Value>;
    /// Whether [`Wire::from_wire`] would succeed (cheap; exact for `req` field types).
    fn accepts(v: &Value) -> bool;
    /// Serializes the value as the CLI (a JavaScript program) would write it.
    fn ser<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.serialize(s)
    }
}

/// Serializes a field through [`Wire::ser`].
pub(crate) struct AsWire<'a, T>(pub &'a T);

impl<T: Wire> Serialize for AsWire<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.ser(s)
    }
}

impl Wire for Value {
    fn from_wire(v: Value) -> Result<Self, Value> {
        Ok(v)
    }
    fn accepts(_: &Value) -> bool {
        true
    }
}

impl Wire for String {
    fn from_wire(v: Value) -> Result<Self, Value> {
        match v {
            Value::String(s) => Ok(s),
            other => Err(other),
        }
    }
    fn accepts(v: &Value) -> bool {
        v.is_string()
    }
}

impl Wire for bool {
    fn from_wire(v: Value) -> Result<Self, Value> {
        v.as_bool().ok_or(v)
    }
    fn accepts(v: &Value) -> bool {
        v.is_boolean()
    }
}

impl Wire for u64 {
    fn from_wire(v: Value) -> Result<Self, Value> {
        v.as_u64().ok_or(v)
    }
    fn accepts(v: &Value) -> bool {
        v.is_u64()
    }
}

impl Wire for i64 {
    fn from_wire(v: Value) -> Result<Self, Value> {
        v.as_i64().ok_or(v)
    }
    fn accepts(v: &Value) -> bool {
        v.is_i64()
    }
}

impl Wire for u32 {
    fn from_wire(v: Value) -> Result<Self, Value> {
        match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) => Ok(n),
            None => Err(v),
        }
    }
    fn accepts(v: &Value) -> bool {
        v.as_u64().is_some_and(|n| u32::try_from(n).is_ok())
    }
}

/// Largest integer an `f64` holds exactly.
const SAFE_INT: f64 = 9_007_199_254_740_992.0; // 2^53

impl Wire for f64 {
    fn from_wire(v: Value) -> Result<Self, Value> {
        if Self::accepts(&v) {
            v.as_f64().ok_or(v)
        } else {
            Err(v)
        }
    }
    /// Integers beyond 2^53 are refused (they would not survive the trip).
    fn accepts(v: &Value) -> bool {
        match v {
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => u <= 1 << 53,
                (None, Some(i)) => i.unsigned_abs() <= 1 << 53,
                _ => true,
            },
            _ => false,
        }
    }
    /// JavaScript writes integral numbers without a fraction (`0`, not `0.0`).
    fn ser<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.fract() == 0.0 && self.abs() <= SAFE_INT {
            if *self < 0.0 {
                s.serialize_i64(*self as i64)
            } else {
                s.serialize_u64(*self as u64)
            }
        } else {
            s.serialize_f64(*self)
        }
    }
}

impl Wire for Map<String, Value> {
    fn from_wire(v: Value) -> Result<Self, Value> {
        match v {
            Value::Object(m) => Ok(m),
            other => Err(other),
        }
    }
    fn accepts(v: &Value) -> bool {
        v.is_object()
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn from_wire(v: Value) -> Result<Self, Value> {
        let Value::Array(items) = v else {
            return Err(v);
        };
        let mut out = Vec::with_capacity(items.len());
        let mut rest = items.into_iter();
        while let Some(item) = rest.next() {
            match T::from_wire(item) {
                Ok(t) => out.push(t),
                Err(bad) => {
                    // Rebuild the original array; decoded items re-encode losslessly.
                    let mut back: Vec<Value> = out
                        .iter()
                        .map(|t| serde_json::to_value(AsWire(t)).unwrap_or(Value::Null))
                        .collect();
                    back.push(bad);
                    back.extend(rest);
                    return Err(Value::Array(back));
                }
            }
        }
        Ok(out)
    }
    fn accepts(v: &Value) -> bool {
        v.as_array().is_some_and(|a| a.iter().all(T::accepts))
    }
}

/// Map keys that are strings on the wire.
pub(crate) trait WireKey: Ord + Sized + Serialize {
    fn from_key(k: String) -> Self;
    fn key_str(&self) -> &str;
}

impl WireKey for String {
    fn from_key(k: String) -> Self {
        k
    }
    fn key_str(&self) -> &str {
        self
    }
}

impl<K: WireKey, T: Wire> Wire for BTreeMap<K, T> {
    fn from_wire(v: Value) -> Result<Self, Value> {
        let Value::Object(map) = v else { return Err(v) };
        if !map.values().all(T::accepts) {
            return Err(Value::Object(map));
        }
        let mut out = BTreeMap::new();
        for (k, v) in map {
            match T::from_wire(v) {
                Ok(t) => {
                    out.insert(K::from_key(k), t);
                }
                // `accepts` said yes; keep going rather than lose data.
                Err(_) => continue,
            }
        }
        Ok(out)
    }
    fn accepts(v: &Value) -> bool {
        v.as_object().is_some_and(|m| m.values().all(T::accepts))
    }
    fn ser<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            m.serialize_entry(k.key_str(), &AsWire(v))?;
        }
        m.end()
    }
}

/// Removes `key` when its value is not null and decodes it; otherwise leaves
/// the map alone and returns `None`.
pub(crate) fn take_opt<T: Wire>(map: &mut Map<String, Value>, key: &str) -> Option<T> {
    match map.get(key) {
        None | Some(Value::Null) => None,
        Some(v) if !T::accepts(v) => None,
        Some(_) => {
            let v = map.remove(key)?;
            match T::from_wire(v) {
                Ok(t) => Some(t),
                Err(v) => {
                    map.insert(key.to_owned(), v);
                    None
                }
            }
        }
    }
}

/// Like [`take_opt`], but a `null` value is consumed too (it is written back
/// as `null` by `nul` fields).
pub(crate) fn take_nul<T: Wire>(map: &mut Map<String, Value>, key: &str) -> Option<T> {
    if matches!(map.get(key), Some(Value::Null)) {
        map.remove(key);
        return None;
    }
    take_opt(map, key)
}

/// Decodes a field checked by [`check_req`]: present, not null, accepted
/// (and `accepts` is exact for `req` types), so it is taken out at once.
pub(crate) fn take_req<T: Wire + Default>(map: &mut Map<String, Value>, key: &str) -> T {
    match map.remove(key).map(T::from_wire) {
        Some(Ok(t)) => t,
        Some(Err(v)) => {
            // Not expected after `check_req`; keep the value rather than lose it.
            map.insert(key.to_owned(), v);
            T::default()
        }
        None => T::default(),
    }
}

/// Decodes a `def` field: absent or `null` give the default.
pub(crate) fn take_def<T: Wire + Default>(map: &mut Map<String, Value>, key: &str) -> T {
    take_nul(map, key).unwrap_or_default()
}

/// Whether a required field is present, non-null and of the right type.
pub(crate) fn check_req<T: Wire>(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).is_some_and(|v| !v.is_null() && T::accepts(v))
}

/// Whether the constant tag `key` is absent or equal to `value`.
pub(crate) fn tag_ok(map: &Map<String, Value>, key: &str, value: &str) -> bool {
    map.get(key).is_none_or(|v| v.as_str() == Some(value))
}

/// The string at `key`, if any.
pub(crate) fn str_at<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// Defines a lossless wire struct (see the module docs for field kinds).
///
/// ```text
/// wire_struct! {
///     /// Docs.
///     pub struct Foo tags { "type" = "foo" } {
///         /// Docs.
///         req name: String = "name",
///         /// Docs.
///         opt size: u64 = "size",
///     }
/// }
/// ```
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident $(tags { $($tk:literal = $tv:literal),* $(,)? })? {
            $(
                $(#[$fmeta:meta])*
                $kind:ident $field:ident : $ty:ty = $key:literal
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Default)]
        #[non_exhaustive]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $crate::wire::wire_field_ty!($kind $ty),
            )*
            /// Fields this type does not model, kept as they came so that
            /// nothing is lost when the value is written again.
            pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
        }

        impl $name {
            /// The constant tags (`type`, `subtype`, …) this type is written with.
            #[allow(dead_code)]
            pub(crate) const TAGS: &'static [(&'static str, &'static str)] = &[$($(($tk, $tv)),*)?];

            /// Decodes a JSON object, losslessly. Returns the value unchanged
            /// if it is not an object, a tag differs, or a required field is
            /// missing or of the wrong type.
            pub fn from_value(value: ::serde_json::Value) -> ::std::result::Result<Self, ::serde_json::Value> {
                <Self as $crate::wire::Wire>::from_wire(value)
            }

            /// Encodes as JSON; decoding and re-encoding gives back an equal object.
            pub fn to_value(&self) -> ::serde_json::Value {
                ::serde_json::to_value(self).unwrap_or(::serde_json::Value::Null)
            }
        }

        impl $crate::wire::Wire for $name {
            #[allow(unused_mut)]
            fn from_wire(value: ::serde_json::Value) -> ::std::result::Result<Self, ::serde_json::Value> {
                let ::serde_json::Value::Object(mut map) = value else { return Err(value) };
                if !Self::TAGS.iter().all(|(k, v)| $crate::wire::tag_ok(&map, k, v))
                    $(|| !$crate::wire::wire_check!($kind $ty, &map, $key))*
                {
                    return Err(::serde_json::Value::Object(map));
                }
                for (k, _) in Self::TAGS {
                    map.remove(*k);
                }
                Ok(Self {
                    $($field: $crate::wire::wire_take!($kind $ty, &mut map, $key),)*
                    extra: map,
                })
            }
            fn accepts(value: &::serde_json::Value) -> bool {
                value.as_object().is_some_and(|map| {
                    Self::TAGS.iter().all(|(k, v)| $crate::wire::tag_ok(map, k, v))
                        $(&& $crate::wire::wire_check!($kind $ty, map, $key))*
                })
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap;
                let mut m = s.serialize_map(None)?;
                for (k, v) in Self::TAGS {
                    m.serialize_entry(k, v)?;
                }
                $($crate::wire::wire_ser!($kind, m, $key, &self.$field, &self.extra);)*
                for (k, v) in &self.extra {
                    let shadowed = Self::TAGS.iter().any(|(t, _)| t == k)
                        $(|| (k == $key && $crate::wire::wire_is_set!($kind, &self.$field, &self.extra, $key)))*;
                    if !shadowed {
                        m.serialize_entry(k, v)?;
                    }
                }
                m.end()
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                let value = <::serde_json::Value as ::serde::Deserialize>::deserialize(d)?;
                <Self as $crate::wire::Wire>::from_wire(value).map_err(|_| {
                    <D::Error as ::serde::de::Error>::custom(concat!(
                        "not a valid ", stringify!($name),
                        " (expected an object with fields ", stringify!($($key),*), ")"
                    ))
                })
            }
        }
    };
}
pub(crate) use wire_struct;

macro_rules! wire_field_ty {
    (req $ty:ty) => { $ty };
    (def $ty:ty) => { $ty };
    (opt $ty:ty) => { ::std::option::Option<$ty> };
    (nul $ty:ty) => { ::std::option::Option<$ty> };
}
pub(crate) use wire_field_ty;

macro_rules! wire_check {
    (req $ty:ty, $map:expr, $key:expr) => {
        $crate::wire::check_req::<$ty>($map, $key)
    };
    ($other:ident $ty:ty, $map:expr, $key:expr) => {
        true
    };
}
pub(crate) use wire_check;

macro_rules! wire_take {
    (req $ty:ty, $map:expr, $key:expr) => {
        $crate::wire::take_req::<$ty>($map, $key)
    };
    (def $ty:ty, $map:expr, $key:expr) => {
        $crate::wire::take_def::<$ty>($map, $key)
    };
    (opt $ty:ty, $map:expr, $key:expr) => {
        $crate::wire::take_opt::<$ty>($map, $key)
    };
    (nul $ty:ty, $map:expr, $key:expr) => {
        $crate::wire::take_nul::<$ty>($map, $key)
    };
}
pub(crate) use wire_take;

macro_rules! wire_ser {
    (req, $m:ident, $key:expr, $f:expr, $extra:expr) => {
        $m.serialize_entry($key, &$crate::wire::AsWire($f))?
    };
    // A raw (wrong-typed) value kept in `extra` wins over the default.
    (def, $m:ident, $key:expr, $f:expr, $extra:expr) => {
        if !$extra.contains_key($key) {
            $m.serialize_entry($key, &$crate::wire::AsWire($f))?
        }
    };
    (opt, $m:ident, $key:expr, $f:expr, $extra:expr) => {
        if let Some(v) = $f {
            $m.serialize_entry($key, &$crate::wire::AsWire(v))?
        }
    };
    // `None` is written as `null` unless a raw value is kept in `extra`.
    (nul, $m:ident, $key:expr, $f:expr, $extra:expr) => {
        match $f {
            Some(v) => $m.serialize_entry($key, &$crate::wire::AsWire(v))?,
            None if !$extra.contains_key($key) => $m.serialize_entry($key, &())?,
            None => {}
        }
    };
}
pub(crate) use wire_ser;

/// Whether the typed field was written (so `extra` must not repeat the key).
macro_rules! wire_is_set {
    (req, $f:expr, $extra:expr, $key:expr) => {
        true
    };
    (def, $f:expr, $extra:expr, $key:expr) => {
        false
    };
    ($other:ident, $f:expr, $extra:expr, $key:expr) => {
        $f.is_some()
    };
}
pub(crate) use wire_is_set;

pub(crate) use enums::{string_enum, wire_enum};
