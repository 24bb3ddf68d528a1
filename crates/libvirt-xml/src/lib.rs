//! libvirt's XML documents as Rust types (placeholder front page).

mod de;
mod document;
mod error;
mod extra;
#[rustfmt::skip]
mod generated;
mod node;
mod ser;
pub(crate) mod value;
mod xml;

pub use document::{Document, ParseOptions, Parsed};
pub use error::{Error, ErrorKind};
pub use extra::Extra;
pub use generated::*;
pub use xml::{XmlAttribute, XmlElement, XmlNode};
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
