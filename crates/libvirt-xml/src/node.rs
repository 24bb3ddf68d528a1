//! The contract between the generated types and the reader/writer: each generated struct
//! says which attribute and child names it types, how to parse them into its fields, and how
//! to write each field back. The traversal itself (events, order, unknown content, limits,
//! errors) lives once in `de` and `ser`.

use crate::de::{Cx, El};
use crate::error::Error;
use crate::extra::Extra;
use crate::ser::Writer;

/// A namespace a typed element can live in: 0 = none, 1.. = the generated
/// [`crate::generated::NAMESPACES`] table (plus one), [`Ns::OTHER`] = any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ns(pub(crate) u8);

impl Ns {
    pub(crate) const NONE: Ns = Ns(0);
    pub(crate) const OTHER: Ns = Ns(u8::MAX);
}

/// What happened to a child element offered to a typed struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Took {
    /// Parsed into the field of this slot.
    Slot(u16),
    /// Not taken, nothing consumed: the reader keeps it as an unknown element.
    No,
    /// Consumed and kept as an untyped node (a value element that turned out to carry
    /// attributes or children); already stored in the parent's [`Extra`].
    Kept,
}

/// Implemented by every generated struct. Object safe: the reader and writer drive every
/// type through one `&mut dyn Node` / `&dyn Node` (one copy of their code, small frames on a
/// recursion such as a backing chain).
pub(crate) trait Node {
    /// Whether the element's text (if its schema has any) is a field.
    fn text_slot(&self) -> bool;
    /// Number of child slots (child fields).
    fn slots(&self) -> u16;

    fn extra(&self) -> &Extra;
    fn extra_mut(&mut self) -> &mut Extra;

    /// Parses a known attribute into its field; `Ok(false)`: not a typed attribute (or, when
    /// lenient, a value the type rejects).
    fn parse_attr(&mut self, cx: &mut Cx<'_>, name: &[u8], value: &str) -> Result<bool, Error>;

    /// Offers a child element (its start tag is pending in `cx`).
    fn parse_child<'a>(
        &mut self,
        cx: &mut Cx<'a>,
        el: &El<'a>,
        ns: Ns,
        local: &[u8],
    ) -> Result<Took, Error>;

    /// Parses the element's text; `Ok(false)`: not typed here (kept as a node).
    fn parse_text(&mut self, _cx: &mut Cx<'_>, _text: &str) -> Result<bool, Error> {
        Ok(false)
    }

    /// Writes the typed attributes.
    fn write_attrs(&self, w: &mut Writer);

    /// How many items the slot holds.
    fn slot_len(&self, slot: u16) -> usize;

    /// Writes item `i` of the slot.
    fn write_slot(&self, w: &mut Writer, slot: u16, i: usize);

    /// Writes the element's text, if it has some.
    fn write_text(&self, _w: &mut Writer) {}

    /// Whether the text field holds a value.
    fn has_text(&self) -> bool {
        false
    }
}
