//! Storage commands: pool-list, pool-info, vol-list, vol-info, vol-create-as, vol-delete,
//! vol-upload, vol-download.

use std::path::PathBuf;

use examples::progress_bar;
use libvirt_remote::prelude::*;
use libvirt_remote::proto::names::{StoragePoolState, StorageVolType};
use libvirt_remote::proto::procs::storage::ConnectListAllStoragePoolsFlags;

use crate::table::{Table, field, pretty_size, yes_no};
use crate::{R, err, lookup, text};

/// A pool given positionally (virsh's way) or as `--pool`.
#[derive(clap::Args)]
pub struct PoolArg {
    /// Pool name or UUID.
    #[arg(value_name = "POOL", required_unless_present = "pool_opt")]
    pool: Option<String>,
    /// Pool name or UUID, as an option.
    #[arg(long = "pool", value_name = "POOL", conflicts_with = "pool")]
    pool_opt: Option<String>,
}

impl PoolArg {
    /// The pool, however it was given.
    pub fn name(&self) -> &str {
        self.pool
            .as_deref()
            .or(self.pool_opt.as_deref())
            .expect("clap requires one")
    }
}

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// List storage pools (active ones; --all adds the inactive).
    PoolList {
        /// Active and inactive pools.
        #[arg(long)]
        all: bool,
        /// Inactive pools only.
        #[arg(long)]
        inactive: bool,
    },
    /// Storage pool information.
    PoolInfo {
        /// Pool name or UUID.
        pool: String,
        /// Sizes in bytes.
        #[arg(long)]
        bytes: bool,
    },
    /// Volumes of a pool.
    VolList {
        #[command(flatten)]
        pool: PoolArg,
        /// Type, capacity and allocation too.
        #[arg(long)]
        details: bool,
    },
    /// Volume information.
    VolInfo {
        /// Volume name (with --pool), key or path.
        vol: String,
        /// Pool name or UUID.
        #[arg(long)]
        pool: Option<String>,
        /// Sizes in bytes.
        #[arg(long)]
        bytes: bool,
    },
    /// Create a volume from a name and sizes (suffixes k, M, G, T, KB, MiB, … as virsh).
    VolCreateAs {
        /// Pool name or UUID.
        pool: String,
        /// Volume name.
        name: String,
        /// Size (default unit: bytes).
        capacity: String,
        /// Initial allocation (default: all of it).
        #[arg(long)]
        allocation: Option<String>,
        /// File format (raw, qcow2, …).
        #[arg(long)]
        format: Option<String>,
    },
    /// Delete a volume.
    VolDelete {
        /// Volume name (with --pool), key or path.
        vol: String,
        /// Pool name or UUID.
        #[arg(long)]
        pool: Option<String>,
    },
    /// Upload a file into a volume.
    VolUpload(Transfer),
    /// Download a volume into a file.
    VolDownload(Transfer),
}

/// vol-upload's and vol-download's arguments.
#[derive(clap::Args)]
pub struct Transfer {
    /// Volume name (with --pool), key or path.
    vol: String,
    /// Local file (uploads read a pipe such as /dev/stdin or a device to its end).
    file: PathBuf,
    /// Pool name or UUID.
    #[arg(long)]
    pool: Option<String>,
    /// Start at this byte of the volume.
    #[arg(long, default_value_t = 0)]
    offset: u64,
    /// At most this many bytes (0: to the end).
    #[arg(long, default_value_t = 0)]
    length: u64,
    /// Keep holes (SEEK_DATA/SEEK_HOLE) instead of sending zeros.
    #[arg(long)]
    sparse: bool,
}

impl Cmd {
    /// Transfers stream until the volume is through.
    pub fn long_running(&self) -> bool {
        matches!(self, Cmd::VolUpload(_) | Cmd::VolDownload(_))
    }
}

