//! Our metadata namespace on each domain: what `get` and `list_by_tag` read back.
//!
//! Written inside the domain XML's `<metadata>` at define time (so a domain never exists
//! without it) and read with `virDomainGetMetadata(ELEMENT, NAMESPACE)`:
//!
//! ```xml
//! <egress:instance xmlns:egress="https://egress-proxy.dev/kvm2/1">
//!   <egress:uid>0b7e2c1d-egress-a</egress:uid>
//!   <egress:name>egress proxy a</egress:name>
//!   <egress:created-at>2026-11-30T17:00:00.123Z</egress:created-at>
//!   <egress:entry>kvm-a</egress:entry>
//!   <egress:image>debian-13</egress:image>
//!   <egress:tags><egress:tag>gateway-blue</egress:tag></egress:tags>
//! </egress:instance>
//! ```
//!
//! Parsing matches local names only: libvirt may hand the element back with another prefix.

use std::collections::BTreeSet;
use std::io;
use std::time::SystemTime;

use egress_provider::Identifier;
use quick_xml::Writer;
use quick_xml::events::{BytesText, Event};

/// Our XML namespace (a version bump here means a new layout).
pub const NAMESPACE: &str = "https://egress-proxy.dev/kvm2/1";
/// The prefix we write.
pub const PREFIX: &str = "egress";

/// What we store on a domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// The caller's uid.
    pub uid: Identifier,
    /// The display name.
    pub name: String,
    /// When the domain was defined.
    pub created_at: SystemTime,
    /// The provider entry that made it.
    pub entry: String,
    /// The image key it was created from.
    pub image: String,
    /// Its tags.
    pub tags: BTreeSet<Identifier>,
}

/// Metadata that is not ours or is damaged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetaError {
    /// Not well-formed XML.
    #[error("metadata is not well-formed XML: {0}")]
    Xml(String),
    /// A required element is missing.
    #[error("metadata lacks <{0}>")]
    Missing(&'static str),
    /// An element has a value we cannot use.
    #[error("metadata <{field}> is invalid: {value:?}")]
    Invalid {
        /// The element.
        field: &'static str,
        /// Its text.
        value: String,
    },
}

fn el(name: &str) -> String {
    format!("{PREFIX}:{name}")
}

impl Meta {
    /// Writes the `<egress:instance>` element.
    pub fn write<W: io::Write>(&self, w: &mut Writer<W>) -> io::Result<()> {
        let created = humantime::format_rfc3339_millis(self.created_at).to_string();
        w.create_element(el("instance"))
            .with_attribute((format!("xmlns:{PREFIX}").as_str(), NAMESPACE))
            .write_inner_content(|w| {
                for (name, value) in [
                    ("uid", self.uid.as_str()),
                    ("name", self.name.as_str()),
                    ("created-at", created.as_str()),
                    ("entry", self.entry.as_str()),
                    ("image", self.image.as_str()),
                ] {
                    w.create_element(el(name))
                        .write_text_content(BytesText::new(value))?;
                }
                w.create_element(el("tags")).write_inner_content(|w| {
                    for t in &self.tags {
                        w.create_element(el("tag"))
                            .write_text_content(BytesText::new(t.as_str()))?;
                    }
                    Ok(())
                })?;
                Ok(())
            })?;
        Ok(())
    }

    /// The element as a string.
    pub fn to_xml(&self) -> String {
        crate::xml::render(Writer::new(Vec::new()), |w| self.write(w))
    }

    /// Parses what `virDomainGetMetadata` returns.
    pub fn parse(xml: &str) -> Result<Self, MetaError> {
        let mut reader = quick_xml::Reader::from_str(xml);
        let mut field: Option<String> = None;
        let mut saw_root = false;
        let (mut uid, mut name, mut created, mut entry, mut image) = (None, None, None, None, None);
        let mut tags = BTreeSet::new();
        loop {
            match reader.read_event() {
                Err(e) => return Err(MetaError::Xml(e.to_string())),
                Ok(Event::Eof) => break,
                Ok(Event::Start(e)) => {
                    let local = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                    saw_root |= local == "instance";
                    field = Some(local);
                }
                Ok(Event::Empty(e)) => {
                    // An empty element: an empty value (e.g. `<name/>`).
                    let local = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                    saw_root |= local == "instance";
                    if local == "name" {
                        name = Some(String::new());
                    }
                }
                Ok(Event::End(_)) => field = None,
                Ok(Event::Text(t)) => {
                    let text = t
                        .unescape()
                        .map_err(|e| MetaError::Xml(e.to_string()))?
                        .into_owned();
                    match field.as_deref() {
                        Some("uid") => uid = Some(text),
                        Some("name") => name = Some(text),
                        Some("created-at") => created = Some(text),
                        Some("entry") => entry = Some(text),
                        Some("image") => image = Some(text),
                        Some("tag") => {
                            let tag =
                                Identifier::new(text.clone()).map_err(|_| MetaError::Invalid {
                                    field: "tag",
                                    value: text,
                                })?;
                            tags.insert(tag);
                        }
                        _ => {}
                    }
                }
                Ok(_) => {}
            }
        }
        if !saw_root {
            return Err(MetaError::Missing("instance"));
        }
        let uid = uid.ok_or(MetaError::Missing("uid"))?;
        let uid = Identifier::new(uid.clone()).map_err(|_| MetaError::Invalid {
            field: "uid",
            value: uid,
        })?;
        let created = created.ok_or(MetaError::Missing("created-at"))?;
        let created_at = humantime::parse_rfc3339(&created).map_err(|_| MetaError::Invalid {
            field: "created-at",
            value: created,
        })?;
        Ok(Self {
            uid,
            name: name.unwrap_or_default(),
            created_at,
            entry: entry.ok_or(MetaError::Missing("entry"))?,
            image: image.unwrap_or_default(),
            tags,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn id(s: &str) -> Identifier {
        Identifier::new(s).unwrap()
    }

    #[test]
    fn round_trip_with_hostile_names() {
        let m = Meta {
            uid: id("u-1"),
            name: r#"a <b> & "c" 'd' ]]> </egress:name>"#.into(),
            created_at: SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_000_000_123),
            entry: "kvm-a".into(),
            image: "debian-13".into(),
            tags: [id("t1"), id("t2")].into_iter().collect(),
        };
        let xml = m.to_xml();
        assert!(!xml.contains("<b>"), "{xml}");
        assert!(xml.contains(NAMESPACE));
        assert_eq!(Meta::parse(&xml).unwrap(), m);
    }

    #[test]
    fn parses_libvirt_style_output_with_other_prefix() {
        let xml = r#"<instance xmlns="https://egress-proxy.dev/kvm2/1">
  <uid>u</uid>
  <name>n</name>
  <created-at>2026-01-02T03:04:05Z</created-at>
  <entry>e</entry>
  <image>i</image>
  <tags/>
</instance>"#;
        let m = Meta::parse(xml).unwrap();
        assert_eq!(m.uid, "u");
        assert!(m.tags.is_empty());
    }

    #[test]
    fn damaged_metadata_is_an_error() {
        assert!(matches!(
            Meta::parse("<x/>"),
            Err(MetaError::Missing("instance"))
        ));
        assert!(Meta::parse("<instance><uid>U!</uid></instance>").is_err());
        assert!(
            Meta::parse(
                "<instance><uid>u</uid><created-at>x</created-at><entry>e</entry></instance>"
            )
            .is_err()
        );
        assert!(Meta::parse("<instance><uid>u").is_err());
    }
}
