//! The reader: quick-xml's events into the generated types, once for all of them.
//!
//! Every typed element goes through [`parse_into`]: its attributes are offered to the type
//! (unknown ones kept in its [`Extra`]), then each child element is offered (unknown ones
//! parsed as [`XmlElement`]s and kept in order), text and comments likewise. Limits are checked
//! before work: the input size up front, the depth at every element. Line ends and attribute
//! whitespace are normalized as the XML specification says, so what we hold is what any
//! conforming parser would see.

use std::borrow::Cow;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, BytesText, Event};

use crate::ParseOptions;
use crate::error::{Error, ErrorKind, ValueError};
use crate::extra::{Extra, Lexical, MISC, TEXT};
use crate::node::{Node, Ns, Took};
use crate::value::{CInt, XmlValue};
use crate::xml::{XmlAttribute, XmlElement, XmlNode};

/// A child element being dispatched: its start tag, whether it is empty (`<x/>`), its
/// resolved namespace.
pub(crate) struct El<'a> {
    start: BytesStart<'a>,
    empty: bool,
    ns: Ns,
    /// The prefix differs from the usual one of its (typed) namespace.
    odd_prefix: bool,
}

/// Reader state shared by one parse.
pub(crate) struct Cx<'a> {
    reader: Reader<&'a [u8]>,
    depth: usize,
    max_depth: usize,
    lenient: bool,
    /// Elements and attributes that landed in an untyped store.
    pub(crate) untyped: usize,
    /// In-scope namespace declarations: (prefix, URI); "" is the default namespace.
    scope: Vec<(Box<str>, Box<str>)>,
}

/// Parses a value with XSD's lexical rules (decimal numbers, enum tokens, strings).
pub(crate) fn dec<T: XmlValue>(s: &str) -> Result<T, ValueError> {
    T::parse_xml(s)
}

/// Parses an integer in libvirt's C forms (`0x1f`, `017`, `31`).
pub(crate) fn cint<T: CInt>(s: &str) -> Result<T, ValueError> {
    T::parse_c(s)
}

/// A part of the input (a name, a value) as text: the input is a `&str` and quick-xml splits it
/// at ASCII delimiters, so this does not fail in practice.
fn utf8(b: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(b).map_err(|e| Error::new(ErrorKind::Syntax(e.to_string())))
}

fn is_ws(b: &[u8]) -> bool {
    b.iter().all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
}

fn is_xmlns(key: &[u8]) -> bool {
    key.starts_with(b"xmlns") && (key.len() == 5 || key[5] == b':')
}

impl<'a> Cx<'a> {
    pub(crate) fn new(xml: &'a str, opts: &ParseOptions) -> Result<Self, Error> {
        if xml.len() > opts.max_size {
            return Err(Error::new(ErrorKind::TooLarge {
                size: xml.len(),
                limit: opts.max_size,
            }));
        }
        let mut reader = Reader::from_str(xml);
        let c = reader.config_mut();
        c.trim_text(false);
        c.check_end_names = true;
        c.check_comments = true;
        c.expand_empty_elements = false;
        Ok(Self {
            reader,
            depth: 0,
            max_depth: opts.max_depth,
            lenient: opts.lenient,
            untyped: 0,
            scope: Vec::new(),
        })
    }

    fn pos(&self) -> u64 {
        self.reader.buffer_position()
    }

