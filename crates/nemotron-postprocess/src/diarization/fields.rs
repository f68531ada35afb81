//! Segment settings as a front end hands them over: a map of setting names to values (a server's form fields or
//! JSON, a Python call's keyword arguments, a web page's options object), read by serde into [`SegmentSettings`].
//! What differs between front ends is only what `postprocessing` may name ([`Origin`]).

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_path_to_error::Segment;

use super::{DiarizationError, PostProcessing, SegmentSettings};

/// Where settings come from, which decides what `postprocessing` may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A program on this machine (the CLI, Python): `postprocessing` names a YAML file here, or holds the file's
    /// parameters as a map; YAML text is not a setting of its own.
    Local,
    /// A client of a server, which may not name the server's files: it sends the YAML text as `postprocessing_yaml`.
    Remote,
    /// A web page, which has no files: `postprocessing` is the YAML text itself.
    Page,
}

impl Origin {
    /// The one setting this origin does not have.
    fn withheld(self) -> &'static str {
        match self {
            Origin::Remote => "postprocessing",
            Origin::Local | Origin::Page => "postprocessing_yaml",
        }
    }

    /// The names of the settings this origin gives, in the struct's order.
    pub fn names(self) -> Vec<&'static str> {
        SegmentSettings::names().iter().copied().filter(|name| *name != self.withheld()).collect()
    }

    /// The refusal of a name this origin does not have.
    fn refuse(self, name: &str) -> DiarizationError {
        let problem = match (self, name == self.withheld()) {
            (Origin::Remote, true) => {
                format!("`{name}` names a file on the server: send the YAML text as `postprocessing_yaml`")
            }
            _ => format!("unknown setting `{name}` (the settings: {})", self.names().join(", ")),
        };
        DiarizationError::Unreadable(problem)
    }

    /// `settings` as this origin means them: the withheld setting refused, a page's text made the YAML text.
    fn admit(self, mut settings: SegmentSettings) -> Result<SegmentSettings, DiarizationError> {
        let given = match self {
            Origin::Remote => settings.postprocessing.is_some(),
            Origin::Local | Origin::Page => settings.postprocessing_yaml.is_some(),
        };
        if given {
            return Err(self.refuse(self.withheld()));
        }
        if let (Origin::Page, Some(NemoParameters::File(text))) = (self, &settings.postprocessing) {
            settings.postprocessing_yaml = Some(text.to_string_lossy().into_owned());
            settings.postprocessing = None;
        }
        Ok(settings)
    }
}

impl SegmentSettings {
    /// The settings of `fields`, a map of setting names to values, as `origin` gives them. Refused
    /// ([`DiarizationError::Unreadable`]): a name `origin` does not have (the error names it and lists the
    /// others), a value of the wrong type (the error names its setting). The values' ranges are checked by
    /// [`SegmentSettings::validate`], which [`SegmentSettings::segmenter`] calls.
    pub fn from_fields<'de, D: Deserializer<'de>>(fields: D, origin: Origin) -> Result<Self, DiarizationError> {
        let settings = serde_path_to_error::deserialize(fields).map_err(|error| {
            let name = match error.path().iter().next() {
                Some(Segment::Map { key }) => Some(key.as_str()),
                _ => None,
            };
            match name {
                Some(name) if !origin.names().contains(&name) => origin.refuse(name),
                Some(name) => DiarizationError::Unreadable(format!("{name}: {}", error.inner())),
                None => DiarizationError::Unreadable(format!("segment settings: {}", error.inner())),
            }
        })?;
        origin.admit(settings)
    }

    /// The names of the settings (the fields, as serde reads them), in the struct's order.
    pub fn names() -> &'static [&'static str] {
        let mut names: &'static [&'static str] = &[];
        // Only the names are asked for: the deserializer refuses to read anything, by design.
        let _ = SegmentSettings::deserialize(StructFields(&mut names));
        names
    }
}

