//! What a typed element holds beside its fields: the document order of its children, and
//! (rarely present, so boxed) what the model does not type.

use crate::xml::{XmlAttribute, XmlElement, XmlNode};

/// Marker in [`Extra`]'s order: the element's text.
pub(crate) const TEXT: u16 = u16::MAX - 1;
/// Marker in [`Extra`]'s order: the next node of [`Extra::nodes`].
pub(crate) const MISC: u16 = u16::MAX;
/// Lexical keys of attributes are `ATTR | index`.
pub(crate) const ATTR: u16 = 0x8000;

/// The part of a typed element that is not a typed field: the order its children came in,
/// attributes and elements the model does not know (a newer libvirt's, a vendor's), comments
/// and processing instructions, namespace declarations, and the spelling of values written in
/// a non-canonical form (`0x00`). Parsing fills it; serializing writes it back, so a document
/// round-trips. A document built in code leaves it empty and is written in schema order.
///
/// Equality compares what it holds of the document's content — unknown attributes and
/// children — not its layout (order, namespace declarations, prefixes, spellings): a parsed
/// document equals the same document built in code.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    /// Child slots in document order (typed field slots, [`TEXT`], [`MISC`]).
    pub(crate) order: Vec<u16>,
    pub(crate) rare: Option<Box<Rare>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rare {
    /// Attributes no field holds, in document order.
    pub(crate) attrs: Vec<XmlAttribute>,
    /// `xmlns` declarations written on this element.
    pub(crate) ns: Vec<XmlAttribute>,
    /// Children no field holds, in document order (elements, comments, text, …).
    pub(crate) nodes: Vec<XmlNode>,
    /// Non-canonical spellings: (field key, item index, text, canonical text of the value).
    pub(crate) lexical: Vec<Lexical>,
    /// The prefix the element was written with, when not the usual one for its namespace.
    pub(crate) prefix: Option<Box<str>>,
    /// Around the root element of a document: declaration, comments, doctype…
    pub(crate) prolog: Vec<XmlNode>,
    pub(crate) epilog: Vec<XmlNode>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lexical {
    pub(crate) key: u16,
    pub(crate) index: u32,
    pub(crate) text: Box<str>,
    pub(crate) canonical: Box<str>,
}

impl PartialEq for Extra {
    fn eq(&self, other: &Self) -> bool {
        self.unknown_attributes() == other.unknown_attributes() && self.nodes() == other.nodes()
    }
}

impl Extra {
    pub(crate) fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// Attributes the model does not know, in document order.
    pub fn unknown_attributes(&self) -> &[XmlAttribute] {
        self.rare.as_ref().map_or(&[], |r| &r.attrs)
    }

    /// Children the model does not type (unknown elements, comments, processing instructions,
    /// stray text), in document order.
    pub fn nodes(&self) -> &[XmlNode] {
        self.rare.as_ref().map_or(&[], |r| &r.nodes)
    }

    /// Elements the model does not know.
    pub fn unknown_elements(&self) -> impl Iterator<Item = &XmlElement> {
        self.nodes().iter().filter_map(|n| match n {
            XmlNode::Element(e) => Some(e),
            _ => None,
        })
    }

    /// Sets an attribute the model has no field for (replacing one of the same name). It is
    /// written after the typed attributes.
    pub fn set_unknown_attribute(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let (name, value) = (name.into(), value.into());
        let attrs = &mut self.rare().attrs;
        if let Some(a) = attrs.iter_mut().find(|a| a.name == name) {
            a.value = value;
        } else {
            attrs.push(XmlAttribute { name, value });
        }
    }

    /// Appends a child the model has no field for (an element, a comment…). It is written
    /// after the typed children.
    pub fn push_node(&mut self, node: XmlNode) {
        self.rare().nodes.push(node);
        if !self.order.is_empty() {
            self.order.push(MISC);
        }
    }

    /// Whether nothing untyped is held and no order is recorded.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty() && self.rare.is_none()
    }

    /// Comments, processing instructions and the declaration before the root element (on a
    /// document's root only).
    pub fn prolog(&self) -> &[XmlNode] {
        self.rare.as_ref().map_or(&[], |r| &r.prolog)
    }

    pub(crate) fn lexical(&self, key: u16, index: u32) -> Option<&Lexical> {
        self.rare
            .as_ref()?
            .lexical
            .iter()
            .find(|l| l.key == key && l.index == index)
    }
}