    fn next(&mut self) -> Result<Event<'a>, Error> {
        match self.reader.read_event() {
            Ok(e) => Ok(e),
            Err(e) => {
                Err(Error::new(ErrorKind::Syntax(e.to_string())).at(self.reader.error_position()))
            }
        }
    }

    fn syntax(&self, msg: impl std::fmt::Display) -> Error {
        Error::new(ErrorKind::Syntax(msg.to_string())).at(self.pos())
    }

    fn enter(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(Error::new(ErrorKind::TooDeep {
                limit: self.max_depth,
            })
            .at(self.pos()));
        }
        Ok(())
    }

    /// Pushes the namespace declarations of a start tag; returns how many.
    fn push_ns(&mut self, start: &BytesStart<'a>) -> Result<usize, Error> {
        if !start.attributes_raw().windows(5).any(|w| w == b"xmlns") {
            return Ok(0);
        }
        let mut n = 0;
        for a in start.attributes() {
            let a = a.map_err(|e| self.syntax(e))?;
            let key = a.key.as_ref();
            if is_xmlns(key) {
                let prefix = if key.len() == 5 { "" } else { utf8(&key[6..])? };
                let uri = self.attr_value(&a)?;
                self.scope.push((prefix.into(), uri.as_ref().into()));
                n += 1;
            }
        }
        Ok(n)
    }

    fn pop_ns(&mut self, n: usize) {
        self.scope.truncate(self.scope.len() - n);
    }

    /// The namespace of an element name, and whether its prefix is unusual for it.
    fn resolve(&self, start: &BytesStart<'_>) -> (Ns, bool) {
        let name = start.name();
        let prefix = name.prefix().map(quick_xml::name::Prefix::into_inner);
        if self.scope.is_empty() {
            return (
                if prefix.is_none() {
                    Ns::NONE
                } else {
                    Ns::OTHER
                },
                false,
            );
        }
        let want: &[u8] = prefix.unwrap_or(b"");
        let uri = self
            .scope
            .iter()
            .rev()
            .find(|(p, _)| p.as_bytes() == want)
            .map(|(_, u)| &**u);
        match uri {
            None | Some("") => (
                if prefix.is_none() {
                    Ns::NONE
                } else {
                    Ns::OTHER
                },
                false,
            ),
            Some(u) => match crate::generated::NAMESPACES
                .iter()
                .position(|(uri, _)| *uri == u)
            {
                Some(i) => {
                    let usual = crate::generated::NAMESPACES[i].1.as_bytes();
                    (Ns(i as u8 + 1), want != usual)
                }
                None => (Ns::OTHER, false),
            },
        }
    }

    /// An attribute's value: whitespace normalized as XML says, then unescaped.
    fn attr_value(
        &self,
        a: &quick_xml::events::attributes::Attribute<'a>,
    ) -> Result<Cow<'a, str>, Error> {
        let raw = match &a.value {
            Cow::Borrowed(b) => Cow::Borrowed(utf8(b)?),
            Cow::Owned(b) => Cow::Owned(utf8(b)?.to_owned()),
        };
        let raw: Cow<'a, str> = if raw.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) {
            Cow::Owned(raw.replace("\r\n", " ").replace(['\t', '\n', '\r'], " "))
        } else {
            raw
        };
        match raw {
            Cow::Borrowed(s) => quick_xml::escape::unescape(s).map_err(|e| self.syntax(e)),
            Cow::Owned(s) => quick_xml::escape::unescape(&s)
                .map(|c| Cow::Owned(c.into_owned()))
                .map_err(|e| self.syntax(e)),
        }
    }

    /// Character data: line ends normalized, then unescaped.
    fn text(&self, t: &BytesText<'a>) -> Result<Cow<'a, str>, Error> {
        let raw = utf8(t)?;
        if raw.contains('\r') {
            let n = raw.replace("\r\n", "\n").replace('\r', "\n");
            return quick_xml::escape::unescape(&n)
                .map(|c| Cow::Owned(c.into_owned()))
                .map_err(|e| self.syntax(e));
        }
        match t.unescape() {
            Ok(c) => Ok(c),
            Err(e) => Err(self.syntax(e)),
        }
    }

    fn cdata(bytes: &[u8]) -> Result<String, Error> {
        let s = utf8(bytes)?;
        Ok(if s.contains('\r') {
            s.replace("\r\n", "\n").replace('\r', "\n")
        } else {
            s.to_owned()
        })
    }

    // -----------------------------------------------------------------------------------------
    // Helpers the generated code calls.

    /// A typed attribute.
    pub(crate) fn attr<T: XmlValue>(
        &mut self,
        field: &mut Option<T>,
        extra: &mut Extra,
        key: u16,
        value: &str,
        parse: fn(&str) -> Result<T, ValueError>,
    ) -> Result<bool, Error> {
        match parse(value) {
            Ok(v) => {
                keep_lexical(&v, value, extra, key, 0);
                *field = Some(v);
                Ok(true)
            }
            Err(_) if self.lenient => Ok(false),
            Err(e) => Err(e.into_error(value)),
        }
    }

    /// A typed element's own text.
    pub(crate) fn text_value<T: XmlValue>(
        &mut self,
        field: &mut Option<T>,
        extra: &mut Extra,
        text: &str,
        parse: fn(&str) -> Result<T, ValueError>,
    ) -> Result<bool, Error> {
        match parse(text) {
            Ok(v) => {
                keep_lexical(&v, text, extra, TEXT, 0);
                *field = Some(v);
                Ok(true)
            }
            Err(_) if self.lenient => Ok(false),
            Err(e) => Err(e.into_error(text)),
        }
    }

    /// A single struct child.
    pub(crate) fn child<T: Node + Default>(
        &mut self,
        el: &El<'a>,
        field: &mut Option<T>,
        slot: u16,
    ) -> Result<Took, Error> {
        if field.is_some() {
            return Ok(Took::No);
        }
        let node = field.insert(T::default());
        if let Err(e) = parse_into(self, el, node) {
            *field = None;
            return Err(e);
        }
        Ok(Took::Slot(slot))
    }

    /// A single struct child on a type cycle.
    pub(crate) fn child_box<T: Node + Default>(
        &mut self,
        el: &El<'a>,
        field: &mut Option<Box<T>>,
        slot: u16,
    ) -> Result<Took, Error> {
        if field.is_some() {
            return Ok(Took::No);
        }
        let node = field.insert(Box::default());
        if let Err(e) = parse_into(self, el, &mut **node) {
            *field = None;
            return Err(e);
        }
        Ok(Took::Slot(slot))
    }

    /// A repeated struct child.
    pub(crate) fn children<T: Node + Default>(
        &mut self,
        el: &El<'a>,
        field: &mut Vec<T>,
        slot: u16,
    ) -> Result<Took, Error> {
        // Parsed in place: a recursive type's frames hold references, not values.
        field.push(T::default());
        let n = field.len();
        if let Err(e) = parse_into(self, el, &mut field[n - 1]) {
            field.pop();
            return Err(e.indexed(n));
        }
        Ok(Took::Slot(slot))
    }

    /// A single text-only child held as its value.
    pub(crate) fn leaf<T: XmlValue>(
        &mut self,
        el: &El<'a>,
        field: &mut Option<T>,
        extra: &mut Extra,
        slot: u16,
        parse: fn(&str) -> Result<T, ValueError>,
    ) -> Result<Took, Error> {
        if field.is_some() || !plain(el) {
            return Ok(Took::No);
        }
        match self.leaf_text(el, extra)? {
            None => Ok(Took::Kept),
            Some(text) => match parse(&text) {
                Ok(v) => {
                    keep_lexical(&v, &text, extra, slot, 0);
                    *field = Some(v);
                    Ok(Took::Slot(slot))
                }
                Err(_) if self.lenient => {
                    self.keep_leaf(el, text, extra)?;
                    Ok(Took::Kept)
                }
                Err(e) => Err(e.into_error(&text)),
            },
        }
    }

    /// A repeated text-only child held as its value.
    pub(crate) fn leaves<T: XmlValue>(
        &mut self,
        el: &El<'a>,
        field: &mut Vec<T>,
        extra: &mut Extra,
        slot: u16,
        parse: fn(&str) -> Result<T, ValueError>,
    ) -> Result<Took, Error> {
        if !plain(el) {
            return Ok(Took::No);
        }
        match self.leaf_text(el, extra)? {
            None => Ok(Took::Kept),
            Some(text) => match parse(&text) {
                Ok(v) => {
                    keep_lexical(&v, &text, extra, slot, field.len() as u32);
                    field.push(v);
                    Ok(Took::Slot(slot))
                }
                Err(_) if self.lenient => {
                    self.keep_leaf(el, text, extra)?;
                    Ok(Took::Kept)
                }
                Err(e) => Err(e.into_error(&text).indexed(field.len() + 1)),
            },
        }
    }

    /// An empty child held as a flag.
    pub(crate) fn flag(
        &mut self,
        el: &El<'a>,
        field: &mut bool,
        extra: &mut Extra,
        slot: u16,
    ) -> Result<Took, Error> {
        if *field || !plain(el) {
            return Ok(Took::No);
        }
        match self.leaf_text(el, extra)? {
            None => Ok(Took::Kept),
            Some(t) if is_ws(t.as_bytes()) => {
                *field = true;
                Ok(Took::Slot(slot))
            }
            Some(t) => {
                self.keep_leaf(el, t, extra)?;
                Ok(Took::Kept)
            }
        }
    }

    /// A free-form child (the schema's `anyName`): held as XML, not counted as untyped.
    pub(crate) fn any(
        &mut self,
        el: &El<'a>,
        field: &mut Vec<XmlElement>,
        slot: u16,
    ) -> Result<Took, Error> {
        field.push(parse_generic(self, el)?);
        Ok(Took::Slot(slot))
    }

    /// Reads a value element's content. `None`: it had more than text (kept in `extra`).
    fn leaf_text(&mut self, el: &El<'a>, extra: &mut Extra) -> Result<Option<Cow<'a, str>>, Error> {
        if el.empty {
            return Ok(Some(Cow::Borrowed("")));
        }
        self.enter()?;
        let mut acc: Option<Cow<'a, str>> = None;
        loop {
            match self.next()? {
                Event::End(_) => break,
                Event::Text(t) => {
                    let s = self.text(&t)?;
                    acc = Some(match acc {
                        None => s,
                        Some(a) => Cow::Owned(a.into_owned() + &s),
                    });
                }
                Event::CData(c) => {
                    let s = Self::cdata(&c)?;
                    acc = Some(Cow::Owned(
                        acc.map(Cow::into_owned).unwrap_or_default() + &s,
                    ));
                }
                Event::Eof => return Err(self.syntax("unexpected end of input")),
                other => {
                    // More than text: keep the whole element as XML.
                    let mut g = generic_start(el)?;
                    if let Some(a) = acc.take() {
                        g.children.push(XmlNode::Text(a.into_owned()));
                    }
                    self.generic_event(&mut g, other)?;
                    self.generic_children(&mut g)?;
                    self.depth -= 1;
                    self.untyped += g.count();
                    extra.rare().nodes.push(XmlNode::Element(g));
                    return Ok(None);
                }
            }
        }
        self.depth -= 1;
        Ok(Some(acc.unwrap_or(Cow::Borrowed(""))))
    }

    fn keep_leaf(
        &mut self,
        el: &El<'a>,
        text: Cow<'a, str>,
        extra: &mut Extra,
    ) -> Result<(), Error> {
        let mut g = generic_start(el)?;
        if !text.is_empty() {
            g.children.push(XmlNode::Text(text.into_owned()));
        }
        self.untyped += g.count();
        extra.rare().nodes.push(XmlNode::Element(g));
        Ok(())
    }

    /// Adds one event's node to a generic element (recursing for elements).
    fn generic_event(&mut self, g: &mut XmlElement, ev: Event<'a>) -> Result<(), Error> {
        let node = match ev {
            Event::Start(s) => XmlNode::Element(parse_generic(
                self,
                &El {
                    start: s,
                    empty: false,
                    ns: Ns::OTHER,
                    odd_prefix: false,
                },
            )?),
            Event::Empty(s) => XmlNode::Element(parse_generic(
                self,
                &El {
                    start: s,
                    empty: true,
                    ns: Ns::OTHER,
                    odd_prefix: false,
                },
            )?),
            Event::Text(t) => XmlNode::Text(self.text(&t)?.into_owned()),
            Event::CData(c) => XmlNode::CData(Self::cdata(&c)?),
            Event::Comment(c) => XmlNode::Comment(utf8(&c)?.to_owned()),
            Event::PI(p) => XmlNode::ProcessingInstruction(utf8(&p)?.to_owned()),
            Event::Decl(_) | Event::DocType(_) => {
                return Err(self.syntax("declaration inside an element"));
            }
            Event::End(_) | Event::Eof => return Err(self.syntax("unexpected end")),
        };
        g.children.push(node);
        Ok(())
    }

    /// Reads children into a generic element up to its end tag.
    fn generic_children(&mut self, g: &mut XmlElement) -> Result<(), Error> {
        loop {
            match self.next()? {
                Event::End(_) => return Ok(()),
                Event::Eof => return Err(self.syntax("unexpected end of input")),
                ev => self.generic_event(g, ev)?,
            }
        }
    }
}

/// A value element can be typed only without attributes and with its usual prefix.
fn plain(el: &El<'_>) -> bool {
    el.start
        .attributes_raw()
        .iter()
        .all(u8::is_ascii_whitespace)
        && !el.odd_prefix
}

fn keep_lexical<T: XmlValue>(v: &T, text: &str, extra: &mut Extra, key: u16, index: u32) {
    if !v.is_canonical(text) {
        let mut canonical = String::new();
        v.write_xml(&mut canonical);
        extra.rare().lexical.push(Lexical {
            key,
            index,
            text: text.into(),
            canonical: canonical.into(),
        });
    }
}

fn generic_start(el: &El<'_>) -> Result<XmlElement, Error> {
    let mut g = XmlElement::new(utf8(el.start.name().as_ref())?);
    for a in el.start.attributes() {
        let a = a.map_err(|e| Error::new(ErrorKind::Syntax(e.to_string())))?;
        let value = attr_value_static(&a)?;
        g.attributes
            .push(XmlAttribute::new(utf8(a.key.as_ref())?, value));
    }
    Ok(g)
}

fn attr_value_static(a: &quick_xml::events::attributes::Attribute<'_>) -> Result<String, Error> {
    let raw = utf8(&a.value)?;
    let raw: Cow<'_, str> = if raw.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) {
        Cow::Owned(raw.replace("\r\n", " ").replace(['\t', '\n', '\r'], " "))
    } else {
        Cow::Borrowed(raw)
    };
    quick_xml::escape::unescape(&raw)
        .map(Cow::into_owned)
        .map_err(|e| Error::new(ErrorKind::Syntax(e.to_string())))
}

