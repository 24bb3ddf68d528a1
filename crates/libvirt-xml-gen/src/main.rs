//! `libvirt-xml-gen`: reads libvirt's RELAX NG schemas and writes libvirt-xml's generated model.
//!
//! ```text
//! libvirt-xml-gen SCHEMA_DIR OUT_DIR          # (re)write OUT_DIR/*.rs
//! libvirt-xml-gen --check SCHEMA_DIR OUT_DIR  # compare, byte for byte; exit 1 on a difference
//! libvirt-xml-gen --stats SCHEMA_DIR          # print what the model holds
//! ```

// A code generator over a schema's patterns: short names for patterns (p, q), grammars (g),
// schemas (s) and model (m) read better than long ones here.
#![allow(clippy::many_single_char_names)]

mod emit;
mod model;
mod rng;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("libvirt-xml-gen: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    let (mode, rest) = match args.first().map(String::as_str) {
        Some("--check") => ("check", &args[1..]),
        Some("--stats") => ("stats", &args[1..]),
        _ => ("write", args),
    };
    let schemas = PathBuf::from(
        rest.first()
            .ok_or("usage: libvirt-xml-gen [--check|--stats] SCHEMA_DIR [OUT_DIR]")?,
    );
    let mut s = rng::Schema::new(&schemas);
    let m = model::build(&mut s)?;
    if mode == "stats" {
        println!("structs {}, enums {}", m.structs.len(), m.enums.len());
        for st in &m.structs {
            println!("struct {} ({}) [{}]", st.name, st.module, st.origin);
            for f in st.attrs.iter().chain(&st.children) {
                println!("    {} {:?} {:?}", f.rust, f.xml, f.kind);
            }
            if let Some(t) = &st.text {
                println!("    text {t:?}");
            }
            if st.any {
                println!("    any");
            }
        }
        for e in &m.enums {
            println!(
                "enum {} {:?} other={:?} ({})",
                e.name, e.values, e.other, e.origin
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let out = PathBuf::from(rest.get(1).ok_or("missing OUT_DIR")?);
    let files = emit::emit(&m);
    if mode == "check" {
        let mut differ = Vec::new();
        for (name, text) in &files {
            let path = out.join(name);
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                differ.push(path.display().to_string());
            }
        }
        // Files that the generator no longer writes.
        differ.extend(stale(&out, &files).iter().map(|p| p.display().to_string()));
        if differ.is_empty() {
            println!("libvirt-xml-gen: {} files up to date", files.len());
            return Ok(ExitCode::SUCCESS);
        }
        for d in differ {
            println!("differs: {d}");
        }
        return Ok(ExitCode::FAILURE);
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    for path in stale(&out, &files) {
        std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    for (name, text) in &files {
        std::fs::write(out.join(name), text).map_err(|e| format!("{name}: {e}"))?;
    }
    println!(
        "libvirt-xml-gen: {} structs, {} enums in {} files",
        m.structs.len(),
        m.enums.len(),
        files.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `.rs` files in `out` the generator no longer writes.
fn stale(
    out: &std::path::Path,
    files: &std::collections::BTreeMap<String, String>,
) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "rs")
                && p.file_name()
                    .is_some_and(|n| !files.contains_key(n.to_string_lossy().as_ref()))
        })
        .collect()
}
