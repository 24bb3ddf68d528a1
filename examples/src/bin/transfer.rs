//! A 100 MiB volume round trip through the object API: generate a file, upload it into a new
//! volume with a progress bar, download the volume back, and compare SHA-256 digests.
//! `transfer URI POOL` (scratch files in the temporary directory).
use indicatif::ProgressBar;
use libvirt_remote::prelude::*;
use sha2::{Digest, Sha256};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, uri, pool] = &args[..] else {
        return Err("usage: transfer URI POOL".into());
    };
    let (size, dir) = (100u64 << 20, std::env::temp_dir());
    let (src, back) = (dir.join("transfer.src"), dir.join("transfer.back"));
    let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&src, &data)?;

    let conn = Connect::open(uri).await?;
    let pool = conn.lookup_storage_pool_by_name(pool).await?;
    let xml = libvirt_xml::StorageVolume::new("transfer.raw", size).to_xml();
    let vol = pool.create_volume_xml(&xml, Default::default()).await?;
    let bar = ProgressBar::new(size);
    let to = |b: ProgressBar| move |p: Progress| b.set_position(p.done);
    vol.upload_file(&src, to(bar.clone())).await?;
    vol.download_to_file(&back, to(bar.clone())).await?;
    bar.finish_and_clear();
    vol.delete(Default::default()).await?;

    let hex = |b: &[u8]| format!("{:x}", Sha256::digest(b));
    let (sent, got) = (hex(&data), hex(&std::fs::read(&back)?));
    std::fs::remove_file(&src).and(std::fs::remove_file(&back))?;
    println!("sent {size} bytes sha256 {sent}\nread {size} bytes sha256 {got}");
    Ok((sent == got).then_some(()).ok_or("the digests differ")?)
}
