//! A volume round trip through the object API: generate a file, upload it into a new volume
//! with a progress bar, download the volume back, and compare SHA-256 digests.
//! `transfer URI POOL [MIB]` (default 100 MiB; scratch files in the temporary directory).
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [uri, pool, rest @ ..] = &args[..] else {
        return Err("usage: transfer URI POOL [MIB]".into());
    };
    let size = rest.first().map_or(Ok(100), |m| m.parse::<u64>())? << 20;
    let (src, back) = (
        std::env::temp_dir().join("transfer.src"),
        std::env::temp_dir().join("transfer.back"),
    );
    std::fs::write(
        &src,
        (0..size)
            .map(|i| (i.wrapping_mul(0x9E37_79B9) >> 24) as u8)
            .collect::<Vec<_>>(),
    )?;

    let pool = Connect::open(uri)
        .await?
        .lookup_storage_pool_by_name(pool)
        .await?;
    let xml = format!(
        "<volume><name>transfer.raw</name><capacity unit='bytes'>{size}</capacity></volume>"
    );
    let vol = pool.create_volume_xml(&xml, Default::default()).await?;
    let bar = ProgressBar::new(size).with_message("upload");
    let b = bar.clone();
    let up = vol
        .upload(UploadOptions::new().delete_on_failure(true))
        .await?;
    up.with_progress(move |p| b.set_position(p.done))
        .send_file_and_finish(&src)
        .await?;
    bar.reset();
    bar.set_message("download");
    let b = bar.clone();
    let dl = vol.download(DownloadOptions::new()).await?.with_total(size);
    dl.with_progress(move |p| b.set_position(p.done))
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
