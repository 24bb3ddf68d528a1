//! The source file, copies compared byte for byte, and stale work dirs.

use std::fs::{self, File};
use std::io::{self, Read as _, Write as _};
use std::path::Path;

use super::Res;

/// Whether two files hold the same bytes (read 4 MiB at a time).
pub(super) fn same_content(a: &Path, b: &Path) -> Res<bool> {
    let open = |p: &Path| File::open(p).map_err(|e| format!("{}: {e}", p.display()));
    let (mut fa, mut fb) = (open(a)?, open(b)?);
    if fa.metadata().map_err(|e| e.to_string())?.len()
        != fb.metadata().map_err(|e| e.to_string())?.len()
    {
        return Ok(false);
    }
    let (mut ba, mut bb) = (Vec::with_capacity(4 << 20), Vec::with_capacity(4 << 20));
    loop {
        let n = chunk(&mut fa, &mut ba).map_err(|e| e.to_string())?;
        let m = chunk(&mut fb, &mut bb).map_err(|e| e.to_string())?;
        if n != m || ba != bb {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// The next 4 MiB of `f` (fewer only at its end) into `buf`.
fn chunk(f: &mut File, buf: &mut Vec<u8>) -> io::Result<usize> {
    buf.clear();
    io::Read::by_ref(f).take(4 << 20).read_to_end(buf)
}

/// `mib` MiB of xorshift64* output: incompressible, no zero blocks, nothing sparse.
pub(super) fn write_random_file(path: &Path, mib: u64) -> Res<()> {
    let mut f = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut buf = vec![0u8; 1 << 20];
    for _ in 0..mib {
        for chunk in buf.chunks_exact_mut(8) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            chunk.copy_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        f.write_all(&buf).map_err(|e| e.to_string())?;
    }
    f.sync_all().map_err(|e| e.to_string())
}

/// Remove `lv-compare-*` dirs in `dir` whose owner (pid in `owner`) is gone.
pub(super) fn reap_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with("lv-compare-") {
            continue;
        }
        let owner = fs::read_to_string(e.path().join("owner")).unwrap_or_default();
        if let Ok(pid) = owner.trim().parse::<u32>()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            eprintln!("removing stale {}", e.path().display());
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_content_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        write_random_file(&a, 5).unwrap();
        fs::copy(&a, &b).unwrap();
        assert!(same_content(&a, &b).unwrap());
        let mut bytes = fs::read(&b).unwrap();
        bytes[(4 << 20) + 7] ^= 1;
        fs::write(&b, bytes).unwrap();
        assert!(!same_content(&a, &b).unwrap());
    }
}
