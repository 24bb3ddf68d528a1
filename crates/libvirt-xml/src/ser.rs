//! The writer: typed elements and untyped XML back to text, indented by two spaces as libvirt
//! writes, attribute values in single quotes as libvirt writes them. Every string is escaped
//! here (text: `&`, `<`, `>`; attributes also `'` and the whitespace characters a parser would
//! otherwise normalize away).

use crate::extra::{Extra, Lexical, MISC, TEXT};
use crate::node::{Node, Ns};
use crate::value::XmlValue;
use crate::xml::{XmlElement, XmlNode};

/// Output state.
pub(crate) struct Writer {
    out: String,
    depth: usize,
    /// A start tag is open (`<x a="1"`), waiting for `>` or `/>`.
    open: bool,
    /// The current element has element children (its end tag goes on its own line).
    nested: bool,
    /// Namespace bindings in scope from typed elements: (prefix, URI).
    scope: Vec<(String, String)>,
    /// Inside an element whose text is a value beside child elements: no layout is added
    /// (it would become part of the value).
    compact: usize,
    /// Per-element write cursors of the order-driven writer (a stack, reused).
    cursors: Vec<u32>,
    scratch: String,
}

fn escape_into(out: &mut String, s: &str, attr: bool) {
    let special = |b: u8| {
        matches!(b, b'&' | b'<' | b'>' | b'\r') || (attr && matches!(b, b'\'' | b'\n' | b'\t'))
    };
    if !s.bytes().any(special) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            '\'' if attr => out.push_str("&apos;"),
            '\n' if attr => out.push_str("&#10;"),
            '\t' if attr => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
}

impl Writer {
    pub(crate) fn new() -> Self {
        Self {
            out: String::new(),
            depth: 0,
            open: false,
            nested: false,
            compact: 0,
            scope: Vec::new(),
            cursors: Vec::new(),
            scratch: String::new(),
        }
    }

    pub(crate) fn with_capacity(n: usize) -> Self {
        let mut w = Self::new();
        w.out.reserve(n);
        w
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }

    fn newline(&mut self) {
        if self.compact > 0 {
            return;
        }
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
    }

    /// Closes a pending start tag with `>` before content.
    fn content(&mut self) {
        if self.open {
            self.out.push('>');
            self.open = false;
        }
    }

    /// `<name`, on a new line when it is an element child.
    fn start(&mut self, name: &str) {
        self.content();
        self.nested = true;
        self.newline();
        self.out.push('<');
        self.out.push_str(name);
        self.open = true;
    }

    fn raw_attr(&mut self, name: &str, value: &str) {
        self.out.push(' ');
        self.out.push_str(name);
        self.out.push_str("='");
        escape_into(&mut self.out, value, true);
        self.out.push('\'');
    }

    /// Ends the element begun with `start`; `nested`: it had element children.
    fn end(&mut self, name: &str, nested: bool) {
        if self.open {
            self.out.push_str("/>");
            self.open = false;
        } else {
            if nested {
                self.newline();
            }
            self.out.push_str("</");
            self.out.push_str(name);
            self.out.push('>');
        }
    }

    fn text(&mut self, s: &str) {
        self.content();
        escape_into(&mut self.out, s, false);
    }

    /// The name a typed element is written with, binding its namespace when needed.
    fn typed_name(
        &mut self,
        ns: Ns,
        local: &str,
        extra: &Extra,
    ) -> (String, Option<(String, String)>) {
        if ns == Ns::NONE || ns == Ns::OTHER {
            return (local.to_owned(), None);
        }
        let (uri, usual) = crate::generated::NAMESPACES[usize::from(ns.0) - 1];
        let prefix = extra
            .rare
            .as_ref()
            .and_then(|r| r.prefix.as_deref())
            .unwrap_or(usual);
        let declares_itself = extra.rare.as_ref().is_some_and(|r| {
            r.ns.iter().any(|a| {
                let p = a
                    .name
                    .strip_prefix("xmlns:")
                    .unwrap_or(if a.name == "xmlns" { "" } else { "\u{0}" });
                p == prefix
            })
        });
        let bound = self
            .scope
            .iter()
            .rev()
            .find(|(p, _)| p == prefix)
            .map(|(_, u)| u.as_str());
        let decl = if declares_itself || bound == Some(uri) {
            None
        } else {
            Some((prefix.to_owned(), uri.to_owned()))
        };
        let name = if prefix.is_empty() {
            local.to_owned()
        } else {
            format!("{prefix}:{local}")
        };
        (name, decl)
    }

