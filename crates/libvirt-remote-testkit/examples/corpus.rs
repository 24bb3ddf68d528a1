//! Writes fuzz corpus files (names are `<prefix>-<first 16 hex digits of the SHA-1>`, so a
//! rerun adds nothing that is there already; `cargo fuzz cmin` may prune them later).
//!
//! ```text
//! cargo run -p libvirt-remote-testkit --example corpus -- captures CAPTURES_DIR [FUZZ_DIR]
//! cargo run -p libvirt-remote-testkit --example corpus -- pack OUT_DIR INPUT_DIR...
//! ```
//!
//! `captures`: the `frame_decode` and `xdr_decode` seeds from the `*.decoded.txt` captures
//! (`libvirt_remote_testkit::fuzz::corpus`) into `FUZZ_DIR/corpus/<target>/` (default: this
//! repository's `fuzz/`). `pack`: many single-packet `xdr_decode` inputs (files of at most
//! 4 KiB) into few files of `OUT_DIR`, e.g. after `cargo fuzz cmin`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use libvirt_remote_testkit::fuzz::corpus;
use sha1::{Digest, Sha1};

#[derive(Parser)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Seeds from the captures.
    Captures {
        /// Directory of `*.decoded.txt` captures.
        captures: PathBuf,
        /// The fuzz directory (holding `corpus/`).
        fuzz_dir: Option<PathBuf>,
    },
    /// Pack single-packet `xdr_decode` inputs.
    Pack {
        /// Where the packed files go.
        out: PathBuf,
        /// Directories of inputs.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
}

fn name(prefix: &str, data: &[u8]) -> String {
    let digest = Sha1::digest(data);
    let hex = digest[..8].iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    });
    format!("{prefix}-{hex}")
}

/// The files of `dir`, sorted by name.
fn files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()?;
    paths.retain(|p| p.is_file());
    paths.sort();
    Ok(paths)
}

fn main() -> std::io::Result<()> {
    match Args::parse().command {
        Command::Captures { captures, fuzz_dir } => {
            let fuzz_dir = fuzz_dir
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz"));
            let mut texts = Vec::new();
            for path in files(&captures)? {
                if path.to_string_lossy().ends_with(".decoded.txt") {
                    texts.push(std::fs::read_to_string(path)?);
                }
            }
            let seeds = corpus::seeds_from_captures(&texts);
            for s in &seeds {
                let dir = fuzz_dir.join("corpus").join(s.target);
                std::fs::create_dir_all(&dir)?;
                std::fs::write(dir.join(name(s.prefix, &s.data)), &s.data)?;
            }
            println!("{} captures, {} seed files", texts.len(), seeds.len());
        }
        Command::Pack { out, inputs } => {
            let mut data = Vec::new();
            for dir in &inputs {
                for path in files(dir)? {
                    data.push(std::fs::read(path)?);
                }
            }
            let n = data.len();
            let packed = corpus::pack(data);
            std::fs::create_dir_all(&out)?;
            for f in &packed {
                std::fs::write(out.join(name("packed", f)), f)?;
            }
            println!("{n} inputs in {} files", packed.len());
        }
    }
    Ok(())
}
