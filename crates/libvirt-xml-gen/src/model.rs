//! From patterns to Rust-shaped types.
//!
//! A *type* is the set of schema `<element>`s that can stand at one place: the children of one
//! name under one parent, merged across the parent's `choice` branches and across every grammar
//! that reaches them. Its key is the sorted set of its elements' *bodies*: an element whose
//! content is a single `<ref>` is keyed by that define (so `<memory>` and `<currentMemory>`,
//! both `scaledInteger`, share one type), any other by the element's own schema node.
//!
//! A type's content is the union of its elements' contents: every attribute (value patterns
//! merged), every child element name (with "may repeat" if any branch lets it), any text, and
//! whether the schema leaves names free (`anyName`). Types with only text become plain values
//! in their parent (`<name>` → `String`); empty ones become `bool` flags; the rest are structs.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use crate::rng::{G, NameClass, P, Pat, Schema, Src};

/// A child element's qualified name: namespace URI and local name.
pub type Qn = (String, String);

/// One document type libvirt defines: its schema file, root element, Rust names.
#[derive(Debug, Clone, Copy)]
pub struct DocSpec {
    /// Schema file.
    pub file: &'static str,
    /// The generated module holding the types first reached from it.
    pub module: &'static str,
    /// The Rust name of its root type.
    pub rust: &'static str,
    /// What to call it in docs.
    pub title: &'static str,
}

/// The documents, in the order their types are named (earlier documents name shared types).
pub const DOCS: &[DocSpec] = &[
    DocSpec {
        file: "domain.rng",
        module: "domain",
        rust: "Domain",
        title: "a domain (`virsh dumpxml`)",
    },
    DocSpec {
        file: "network.rng",
        module: "network",
        rust: "Network",
        title: "a virtual network (`virsh net-dumpxml`)",
    },
    DocSpec {
        file: "storagepool.rng",
        module: "storage_pool",
        rust: "StoragePool",
        title: "a storage pool (`virsh pool-dumpxml`)",
    },
    DocSpec {
        file: "storagevol.rng",
        module: "storage_vol",
        rust: "StorageVolume",
        title: "a storage volume (`virsh vol-dumpxml`)",
    },
    DocSpec {
        file: "domainsnapshot.rng",
        module: "domain_snapshot",
        rust: "DomainSnapshot",
        title: "a domain snapshot (`virsh snapshot-dumpxml`)",
    },
    DocSpec {
        file: "domaincheckpoint.rng",
        module: "domain_checkpoint",
        rust: "DomainCheckpoint",
        title: "a domain checkpoint (`virsh checkpoint-dumpxml`)",
    },
    DocSpec {
        file: "domainbackup.rng",
        module: "domain_backup",
        rust: "DomainBackup",
        title: "a domain backup job (`virsh backup-dumpxml`)",
    },
    DocSpec {
        file: "networkport.rng",
        module: "network_port",
        rust: "NetworkPort",
        title: "a virtual network port (`virsh net-port-dumpxml`)",
    },
    DocSpec {
        file: "nodedev.rng",
        module: "node_device",
        rust: "NodeDevice",
        title: "a host device (`virsh nodedev-dumpxml`)",
    },
    DocSpec {
        file: "secret.rng",
        module: "secret",
        rust: "Secret",
        title: "a secret (`virsh secret-dumpxml`)",
    },
    DocSpec {
        file: "nwfilter.rng",
        module: "nwfilter",
        rust: "NwFilter",
        title: "a network filter (`virsh nwfilter-dumpxml`)",
    },
    DocSpec {
        file: "nwfilterbinding.rng",
        module: "nwfilter_binding",
        rust: "NwFilterBinding",
        title: "a network filter binding (`virsh nwfilter-binding-dumpxml`)",
    },
    DocSpec {
        file: "interface.rng",
        module: "interface",
        rust: "HostInterface",
        title: "a host network interface (`virsh iface-dumpxml`)",
    },
    DocSpec {
        file: "capability.rng",
        module: "capabilities",
        rust: "Capabilities",
        title: "the host's capabilities (`virsh capabilities`)",
    },
    DocSpec {
        file: "domaincaps.rng",
        module: "domain_caps",
        rust: "DomainCapabilities",
        title: "a hypervisor's domain capabilities (`virsh domcapabilities`)",
    },
    DocSpec {
        file: "storagepoolcaps.rng",
        module: "storage_pool_caps",
        rust: "StoragePoolCapabilities",
        title: "the storage pool capabilities (`virsh pool-capabilities`)",
    },
    DocSpec {
        file: "cpu.rng",
        module: "cpu",
        rust: "CpuDefinition",
        title: "a CPU definition (`virsh cpu-baseline`, `cpu-compare`)",
    },
];

/// Type names chosen by hand where the define name reads badly (define name → Rust name).
const RENAMES: &[(&str, &str)] = &[
    ("domaincontents", "Domain"),
    ("graphic", "Graphics"),
    ("pool", "StoragePool"),
    ("vol", "StorageVolume"),
    ("guestcpu", "Cpu"),
    ("hostcpu", "HostCpu"),
    ("virYesNo", "YesNo"),
    ("offOptions", "LifecycleAction"),
    ("qemucdevSrcTypeChoice", "CharDeviceType"),
    ("state", "SnapshotState"),
    ("crashOptions", "CrashAction"),
    ("lockfailureOptions", "LockFailureAction"),
    ("virOnOff", "OnOff"),
];