/// Parses an element the model does not type (or a free-form one).
pub(crate) fn parse_generic<'a>(cx: &mut Cx<'a>, el: &El<'a>) -> Result<XmlElement, Error> {
    cx.enter()?;
    let mut g = generic_start(el).map_err(|e| e.at(cx.pos()))?;
    if !el.empty {
        cx.generic_children(&mut g)?;
    }
    cx.depth -= 1;
    Ok(g)
}

/// Parses a typed element whose start tag is `el` into `node` (a default value). In place, so
/// the frames of a recursion (a backing chain) hold no values; the work around the event loop
/// is in functions of its own, so the frame that recurs stays small.
pub(crate) fn parse_into<'a>(
    cx: &mut Cx<'a>,
    el: &El<'a>,
    node: &mut dyn Node,
) -> Result<(), Error> {
    cx.enter()?;
    attributes(cx, el, node)?;
    if !el.empty {
        let mut text = TextAcc::default();
        loop {
            match cx.next()? {
                Event::Start(s) => {
                    text.elements = true;
                    text.open = false;
                    child(cx, node, s, false)?;
                }
                Event::Empty(s) => {
                    text.elements = true;
                    text.open = false;
                    child(cx, node, s, true)?;
                }
                Event::End(_) => break,
                other => content(cx, node, other, &mut text)?,
            }
        }
        if !text.runs.is_empty() {
            finish_text(cx, node, text)?;
        }
    }
    cx.depth -= 1;
    Ok(())
}