pub async fn run(c: &Connect, cmd: Cmd) -> R {
    match cmd {
        Cmd::PoolList { all, inactive } => pool_list(c, all, inactive).await,
        Cmd::PoolInfo { pool, bytes } => pool_info(c, &pool, bytes).await,
        Cmd::VolList { pool, details } => vol_list(c, pool.name(), details).await,
        Cmd::VolInfo { vol, pool, bytes } => {
            let v = lookup::vol(c, pool.as_deref(), &vol).await?;
            let info = v.info().await.map_err(err)?;
            print!("{}", field("Name:", v.name()));
            print!("{}", field("Type:", vol_type_name(info.kind)));
            print!("{}", field("Capacity:", size(info.capacity, bytes)));
            print!("{}", field("Allocation:", size(info.allocation, bytes)));
            Ok(())
        }
        Cmd::VolCreateAs {
            pool,
            name,
            capacity,
            allocation,
            format,
        } => {
            let p = lookup::pool(c, &pool).await?;
            let capacity = parse_size(&capacity)?;
            // virsh's document: name, capacity, and allocation and format when given
            // (libvirt allocates the whole capacity when no allocation is given).
            let mut vol = libvirt_xml::StorageVolume {
                name: Some(name.clone()),
                capacity: Some(libvirt_xml::ScaledInteger {
                    value: Some(capacity),
                    ..Default::default()
                }),
                ..Default::default()
            };
            if let Some(a) = allocation {
                vol.allocation = Some(libvirt_xml::ScaledInteger {
                    value: Some(parse_size(&a)?),
                    ..Default::default()
                });
            }
            if let Some(f) = format {
                let f = f.parse().map_err(|_| {
                    format!("Failed to create vol {name}\nerror: unknown volume format type {f}")
                })?;
                vol = vol.with_format(f);
            }
            let xml = vol.to_xml();
            p.create_volume_xml(&xml, Default::default())
                .await
                .map_err(|e| format!("Failed to create vol {name}\nerror: {}", crate::msg(&e)))?;
            crate::say!("Vol {name} created\n");
            Ok(())
        }
        Cmd::VolDelete { vol, pool } => {
            let v = lookup::vol(c, pool.as_deref(), &vol).await?;
            v.delete(Default::default())
                .await
                .map_err(|e| format!("Failed to delete vol {vol}\nerror: {}", crate::msg(&e)))?;
            crate::say!("Vol {vol} deleted\n");
            Ok(())
        }
        Cmd::VolUpload(t) => transfer(c, &t, true).await,
        Cmd::VolDownload(t) => transfer(c, &t, false).await,
    }
}

/// vol-upload (`up`) or vol-download, with a progress bar for the file's size (upload) or
/// the volume's capacity past `--offset` (download), or `--length` if smaller.
async fn transfer(c: &Connect, t: &Transfer, up: bool) -> R {
    let v = lookup::vol(c, t.pool.as_deref(), &t.vol).await?;
    let total = if up {
        std::fs::metadata(&t.file)
            .map_err(|e| format!("{}: {e}", t.file.display()))?
            .len()
    } else {
        v.info()
            .await
            .map_err(err)?
            .capacity
            .saturating_sub(t.offset)
    };
    let total = if t.length > 0 {
        t.length.min(total)
    } else {
        total
    };
    let pb = progress_bar(total, if up { "upload" } else { "download" });
    let pb2 = pb.clone();
    let progress = move |p: Progress| pb2.set_position(p.done);
    if up {
        let opts = UploadOptions::new()
            .offset(t.offset)
            .length(t.length)
            .sparse(t.sparse);
        let up = v.upload(opts).await.map_err(text)?.with_progress(progress);
        up.send_file_and_finish(&t.file).await.map_err(text)?;
    } else {
        let opts = DownloadOptions::new()
            .offset(t.offset)
            .length(t.length)
            .sparse(t.sparse);
        let dl = v
            .download(opts)
            .await
            .map_err(text)?
            .with_progress(progress);
        dl.write_to_file(&t.file).await.map_err(text)?;
    }
    pb.finish_and_clear();
    Ok(())
}

fn size(n: u64, bytes: bool) -> String {
    if bytes {
        format!("{n} bytes")
    } else {
        pretty_size(n)
    }
}

/// virsh's words for a volume type.
fn vol_type_name(t: StorageVolType) -> &'static str {
    match t {
        StorageVolType::FILE => "file",
        StorageVolType::BLOCK => "block",
        StorageVolType::DIR => "dir",
        StorageVolType::NETWORK => "network",
        StorageVolType::NETDIR => "netdir",
        StorageVolType::PLOOP => "ploop",
        _ => "unknown",
    }
}

