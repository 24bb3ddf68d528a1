//! Untyped XML: what the schema leaves free-form (`<metadata>`'s children, a snapshot's
//! `<cookie>`), and what the model does not know (a newer libvirt's elements, comments), kept
//! so it can be written back.

/// An element held as XML: its qualified name as written, attributes in document order
/// (namespace declarations included, as written), and its children.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct XmlElement {
    /// The qualified name as written (`qemu:commandline`, `instance`).
    pub name: String,
    /// Attributes, including `xmlns` declarations, in document order.
    pub attributes: Vec<XmlAttribute>,
    /// Child nodes in document order.
    pub children: Vec<XmlNode>,
}

/// An attribute as written: qualified name and (unescaped) value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct XmlAttribute {
    /// Qualified name (`type`, `xmlns:egress`).
    pub name: String,
    /// Value, unescaped.
    pub value: String,
}

impl XmlAttribute {
    /// An attribute.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// A node inside an element or around the root.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum XmlNode {
    /// A child element.
    Element(XmlElement),
    /// Character data, unescaped.
    Text(String),
    /// A CDATA section's content.
    CData(String),
    /// A comment's content (between `<!--` and `-->`).
    Comment(String),
    /// A processing instruction's content (between `<?` and `?>`).
    ProcessingInstruction(String),
    /// The XML declaration's content (between `<?xml` and `?>`), before the root only.
    Declaration(String),
    /// A document type declaration's content (between `<!DOCTYPE` and `>`), before the root
    /// only.
    DocType(String),
}

impl XmlElement {
    /// An element with no attributes and no children.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// Adds an attribute (builder style).
    #[must_use]
    pub fn with_attribute(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.attributes.push(XmlAttribute::new(name, value));
        self
    }

    /// Adds a child element (builder style).
    #[must_use]
    pub fn with_child(mut self, child: XmlElement) -> Self {
        self.children.push(XmlNode::Element(child));
        self
    }

    /// Adds text (builder style).
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.children.push(XmlNode::Text(text.into()));
        self
    }

    /// The local part of the name (`commandline` of `qemu:commandline`).
    pub fn local_name(&self) -> &str {
        self.name
            .rsplit_once(':')
            .map_or(self.name.as_str(), |(_, l)| l)
    }

    /// The prefix of the name, if any.
    pub fn prefix(&self) -> Option<&str> {
        self.name.split_once(':').map(|(p, _)| p)
    }

    /// An attribute's value by qualified name.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.value.as_str())
    }

    /// The namespace this element declares for `prefix` (`None`: the default namespace), if it
    /// declares one itself.
    pub fn declared_namespace(&self, prefix: Option<&str>) -> Option<&str> {
        self.attributes
            .iter()
            .find(|a| match prefix {
                None => a.name == "xmlns",
                Some(p) => a.name.strip_prefix("xmlns:") == Some(p),
            })
            .map(|a| a.value.as_str())
    }

    /// Child elements.
    pub fn elements(&self) -> impl Iterator<Item = &XmlElement> {
        self.children.iter().filter_map(|n| match n {
            XmlNode::Element(e) => Some(e),
            _ => None,
        })
    }

    /// The first child element with this local name.
    pub fn element(&self, local_name: &str) -> Option<&XmlElement> {
        self.elements().find(|e| e.local_name() == local_name)
    }

    /// The element's text: its text and CDATA children, concatenated.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for n in &self.children {
            match n {
                XmlNode::Text(t) | XmlNode::CData(t) => s.push_str(t),
                _ => {}
            }
        }
        s
    }

    /// Parses one element (a fragment such as `virDomainGetMetadata`'s answer), with the
    /// default limits.
    pub fn from_xml(xml: &str) -> Result<Self, crate::Error> {
        crate::de::parse_fragment(xml, &crate::ParseOptions::default())
    }

    /// Writes the element as XML, indented.
    pub fn to_xml(&self) -> String {
        let mut w = crate::ser::Writer::new();
        w.generic(self);
        w.finish()
    }

    /// How many elements and attributes this subtree holds (namespace declarations aside).
    pub(crate) fn count(&self) -> usize {
        1 + self
            .attributes
            .iter()
            .filter(|a| !is_xmlns(&a.name))
            .count()
            + self.elements().map(XmlElement::count).sum::<usize>()
    }
}

/// `xmlns` or `xmlns:p`.
pub(crate) fn is_xmlns(name: &str) -> bool {
    name == "xmlns" || name.starts_with("xmlns:")
}