/// Names chosen by hand for what the define/place rule names badly (rule's name → name).
/// Children named after their place take the new name as their prefix.
const FINAL_NAMES: &[(&str, &str)] = &[
    // capabilities
    ("Hostcaps", "CapsHost"),
    ("Guestcaps", "CapsGuest"),
    ("Secmodel", "SecModel"),
    ("Migration", "MigrationFeatures"),
    ("Arch", "GuestArch"),
    ("ArchDomain", "GuestDomain"),
    // domain
    ("DomainOs", "Os"),
    ("DomainOsType", "OsType"),
    ("DomainOsFirmware", "OsFirmware"),
    ("DomainOsLoader", "OsLoader"),
    ("DomainOsNvram", "OsNvram"),
    ("Osbootdev", "OsBoot"),
    ("DomainOsBootmenu", "OsBootMenu"),
    ("DomainOsInitenv", "OsInitEnv"),
    ("OsNvramSource", "DiskSource"),
    ("DomainIothreadids", "IothreadIds"),
    ("DomainDefaultiothread", "DefaultIothread"),
    ("Respartition", "Resource"),
    ("Featurestate", "FeatureState"),
    ("Tcgfeatures", "TcgFeatures"),
    ("Qemucmdline", "QemuCommandline"),
    ("Qemucapabilities", "QemuCapabilities"),
    ("Qemudeprecation", "QemuDeprecation"),
    ("Qemuoverride", "QemuOverride"),
    ("Qemuoverrideproperty", "QemuOverrideProperty"),
    ("Lxcsharens", "LxcNamespace"),
    ("Bhyvecmdline", "BhyveCommandline"),
    ("Xencmdline", "XenCommandline"),
    ("Qemucdev", "CharDevice"),
    ("QemucdevTgtDef", "CharDeviceTarget"),
    ("QemucdevSerialTgtModel", "CharDeviceTargetModel"),
    ("Redirdev", "RedirDev"),
    ("Redirfilter", "RedirFilter"),
    ("Memorydev", "MemoryDevice"),
    ("Memballoon", "MemBalloon"),
    ("Usbmaster", "UsbMaster"),
    ("Usbdevfilter", "UsbDevFilter"),
    ("Initiatorinfo", "Initiator"),
    ("Schedparam", "SchedParam"),
    ("Mousemode", "GraphicsMouse"),
    ("ListenElements", "GraphicsListen"),
    ("FilterrefNodeAttributes", "FilterRef"),
    ("DevSeclabel", "DeviceSeclabel"),
    ("Pciaddress", "PciAddress"),
    ("Zpciaddress", "ZpciAddress"),
    ("Keycipher", "KeyCipher"),
    ("Keyivgen", "KeyIvgen"),
    ("Audiocommonchild", "AudioSettings"),
    ("Sourceinfoadapter", "SourceAdapter"),
    ("DiskAlias", "Alias"),
    ("DiskBackingStore", "BackingStore"),
    ("DiskSourceNetworkHost", "SourceHost"),
    ("DiskSourceNetworkProtocolHttpCookies", "DiskSourceCookies"),
    ("DiskSourceNetworkProtocolSslVerify", "DiskSourceSsl"),
    ("DiskSourceNetworkNfs", "DiskSourceIdentity"),
    // snapshots, checkpoints
    ("Disksnapshot", "SnapshotDisk"),
    ("DisksnapshotSource", "SnapshotDiskSource"),
    ("Disksnapshotdriver", "SnapshotDiskDriver"),
    ("Diskcheckpoint", "CheckpointDisk"),
    // node devices
    ("Capability", "DeviceCapability"),
    ("CapabilityCapability", "DeviceSubCapability"),
    ("Capccwaddress", "CcwAddress"),
    ("Parent", "NodeDeviceParent"),
    // host interfaces
    ("Startmode", "HostInterfaceStart"),
    ("BondElement", "HostInterfaceBond"),
    ("VlanDevice", "HostInterfaceVlan"),
    ("DhcpElement", "HostInterfaceDhcp"),
    // storage
    ("Sourceinfohost", "PoolSourceHost"),
    ("Sourceinfoauth", "PoolSourceAuth"),
    ("Sourceinfoauthsecret", "PoolSourceAuthSecret"),
    ("Devextents", "FreeExtent"),
    ("Refresh", "PoolRefresh"),
    ("Source", "VolumeSource"),
    ("Target", "VolumeTarget"),
    ("Format", "VolumeFormat"),
    ("Sourcedev", "VolumeSourceDevice"),
    // network ports
    ("Owner", "NetworkPortOwner"),
    ("Mac", "NetworkPortMac"),
    ("Rxfilters", "NetworkPortRxFilters"),
    ("Plug", "NetworkPortPlug"),
];

/// Defines whose values are kept as strings although the schema types them as numbers.
const STRING_DEFINES: &[&str] = &["octalMode"];

/// How a typed value is held.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Vt {
    /// `String`.
    Str,
    /// `f64`.
    Float,
    /// An integer type (`u8`…`i64`); `hex`: C-style `0x…` (and octal) forms are accepted.
    Int {
        /// The Rust type.
        ty: &'static str,
        /// Accepts `0x…`.
        hex: bool,
    },
    /// A generated enum (index in [`Model::enums`]).
    Enum(usize),
}

/// A generated enum.
#[derive(Debug, Clone)]
pub struct EnumDef {
    /// Rust name.
    pub name: String,
    /// The literals, in schema order.
    pub values: Vec<String>,
    /// A catch-all variant's payload type, when the schema also allows free values.
    pub other: Option<Vt>,
    /// Where it comes from (for docs).
    pub origin: String,
}

/// How a child element is held in its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildKind {
    /// A struct type (index in [`Model::structs`]).
    Struct(usize),
    /// A text-only element held as its value.
    Leaf(Vt),
    /// An empty element held as a flag.
    Flag,
}

/// A field of a struct.
#[derive(Debug, Clone)]
pub struct Field {
    /// Rust field name.
    pub rust: String,
    /// XML name (namespace URI, local name); attributes have no namespace.
    pub xml: Qn,
    /// What it holds.
    pub kind: FieldKind,
}

/// What a field holds.
#[derive(Debug, Clone)]
pub enum FieldKind {
    /// An attribute.
    Attr(Vt),
    /// A child element, repeated or not; `boxed` breaks a type cycle.
    Child {
        /// Held how.
        kind: ChildKind,
        /// Vec.
        multi: bool,
        /// Boxed (recursive).
        boxed: bool,
    },
}

