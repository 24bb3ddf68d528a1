//! The document as written, before validation.
//!
//! Every object level is read by a hand-written visitor instead of derive +
//! `deny_unknown_fields`, for two reasons: an entry's common fields sit next
//! to type-specific ones (serde's `flatten` cannot be combined with
//! `deny_unknown_fields`, and it buffers values so error paths get lost), and
//! collecting unknown keys lets validation report all of them at once.
//! Known scalars are read with a string hint, so YAML keeps `name: no` or an
//! all-digit checksum as the strings the operator meant.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The whole document: `{providers: [...]}`.
#[derive(Debug, Default)]
pub(crate) struct RawDocument {
    pub providers: Option<Vec<RawEntry>>,
    pub unknown: Vec<String>,
}

/// One entry: common fields plus the type-specific rest.
#[derive(Debug, Default)]
pub(crate) struct RawEntry {
    pub name: Option<String>,
    pub provider_type: Option<String>,
    pub images: Option<Vec<(String, RawImage)>>,
    pub allow_unverified_images: Option<bool>,
    pub settings: Map<String, Value>,
}

/// One image under `images`.
#[derive(Debug, Default)]
pub(crate) struct RawImage {
    pub url: Option<String>,
    pub sha256: Option<String>,
    pub format: Option<String>,
    pub unknown: Vec<String>,
}

fn duplicate<E: de::Error>(key: &str) -> E {
    E::custom(format_args!("duplicate field {key:?}"))
}

fn set_once<'de, A, T>(slot: &mut Option<T>, key: &str, map: &mut A) -> Result<(), A::Error>
where
    A: MapAccess<'de>,
    T: Deserialize<'de>,
{
    if slot.is_some() {
        return Err(duplicate(key));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

impl<'de> Deserialize<'de> for RawDocument {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawDocument;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping with a `providers` list")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawDocument, A::Error> {
                let mut doc = RawDocument::default();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "providers" {
                        set_once(&mut doc.providers, &key, &mut map)?;
                    } else {
                        if doc.unknown.contains(&key) {
                            return Err(duplicate(&key));
                        }
                        map.next_value::<IgnoredAny>()?;
                        doc.unknown.push(key);
                    }
                }
                Ok(doc)
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for RawEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a provider entry mapping with `name`, `type` and `images`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEntry, A::Error> {
                let mut e = RawEntry::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "name" => set_once(&mut e.name, &key, &mut map)?,
                        "type" => set_once(&mut e.provider_type, &key, &mut map)?,
                        "images" => {
                            if e.images.is_some() {
                                return Err(duplicate(&key));
                            }
                            e.images = Some(map.next_value::<RawImages>()?.0);
                        }
                        "allow_unverified_images" => {
                            set_once(&mut e.allow_unverified_images, &key, &mut map)?;
                        }
                        _ => {
                            if e.settings.contains_key(&key) {
                                return Err(duplicate(&key));
                            }
                            let value = map.next_value::<StrictValue>()?.0;
                            e.settings.insert(key, value);
                        }
                    }
                }
                Ok(e)
            }
        }
        d.deserialize_map(V)
    }
}

/// `images:` in document order, duplicates rejected (JSON allows them).
struct RawImages(Vec<(String, RawImage)>);

impl<'de> Deserialize<'de> for RawImages {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawImages;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping from image key to {url, sha256, format}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawImages, A::Error> {
                let mut images: Vec<(String, RawImage)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if images.iter().any(|(k, _)| *k == key) {
                        return Err(duplicate(&key));
                    }
                    let image = map.next_value()?;
                    images.push((key, image));
                }
                Ok(RawImages(images))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for RawImage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawImage;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an image mapping with `url`, `sha256` and `format`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawImage, A::Error> {
                let mut img = RawImage::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "url" => set_once(&mut img.url, &key, &mut map)?,
                        "sha256" => set_once(&mut img.sha256, &key, &mut map)?,
                        "format" => set_once(&mut img.format, &key, &mut map)?,
                        _ => {
                            if img.unknown.contains(&key) {
                                return Err(duplicate(&key));
                            }
                            map.next_value::<IgnoredAny>()?;
                            img.unknown.push(key);
                        }
                    }
                }
                Ok(img)
            }
        }
        d.deserialize_map(V)
    }
}

/// A `serde_json::Value` that rejects duplicate keys at any depth and values
/// JSON cannot hold, instead of silently keeping the last or a lossy copy.
#[derive(Debug)]
pub(crate) struct StrictValue(pub Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, number, boolean, null, list or mapping")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format_args!("{v} is not a finite number")))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        StrictValue::deserialize(d).map(|v| v.0)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        StrictValue::deserialize(d).map(|v| v.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(StrictValue(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(duplicate(&key));
            }
            let StrictValue(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_value_rejects_nested_duplicates() {
        let err = serde_json::from_str::<StrictValue>(r#"{"a": {"b": 1, "b": 2}}"#)
            .expect_err("duplicate");
        assert!(err.to_string().contains("duplicate field \"b\""), "{err}");
        let ok = serde_json::from_str::<StrictValue>(r#"{"a": [1, "x", null, true, 1.5]}"#)
            .expect("valid");
        assert_eq!(
            serde_json::to_string(&ok.0).unwrap(),
            r#"{"a":[1,"x",null,true,1.5]}"#
        );
    }

    #[test]
    fn entry_rejects_duplicate_common_fields() {
        let err = serde_json::from_str::<RawEntry>(r#"{"name": "a", "name": "b"}"#)
            .expect_err("duplicate");
        assert!(
            err.to_string().contains("duplicate field \"name\""),
            "{err}"
        );
    }
}
