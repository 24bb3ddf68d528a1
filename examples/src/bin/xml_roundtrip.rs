//! Round-trip checker for libvirt XML documents: parses each file by its root element with
//! `libvirt-xml`, writes the re-serialized document to `DIR/<i>.xml` (`i`: the path's 0-based
//! position), prints `PATH ok` or `PATH error: …` per path and a summary line.
//!
//! ```text
//! xml_roundtrip --out DIR --list FILE     # FILE: one path per line
//! xml_roundtrip --out DIR PATH…
//! ```
//!
//! `untyped` counts the elements and attributes that landed in an untyped store rather than
//! a typed field (what the schema itself leaves free-form, such as `<metadata>`'s children,
//! is held as XML and not counted).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use libvirt_xml::{AnyDocument, ParseOptions};

#[derive(Parser)]
#[command(about = "Parse libvirt XML documents with libvirt-xml and write them back")]
struct Args {
    /// Directory for the re-serialized documents (`<i>.xml`).
    #[arg(long)]
    out: PathBuf,
    /// A file listing the documents, one path per line.
    #[arg(long)]
    list: Option<PathBuf>,
    /// Documents (after those of --list).
    paths: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Some(list) = &args.list {
        match std::fs::read_to_string(list) {
            Ok(text) => paths.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(PathBuf::from),
            ),
            Err(e) => {
                eprintln!("xml_roundtrip: {}: {e}", list.display());
                return ExitCode::from(2);
            }
        }
    }
    paths.extend(args.paths);
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("xml_roundtrip: {}: {e}", args.out.display());
        return ExitCode::from(2);
    }
    let (mut parsed, mut errors, mut untyped) = (0usize, 0usize, 0usize);
    for (i, path) in paths.iter().enumerate() {
        let result = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                AnyDocument::from_xml_with(&text, &ParseOptions::default())
                    .map_err(|e| e.to_string())
            })
            .and_then(|p| {
                std::fs::write(args.out.join(format!("{i}.xml")), p.document.to_xml())
                    .map_err(|e| e.to_string())
                    .map(|()| p.untyped)
            });
        match result {
            Ok(u) => {
                parsed += 1;
                untyped += u;
                println!("{} ok", path.display());
            }
            Err(e) => {
                errors += 1;
                println!("{} error: {e}", path.display());
            }
        }
    }
    println!(
        "files {}, parsed {parsed}, errors {errors}, untyped {untyped}",
        paths.len()
    );
    if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