/// A generated struct.
#[derive(Debug, Clone)]
pub struct StructDef {
    /// Rust name.
    pub name: String,
    /// The module it is emitted in.
    pub module: &'static str,
    /// Attribute fields, then child fields (slots), in schema order.
    pub attrs: Vec<Field>,
    /// Child fields; their index is their slot.
    pub children: Vec<Field>,
    /// Text content.
    pub text: Option<Vt>,
    /// Free-form child elements (`anyName`), held as XML.
    pub any: bool,
    /// Element names and schema places, for docs.
    pub origin: String,
}

/// A document root.
#[derive(Debug, Clone)]
pub struct DocRoot {
    /// The spec.
    pub spec: DocSpec,
    /// The root element names and their struct.
    pub roots: Vec<(Qn, usize)>,
}

/// The whole model.
#[derive(Debug)]
pub struct Model {
    /// Structs, in emission order.
    pub structs: Vec<StructDef>,
    /// Enums.
    pub enums: Vec<EnumDef>,
    /// Documents.
    pub docs: Vec<DocRoot>,
    /// Namespaces typed elements live in: (URI, prefix).
    pub namespaces: Vec<(String, String)>,
}

// ---------------------------------------------------------------------------------------------
// Content walking

#[derive(Debug, Default, Clone)]
struct Content {
    /// Attribute local name → value patterns.
    attrs: Vec<(String, Vec<P>)>,
    /// Child name → element patterns, may-repeat.
    children: Vec<(Qn, Vec<P>, bool)>,
    any_children: bool,
    texts: Vec<P>,
    /// Some instance's content can be without text.
    text_optional: bool,
}

impl Content {
    fn attr(&mut self, name: &str, body: P) {
        if let Some(a) = self.attrs.iter_mut().find(|a| a.0 == name) {
            if !a.1.contains(&body) {
                a.1.push(body);
            }
        } else {
            self.attrs.push((name.to_owned(), vec![body]));
        }
    }
    fn child(&mut self, qn: &Qn, e: P) {
        if let Some(c) = self.children.iter_mut().find(|c| &c.0 == qn) {
            if !c.1.contains(&e) {
                c.1.push(e);
            }
        } else {
            self.children.push((qn.clone(), vec![e], false));
        }
    }
}

#[derive(Default)]
struct Occ {
    count: BTreeMap<Qn, u8>,
    text_required: bool,
}

struct Walker<'a> {
    s: &'a mut Schema,
    c: Content,
    active: Vec<(G, String)>,
}

impl Walker<'_> {
    fn walk(&mut self, p: P) -> Result<Occ, String> {
        let mut occ = Occ::default();
        match self.s.pats[p].clone() {
            Pat::Empty | Pat::NotAllowed => {}
            Pat::Text | Pat::Data { .. } | Pat::Value { .. } => {
                if !self.c.texts.contains(&p) {
                    self.c.texts.push(p);
                }
                occ.text_required = true;
            }
            Pat::Element { name, .. } => {
                if self.s.allowed(p) {
                    match name {
                        NameClass::Name { ns, local } => {
                            let qn = (ns, local);
                            self.c.child(&qn, p);
                            occ.count.insert(qn, 1);
                        }
                        NameClass::Any => self.c.any_children = true,
                    }
                }
            }
            Pat::Attribute { name, body } => {
                if self.s.allowed(p) {
                    match name {
                        NameClass::Name { ns, local } => {
                            if !ns.is_empty() {
                                return Err(format!("namespaced attribute {ns} {local}"));
                            }
                            self.c.attr(&local, body);
                        }
                        NameClass::Any => return Err("anyName attribute in a typed element".into()),
                    }
                }
            }
            Pat::Group(ps) | Pat::Interleave(ps) => {
                if ps.iter().all(|&q| self.s.allowed(q)) {
                    for q in ps {
                        let o = self.walk(q)?;
                        for (k, v) in o.count {
                            let e = occ.count.entry(k).or_insert(0);
                            *e = (*e + v).min(2);
                        }
                        occ.text_required |= o.text_required;
                    }
                }
            }
            Pat::Choice(ps) => {
                let mut all_text = true;
                let mut any = false;
                for q in ps {
                    if !self.s.allowed(q) {
                        continue;
                    }
                    any = true;
                    let o = self.walk(q)?;
                    for (k, v) in o.count {
                        let e = occ.count.entry(k).or_insert(0);
                        *e = (*e).max(v);
                    }
                    all_text &= o.text_required;
                }
                occ.text_required = any && all_text;
            }
            Pat::Optional(q) => {
                if self.s.allowed(q) {
                    occ = self.walk(q)?;
                    occ.text_required = false;
                }
            }
            Pat::ZeroOrMore(q) | Pat::OneOrMore(q) => {
                let zero = matches!(self.s.pats[p], Pat::ZeroOrMore(_));
                if self.s.allowed(q) {
                    occ = self.walk(q)?;
                    for v in occ.count.values_mut() {
                        *v = 2;
                    }
                    if zero {
                        occ.text_required = false;
                    }
                }
            }
            // A define kept as a string (octal modes) is text here, not its datatype.
            Pat::Ref { ref name, .. } if STRING_DEFINES.contains(&name.as_str()) => {
                if !self.c.texts.contains(&p) {
                    self.c.texts.push(p);
                }
                occ.text_required = true;
            }
            Pat::Ref { grammar, name } => {
                let key = (grammar, name.clone());
                if !self.active.contains(&key) {
                    self.active.push(key);
                    let q = self.s.resolve(grammar, &name)?;
                    occ = self.walk(q)?;
                    self.active.pop();
                }
            }
        }
        Ok(occ)
    }
}

fn content_of(s: &mut Schema, elems: &[P]) -> Result<Content, String> {
    let mut w = Walker {
        s,
        c: Content::default(),
        active: Vec::new(),
    };
    let mut multi: BTreeSet<Qn> = BTreeSet::new();
    for &e in elems {
        let Pat::Element { body, .. } = w.s.pats[e] else {
            return Err("not an element".into());
        };
        let o = w.walk(body)?;
        for (k, v) in o.count {
            if v > 1 {
                multi.insert(k);
            }
        }
        if !o.text_required {
            w.c.text_optional = true;
        }
    }
    let mut c = w.c;
    for ch in &mut c.children {
        ch.2 = multi.contains(&ch.0);
    }
    Ok(c)
}