    /// Writes a typed element.
    pub(crate) fn node(&mut self, ns: Ns, local: &str, n: &dyn Node) {
        let extra = n.extra();
        let rare = extra.rare.as_deref();
        let (name, decl) = self.typed_name(ns, local, extra);
        self.start(&name);
        let scope_len = self.scope.len();
        if let Some(r) = rare {
            for a in &r.ns {
                self.raw_attr(&a.name, &a.value);
                let p = a.name.strip_prefix("xmlns:").unwrap_or("");
                self.scope.push((p.to_owned(), a.value.clone()));
            }
        }
        if let Some((p, u)) = decl {
            self.declare(&p, &u);
            self.scope.push((p, u));
        }
        n.write_attrs(self);
        if let Some(r) = rare {
            for a in &r.attrs {
                self.raw_attr(&a.name, &a.value);
            }
        }
        let outer_nested = std::mem::replace(&mut self.nested, false);
        self.depth += 1;
        let nodes: &[XmlNode] = rare.map_or(&[], |r| &r.nodes);
        // Text that is a value (or untyped text where a value goes) beside child elements:
        // layout would become part of it.
        let compact = n.text_slot()
            && (n.has_text()
                || nodes
                    .iter()
                    .any(|c| matches!(c, XmlNode::Text(_) | XmlNode::CData(_))));
        self.compact += usize::from(compact);
        let slot_count = n.slots();
        let slots = usize::from(slot_count);
        if extra.order.is_empty() {
            if n.has_text() {
                self.content();
                n.write_text(self);
            }
            for slot in 0..slot_count {
                for i in 0..n.slot_len(slot) {
                    n.write_slot(self, slot, i);
                }
            }
            for node in nodes {
                self.misc(node);
            }
        } else {
            // cursors[base..base+slots]: next item per slot; [base+slots..base+2*slots]: the
            // last position of each slot in the order (its leftovers are written there).
            let base = self.cursors.len();
            self.cursors.resize(base + 2 * slots, 0);
            for (pos, &o) in extra.order.iter().enumerate() {
                if usize::from(o) < slots {
                    self.cursors[base + slots + usize::from(o)] = pos as u32;
                }
            }
            let mut misc = 0;
            let mut text_done = false;
            for (pos, &o) in extra.order.iter().enumerate() {
                match o {
                    TEXT => {
                        if !text_done && n.has_text() {
                            self.content();
                            n.write_text(self);
                        }
                        text_done = true;
                    }
                    MISC => {
                        if let Some(node) = nodes.get(misc) {
                            self.misc(node);
                        }
                        misc += 1;
                    }
                    slot if usize::from(slot) < slots => {
                        let s = usize::from(slot);
                        let len = n.slot_len(slot);
                        let last = self.cursors[base + slots + s] as usize == pos;
                        let upto = if last {
                            len
                        } else {
                            (self.cursors[base + s] as usize + 1).min(len)
                        };
                        let from = self.cursors[base + s] as usize;
                        for i in from..upto {
                            n.write_slot(self, slot, i);
                        }
                        self.cursors[base + s] = upto as u32;
                    }
                    _ => {}
                }
            }
            if !text_done && n.has_text() {
                self.content();
                n.write_text(self);
            }
            for slot in 0..slot_count {
                let from = self.cursors[base + usize::from(slot)] as usize;
                for i in from..n.slot_len(slot) {
                    n.write_slot(self, slot, i);
                }
            }
            for node in nodes.iter().skip(misc) {
                self.misc(node);
            }
            self.cursors.truncate(base);
        }
        self.depth -= 1;
        self.compact -= usize::from(compact);
        let nested = std::mem::replace(&mut self.nested, outer_nested);
        self.end(&name, nested && !compact);
        self.scope.truncate(scope_len);
    }

    /// A child of a typed element that no field holds.
    fn misc(&mut self, node: &XmlNode) {
        match node {
            XmlNode::Element(e) => self.generic(e),
            XmlNode::Text(t) => self.text(t),
            other => {
                self.content();
                self.nested = true;
                self.newline();
                self.verbatim_node(other);
            }
        }
    }

    /// `xmlns[:p]='uri'` on the open start tag.
    fn declare(&mut self, prefix: &str, uri: &str) {
        if prefix.is_empty() {
            self.raw_attr("xmlns", uri);
        } else {
            self.raw_attr(&format!("xmlns:{prefix}"), uri);
        }
    }

    /// Starts a typed element without fields of its own (a value, a flag), declaring its
    /// namespace where needed; returns the name to end it with.
    fn open_typed(&mut self, ns: Ns, local: &str) -> String {
        let (name, decl) = self.typed_name(ns, local, &Extra::default());
        self.start(&name);
        if let Some((p, u)) = decl {
            self.declare(&p, &u);
        }
        name
    }