/// virsh's words for a pool state.
fn pool_state_name(s: StoragePoolState) -> &'static str {
    match s {
        StoragePoolState::INACTIVE => "inactive",
        StoragePoolState::BUILDING => "building",
        StoragePoolState::RUNNING => "running",
        StoragePoolState::DEGRADED => "degraded",
        StoragePoolState::INACCESSIBLE => "inaccessible",
        _ => "unknown",
    }
}

/// A size as virsh's scaled integers read it: a number, then an optional unit (`b`, `k`/`KiB`
/// = 1024, `KB` = 1000, and so on up to `E`); no unit means bytes.
fn parse_size(s: &str) -> R<u64> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("Malformed size {s}"))?;
    // virsh's scale table is libvirt's (`virScaleInteger`): no unit is bytes.
    let scale = if unit.is_empty() {
        Some(1)
    } else {
        libvirt_xml::unit_bytes(unit)
    }
    .ok_or_else(|| format!("Malformed size {s}"))?;
    n.checked_mul(scale)
        .ok_or_else(|| format!("Size {s} is out of range"))
}

async fn pool_list(c: &Connect, all: bool, inactive: bool) -> R {
    let flags = match (all, inactive) {
        (true, _) => ConnectListAllStoragePoolsFlags::empty(),
        (false, true) => ConnectListAllStoragePoolsFlags::INACTIVE,
        (false, false) => ConnectListAllStoragePoolsFlags::ACTIVE,
    };
    let mut pools = c.list_all_storage_pools(flags).await.map_err(err)?;
    pools.sort_by_key(|p| p.name().to_string().to_lowercase());
    let mut t = Table::new(&["Name", "State", "Autostart"]);
    for p in pools {
        let active = p.is_active().await.map_err(err)?;
        let state = if active { "active" } else { "inactive" };
        let auto = pool_autostart(&p).await;
        t.row(vec![p.name().to_string(), state.into(), auto.into()]);
    }
    print!("{}", t.render());
    Ok(())
}

/// The pool's autostart flag as virsh prints it (`no autostart` when unreadable).
async fn pool_autostart(pool: &StoragePool) -> &'static str {
    pool.autostart().await.map_or("no autostart", yes_no)
}

async fn pool_info(c: &Connect, name: &str, bytes: bool) -> R {
    let p = lookup::pool(c, name).await?;
    let info = p.info().await.map_err(err)?;
    let mut out = field("Name:", p.name());
    out += &field("UUID:", p.uuid());
    out += &field("State:", pool_state_name(info.state));
    let persistent = p.is_persistent().await;
    out += &field("Persistent:", persistent.map_or("unknown", yes_no));
    out += &field("Autostart:", pool_autostart(&p).await);
    if matches!(
        info.state,
        StoragePoolState::RUNNING | StoragePoolState::DEGRADED
    ) {
        // virsh's pool-info --bytes prints bare numbers (vol-info --bytes adds "bytes").
        let size = |n: u64| if bytes { n.to_string() } else { pretty_size(n) };
        out += &field("Capacity:", size(info.capacity));
        out += &field("Allocation:", size(info.allocation));
        out += &field("Available:", size(info.available));
    }
    print!("{out}");
    Ok(())
}

async fn vol_list(c: &Connect, pool: &str, details: bool) -> R {
    let p = lookup::pool(c, pool).await?;
    let mut t = if details {
        Table::new(&["Name", "Path", "Type", "Capacity", "Allocation"])
    } else {
        Table::new(&["Name", "Path"])
    };
    let mut vols = p.list_all_volumes(Default::default()).await.map_err(err)?;
    vols.sort_by_key(|v| v.name().to_string());
    for v in vols {
        let mut row = vec![v.name().to_string(), v.path().await.map_err(err)?];
        if details {
            let info = v.info().await.map_err(err)?;
            row.push(vol_type_name(info.kind).into());
            row.push(pretty_size(info.capacity));
            row.push(pretty_size(info.allocation));
        }
        t.row(row);
    }
    print!("{}", t.render());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_like_virsh() {
        assert_eq!(parse_size("10M"), Ok(10 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("2KB"), Ok(2000));
        assert_eq!(parse_size("3MiB"), Ok(3 << 20));
        assert!(parse_size("x").is_err());
        assert!(parse_size("1Q").is_err());
        assert!(parse_size("99999999999E").is_err());
    }
}