// ---------------------------------------------------------------------------------------------
// Value types

#[derive(Debug, Clone)]
enum Atom {
    Lit(String),
    Int(i128, i128),
    HexStr,
    Float,
    Str,
}

/// The literals and data types a value pattern allows, and the define it is named by when it
/// is exactly one define.
fn atoms(s: &Schema, p: P, out: &mut Vec<Atom>, depth: usize) -> Result<(), String> {
    if depth > 64 {
        return Err("value pattern too deep".into());
    }
    match &s.pats[p] {
        Pat::Value { text } => out.push(Atom::Lit(text.clone())),
        Pat::Empty => out.push(Atom::Lit(String::new())),
        Pat::Data { ty, params } => out.push(data_atom(ty, params)),
        Pat::Choice(ps) => {
            for &q in ps {
                atoms(s, q, out, depth + 1)?;
            }
        }
        Pat::Ref { grammar, name } if !STRING_DEFINES.contains(&name.as_str()) => {
            atoms(s, s.resolve(*grammar, name)?, out, depth + 1)?;
        }
        Pat::NotAllowed => {}
        // Text, a define kept as a string (octal file modes, which a decimal number would
        // misread), groups and the like in a value position: free text.
        _ => out.push(Atom::Str),
    }
    Ok(())
}

fn data_atom(ty: &str, params: &[(String, String)]) -> Atom {
    let (mut lo, mut hi): (i128, i128) = match ty {
        "unsignedInt" => (0, u32::MAX.into()),
        "unsignedLong" | "nonNegativeInteger" => (0, u64::MAX.into()),
        "unsignedShort" => (0, u16::MAX.into()),
        "unsignedByte" => (0, u8::MAX.into()),
        "int" => (i32::MIN.into(), i32::MAX.into()),
        "short" => (i16::MIN.into(), i16::MAX.into()),
        "byte" => (i8::MIN.into(), i8::MAX.into()),
        // xsd:integer is unbounded; libvirt reads it into a long long.
        "long" | "integer" => (i64::MIN.into(), i64::MAX.into()),
        "positiveInteger" => (1, u64::MAX.into()),
        "double" | "float" | "decimal" => return Atom::Float,
        "string" => {
            let pattern = params
                .iter()
                .find(|(n, _)| n == "pattern")
                .map_or("", |(_, v)| v.as_str());
            return pattern_atom(pattern);
        }
        _ => return Atom::Str,
    };
    for (n, v) in params {
        if let Ok(x) = v.trim().parse::<i128>() {
            match n.as_str() {
                "minInclusive" => lo = lo.max(x),
                "maxInclusive" => hi = hi.min(x),
                _ => {}
            }
        }
    }
    Atom::Int(lo, hi)
}

/// A string pattern that spells a number: decimal digits (`[0-9]{1,2}`) are a number; hex
/// digits, with or without `0x` (`(0x)?[0-7]`, `0x[0-9a-fA-F]{1,4}`), are a number only beside
/// a numeric alternative (see [`shape`]): alone they are identifiers written in hex, which a
/// decimal rewrite would break.
fn pattern_atom(pattern: &str) -> Atom {
    let (hex_prefix, mut rest) = if let Some(r) = pattern.strip_prefix("(0x)?") {
        (true, r)
    } else if let Some(r) = pattern.strip_prefix("0x") {
        (true, r)
    } else {
        (false, pattern)
    };
    let mut digits: u32 = 0;
    let mut letters = false;
    while !rest.is_empty() {
        let Some(body) = rest.strip_prefix('[') else {
            return Atom::Str;
        };
        let Some(close) = body.find(']') else {
            return Atom::Str;
        };
        let class = &body[..close];
        if class.is_empty() || !class.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return Atom::Str;
        }
        letters |= class.chars().any(|c| c.is_ascii_alphabetic());
        rest = &body[close + 1..];
        let (n, after) = if let Some(r) = rest.strip_prefix('+').or_else(|| rest.strip_prefix('*'))
        {
            (19, r)
        } else if let Some(r) = rest.strip_prefix('?') {
            (1, r)
        } else if let Some(q) = rest.strip_prefix('{') {
            let Some(end) = q.find('}') else {
                return Atom::Str;
            };
            let Some(n) = q[..end]
                .rsplit(',')
                .next()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                return Atom::Str;
            };
            (n, &q[end + 1..])
        } else {
            (1, rest)
        };
        digits += n;
        rest = after;
    }
    if digits == 0 || digits > 19 {
        return Atom::Str;
    }
    if hex_prefix || letters {
        Atom::HexStr
    } else {
        Atom::Int(0, 10i128.pow(digits) - 1)
    }
}

fn int_type(lo: i128, hi: i128) -> &'static str {
    if lo >= 0 {
        if hi <= u8::MAX.into() {
            "u8"
        } else if hi <= u16::MAX.into() {
            "u16"
        } else if hi <= u32::MAX.into() {
            "u32"
        } else {
            "u64"
        }
    } else if lo >= i8::MIN.into() && hi <= i8::MAX.into() {
        "i8"
    } else if lo >= i16::MIN.into() && hi <= i16::MAX.into() {
        "i16"
    } else if lo >= i32::MIN.into() && hi <= i32::MAX.into() {
        "i32"
    } else {
        "i64"
    }
}

/// What a list of atoms resolves to, before enums get names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Shape {
    Plain(Vt),
    Enum {
        values: Vec<String>,
        other: Option<Vt>,
    },
}

