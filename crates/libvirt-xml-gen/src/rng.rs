//! Reading RELAX NG (XML syntax) into a pattern arena: grammars with their includes, `combine`,
//! nested grammars, inherited `ns`, and the notAllowed simplification the walkers need.
//!
//! Each schema file is parsed once; each grammar that includes it instantiates its patterns
//! anew (define names resolve per grammar), but every pattern keeps the identity of the schema
//! node it came from ([`Src`]), which is what the model keys types on.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// A pattern's index in [`Schema::pats`].
pub type P = usize;
/// A grammar's index in [`Schema::grammars`].
pub type G = usize;

/// The schema node a pattern was built from: file index and roxmltree node index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Src {
    /// Index in [`Schema::files`].
    pub file: usize,
    /// The node's index in its document.
    pub node: usize,
}

/// An element or attribute name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NameClass {
    /// One name: namespace URI ("" for none) and local name.
    Name {
        /// Namespace URI.
        ns: String,
        /// Local name.
        local: String,
    },
    /// Any name (`<anyName/>`, possibly with an `<except>` we do not need).
    Any,
}

/// One RELAX NG pattern.
#[derive(Debug, Clone)]
pub enum Pat {
    /// `<empty/>`.
    Empty,
    /// `<notAllowed/>`.
    NotAllowed,
    /// `<text/>`.
    Text,
    /// `<data type=…>` with its facets.
    Data {
        /// The XSD type name.
        ty: String,
        /// `<param>`s.
        params: Vec<(String, String)>,
    },
    /// `<value>`.
    Value {
        /// The literal.
        text: String,
    },
    /// `<element>`.
    Element {
        /// Its name.
        name: NameClass,
        /// Its content.
        body: P,
        /// Where it is written.
        src: Src,
    },
    /// `<attribute>`.
    Attribute {
        /// Its name.
        name: NameClass,
        /// Its value pattern.
        body: P,
    },
    /// `<group>` (and implicit groups).
    Group(Vec<P>),
    /// `<interleave>`.
    Interleave(Vec<P>),
    /// `<choice>`.
    Choice(Vec<P>),
    /// `<optional>`.
    Optional(P),
    /// `<zeroOrMore>`.
    ZeroOrMore(P),
    /// `<oneOrMore>`.
    OneOrMore(P),
    /// `<ref>` (or a nested grammar's start).
    Ref {
        /// The grammar the name resolves in.
        grammar: G,
        /// The define's name ([`START`] for a nested grammar's start).
        name: String,
    },
}

/// The define name under which a grammar's `<start>` is kept.
pub const START: &str = "\u{0}start";

/// A grammar: its defines (combined) and which files it includes.
#[derive(Debug, Default)]
pub struct Grammar {
    /// Define name → pattern (with `combine` applied).
    pub defines: HashMap<String, P>,
    /// Define name → where it is (first) written.
    pub define_src: HashMap<String, Src>,
    /// Files already included (each once).
    included: HashSet<usize>,
}

/// Every loaded file, pattern and grammar.
pub struct Schema {
    /// Directory of the .rng files.
    dir: PathBuf,
    /// File names, in load order.
    pub files: Vec<String>,
    docs: Vec<&'static roxmltree::Document<'static>>,
    /// The pattern arena.
    pub pats: Vec<Pat>,
    /// The grammar arena.
    pub grammars: Vec<Grammar>,
    /// Patterns that may occur (notAllowed simplified away), memoized.
    allowed: HashMap<P, bool>,
}

const RNG_NS: &str = "http://relaxng.org/ns/structure/1.0";

