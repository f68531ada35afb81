//! Segment settings as a front end hands them over: a map of setting names to values (a server's form fields or
//! JSON, a Python call's keyword arguments, a web page's options object), read by serde into [`SegmentSettings`].
//! What differs between front ends is how they spell the names and what `postprocessing` may name ([`Origin`]).

use std::cell::Cell;
use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde_path_to_error::Segment;

use super::{DiarizationError, PostProcessing, SegmentSettings};

/// Where settings come from, which decides how their names are spelled and what `postprocessing` may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A program on this machine (the CLI, Python): `postprocessing` names a YAML file here, or holds the file's
    /// parameters as a map; YAML text is not a setting of its own.
    Local,
    /// A client of a server, which may not name the server's files: it sends the YAML text as `postprocessing_yaml`.
    Remote,
    /// A web page, which has no files: `postprocessing` is the YAML text itself. Names are spelled in camelCase, as
    /// JavaScript spells an object's fields (`minDurationOn`).
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

    /// The settings this origin gives (their field names), in the struct's order.
    pub fn names(self) -> Vec<&'static str> {
        SegmentSettings::names().iter().copied().filter(|name| *name != self.withheld()).collect()
    }

    /// How this origin spells the setting `field`: a page in camelCase (`min_duration_on` → `minDurationOn`), the
    /// others as the field.
    pub fn spelling(self, field: &str) -> String {
        match self {
            Origin::Local | Origin::Remote => field.to_string(),
            Origin::Page => {
                let mut words = field.split('_');
                let first = words.next().unwrap_or_default().to_string();
                words.fold(first, |name, word| {
                    let mut letters = word.chars();
                    let initial = letters.next().map(|c| c.to_ascii_uppercase()).into_iter();
                    name + &initial.chain(letters).collect::<String>()
                })
            }
        }
    }

    /// The setting (field name) that `name`, as this origin spells it, stands for. Refused
    /// ([`DiarizationError::Unreadable`]) when none: the error names it and lists this origin's names.
    pub fn field(self, name: &str) -> Result<&'static str, DiarizationError> {
        self.names().into_iter().find(|field| self.spelling(field) == name).ok_or_else(|| self.refuse(name))
    }

    /// The refusal of a name this origin does not have.
    fn refuse(self, name: &str) -> DiarizationError {
        let problem = match (self, name == self.withheld()) {
            (Origin::Remote, true) => {
                format!("`{name}` names a file on the server: send the YAML text as `postprocessing_yaml`")
            }
            _ => {
                let names: Vec<String> = self.names().into_iter().map(|field| self.spelling(field)).collect();
                format!("unknown setting `{name}` (the settings: {})", names.join(", "))
            }
        };
        DiarizationError::Unreadable(problem)
    }

    /// `settings` as this origin means them: a page's text made the YAML text.
    fn admit(self, mut settings: SegmentSettings) -> SegmentSettings {
        if let (Origin::Page, Some(NemoParameters::File(text))) = (self, &settings.postprocessing) {
            settings.postprocessing_yaml = Some(text.to_string_lossy().into_owned());
            settings.postprocessing = None;
        }
        settings
    }
}

impl SegmentSettings {
    /// The settings of `fields`, a map of setting names (as `origin` spells them) to values. Refused
    /// ([`DiarizationError::Unreadable`]): a name `origin` does not have (the error names it and lists the
    /// others), a value of the wrong type (the error names its setting). The values' ranges are checked by
    /// [`SegmentSettings::validate`], which [`SegmentSettings::segmenter`] calls.
    pub fn from_fields<'de, D: Deserializer<'de>>(fields: D, origin: Origin) -> Result<Self, DiarizationError> {
        let refused = Cell::new(None);
        let named = Named { inner: fields, origin, refused: &refused };
        let settings = serde_path_to_error::deserialize(named).map_err(|error| {
            if let Some(name) = refused.take() {
                return origin.refuse(&name);
            }
            match error.path().iter().next() {
                Some(Segment::Map { key }) => {
                    DiarizationError::Unreadable(format!("{}: {}", origin.spelling(key), error.inner()))
                }
                _ => DiarizationError::Unreadable(format!("segment settings: {}", error.inner())),
            }
        })?;
        Ok(origin.admit(settings))
    }

    /// The names of the settings (the fields, as serde reads them), in the struct's order.
    pub fn names() -> &'static [&'static str] {
        let mut names: &'static [&'static str] = &[];
        // Only the names are asked for: the deserializer refuses to read anything, by design.
        let _ = SegmentSettings::deserialize(StructFields(&mut names));
        names
    }
}

/// A map of settings as `origin` names them (`inner`: its deserializer, then the struct's visitor, then the map),
/// read as the struct's fields: each name becomes its field ([`Origin::field`]); a name that is none stops the
/// reading and is kept in `refused`, for its refusal.
struct Named<'r, D> {
    inner: D,
    origin: Origin,
    refused: &'r Cell<Option<String>>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Named<'_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let Named { inner, origin, refused } = self;
        inner.deserialize_map(Named { inner: visitor, origin, refused })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// The struct's visitor, handed the origin's map.
impl<'de, V: Visitor<'de>> Visitor<'de> for Named<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of segment settings")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let Named { inner, origin, refused } = self;
        inner.visit_map(Named { inner: map, origin, refused })
    }
}

/// The origin's map, its names read as the fields they stand for.
impl<'de, A: MapAccess<'de>> MapAccess<'de> for Named<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let Some(name) = self.inner.next_key::<String>()? else {
            return Ok(None);
        };
        match self.origin.field(&name) {
            Ok(field) => seed.deserialize(field.into_deserializer()).map(Some),
            Err(refusal) => {
                self.refused.set(Some(name));
                Err(de::Error::custom(refusal))
            }
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
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
        /// setting, as the origin spells it, with its type, range and description (its doc comment). Other names
        /// are not refused by the schema: a request's object holds the settings beside fields of its own (`allOf`).
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
                    *properties = std::mem::take(properties)
                        .into_iter()
                        .map(|(name, property)| (self.spelling(&name), property))
                        .collect();
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