fn shape(atoms: &[Atom]) -> Shape {
    let mut lits: Vec<String> = Vec::new();
    let (mut str_, mut float, mut hex) = (false, false, false);
    let mut range: Option<(i128, i128)> = None;
    for a in atoms {
        match a {
            Atom::Lit(l) => {
                if !lits.contains(l) {
                    lits.push(l.clone());
                }
            }
            Atom::Str => str_ = true,
            Atom::Float => float = true,
            Atom::HexStr => hex = true,
            Atom::Int(lo, hi) => {
                range = Some(match range {
                    None => (*lo, *hi),
                    Some((a, b)) => (a.min(*lo), b.max(*hi)),
                });
            }
        }
    }
    // A hex pattern alone (wwn, hexuint) is a string of unbounded width.
    if hex && range.is_none() && !float {
        str_ = true;
    }
    let num = if str_ {
        None
    } else if float {
        Some(Vt::Float)
    } else {
        range.map(|(lo, hi)| Vt::Int {
            ty: int_type(lo, hi),
            hex,
        })
    };
    let other = if str_ { Some(Vt::Str) } else { num };
    if lits.is_empty() {
        return Shape::Plain(other.unwrap_or(Vt::Str));
    }
    // Numeric literals beside a numeric type are just numbers (`-1` widens the range).
    match &other {
        Some(Vt::Float) if lits.iter().all(|l| l.trim().parse::<f64>().is_ok()) => {
            return Shape::Plain(Vt::Float);
        }
        Some(Vt::Int { hex, .. }) if lits.iter().all(|l| l.trim().parse::<i128>().is_ok()) => {
            let (mut lo, mut hi) = range.expect("an integer type has a range");
            for l in &lits {
                let x: i128 = l.trim().parse().expect("checked");
                lo = lo.min(x);
                hi = hi.max(x);
            }
            return Shape::Plain(Vt::Int {
                ty: int_type(lo, hi),
                hex: *hex,
            });
        }
        _ => {}
    }
    Shape::Enum {
        values: lits,
        other,
    }
}

// ---------------------------------------------------------------------------------------------
// Types

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum BodyKey {
    Define(Src),
    Node(Src),
}

type Key = Vec<BodyKey>;

#[derive(Debug, Default)]
struct TypeState {
    instances: Vec<P>,
    /// Child name → child type key, from the last processing.
    edges: Vec<(Qn, Key)>,
    content: Content,
}

fn body_key(s: &Schema, e: P) -> BodyKey {
    let Pat::Element { body, src, .. } = &s.pats[e] else {
        unreachable!("body_key of a non-element")
    };
    if let Pat::Ref { grammar, name } = &s.pats[*body] {
        if let Some(d) = s.define_src(*grammar, name) {
            return BodyKey::Define(d);
        }
    }
    BodyKey::Node(*src)
}

fn key_of(s: &Schema, elems: &[P]) -> Key {
    let mut k: Key = elems.iter().map(|&e| body_key(s, e)).collect();
    k.sort();
    k.dedup();
    k
}