impl Schema {
    /// An empty schema set reading files from `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            files: Vec::new(),
            docs: Vec::new(),
            pats: Vec::new(),
            grammars: Vec::new(),
            allowed: HashMap::new(),
        }
    }

    fn file(&mut self, name: &str) -> Result<usize, String> {
        if let Some(i) = self.files.iter().position(|f| f == name) {
            return Ok(i);
        }
        let path = self.dir.join(name);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let text: &'static str = Box::leak(text.into_boxed_str());
        let doc = roxmltree::Document::parse(text)
            .map_err(|e| format!("parsing {}: {e}", path.display()))?;
        self.docs.push(Box::leak(Box::new(doc)));
        self.files.push(name.to_owned());
        Ok(self.files.len() - 1)
    }

    /// Loads `file` as a top-level grammar; returns the grammar.
    pub fn load(&mut self, file: &str) -> Result<G, String> {
        let g = self.new_grammar();
        self.include(g, file)?;
        Ok(g)
    }

    fn new_grammar(&mut self) -> G {
        self.grammars.push(Grammar::default());
        self.grammars.len() - 1
    }

    fn include(&mut self, g: G, file: &str) -> Result<(), String> {
        let f = self.file(file)?;
        if !self.grammars[g].included.insert(f) {
            return Ok(());
        }
        let root = self.docs[f].root_element();
        if root.tag_name().name() != "grammar" {
            return Err(format!("{file}: root is not <grammar>"));
        }
        self.grammar_content(g, f, root, "")
    }

    fn grammar_content(
        &mut self,
        g: G,
        f: usize,
        node: roxmltree::Node<'static, 'static>,
        ns: &str,
    ) -> Result<(), String> {
        let ns = node.attribute("ns").unwrap_or(ns).to_owned();
        for child in node.children().filter(rng_element) {
            match child.tag_name().name() {
                "start" => {
                    let p = self.group(g, f, child, &ns)?;
                    self.define(g, START, child.attribute("combine"), p, src(f, child));
                }
                "define" => {
                    let name = child.attribute("name").ok_or("define without name")?;
                    let p = self.group(g, f, child, &ns)?;
                    self.define(g, name, child.attribute("combine"), p, src(f, child));
                }
                "include" => {
                    if child.children().any(|c| rng_element(&c)) {
                        return Err(format!(
                            "{}: <include> with overriding content is not supported",
                            self.files[f]
                        ));
                    }
                    let href = child.attribute("href").ok_or("include without href")?;
                    self.include(g, href)?;
                }
                "div" => self.grammar_content(g, f, child, &ns)?,
                other => {
                    return Err(format!(
                        "{}: unexpected <{other}> in grammar",
                        self.files[f]
                    ));
                }
            }
        }
        Ok(())
    }

    fn define(&mut self, g: G, name: &str, combine: Option<&str>, p: P, at: Src) {
        let gr = &mut self.grammars[g];
        match gr.defines.get(name).copied() {
            None => {
                gr.defines.insert(name.to_owned(), p);
                gr.define_src.insert(name.to_owned(), at);
            }
            Some(old) => {
                let merged = match combine {
                    Some("interleave") => Pat::Interleave(vec![old, p]),
                    // `combine="choice"` (libvirt's overrides); a second plain define of the
                    // same name only happens through the same file reached twice (skipped).
                    _ => Pat::Choice(vec![old, p]),
                };
                let m = self.push(merged);
                self.grammars[g].defines.insert(name.to_owned(), m);
            }
        }
    }

    fn push(&mut self, p: Pat) -> P {
        self.pats.push(p);
        self.pats.len() - 1
    }

    /// The children of `node` as one pattern (an implicit group).
    fn group(
        &mut self,
        g: G,
        f: usize,
        node: roxmltree::Node<'static, 'static>,
        ns: &str,
    ) -> Result<P, String> {
        self.group_of(g, f, node.children().filter(rng_element), ns)
    }

    fn group_of(
        &mut self,
        g: G,
        f: usize,
        nodes: impl Iterator<Item = roxmltree::Node<'static, 'static>>,
        ns: &str,
    ) -> Result<P, String> {
        let mut ps = Vec::new();
        for n in nodes {
            ps.push(self.pattern(g, f, n, ns)?);
        }
        Ok(match ps.len() {
            0 => self.push(Pat::Empty),
            1 => ps[0],
            _ => self.push(Pat::Group(ps)),
        })
    }

    fn name_class(node: roxmltree::Node<'_, '_>, ns: &str) -> Result<NameClass, String> {
        match node.tag_name().name() {
            "anyName" | "nsName" => Ok(NameClass::Any),
            "name" => Ok(NameClass::Name {
                ns: node.attribute("ns").unwrap_or(ns).to_owned(),
                local: node.text().unwrap_or("").trim().to_owned(),
            }),
            other => Err(format!("unsupported name class <{other}>")),
        }
    }

    fn pattern(
        &mut self,
        g: G,
        f: usize,
        node: roxmltree::Node<'static, 'static>,
        ns: &str,
    ) -> Result<P, String> {
        let ns_here = node.attribute("ns").unwrap_or(ns).to_owned();
        let ns = ns_here.as_str();
        let tag = node.tag_name().name();
        let pat = match tag {
            "element" | "attribute" => {
                let mut children = node.children().filter(rng_element).peekable();
                // Attributes are in no namespace unless they say so.
                let own_ns = if tag == "attribute" {
                    node.attribute("ns").unwrap_or("")
                } else {
                    ns
                };
                let name = if let Some(n) = node.attribute("name") {
                    if n.contains(':') {
                        return Err(format!(
                            "{}: prefixed name {n} not supported",
                            self.files[f]
                        ));
                    }
                    NameClass::Name {
                        ns: own_ns.to_owned(),
                        local: n.to_owned(),
                    }
                } else {
                    let nc = children.next().ok_or("element without name")?;
                    Self::name_class(nc, own_ns)?
                };
                let rest: Vec<_> = children.collect();
                let body = if rest.is_empty() && tag == "attribute" {
                    self.push(Pat::Text)
                } else {
                    self.group_of(g, f, rest.into_iter(), ns)?
                };
                if tag == "element" {
                    Pat::Element {
                        name,
                        body,
                        src: src(f, node),
                    }
                } else {
                    Pat::Attribute { name, body }
                }
            }
            "group" | "interleave" | "choice" | "mixed" => {
                let mut ps = Vec::new();
                for c in node.children().filter(rng_element) {
                    ps.push(self.pattern(g, f, c, ns)?);
                }
                match tag {
                    "group" => Pat::Group(ps),
                    "interleave" => Pat::Interleave(ps),
                    "choice" => Pat::Choice(ps),
                    _ => {
                        let t = self.push(Pat::Text);
                        ps.push(t);
                        Pat::Interleave(ps)
                    }
                }
            }
            "optional" | "zeroOrMore" | "oneOrMore" => {
                let inner = self.group(g, f, node, ns)?;
                match tag {
                    "optional" => Pat::Optional(inner),
                    "zeroOrMore" => Pat::ZeroOrMore(inner),
                    _ => Pat::OneOrMore(inner),
                }
            }
            "ref" => Pat::Ref {
                grammar: g,
                name: node.attribute("name").ok_or("ref without name")?.to_owned(),
            },
            "empty" => Pat::Empty,
            "notAllowed" => Pat::NotAllowed,
            "text" => Pat::Text,
            "data" => Pat::Data {
                ty: node
                    .attribute("type")
                    .ok_or("data without type")?
                    .to_owned(),
                params: node
                    .children()
                    .filter(|c| rng_element(c) && c.tag_name().name() == "param")
                    .map(|c| {
                        (
                            c.attribute("name").unwrap_or("").to_owned(),
                            c.text().unwrap_or("").to_owned(),
                        )
                    })
                    .collect(),
            },
            "value" => Pat::Value {
                text: node.text().unwrap_or("").to_owned(),
            },
            "grammar" => {
                let inner = self.new_grammar();
                self.grammar_content(inner, f, node, ns)?;
                Pat::Ref {
                    grammar: inner,
                    name: START.to_owned(),
                }
            }
            other => return Err(format!("{}: unsupported pattern <{other}>", self.files[f])),
        };
        Ok(self.push(pat))
    }

    /// The pattern a reference names.
    pub fn resolve(&self, grammar: G, name: &str) -> Result<P, String> {
        self.grammars[grammar]
            .defines
            .get(name)
            .copied()
            .ok_or_else(|| format!("undefined reference {name}"))
    }

    /// Where the define a reference names is written.
    pub fn define_src(&self, grammar: G, name: &str) -> Option<Src> {
        self.grammars[grammar].define_src.get(name).copied()
    }

    /// Whether a pattern can match anything (RELAX NG's notAllowed simplification).
    pub fn allowed(&mut self, p: P) -> bool {
        if let Some(&a) = self.allowed.get(&p) {
            return a;
        }
        // Recursion only passes through elements and refs; assume allowed while computing.
        self.allowed.insert(p, true);
        let a = match self.pats[p].clone() {
            Pat::NotAllowed => false,
            Pat::Group(ps) | Pat::Interleave(ps) => ps.iter().all(|&q| self.allowed(q)),
            Pat::Choice(ps) => ps.iter().any(|&q| self.allowed(q)),
            Pat::OneOrMore(q) => self.allowed(q),
            Pat::Element { body, .. } | Pat::Attribute { body, .. } => self.allowed(body),
            Pat::Ref { grammar, name } => match self.resolve(grammar, &name) {
                Ok(q) => self.allowed(q),
                Err(_) => false,
            },
            Pat::Empty
            | Pat::Text
            | Pat::Data { .. }
            | Pat::Value { .. }
            | Pat::Optional(_)
            | Pat::ZeroOrMore(_) => true,
        };
        self.allowed.insert(p, a);
        a
    }

    /// A short description of where a node is, for generated docs: `file.rng`.
    pub fn file_name(&self, s: Src) -> &str {
        &self.files[s.file]
    }

    /// The 1-based line of a schema node.
    pub fn line(&self, s: Src) -> u32 {
        let doc = self.docs[s.file];
        doc.descendants()
            .find(|n| n.id().get_usize() == s.node)
            .map_or(0, |n| doc.text_pos_at(n.range().start).row)
    }

    /// Every define of every grammar, for diagnostics: (grammar, name) → pattern.
    pub fn all_defines(&self) -> BTreeMap<(G, String), P> {
        let mut out = BTreeMap::new();
        for (g, gr) in self.grammars.iter().enumerate() {
            for (n, &p) in &gr.defines {
                out.insert((g, n.clone()), p);
            }
        }
        out
    }
}

fn rng_element(n: &roxmltree::Node<'_, '_>) -> bool {
    n.is_element() && n.tag_name().namespace() == Some(RNG_NS)
}

fn src(f: usize, n: roxmltree::Node<'_, '_>) -> Src {
    Src {
        file: f,
        node: n.id().get_usize(),
    }
}