    /// A value's text into `scratch`: its kept spelling while it still spells this value,
    /// else the canonical text. Returns whether the spelling was used (then in `spelling`).
    fn spell<'e, T: XmlValue>(&mut self, v: &T, kept: Option<&'e Lexical>) -> Option<&'e str> {
        self.scratch.clear();
        v.write_xml(&mut self.scratch);
        kept.filter(|l| *l.canonical == *self.scratch)
            .map(|l| &*l.text)
    }

    /// Writes a typed attribute.
    pub(crate) fn attr<T: XmlValue>(&mut self, name: &str, v: Option<&T>, extra: &Extra, key: u16) {
        if let Some(v) = v {
            let kept = self.spell(v, extra.lexical(key, 0));
            self.out.push(' ');
            self.out.push_str(name);
            self.out.push_str("='");
            escape_into(&mut self.out, kept.unwrap_or(&self.scratch), true);
            self.out.push('\'');
        }
    }

    /// Writes a value element (`<name>text</name>`).
    pub(crate) fn leaf<T: XmlValue>(
        &mut self,
        ns: Ns,
        local: &str,
        v: &T,
        extra: &Extra,
        slot: u16,
        i: usize,
    ) {
        let name = self.open_typed(ns, local);
        let kept = self.spell(v, extra.lexical(slot, i as u32));
        let text = kept.unwrap_or(&self.scratch);
        if !text.is_empty() {
            if self.open {
                self.out.push('>');
                self.open = false;
            }
            escape_into(&mut self.out, text, false);
        }
        self.end(&name, false);
    }

    /// Writes an empty element (a flag that is set).
    pub(crate) fn flag(&mut self, ns: Ns, local: &str) {
        let name = self.open_typed(ns, local);
        self.end(&name, false);
    }

    /// Writes a typed element's own text.
    pub(crate) fn own_text<T: XmlValue>(&mut self, v: &T, extra: &Extra) {
        self.content();
        let kept = self.spell(v, extra.lexical(TEXT, 0));
        escape_into(&mut self.out, kept.unwrap_or(&self.scratch), false);
    }

    /// Writes an untyped element: indented when it holds only elements (and layout
    /// whitespace), verbatim when it holds text among its children.
    pub(crate) fn generic(&mut self, e: &XmlElement) {
        self.start(&e.name);
        for a in &e.attributes {
            self.raw_attr(&a.name, &a.value);
        }
        let mixed = e.children.iter().any(|c| match c {
            XmlNode::Text(t) => !t.bytes().all(|b| b.is_ascii_whitespace()),
            XmlNode::CData(_) => true,
            _ => false,
        });
        if mixed {
            self.content();
            for c in &e.children {
                self.verbatim_node(c);
            }
            self.end(&e.name, false);
            return;
        }
        let outer_nested = std::mem::replace(&mut self.nested, false);
        self.depth += 1;
        for c in &e.children {
            match c {
                XmlNode::Element(x) => self.generic(x),
                XmlNode::Text(_) => {}
                other => {
                    self.content();
                    self.nested = true;
                    self.newline();
                    self.verbatim_node(other);
                }
            }
        }
        self.depth -= 1;
        let nested = std::mem::replace(&mut self.nested, outer_nested);
        self.end(&e.name, nested);
    }

    /// A node exactly as held, without added layout.
    fn verbatim_node(&mut self, n: &XmlNode) {
        match n {
            XmlNode::Element(e) => {
                self.out.push('<');
                self.out.push_str(&e.name);
                for a in &e.attributes {
                    self.raw_attr(&a.name, &a.value);
                }
                if e.children.is_empty() {
                    self.out.push_str("/>");
                } else {
                    self.out.push('>');
                    for c in &e.children {
                        self.verbatim_node(c);
                    }
                    self.out.push_str("</");
                    self.out.push_str(&e.name);
                    self.out.push('>');
                }
            }
            XmlNode::Text(t) => escape_into(&mut self.out, t, false),
            XmlNode::CData(t) => {
                // A CDATA section cannot hold `]]>`; split it across two sections.
                self.out.push_str("<![CDATA[");
                self.out.push_str(&t.replace("]]>", "]]]]><![CDATA[>"));
                self.out.push_str("]]>");
            }
            XmlNode::Comment(c) => {
                self.out.push_str("<!--");
                self.out.push_str(c);
                self.out.push_str("-->");
            }
            XmlNode::ProcessingInstruction(p) => {
                self.out.push_str("<?");
                self.out.push_str(p);
                self.out.push_str("?>");
            }
            XmlNode::Declaration(d) => {
                self.out.push_str("<?");
                self.out.push_str(d);
                self.out.push_str("?>");
            }
            XmlNode::DocType(d) => {
                self.out.push_str("<!DOCTYPE");
                if !d.starts_with(char::is_whitespace) {
                    self.out.push(' ');
                }
                self.out.push_str(d);
                self.out.push('>');
            }
        }
    }

    /// Writes a whole document: prolog, root, epilog, and a final newline.
    pub(crate) fn document(&mut self, ns: Ns, root: &str, n: &dyn Node) {
        let rare = n.extra().rare.as_deref();
        for p in rare.map_or(&[][..], |r| &r.prolog) {
            self.verbatim_node(p);
            self.out.push('\n');
        }
        let before = self.out.len();
        self.node(ns, root, n);
        // The root starts at column 0 (node() began it with a newline after the prolog).
        if self.out[before..].starts_with('\n') {
            self.out.remove(before);
        }
        for p in rare.map_or(&[][..], |r| &r.epilog) {
            self.out.push('\n');
            self.verbatim_node(p);
        }
        self.out.push('\n');
    }
}