/// Builds the model from the schemas in `s`'s directory.
#[allow(clippy::too_many_lines)]
pub fn build(s: &mut Schema) -> Result<Model, String> {
    let mut types: BTreeMap<Key, TypeState> = BTreeMap::new();
    let mut queue: VecDeque<Key> = VecDeque::new();
    let mut doc_roots: Vec<(DocSpec, Vec<(Qn, Key)>)> = Vec::new();

    let add =
        |types: &mut BTreeMap<Key, TypeState>, queue: &mut VecDeque<Key>, k: &Key, elems: &[P]| {
            let t = types.entry(k.clone()).or_default();
            let mut grew = false;
            for &e in elems {
                if !t.instances.contains(&e) {
                    t.instances.push(e);
                    grew = true;
                }
            }
            if grew && !queue.contains(k) {
                queue.push_back(k.clone());
            }
        };

    for spec in DOCS {
        let g = s.load(spec.file)?;
        let start = s.resolve(g, crate::rng::START)?;
        let mut w = Walker {
            s,
            c: Content::default(),
            active: Vec::new(),
        };
        w.walk(start)?;
        let c = w.c;
        let mut roots = Vec::new();
        for (qn, elems, _) in &c.children {
            let k = key_of(s, elems);
            add(&mut types, &mut queue, &k, elems);
            roots.push((qn.clone(), k));
        }
        doc_roots.push((*spec, roots));
    }

    while let Some(k) = queue.pop_front() {
        let elems = types[&k].instances.clone();
        let content = content_of(s, &elems)?;
        let mut edges = Vec::new();
        for (qn, celems, _) in &content.children {
            let ck = key_of(s, celems);
            add(&mut types, &mut queue, &ck, celems);
            edges.push((qn.clone(), ck));
        }
        let t = types.get_mut(&k).expect("present");
        t.edges = edges;
        t.content = content;
    }

    // A merged type that adds nothing to one of its members is that member: a snapshot's
    // `<domain>` (the full domain, or one holding only `<uuid>`) is the `Domain`.
    let mut redirect: BTreeMap<Key, Key> = BTreeMap::new();
    for k in types.keys() {
        if k.len() < 2 {
            continue;
        }
        for b in k {
            let single = vec![b.clone()];
            if types.contains_key(&single) && subsumed(s, &types, k, &single, &mut Vec::new())? {
                redirect.insert(k.clone(), single);
                break;
            }
        }
    }
    for t in types.values_mut() {
        for (_, ck) in &mut t.edges {
            if let Some(to) = redirect.get(ck) {
                *ck = to.clone();
            }
        }
    }
    for (_, roots) in &mut doc_roots {
        for (_, k) in roots {
            if let Some(to) = redirect.get(k) {
                *k = to.clone();
            }
        }
    }

    // Reachable types, breadth-first from the documents in order: this order names them.
    let mut order: Vec<Key> = Vec::new();
    let mut module_of: HashMap<Key, &'static str> = HashMap::new();
    let mut parent_of: HashMap<Key, (Key, Qn)> = HashMap::new();
    {
        let mut seen: BTreeSet<Key> = BTreeSet::new();
        for (spec, roots) in &doc_roots {
            let mut q: VecDeque<Key> = VecDeque::new();
            for (_, k) in roots {
                if seen.insert(k.clone()) {
                    q.push_back(k.clone());
                    module_of.insert(k.clone(), spec.module);
                }
            }
            while let Some(k) = q.pop_front() {
                order.push(k.clone());
                for (qn, ck) in &types[&k].edges {
                    if seen.insert(ck.clone()) {
                        module_of.insert(ck.clone(), spec.module);
                        parent_of.insert(ck.clone(), (k.clone(), qn.clone()));
                        q.push_back(ck.clone());
                    }
                }
            }
        }
    }

    // Value shapes of every type (leaf/flag/struct decided here).
    let mut kinds: HashMap<Key, TypeKindTmp> = HashMap::new();
    for k in &order {
        let c = &types[k].content;
        let text = if c.texts.is_empty() {
            None
        } else {
            let mut a = Vec::new();
            for &t in &c.texts {
                atoms(s, t, &mut a, 0)?;
            }
            Some(shape(&a))
        };
        let structural = !c.attrs.is_empty() || !c.children.is_empty() || c.any_children;
        let kind = match (&text, structural) {
            (None, false) => TypeKindTmp::Flag,
            (Some(Shape::Plain(Vt::Str)), false) => TypeKindTmp::Leaf(text.clone().expect("some")),
            (Some(sh), false) if !c.text_optional => TypeKindTmp::Leaf(sh.clone()),
            _ => TypeKindTmp::Struct,
        };
        kinds.insert(k.clone(), kind);
    }

    // Struct names.
    let renames: HashMap<&str, &str> = RENAMES.iter().copied().collect();
    let mut names: HashMap<Key, String> = HashMap::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for (spec, roots) in &doc_roots {
        if let Some((_, k)) = roots.first() {
            if !names.contains_key(k) {
                names.insert(k.clone(), spec.rust.to_owned());
                taken.insert(spec.rust.to_owned());
            }
        }
    }
    let define_names = define_names_of_elements(s);
    for k in &order {
        if names.contains_key(k) || !matches!(kinds[k], TypeKindTmp::Struct) {
            continue;
        }
        let mut candidates: Vec<String> = Vec::new();
        // The define every element of the type refers to (`scaledInteger`), then the define
        // an element is the whole body of (`disk`), then the place (`DiskSource`).
        if let [BodyKey::Define(d)] = k.as_slice() {
            if let Some(dn) = define_name_at(s, *d) {
                let n = renames
                    .get(dn.as_str())
                    .map_or_else(|| pascal(&dn), |r| (*r).to_owned());
                candidates.push(n);
            }
        }
        // A define names a merged type only when every element of it is that define's.
        let defs: BTreeSet<Option<&String>> = types[k]
            .instances
            .iter()
            .map(|e| define_names.get(e))
            .collect();
        if let [Some(d)] = defs.into_iter().collect::<Vec<_>>().as_slice() {
            let n = renames
                .get(d.as_str())
                .map_or_else(|| pascal(d), |r| (*r).to_owned());
            candidates.push(n);
        }
        let ctx = parent_of.get(k).map(|(pk, qn)| {
            let parent = names.get(pk).cloned().unwrap_or_default();
            format!("{parent}{}", pascal(&qn.1))
        });
        if let Some(c) = &ctx {
            candidates.push(c.clone());
        }
        let finally = |n: &str| {
            FINAL_NAMES
                .iter()
                .find(|(from, _)| *from == n)
                .map_or_else(|| n.to_owned(), |(_, to)| (*to).to_owned())
        };
        let chosen = candidates
            .iter()
            .map(|c| finally(c))
            .find(|c| !taken.contains(c));
        let name = chosen.unwrap_or_else(|| {
            let base = ctx
                .or_else(|| candidates.first().cloned())
                .unwrap_or_else(|| "Element".into());
            (2..=u32::MAX)
                .map(|i| format!("{base}{i}"))
                .find(|n| !taken.contains(n))
                .expect("fewer types than u32::MAX")
        });
        taken.insert(name.clone());
        names.insert(k.clone(), name);
    }

    // Struct indices.
    let struct_keys: Vec<Key> = order
        .iter()
        .filter(|k| matches!(kinds[*k], TypeKindTmp::Struct))
        .cloned()
        .collect();
    let index: HashMap<Key, usize> = struct_keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.clone(), i))
        .collect();

    // Cycles: a child is boxed when it can reach its parent.
    let reach = reachability(&struct_keys, &types, &index);

    let mut enums = Enums {
        taken: names.values().cloned().collect(),
        ..Enums::default()
    };
    let mut structs = Vec::new();
    let mut namespaces: Vec<(String, String)> = Vec::new();
    for (si, k) in struct_keys.iter().enumerate() {
        let t = &types[k];
        let name = names[k].clone();
        let mut attrs = Vec::new();
        let mut used: BTreeSet<String> = BTreeSet::new();
        // Children first claim their names; attributes that clash take `_attr`.
        let mut child_names = Vec::new();
        for (qn, _, multi) in &t.content.children {
            let parent_ns = t
                .instances
                .first()
                .and_then(|&e| match &s.pats[e] {
                    Pat::Element {
                        name: NameClass::Name { ns, .. },
                        ..
                    } => Some(ns.as_str()),
                    _ => None,
                })
                .unwrap_or("");
            let base = field_base(qn, parent_ns);
            let mut n = if *multi { plural(&base) } else { base.clone() };
            if used.contains(&n) {
                n = format!("{base}_list");
            }
            used.insert(n.clone());
            child_names.push(n);
        }
        if t.content.any_children {
            used.insert("elements".into());
        }
        for (an, bodies) in &t.content.attrs {
            let mut a = Vec::new();
            let mut define = None::<String>;
            let mut one_define = true;
            for &b in bodies {
                atoms(s, b, &mut a, 0)?;
                let d = match &s.pats[b] {
                    Pat::Ref { name, .. } => Some(name.clone()),
                    _ => None,
                };
                match (&define, d) {
                    (_, None) => one_define = false,
                    (None, Some(d)) => define = Some(d),
                    (Some(x), Some(d)) => one_define &= *x == d,
                }
            }
            let sh = shape(&a);
            let ctx = format!("{name}{}", pascal(an));
            let dn = if one_define { define } else { None };
            let vt = enums.resolve(
                &sh,
                dn.as_deref(),
                &ctx,
                &renames,
                &format!("`{an}` of {name}"),
            );
            let mut rust = snake(an);
            if used.contains(&rust) {
                rust = format!("{rust}_attr");
            }
            used.insert(rust.clone());
            attrs.push(Field {
                rust: ident(&rust),
                xml: (String::new(), an.clone()),
                kind: FieldKind::Attr(vt),
            });
        }
        let mut children = Vec::new();
        for ((qn, _, multi), rust) in t.content.children.iter().zip(child_names) {
            let ck = t
                .edges
                .iter()
                .find(|(q, _)| q == qn)
                .map(|(_, ck)| ck.clone())
                .ok_or("edge missing")?;
            if !qn.0.is_empty() && !namespaces.iter().any(|(u, _)| *u == qn.0) {
                namespaces.push((qn.0.clone(), ns_prefix(&qn.0)));
            }
            let kind = match &kinds[&ck] {
                TypeKindTmp::Struct => ChildKind::Struct(index[&ck]),
                TypeKindTmp::Flag if *multi => {
                    return Err(format!(
                        "{name}: repeated empty element <{}> (no flag type for it)",
                        qn.1
                    ));
                }
                TypeKindTmp::Flag => ChildKind::Flag,
                TypeKindTmp::Leaf(sh) => {
                    let ctx = names
                        .get(&ck)
                        .cloned()
                        .unwrap_or_else(|| format!("{name}{}", pascal(&qn.1)));
                    let dn = leaf_define(s, &types[&ck]);
                    ChildKind::Leaf(enums.resolve(
                        sh,
                        dn.as_deref(),
                        &ctx,
                        &renames,
                        &format!("`<{}>` of {name}", qn.1),
                    ))
                }
            };
            let boxed = match kind {
                ChildKind::Struct(ci) => reach[ci].contains(&si),
                _ => false,
            };
            children.push(Field {
                rust: ident(&rust),
                xml: qn.clone(),
                kind: FieldKind::Child {
                    kind,
                    multi: *multi,
                    boxed: boxed && !*multi,
                },
            });
        }
        let text = match &t.content.texts {
            v if v.is_empty() => None,
            v => {
                let mut a = Vec::new();
                for &x in v {
                    atoms(s, x, &mut a, 0)?;
                }
                let sh = shape(&a);
                Some(enums.resolve(
                    &sh,
                    None,
                    &format!("{name}Value"),
                    &renames,
                    &format!("the text of {name}"),
                ))
            }
        };
        let origin = origin_of(s, &t.instances);
        structs.push(StructDef {
            name,
            module: module_of[k],
            attrs,
            children,
            text,
            any: t.content.any_children,
            origin,
        });
    }

    let docs = doc_roots
        .into_iter()
        .map(|(spec, roots)| DocRoot {
            spec,
            roots: roots.into_iter().map(|(qn, k)| (qn, index[&k])).collect(),
        })
        .collect();
    Ok(Model {
        structs,
        enums: enums.list,
        docs,
        namespaces,
    })
}

