//! libvirt-xml's costs: parse, write and the round trip of one domain document (the fuzz
//! seed written for this crate, a 4.5 KiB guest with devices, metadata and a namespace), and
//! parse + write of libvirt's whole accepted test corpus (3,148 documents, as the side-by-side
//! `xml_etree` run measures against Python's `ElementTree`) when `scripts/libvirt-source` can
//! provide it.
//!
//! `cargo bench -p benches --bench xml`
#![allow(
    missing_docs,
    reason = "criterion_group! generates an undocumented pub fn"
)]

use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use libvirt_xml::{AnyDocument, Domain};

const DOMAIN: &str = include_str!("../../fuzz/corpus/xml_parse/domain-kvm.xml");

/// libvirt's accepted corpus, preloaded (None without the source package).
fn corpus() -> Option<Vec<String>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/libvirt-source");
    let run = |args: &[&str]| -> Option<String> {
        let out = Command::new(script).args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let src = PathBuf::from(run(&[])?);
    let list = std::fs::read_to_string(run(&["--accepted"])?).ok()?;
    list.lines()
        .map(|p| std::fs::read_to_string(src.join(p)).ok())
        .collect()
}

fn domain(c: &mut Criterion) {
    let mut g = c.benchmark_group("xml/domain");
    g.throughput(Throughput::Bytes(DOMAIN.len() as u64));
    g.bench_function("parse", |b| {
        b.iter(|| Domain::from_xml(black_box(DOMAIN)).unwrap());
    });
    let doc = Domain::from_xml(DOMAIN).unwrap();
    g.bench_function("write", |b| b.iter(|| black_box(&doc).to_xml()));
    g.bench_function("round_trip", |b| {
        b.iter(|| Domain::from_xml(black_box(DOMAIN)).unwrap().to_xml());
    });
    g.finish();
}

fn whole_corpus(c: &mut Criterion) {
    let Some(docs) = corpus() else {
        eprintln!("xml/corpus skipped: no libvirt source package (scripts/libvirt-source)");
        return;
    };
    let bytes: usize = docs.iter().map(String::len).sum();
    let mut g = c.benchmark_group("xml/corpus");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10);
    g.bench_function("parse_and_write_3148", |b| {
        b.iter(|| {
            for d in &docs {
                black_box(AnyDocument::from_xml(d).unwrap().to_xml());
            }
        });
    });
    g.finish();
}

criterion_group!(benches, domain, whole_corpus);
criterion_main!(benches);