/// A typed element's text, as it accumulates: runs of character data (text and CDATA with no
/// node between them), each with the place in the element's order where it stood.
#[derive(Default)]
struct TextAcc<'a> {
    runs: Vec<(usize, Cow<'a, str>)>,
    /// The last node read was character data: more extends the last run.
    open: bool,
    elements: bool,
}

impl<'a> TextAcc<'a> {
    fn push(&mut self, at: usize, s: Cow<'a, str>) {
        if self.open {
            if let Some((_, run)) = self.runs.last_mut() {
                run.to_mut().push_str(&s);
                return;
            }
        }
        self.runs.push((at, s));
        self.open = true;
    }
}

#[inline(never)]
fn attributes<'a>(cx: &mut Cx<'a>, el: &El<'a>, node: &mut dyn Node) -> Result<(), Error> {
    if el.odd_prefix {
        let prefix = el
            .start
            .name()
            .prefix()
            .map_or(Ok(""), |p| utf8(p.into_inner()))?;
        node.extra_mut().rare().prefix = Some(prefix.into());
    }
    for a in el.start.attributes() {
        let a = a.map_err(|e| cx.syntax(e))?;
        let key = a.key.as_ref();
        let value = cx.attr_value(&a)?;
        if is_xmlns(key) {
            let name = utf8(key)?.to_owned();
            node.extra_mut().rare().ns.push(XmlAttribute {
                name,
                value: value.into_owned(),
            });
            continue;
        }
        match node.parse_attr(cx, key, &value) {
            Ok(true) => {}
            Ok(false) => {
                cx.untyped += 1;
                let name = utf8(key)?.to_owned();
                node.extra_mut().rare().attrs.push(XmlAttribute {
                    name,
                    value: value.into_owned(),
                });
            }
            Err(e) => return Err(e.attribute(utf8(key)?).at(cx.pos())),
        }
    }
    Ok(())
}