/// A deserializer that only takes note of the field names a struct asks for.
struct StructFields<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for StructFields<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only the field names are read"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        self.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// NeMo post-processing parameters the settings name: a YAML file, or the file's content as a map.
#[derive(Clone, Debug, PartialEq)]
pub enum NemoParameters {
    /// A NeMo YAML file.
    File(PathBuf),
    /// The parameters as a map (a Python dict): NeMo's names, at the top level or under `parameters`, as in a file.
    /// (Boxed: the settings travel by value, and the map would triple this type's size.)
    Map(Box<serde_json::Map<String, serde_json::Value>>),
}

impl NemoParameters {
    /// The post-processing they give.
    pub(super) fn read(&self) -> Result<PostProcessing, DiarizationError> {
        match self {
            NemoParameters::File(path) => PostProcessing::read_nemo_yaml(path),
            // JSON is YAML: the map goes through NeMo's YAML reader, so its keys mean what they mean in a file.
            NemoParameters::Map(map) => PostProcessing::from_nemo_yaml(
                &serde_json::Value::Object(map.as_ref().clone()).to_string(),
                "the post-processing parameters",
            ),
        }
    }

    /// `--postprocessing FILE.yaml`: any path the system can name.
    #[cfg(feature = "clap")]
    pub(super) fn flag() -> impl clap::builder::TypedValueParser<Value = NemoParameters> {
        use clap::builder::TypedValueParser;
        clap::builder::PathBufValueParser::new().map(NemoParameters::File)
    }
}

/// A path (text) or a map of parameters.
impl<'de> Deserialize<'de> for NemoParameters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ParametersVisitor)
    }
}

struct ParametersVisitor;

impl<'de> Visitor<'de> for ParametersVisitor {
    type Value = NemoParameters;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a path to a NeMo YAML file or a map of its parameters")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<NemoParameters, E> {
        Ok(NemoParameters::File(text.into()))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<NemoParameters, A::Error> {
        let map = serde_json::Map::deserialize(MapAccessDeserializer::new(map))?;
        Ok(NemoParameters::Map(Box::new(map)))
    }
}

#[cfg(feature = "schema")]
mod schema {
    use std::borrow::Cow;

    use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
    use serde_json::Value;

    use super::{NemoParameters, Origin, SegmentSettings};
    use crate::diarization::settings::Range;

    impl JsonSchema for NemoParameters {
        fn inline_schema() -> bool {
            true
        }

        fn schema_name() -> Cow<'static, str> {
            "NemoParameters".into()
        }

        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!({ "type": ["string", "object"] })
        }
    }

    impl Origin {
        /// The settings this origin gives as a JSON Schema (2020-12, OpenAPI 3.1's dialect) of an object: each
        /// setting with its type, range and description (its doc comment). Other names are not refused by the
        /// schema: a request's object holds the settings beside fields of its own (`allOf`).
        pub fn json_schema(self) -> Value {
            let names = self.names();
            let mut schema = schemars::schema_for!(SegmentSettings).to_value();
            if let Some(object) = schema.as_object_mut() {
                // A document that embeds the schema states the dialect.
                object.remove("$schema");
                object.remove("additionalProperties");
                if let Some(Value::Object(properties)) = object.get_mut("properties") {
                    properties.retain(|name, _| names.contains(&name.as_str()));
                    for (name, property) in properties.iter_mut() {
                        if let (Some(range), Value::Object(property)) = (Range::of(name), property) {
                            property
                                .extend(range.keywords().into_iter().map(|(key, bound)| (key.into(), bound.into())));
                        }
                    }
                }
            }
            unwrap_descriptions(&mut schema);
            schema
        }
    }

    /// Doc comments' line breaks (where the source wraps) as spaces.
    fn unwrap_descriptions(value: &mut Value) {
        match value {
            Value::Object(object) => {
                for (key, value) in object.iter_mut() {
                    match (key.as_str(), value) {
                        ("description", Value::String(text)) => {
                            *text = text.split_whitespace().collect::<Vec<_>>().join(" ")
                        }
                        (_, value) => unwrap_descriptions(value),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
            _ => {}
        }
    }
}
