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
use std::time::SystemTime;

use egress_provider::Identifier;
use libvirt_xml::XmlElement;

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

fn el(name: &str) -> XmlElement {
    XmlElement::new(format!("{PREFIX}:{name}"))
}

impl Meta {
    /// The `<egress:instance>` element, declaring our namespace (for a domain's `<metadata>`).
    pub fn to_element(&self) -> XmlElement {
        let created = humantime::format_rfc3339_millis(self.created_at).to_string();
        let mut tags = el("tags");
        for t in &self.tags {
            tags = tags.with_child(el("tag").with_text(t.as_str()));
        }
        let mut root = el("instance").with_attribute(format!("xmlns:{PREFIX}"), NAMESPACE);
        for (name, value) in [
            ("uid", self.uid.as_str()),
            ("name", self.name.as_str()),
            ("created-at", created.as_str()),
            ("entry", self.entry.as_str()),
            ("image", self.image.as_str()),
        ] {
            root = root.with_child(el(name).with_text(value));
        }
        root.with_child(tags)
    }

    /// The element as a string.
    pub fn to_xml(&self) -> String {
        self.to_element().to_xml()
    }

    /// Parses what `virDomainGetMetadata` returns (elements matched by local name: libvirt
    /// may hand the element back with another prefix).
    pub fn parse(xml: &str) -> Result<Self, MetaError> {
        let root = XmlElement::from_xml(xml).map_err(|e| MetaError::Xml(e.to_string()))?;
        if root.local_name() != "instance" {
            return Err(MetaError::Missing("instance"));
        }
        let text = |name: &str| root.element(name).map(XmlElement::text);
        let mut tags = BTreeSet::new();
        for t in root
            .element("tags")
            .into_iter()
            .flat_map(XmlElement::elements)
        {
            if t.local_name() == "tag" {
                let text = t.text();
                let tag = Identifier::new(text.clone()).map_err(|_| MetaError::Invalid {
                    field: "tag",
                    value: text,
                })?;
                tags.insert(tag);
            }
        }
        let uid = text("uid").ok_or(MetaError::Missing("uid"))?;
        let uid = Identifier::new(uid.clone()).map_err(|_| MetaError::Invalid {
            field: "uid",
            value: uid,
        })?;
        let created = text("created-at").ok_or(MetaError::Missing("created-at"))?;
        let created_at = humantime::parse_rfc3339(&created).map_err(|_| MetaError::Invalid {
            field: "created-at",
            value: created,
        })?;
        Ok(Self {
            uid,
            name: text("name").unwrap_or_default(),
            created_at,
            entry: text("entry").ok_or(MetaError::Missing("entry"))?,
            image: text("image").unwrap_or_default(),
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
