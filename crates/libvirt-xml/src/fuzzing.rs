//! Test support (feature `fuzzing`; not for applications): the round-trip check shared by
//! the `xml_parse` fuzz target and the corpus tests, and the schema check shared by the tests
//! of what this crate and its users build.

use std::fmt::Write;

use crate::{AnyDocument, ParseOptions};

/// Compares two XML texts as trees, the way the round trip promises them equal: element
/// names and namespaces, attributes (order aside; namespace declarations aside), text (its
/// surrounding whitespace aside; whitespace-only text ignored), comments and processing
/// instructions, children in order. Both are read by an independent parser (roxmltree).
pub fn same_tree(a: &str, b: &str) -> Result<(), String> {
    let opt = || roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let da =
        roxmltree::Document::parse_with_options(a, opt()).map_err(|e| format!("first: {e}"))?;
    let db =
        roxmltree::Document::parse_with_options(b, opt()).map_err(|e| format!("second: {e}"))?;
    same_node(da.root(), db.root(), &mut String::new())
}

fn significant<'a, 'i>(n: roxmltree::Node<'a, 'i>) -> Vec<roxmltree::Node<'a, 'i>> {
    n.children()
        .filter(|c| !(c.is_text() && c.text().is_some_and(|t| t.trim().is_empty())))
        .collect()
}