fn shape_of(s: &Schema, pats: &[P]) -> Result<Option<Shape>, String> {
    if pats.is_empty() {
        return Ok(None);
    }
    let mut a = Vec::new();
    for &p in pats {
        atoms(s, p, &mut a, 0)?;
    }
    Ok(Some(shape(&a)))
}

/// Whether everything type `t` can hold, type `u` holds the same way.
fn subsumed(
    s: &Schema,
    types: &BTreeMap<Key, TypeState>,
    t: &Key,
    u: &Key,
    visiting: &mut Vec<(Key, Key)>,
) -> Result<bool, String> {
    if t == u || visiting.iter().any(|(a, b)| a == t && b == u) {
        return Ok(true);
    }
    let (Some(tt), Some(ut)) = (types.get(t), types.get(u)) else {
        return Ok(false);
    };
    let (tc, uc) = (&tt.content, &ut.content);
    if tc.any_children && !uc.any_children {
        return Ok(false);
    }
    if !tc.texts.is_empty() && shape_of(s, &tc.texts)? != shape_of(s, &uc.texts)? {
        return Ok(false);
    }
    for (name, pats) in &tc.attrs {
        let Some((_, upats)) = uc.attrs.iter().find(|(n, _)| n == name) else {
            return Ok(false);
        };
        if shape_of(s, pats)? != shape_of(s, upats)? {
            return Ok(false);
        }
    }
    visiting.push((t.clone(), u.clone()));
    for (qn, _, multi) in &tc.children {
        let Some((_, _, umulti)) = uc.children.iter().find(|(q, _, _)| q == qn) else {
            return Ok(false);
        };
        if *multi && !*umulti {
            return Ok(false);
        }
        let tk = tt.edges.iter().find(|(q, _)| q == qn).map(|(_, k)| k);
        let uk = ut.edges.iter().find(|(q, _)| q == qn).map(|(_, k)| k);
        match (tk, uk) {
            (Some(a), Some(b)) => {
                if !subsumed(s, types, a, b, visiting)? {
                    return Ok(false);
                }
            }
            _ => return Ok(false),
        }
    }
    visiting.pop();
    Ok(true)
}

#[derive(Debug, Clone)]
enum TypeKindTmp {
    Struct,
    Leaf(Shape),
    Flag,
}

/// For a leaf type reached through a single define (`<element name="x"><ref name="d"/>`), that
/// define's name (to name an enum after it).
fn leaf_define(s: &Schema, t: &TypeState) -> Option<String> {
    let mut name = None;
    for &e in &t.instances {
        let Pat::Element { body, .. } = &s.pats[e] else {
            return None;
        };
        let Pat::Ref { name: d, .. } = &s.pats[*body] else {
            return None;
        };
        match &name {
            None => name = Some(d.clone()),
            Some(x) if x == d => {}
            Some(_) => return None,
        }
    }
    name
}

#[derive(Default)]
struct Enums {
    list: Vec<EnumDef>,
    /// Names of structs (enums must not reuse them).
    taken: BTreeSet<String>,
    by_shape: HashMap<(Shape, String), usize>,
}