/// Everything inside a typed element but child elements and its end.
#[inline(never)]
fn content<'a>(
    cx: &mut Cx<'a>,
    node: &mut dyn Node,
    ev: Event<'a>,
    acc: &mut TextAcc<'a>,
) -> Result<(), Error> {
    match ev {
        Event::Text(t) => {
            if node.text_slot() {
                let at = node.extra().order.len();
                acc.push(at, cx.text(&t)?);
            } else if !is_ws(&t) {
                // Stray text where the schema has none: kept, without the layout around it
                // (the writer lays out this element's children anew).
                let s = cx.text(&t)?;
                let s = s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
                push_misc(node, XmlNode::Text(s.to_owned()));
            }
            return Ok(());
        }
        Event::CData(c) => {
            let s = Cx::cdata(&c)?;
            if node.text_slot() {
                let at = node.extra().order.len();
                acc.push(at, Cow::Owned(s));
            } else {
                push_misc(node, XmlNode::CData(s));
            }
            return Ok(());
        }
        _ => acc.open = false,
    }
    match ev {
        Event::Comment(c) => push_misc(node, XmlNode::Comment(utf8(&c)?.to_owned())),
        Event::PI(p) => push_misc(node, XmlNode::ProcessingInstruction(utf8(&p)?.to_owned())),
        Event::Decl(_) | Event::DocType(_) => {
            return Err(cx.syntax("declaration inside an element"));
        }
        Event::Eof => return Err(cx.syntax("unexpected end of input")),
        Event::Text(_) | Event::CData(_) | Event::Start(_) | Event::Empty(_) | Event::End(_) => {
            unreachable!("handled above and by parse_into")
        }
    }
    Ok(())
}

