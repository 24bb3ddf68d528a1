//! A 100 MiB volume round trip through the object API: generate a file, upload it into a new
//! volume with a progress bar, download the volume back, and compare SHA-256 digests.
//! `transfer URI POOL` (scratch files in the temporary directory).
use indicatif::ProgressBar;
use libvirt_rpc::prelude::*;
use sha2::{Digest, Sha256};

fn sha256(path: &std::path::Path) -> std::io::Result<String> {
    let mut hash = Sha256::new();
    std::io::copy(&mut std::fs::File::open(path)?, &mut hash)?;
    Ok(format!("{:x}", hash.finalize()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, uri, pool] = &args[..] else {
        return Err("usage: transfer URI POOL".into());
    };
    let (size, dir) = (100u64 << 20, std::env::temp_dir());
    let (src, back) = (dir.join("transfer.src"), dir.join("transfer.back"));
    std::fs::write(
        &src,
        (0..size).map(|i| (i * 7 % 251) as u8).collect::<Vec<_>>(),
    )?;

    let pool = Connect::open(uri)
        .await?
        .lookup_storage_pool_by_name(pool)
        .await?;
    let xml = format!("<volume><name>transfer.raw</name><capacity>{size}</capacity></volume>");
    let vol = pool.create_volume_xml(&xml, Default::default()).await?;
    let bar = ProgressBar::new(size);
    let (b1, b2) = (bar.clone(), bar.clone());
    let up = vol
        .upload(UploadOptions::new().delete_on_failure(true))
        .await?;
    up.with_progress(move |p| b1.set_position(p.done))
        .send_file_and_finish(&src)
        .await?;
    let dl = vol.download(DownloadOptions::new()).await?.with_total(size);
    dl.with_progress(move |p| b2.set_position(p.done))
        .write_to_file(&back)
        .await?;
    bar.finish_and_clear();
    vol.delete(Default::default()).await?;

    let (sent, got) = (sha256(&src)?, sha256(&back)?);
    std::fs::remove_file(&src).and(std::fs::remove_file(&back))?;
    println!("sent {size} bytes sha256 {sent}\nread {size} bytes sha256 {got}");
    if sent != got {
        return Err("the digests differ".into());
    }
    Ok(())
}
