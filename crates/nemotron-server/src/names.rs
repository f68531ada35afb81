//! Fields that take one of a few names (`encoding`, `latency`, `response_format`, a message's `type`): enums whose
//! names are their serde names, read from text and checked apart from the message or form they come in, so that an
//! unknown name gets its field's own error and a message that says which names are accepted.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, IntoDeserializer};

/// The value `name` stands for, or why it stands for none (serde's message, which lists the accepted names:
/// "unknown variant `x`, expected `a` or `b`").
pub fn parse_name<T: DeserializeOwned>(name: &str) -> Result<T, String> {
    T::deserialize(IntoDeserializer::<serde::de::value::Error>::into_deserializer(name)).map_err(|e| e.to_string())
}

/// A JSON field read as text, then parsed by [`parse_name`]: a value that is no text is a malformed message; an
/// unknown name is kept as the refusal, for the field's own error code (`unsupported_encoding`, `invalid_setting`).
#[derive(Debug, PartialEq)]
pub struct Named<T>(pub Result<T, String>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Named<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Ok(Named(parse_name(&name)))
    }
}