/// Parses a typed element's text into its field. One run of text (whitespace runs around
/// child elements are layout) is the value, typed; text in several runs between children (or
/// a value the type rejects, when lenient) stays where it was, as untyped text.
#[inline(never)]
fn finish_text(cx: &mut Cx<'_>, node: &mut dyn Node, acc: TextAcc<'_>) -> Result<(), Error> {
    let mut runs = acc.runs;
    if acc.elements || !node.extra().order.is_empty() {
        runs.retain(|(_, t)| !is_ws(t.as_bytes()));
    }
    match runs.len() {
        0 => return Ok(()),
        1 => {
            let (at, t) = runs.pop().expect("one run");
            let pos = cx.pos();
            if node.parse_text(cx, &t).map_err(|e| e.text().at(pos))? {
                if !node.extra().order.is_empty() {
                    node.extra_mut().order.insert(at, TEXT);
                }
                return Ok(());
            }
            // Lenient: a value the type rejects.
            runs.push((at, t));
        }
        _ => {}
    }
    cx.untyped += 1;
    // Later runs first, so earlier places stay valid.
    for (at, t) in runs.into_iter().rev() {
        let e = node.extra_mut();
        let misc_before = e.order[..at].iter().filter(|&&o| o == MISC).count();
        e.order.insert(at, MISC);
        let nodes = &mut e.rare().nodes;
        let i = misc_before.min(nodes.len());
        nodes.insert(i, XmlNode::Text(t.into_owned()));
    }
    Ok(())
}

fn push_misc(node: &mut dyn Node, n: XmlNode) {
    let e = node.extra_mut();
    e.rare().nodes.push(n);
    e.order.push(MISC);
}

/// Offers one child element to a typed parent.
fn child<'a>(
    cx: &mut Cx<'a>,
    node: &mut dyn Node,
    start: BytesStart<'a>,
    empty: bool,
) -> Result<(), Error> {
    let pushed = cx.push_ns(&start)?;
    let (ns, odd_prefix) = cx.resolve(&start);
    let el = El {
        start,
        empty,
        ns,
        odd_prefix,
    };
    let took = {
        let local = el.start.local_name();
        node.parse_child(cx, &el, ns, local.as_ref())
    };
    let took = match took {
        Ok(t) => t,
        Err(e) => return Err(e.within(utf8(el.start.name().as_ref())?)),
    };
    match took {
        Took::Slot(k) => node.extra_mut().order.push(k),
        Took::Kept => node.extra_mut().order.push(MISC),
        Took::No => {
            let g = parse_generic(cx, &el)?;
            cx.untyped += g.count();
            push_misc(node, XmlNode::Element(g));
        }
    }
    cx.pop_ns(pushed);
    Ok(())
}

