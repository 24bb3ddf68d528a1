//! Side by side: libvirt-xml vs Python's C-accelerated `ElementTree` on libvirt's own test
//! corpus (the 3,148 documents its schemas accept; `scripts/libvirt-source --accepted`).
//! Both parse + serialize every file single-threaded with the files preloaded in memory;
//! rounds alternate (ours, then `ElementTree`'s, in a fresh `python3`), and each round's
//! throughput ratio is printed, then the min–max.
//!
//! ```text
//! cargo run --release -p benches --bin xml_etree -- [--rounds N] [--python PATH]
//! ```

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use clap::Parser;

#[derive(Parser)]
struct Args {
    /// Alternating rounds.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Passes over the corpus per round (the time of the round is their total).
    #[arg(long, default_value_t = 3)]
    passes: usize,
    /// The Python interpreter (Debian's by default).
    #[arg(long, default_value = "/usr/bin/python3")]
    python: String,
    /// The accepted list (default: `scripts/libvirt-source --accepted`).
    #[arg(long)]
    list: Option<PathBuf>,
}

fn script(args: &[&str]) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/libvirt-source");
    let out = Command::new(root)
        .args(args)
        .output()
        .expect("scripts/libvirt-source");
    assert!(out.status.success(), "scripts/libvirt-source failed");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

fn main() {
    let args = Args::parse();
    let src = PathBuf::from(script(&[]));
    let list = args
        .list
        .unwrap_or_else(|| PathBuf::from(script(&["--accepted"])));
    let paths: Vec<String> = std::fs::read_to_string(&list)
        .expect("list")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let docs: Vec<String> = paths
        .iter()
        .map(|p| std::fs::read_to_string(src.join(p)).expect("read"))
        .collect();
    let bytes: usize = docs.iter().map(String::len).sum();
    println!(
        "{} documents, {bytes} bytes; {} passes per round",
        docs.len(),
        args.passes
    );
    let etree = concat!(env!("CARGO_MANIFEST_DIR"), "/compare/xml_etree.py");
    let mut ratios = Vec::new();
    for round in 0..args.rounds {
        let t = Instant::now();
        let mut out_len = 0usize;
        for _ in 0..args.passes {
            for d in &docs {
                let doc = libvirt_xml::AnyDocument::from_xml(d).expect("parse");
                out_len += doc.to_xml().len();
            }
        }
        let ours = t.elapsed().as_secs_f64();
        std::hint::black_box(out_len);
        let out = Command::new(&args.python)
            .args([
                etree,
                list.to_str().expect("path"),
                src.to_str().expect("path"),
                &args.passes.to_string(),
            ])
            .output()
            .expect("python3");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs: f64 = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2)?.parse::<f64>().ok())
            .sum();
        #[allow(clippy::cast_precision_loss, reason = "a few MB")]
        let mb = (bytes * args.passes) as f64 / 1e6;
        let ratio = theirs / ours;
        ratios.push(ratio);
        println!(
            "round {round}: libvirt-xml {:.3} s ({:.1} MB/s), ElementTree {:.3} s ({:.1} MB/s), ratio {ratio:.2}x",
            ours,
            mb / ours,
            theirs,
            mb / theirs
        );
    }
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ratios.iter().copied().fold(0.0, f64::max);
    println!(
        "ratio (libvirt-xml throughput / ElementTree throughput): min {min:.2}x, max {max:.2}x"
    );
}
