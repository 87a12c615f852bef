//! Macros for open enums (see [`super`]).

/// Defines an open enum dispatched on a string key of a JSON object: each
/// variant wraps a [`wire_struct!`] type; anything else (unknown key value, or
/// a known one whose payload does not decode) becomes `Unknown(Value)`.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident on $tag:literal {
            $(
                $(#[$vmeta:meta])*
                $val:literal => $variant:ident($inner:ty)
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        #[allow(clippy::large_enum_variant, reason = "variants are decoded in place; boxing would only add allocations")]
        pub enum $name {
            $(
                $(#[$vmeta])*
                $variant($inner),
            )*
            /// Anything not modelled above, as it came.
            Unknown(::serde_json::Value),
        }

        impl ::std::default::Default for $name {
            fn default() -> Self {
                Self::Unknown(::serde_json::Value::Null)
            }
        }

        impl $name {
            /// Decodes any JSON value; never fails (unknown shapes become `Unknown`).
            pub fn from_value(value: ::serde_json::Value) -> Self {
                <Self as $crate::wire::Wire>::from_wire(value)
                    .unwrap_or_else(Self::Unknown)
            }

            /// Encodes as JSON; decoding and re-encoding gives back an equal value.
            pub fn to_value(&self) -> ::serde_json::Value {
                ::serde_json::to_value(self).unwrap_or(::serde_json::Value::Null)
            }
        }

        impl $crate::wire::Wire for $name {
            fn from_wire(value: ::serde_json::Value) -> ::std::result::Result<Self, ::serde_json::Value> {
                let tag = match &value {
                    ::serde_json::Value::Object(map) => $crate::wire::str_at(map, $tag),
                    _ => None,
                };
                let decoded = match tag {
                    $(Some($val) => <$inner as $crate::wire::Wire>::from_wire(value).map(Self::$variant),)*
                    _ => Err(value),
                };
                Ok(decoded.unwrap_or_else(Self::Unknown))
            }
            fn accepts(_: &::serde_json::Value) -> bool {
                true
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                match self {
                    $(Self::$variant(inner) => inner.serialize(s),)*
                    Self::Unknown(value) => value.serialize(s),
                }
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                let value = <::serde_json::Value as ::serde::Deserialize>::deserialize(d)?;
                Ok(Self::from_value(value))
            }
        }
    };
}
pub(crate) use wire_enum;

/// Defines an open string enum: known values plus `Other(String)`.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident default $default:ident {
            $(
                $(#[$vmeta:meta])*
                $val:literal => $variant:ident
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum $name {
            $(
                $(#[$vmeta])*
                $variant,
            )*
            /// A value this version does not know, as it came.
            Other(::std::string::String),
        }

        impl $name {
            /// The wire spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $val,)*
                    Self::Other(s) => s,
                }
            }
        }

        impl ::std::default::Default for $name {
            fn default() -> Self {
                Self::$default
            }
        }

        impl ::std::convert::From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $($val => Self::$variant,)*
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl ::std::convert::From<::std::string::String> for $name {
            fn from(s: ::std::string::String) -> Self {
                match s.as_str() {
                    $($val => Self::$variant,)*
                    _ => Self::Other(s),
                }
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = ::std::convert::Infallible;
            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                Ok(Self::from(s))
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                let s = <::std::string::String as ::serde::Deserialize>::deserialize(d)?;
                Ok(Self::from(s))
            }
        }

        impl $crate::wire::Wire for $name {
            fn from_wire(v: ::serde_json::Value) -> ::std::result::Result<Self, ::serde_json::Value> {
                match v {
                    ::serde_json::Value::String(s) => Ok(Self::from(s)),
                    other => Err(other),
                }
            }
            fn accepts(v: &::serde_json::Value) -> bool {
                v.is_string()
            }
        }

        impl $crate::wire::WireKey for $name {
            fn from_key(k: ::std::string::String) -> Self {
                Self::from(k)
            }
            fn key_str(&self) -> &str {
                self.as_str()
            }
        }
    };
}
pub(crate) use string_enum;
