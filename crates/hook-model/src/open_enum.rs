//! `open_enum!`: string enumerations that keep values they do not know.
//!
//! Claude Code adds values to its enumerations (a new `source`, a new notification type, every MCP
//! tool name) without notice. A closed Rust enum would reject such a payload and the hook would
//! answer nothing; an open one keeps the text in `Other` and lets rules match it exactly.

/// Defines an open string enumeration: one variant per known value plus `Other(String)`,
/// with `as_str`, `From<&str>`, `From<String>`, `Display`, serde and (with the `schema`
/// feature) a JSON Schema that lists the known values and accepts any string.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version of hookpack does not know, kept as Claude Code sent it.
            /// Never holds the text of a known variant.
            Other(String),
        }

        impl $name {
            /// Every value this version knows, as Claude Code spells it.
            pub const KNOWN: &'static [&'static str] = &[$($text),+];

            /// The value as Claude Code spells it.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $text, )+
                    Self::Other(text) => text,
                }
            }

            fn known(text: &str) -> Option<Self> {
                match text {
                    $( $text => Some(Self::$variant), )+
                    _ => None,
                }
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                Self::known(text).unwrap_or_else(|| Self::Other(text.to_owned()))
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                Self::known(&text).unwrap_or(Self::Other(text))
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_string($crate::open_enum::OpenVisitor::<Self>::new())
            }
        }

        #[cfg(feature = "schema")]
        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({
                    "description": "Known values are listed; any other string is accepted and kept.",
                    "anyOf": [
                        { "enum": Self::KNOWN },
                        { "type": "string" }
                    ]
                })
            }
        }
    };
}

/// The serde visitor behind every open enumeration: takes ownership of the string when serde
/// offers it, so an unknown value costs no second allocation.
pub(crate) struct OpenVisitor<T>(std::marker::PhantomData<T>);

impl<T> OpenVisitor<T> {
    pub(crate) fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<T: From<String> + for<'a> From<&'a str>> serde::de::Visitor<'_> for OpenVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
        Ok(T::from(text))
    }

    fn visit_string<E: serde::de::Error>(self, text: String) -> Result<T, E> {
        Ok(T::from(text))
    }
}