fn same_node(
    a: roxmltree::Node<'_, '_>,
    b: roxmltree::Node<'_, '_>,
    path: &mut String,
) -> Result<(), String> {
    let at = |what: &str| format!("{path}: {what}");
    if a.node_type() != b.node_type() {
        return Err(at(&format!("{:?} vs {:?}", a.node_type(), b.node_type())));
    }
    match a.node_type() {
        roxmltree::NodeType::Text => {
            let (x, y) = (a.text().unwrap_or("").trim(), b.text().unwrap_or("").trim());
            if x != y {
                return Err(at(&format!("text {x:?} vs {y:?}")));
            }
            return Ok(());
        }
        roxmltree::NodeType::Comment => {
            if a.text() != b.text() {
                return Err(at(&format!("comment {:?} vs {:?}", a.text(), b.text())));
            }
            return Ok(());
        }
        roxmltree::NodeType::PI => {
            if a.pi() != b.pi() {
                return Err(at(&format!(
                    "processing instruction {:?} vs {:?}",
                    a.pi(),
                    b.pi()
                )));
            }
            return Ok(());
        }
        roxmltree::NodeType::Element => {
            if a.tag_name() != b.tag_name() {
                return Err(at(&format!(
                    "element {:?} vs {:?}",
                    a.tag_name(),
                    b.tag_name()
                )));
            }
            let key = |n: &roxmltree::Node<'_, '_>| {
                let mut v: Vec<(Option<String>, String, String)> = n
                    .attributes()
                    .map(|x| {
                        (
                            x.namespace().map(str::to_owned),
                            x.name().to_owned(),
                            x.value().to_owned(),
                        )
                    })
                    .collect();
                v.sort();
                v
            };
            let (ka, kb) = (key(&a), key(&b));
            if ka != kb {
                return Err(at(&format!("attributes {ka:?} vs {kb:?}")));
            }
        }
        roxmltree::NodeType::Root => {}
    }
    let (ca, cb) = (significant(a), significant(b));
    if ca.len() != cb.len() {
        let names = |v: &[roxmltree::Node<'_, '_>]| {
            v.iter()
                .map(|n| {
                    if n.is_element() {
                        n.tag_name().name().to_owned()
                    } else {
                        format!("{:?}", n.node_type())
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        return Err(at(&format!(
            "children [{}] vs [{}]",
            names(&ca),
            names(&cb)
        )));
    }
    for (i, (x, y)) in ca.iter().zip(&cb).enumerate() {
        let len = path.len();
        path.push('/');
        path.push_str(if x.is_element() {
            x.tag_name().name()
        } else {
            "node()"
        });
        let _ = write!(path, "[{}]", i + 1);
        same_node(*x, *y, path)?;
        path.truncate(len);
    }
    Ok(())
}

/// The `xml_parse` check: any input either fails with a typed error or parses (strictly, or
/// leniently when strict parsing rejected a value); what parses
/// serializes to a document that parses again to an equal value, whose serialization is the
/// same text (a fixpoint), and — when an independent parser accepts the input — to a tree
/// equal to the input's. Panics on a violation (that is what the fuzzer catches).
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Lenient parsing differs from strict only where a value is rejected: it runs then.
    let strict = ParseOptions::default();
    let opts = match AnyDocument::from_xml_with(text, &strict) {
        Ok(parsed) => {
            round_trip(text, parsed, &strict);
            return;
        }
        Err(e) if e.is_invalid_value() => ParseOptions::lenient(),
        Err(_) => return,
    };
    // (Lenient parsing reads on and may still meet a syntax error later.)
    if let Ok(parsed) = AnyDocument::from_xml_with(text, &opts) {
        round_trip(text, parsed, &opts);
    }
}

fn round_trip(text: &str, parsed: crate::Parsed<AnyDocument>, opts: &ParseOptions) {
    let doc = parsed.document;
    let out = doc.to_xml();
    let again = AnyDocument::from_xml_with(&out, opts)
        .unwrap_or_else(|e| panic!("output does not parse: {e}\ninput: {text:?}\noutput: {out:?}"));
    let out2 = again.document.to_xml();
    assert_eq!(out, out2, "not a fixpoint\ninput: {text:?}");
    assert_eq!(
        parsed.untyped, again.untyped,
        "untyped count changed\ninput: {text:?}"
    );
    if roxmltree::Document::parse_with_options(
        text,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..roxmltree::ParsingOptions::default()
        },
    )
    .is_ok()
    {
        if let Err(e) = same_tree(text, &out) {
            panic!("round trip changed the tree: {e}\ninput: {text:?}\noutput: {out:?}");
        }
    }
}

/// Validates `xml` with `xmllint --relaxng` against libvirt's schema `schema` (`domain.rng`,
/// `storagevol.rng`, …), from the source package (`$LIBVIRT_SOURCE_DIR/src/conf/schemas`,
/// as `scripts/test` sets it) or else the installed one (`/usr/share/libvirt/schemas`).
/// `None` when neither xmllint nor the schemas are there, unless
/// `LIBVIRT_XML_CORPUS_REQUIRED` is set (CI), where that panics.
pub fn schema_check(xml: &str, schema: &str) -> Option<Result<(), String>> {
    use std::path::PathBuf;
    use std::process::Command;
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let from_source = std::env::var_os("LIBVIRT_SOURCE_DIR")
        .map(|d| PathBuf::from(d).join("src/conf/schemas"))
        .filter(|d| d.is_dir());
    let installed = PathBuf::from("/usr/share/libvirt/schemas");
    let dir = from_source.or_else(|| installed.is_dir().then_some(installed));
    let xmllint = Command::new("xmllint").arg("--version").output().is_ok();
    let Some(dir) = dir.filter(|_| xmllint) else {
        assert!(
            std::env::var_os("LIBVIRT_XML_CORPUS_REQUIRED").is_none(),
            "xmllint or libvirt's schemas missing"
        );
        return None;
    };
    let tmp = std::env::temp_dir().join(format!(
        "libvirt-xml-schema-{}-{}.xml",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    if let Err(e) = std::fs::write(&tmp, xml) {
        return Some(Err(format!("{}: {e}", tmp.display())));
    }
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--relaxng")
        .arg(dir.join(schema))
        .arg(&tmp)
        .output();
    let _ = std::fs::remove_file(&tmp);
    Some(match out {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "{schema} rejects:\n{xml}\n{}",
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Err(format!("xmllint: {e}")),
    })
}

/// [`schema_check`], panicking on a rejection (a skipped check prints why).
pub fn assert_schema_valid(xml: &str, schema: &str) {
    match schema_check(xml, schema) {
        Some(Ok(())) => {}
        Some(Err(e)) => panic!("{e}"),
        None => eprintln!("schema check skipped: no xmllint or libvirt schemas"),
    }
}
