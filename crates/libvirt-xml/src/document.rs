//! Whole documents: options, the parse entry points, the [`Document`] trait.

use crate::de::{self, Cx, Prolog};
use crate::error::{Error, ErrorKind};
use crate::node::{Node, Ns};
use crate::ser::Writer;

/// Limits and strictness of a parse.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// The largest input accepted, in bytes (default 32 MiB: libvirt's RPC messages are at
    /// most that large, its strings 4 MiB).
    pub max_size: usize,
    /// The deepest element nesting accepted (default 128; libvirt's own documents nest about
    /// a dozen deep).
    pub max_depth: usize,
    /// Keep values the model rejects (an enumeration value a newer libvirt added, a number out
    /// of range) as untyped attributes and elements instead of failing (default `false`).
    pub lenient: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self {
            max_size: 32 << 20,
            max_depth: 128,
            lenient: false,
        }
    }
}

impl ParseOptions {
    /// The default limits, lenient about values: what a program reading a newer libvirt's
    /// output wants.
    pub fn lenient() -> Self {
        Self {
            lenient: true,
            ..Self::default()
        }
    }

    /// With another size limit (bytes).
    #[must_use]
    pub fn with_max_size(mut self, bytes: usize) -> Self {
        self.max_size = bytes;
        self
    }

    /// With another depth limit.
    #[must_use]
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }
}

/// A parsed document and what the parse left untyped.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Parsed<T> {
    /// The document.
    pub document: T,
    /// How many elements and attributes (and, when lenient, rejected text values) landed in
    /// an untyped store ([`crate::Extra`]) rather than a typed field. The contents of places the schema leaves free-form (`<metadata>`'s
    /// children) are typed as XML and not counted.
    pub untyped: usize,
}

/// A document type libvirt defines (one per RELAX NG schema): [`crate::Domain`],
/// [`crate::Network`], [`crate::StoragePool`], …
pub trait Document: Sized {
    /// The root element's name.
    const ROOT: &'static str;

    /// Parses with the default options.
    fn from_xml(xml: &str) -> Result<Self, Error> {
        Self::from_xml_with(xml, &ParseOptions::default()).map(|p| p.document)
    }

    /// Parses with the given options; also reports what stayed untyped.
    fn from_xml_with(xml: &str, options: &ParseOptions) -> Result<Parsed<Self>, Error>;

    /// Writes the document.
    fn to_xml(&self) -> String;
}

pub(crate) fn parse<T: Node + Default>(
    xml: &str,
    options: &ParseOptions,
    ns: Ns,
    root: &'static str,
) -> Result<Parsed<T>, Error> {
    let mut cx = Cx::new(xml, options)?;
    let prolog = de::read_prolog(&mut cx)?;
    let (rns, local) = prolog.root();
    if rns != ns || local != root.as_bytes() {
        return Err(Error::new(ErrorKind::WrongRoot {
            expected: root,
            found: String::from_utf8_lossy(prolog.root_name()).into_owned(),
        }));
    }
    let document = de::finish_document(&mut cx, prolog)?;
    Ok(Parsed {
        document,
        untyped: cx.untyped,
    })
}

pub(crate) fn write<T: Node>(doc: &T, ns: Ns, root: &str) -> String {
    let mut w = Writer::with_capacity(4096);
    w.document(ns, root, doc);
    w.finish()
}

pub(crate) fn wrong_root(prolog: &Prolog<'_>) -> Error {
    Error::new(ErrorKind::WrongRoot {
        expected: "a libvirt document",
        found: String::from_utf8_lossy(prolog.root_name()).into_owned(),
    })
}

impl crate::AnyDocument {
    /// Parses any libvirt document, its type chosen by the root element (as
    /// `virt-xml-validate` chooses the schema).
    pub fn from_xml(xml: &str) -> Result<Self, Error> {
        Self::from_xml_with(xml, &ParseOptions::default()).map(|p| p.document)
    }

    /// Parses with the given options; also reports what stayed untyped.
    pub fn from_xml_with(xml: &str, options: &ParseOptions) -> Result<Parsed<Self>, Error> {
        let mut cx = Cx::new(xml, options)?;
        let prolog = de::read_prolog(&mut cx)?;
        let document = Self::parse_root(&mut cx, prolog)?;
        Ok(Parsed {
            document,
            untyped: cx.untyped,
        })
    }
}