/// What surrounds a document's root: read up to the root's start tag.
pub(crate) struct Prolog<'a> {
    pub(crate) nodes: Vec<XmlNode>,
    pub(crate) root: El<'a>,
    pushed: usize,
}

impl Prolog<'_> {
    /// The root's qualified name as written.
    pub(crate) fn root_name(&self) -> &[u8] {
        self.root.start.name().into_inner()
    }
    /// The root's namespace and local name.
    pub(crate) fn root(&self) -> (Ns, &[u8]) {
        (self.root.ns, self.root.start.local_name().into_inner())
    }
}

pub(crate) fn read_prolog<'a>(cx: &mut Cx<'a>) -> Result<Prolog<'a>, Error> {
    let mut nodes = Vec::new();
    loop {
        match cx.next()? {
            Event::Decl(d) => nodes.push(XmlNode::Declaration(utf8(&d)?.to_owned())),
            Event::DocType(d) => nodes.push(XmlNode::DocType(utf8(&d)?.to_owned())),
            Event::Comment(c) => nodes.push(XmlNode::Comment(utf8(&c)?.to_owned())),
            Event::PI(p) => nodes.push(XmlNode::ProcessingInstruction(utf8(&p)?.to_owned())),
            Event::Text(t) if is_ws(&t) => {}
            Event::Start(s) => return prolog_root(cx, nodes, s, false),
            Event::Empty(s) => return prolog_root(cx, nodes, s, true),
            Event::Eof => return Err(Error::new(ErrorKind::NoRoot).at(cx.pos())),
            Event::Text(_) | Event::CData(_) => {
                return Err(cx.syntax("text before the root element"));
            }
            Event::End(_) => return Err(cx.syntax("end tag before the root element")),
        }
    }
}

fn prolog_root<'a>(
    cx: &mut Cx<'a>,
    nodes: Vec<XmlNode>,
    start: BytesStart<'a>,
    empty: bool,
) -> Result<Prolog<'a>, Error> {
    let pushed = cx.push_ns(&start)?;
    let (ns, odd_prefix) = cx.resolve(&start);
    Ok(Prolog {
        nodes,
        root: El {
            start,
            empty,
            ns,
            odd_prefix,
        },
        pushed,
    })
}

/// Parses the root as `T`, then what follows it.
pub(crate) fn finish_document<'a, T: Node + Default>(
    cx: &mut Cx<'a>,
    prolog: Prolog<'a>,
) -> Result<T, Error> {
    let mut node = T::default();
    parse_into(cx, &prolog.root, &mut node).map_err(|e| match utf8(prolog.root_name()) {
        Ok(n) => e.within(n),
        Err(u) => u,
    })?;
    cx.pop_ns(prolog.pushed);
    let epilog = read_epilog(cx)?;
    if !prolog.nodes.is_empty() || !epilog.is_empty() {
        let r = node.extra_mut().rare();
        r.prolog = prolog.nodes;
        r.epilog = epilog;
    }
    Ok(node)
}

fn read_epilog(cx: &mut Cx<'_>) -> Result<Vec<XmlNode>, Error> {
    let mut nodes = Vec::new();
    loop {
        match cx.next()? {
            Event::Eof => return Ok(nodes),
            Event::Comment(c) => nodes.push(XmlNode::Comment(utf8(&c)?.to_owned())),
            Event::PI(p) => nodes.push(XmlNode::ProcessingInstruction(utf8(&p)?.to_owned())),
            Event::Text(t) if is_ws(&t) => {}
            _ => return Err(Error::new(ErrorKind::TrailingContent).at(cx.pos())),
        }
    }
}

/// Parses one element as XML (no typing).
pub(crate) fn parse_fragment(xml: &str, opts: &ParseOptions) -> Result<XmlElement, Error> {
    let mut cx = Cx::new(xml, opts)?;
    let prolog = read_prolog(&mut cx)?;
    let g = parse_generic(&mut cx, &prolog.root)?;
    read_epilog(&mut cx)?;
    Ok(g)
}