impl Enums {
    fn resolve(
        &mut self,
        sh: &Shape,
        define: Option<&str>,
        ctx: &str,
        renames: &HashMap<&str, &str>,
        origin: &str,
    ) -> Vt {
        let Shape::Enum { values, other } = sh else {
            let Shape::Plain(v) = sh else { unreachable!() };
            return v.clone();
        };
        // Named after the define when the whole value is one define: one enum per define.
        let name = define.map_or_else(
            || ctx.to_owned(),
            |d| {
                renames
                    .get(d)
                    .map_or_else(|| pascal(d), |r| (*r).to_owned())
            },
        );
        let key = (sh.clone(), name.clone());
        if let Some(&i) = self.by_shape.get(&key) {
            return Vt::Enum(i);
        }
        let free = |n: &str| !self.taken.contains(n) && !self.list.iter().any(|e| e.name == n);
        // A struct of the same name is the element of the same name (`<model>` beside
        // `@model`): the enum is the attribute's kind.
        let mut unique = if free(&name) {
            name.clone()
        } else {
            format!("{name}Kind")
        };
        let mut n = 2;
        while !free(&unique) {
            unique = format!("{name}{n}");
            n += 1;
        }
        self.list.push(EnumDef {
            name: unique,
            values: values.clone(),
            other: other.clone(),
            origin: origin.to_owned(),
        });
        let i = self.list.len() - 1;
        self.by_shape.insert(key, i);
        Vt::Enum(i)
    }
}

fn reachability(
    keys: &[Key],
    types: &BTreeMap<Key, TypeState>,
    index: &HashMap<Key, usize>,
) -> Vec<BTreeSet<usize>> {
    let edges: Vec<Vec<usize>> = keys
        .iter()
        .map(|k| {
            types[k]
                .edges
                .iter()
                .filter_map(|(_, ck)| index.get(ck).copied())
                .collect()
        })
        .collect();
    (0..keys.len())
        .map(|i| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![i];
            while let Some(x) = stack.pop() {
                for &y in &edges[x] {
                    if seen.insert(y) {
                        stack.push(y);
                    }
                }
            }
            seen
        })
        .collect()
}

/// Element pattern → the define whose whole body it is.
fn define_names_of_elements(s: &Schema) -> HashMap<P, String> {
    let mut out = HashMap::new();
    for ((_, name), p) in s.all_defines() {
        if name == crate::rng::START {
            continue;
        }
        let mut q = p;
        // Look through optional/zeroOrMore wrappers.
        while let Pat::Optional(x) | Pat::ZeroOrMore(x) | Pat::OneOrMore(x) = &s.pats[q] {
            q = *x;
        }
        if matches!(s.pats[q], Pat::Element { .. }) {
            out.entry(q).or_insert(name);
        }
    }
    out
}

fn define_name_at(s: &Schema, at: Src) -> Option<String> {
    for gr in &s.grammars {
        for (n, src) in &gr.define_src {
            if *src == at {
                return Some(n.clone());
            }
        }
    }
    None
}

fn origin_of(s: &Schema, elems: &[P]) -> String {
    let mut places: Vec<String> = Vec::new();
    for &e in elems {
        if let Pat::Element { src, .. } = &s.pats[e] {
            let p = format!("{}:{}", s.file_name(*src), s.line(*src));
            if !places.contains(&p) {
                places.push(p);
            }
        }
    }
    places.join(", ")
}

// ---------------------------------------------------------------------------------------------
// Names

/// `diskSourceFile` → `DiskSourceFile`, `virtio-net` → `VirtioNet`, `UUID` → `Uuid`.
pub fn pascal(s: &str) -> String {
    let mut out = String::new();
    for word in words(s) {
        let mut cs = word.chars();
        if let Some(c) = cs.next() {
            if out.chars().last().is_some_and(|l| l.is_ascii_digit()) && c.is_ascii_digit() {
                out.push('_');
            }
            out.extend(c.to_uppercase());
            out.push_str(&cs.as_str().to_lowercase());
        }
    }
    out
}

/// `startupPolicy` → `startup_policy`.
pub fn snake(s: &str) -> String {
    words(s)
        .into_iter()
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join("_")
}

/// Splits on non-alphanumerics and camel-case humps (`UUID` stays one word, `macTableManager`
/// is three).
fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let hump = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        if hump && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A child's field name: prefixed by its namespace when that is not its parent's
/// (`domain.qemu_commandline`, but `commandline.args`).
fn field_base(qn: &Qn, parent_ns: &str) -> String {
    if qn.0.is_empty() || qn.0 == parent_ns {
        snake(&qn.1)
    } else {
        format!("{}_{}", ns_prefix(&qn.0), snake(&qn.1))
    }
}

/// The conventional prefix of a libvirt namespace: `…/domain/qemu/1.0` → `qemu`.
pub fn ns_prefix(uri: &str) -> String {
    let parts: Vec<&str> = uri.trim_end_matches('/').split('/').collect();
    parts
        .len()
        .checked_sub(2)
        .map_or_else(|| "ns".to_owned(), |i| parts[i].to_owned())
}

fn plural(s: &str) -> String {
    if s.ends_with("ss") || s.ends_with('x') || s.ends_with("ch") || s.ends_with("sh") {
        format!("{s}es")
    } else if s.ends_with("ics") {
        s.to_owned()
    } else if s.ends_with('s') {
        format!("{s}es")
    } else if let Some(stem) = s.strip_suffix('y') {
        if stem.ends_with(['a', 'e', 'i', 'o', 'u']) {
            format!("{s}s")
        } else {
            format!("{stem}ies")
        }
    } else {
        format!("{s}s")
    }
}

/// A Rust identifier for a field name (raw identifiers for keywords).
pub fn ident(s: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern",
        "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
        "pub", "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use",
        "where", "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv",
        "typeof", "unsized", "virtual", "yield", "try", "gen",
    ];
    let s = if s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("n{s}")
    } else {
        s.to_owned()
    };
    if matches!(s.as_str(), "self" | "super" | "crate" | "extra") {
        format!("{s}_")
    } else if KEYWORDS.contains(&s.as_str()) {
        format!("r#{s}")
    } else {
        s
    }
}
