//! Storage commands: pool-list, pool-info, vol-list, vol-info, vol-create-as, vol-delete,
//! vol-upload, vol-download.

use std::fmt::Write as _;
use std::path::PathBuf;

use examples::progress_bar;
use libvirt_rpc::Client;
use libvirt_rpc::client::{DownloadOptions, UploadOptions};
use libvirt_rpc::proto::procs::common::ListAllArgs;
use libvirt_rpc::proto::procs::storage::{
    ConnectListAllStoragePools, ConnectListAllStoragePoolsFlags, StoragePoolArgs,
    StoragePoolGetAutostart, StoragePoolGetInfo, StoragePoolGetInfoRet, StoragePoolIsActive,
    StoragePoolIsPersistent, StoragePoolListAllVolumes, StoragePoolListAllVolumesArgs,
    StorageVolArgs, StorageVolCreateXml, StorageVolCreateXmlArgs, StorageVolDelete,
    StorageVolFlagsArgs, StorageVolGetInfo, StorageVolGetInfoRet, StorageVolGetPath,
};
use libvirt_rpc::proto::types::{StoragePool, StorageVol};
use libvirt_rpc::proto::{StoragePoolState, StorageVolType};

use crate::table::{Table, field, pretty_size, yes_no};
use crate::{R, err, lookup, text, xml_escape};

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
    fn name(&self) -> &str {
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

pub async fn run(c: &Client, cmd: Cmd) -> R {
    match cmd {
        Cmd::PoolList { all, inactive } => pool_list(c, all, inactive).await,
        Cmd::PoolInfo { pool, bytes } => pool_info(c, &pool, bytes).await,
        Cmd::VolList { pool, details } => vol_list(c, pool.name(), details).await,
        Cmd::VolInfo { vol, pool, bytes } => {
            let v = lookup::vol(c, pool.as_deref(), &vol).await?;
            let info = vol_info(c, &v).await?;
            print!("{}", field("Name:", &v.name));
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
            let mut xml = format!(
                "<volume>\n  <name>{}</name>\n  <capacity>{capacity}</capacity>\n",
                xml_escape(&name)
            );
            if let Some(a) = allocation {
                let _ = writeln!(xml, "  <allocation>{}</allocation>", parse_size(&a)?);
            }
            if let Some(f) = format {
                let _ = writeln!(
                    xml,
                    "  <target>\n    <format type='{}'/>\n  </target>",
                    xml_escape(&f)
                );
            }
            xml += "</volume>\n";
            c.call::<StorageVolCreateXml>(&StorageVolCreateXmlArgs {
                pool: p,
                xml: xml.into(),
                flags: Default::default(),
            })
            .await
            .map_err(|e| format!("Failed to create vol {name}\nerror: {}", crate::msg(&e)))?;
            crate::say!("Vol {name} created\n");
            Ok(())
        }
        Cmd::VolDelete { vol, pool } => {
            let v = lookup::vol(c, pool.as_deref(), &vol).await?;
            c.call::<StorageVolDelete>(&StorageVolFlagsArgs {
                vol: v,
                flags: Default::default(),
            })
            .await
            .map_err(|e| format!("Failed to delete vol {vol}\nerror: {}", crate::msg(&e)))?;
            crate::say!("Vol {vol} deleted\n");
            Ok(())
        }
        Cmd::VolUpload(t) => upload(c, &t).await,
        Cmd::VolDownload(t) => download(c, &t).await,
    }
}

impl Transfer {
    /// A progress bar for `total` bytes (or `--length`, if smaller) labelled `what`.
    fn bar(&self, total: u64, what: &str) -> indicatif::ProgressBar {
        let n = if self.length > 0 {
            self.length.min(total)
        } else {
            total
        };
        progress_bar(n, what)
    }
}

async fn upload(c: &Client, t: &Transfer) -> R {
    let v = lookup::vol(c, t.pool.as_deref(), &t.vol).await?;
    let len = std::fs::metadata(&t.file)
        .map_err(|e| format!("{}: {e}", t.file.display()))?
        .len();
    let pb = t.bar(len, "upload");
    let pb2 = pb.clone();
    let up = c
        .vol_upload(
            &v,
            UploadOptions::new()
                .offset(t.offset)
                .length(t.length)
                .sparse(t.sparse),
        )
        .await
        .map_err(text)?
        .with_progress(move |p| pb2.set_position(p.done));
    up.send_file_and_finish(&t.file).await.map_err(text)?;
    pb.finish_and_clear();
    Ok(())
}

async fn download(c: &Client, t: &Transfer) -> R {
    let v = lookup::vol(c, t.pool.as_deref(), &t.vol).await?;
    let cap = vol_info(c, &v).await?.capacity.saturating_sub(t.offset);
    let pb = t.bar(cap, "download");
    let pb2 = pb.clone();
    let dl = c
        .vol_download(
            &v,
            DownloadOptions::new()
                .offset(t.offset)
                .length(t.length)
                .sparse(t.sparse),
        )
        .await
        .map_err(text)?
        .with_progress(move |p| pb2.set_position(p.done));
    dl.write_to_file(&t.file).await.map_err(text)?;
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
    let unit = unit.to_ascii_lowercase();
    let (base, letter) = match unit.as_str() {
        "" | "b" | "byte" | "bytes" => (1024u64, ""),
        u if u.len() == 1 => (1024, u),
        u if u.len() == 3 && u.ends_with("ib") => (1024, &u[..1]),
        u if u.len() == 2 && u.ends_with('b') => (1000, &u[..1]),
        _ => return Err(format!("Malformed size {s}")),
    };
    let power = match letter {
        "" => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        "e" => 6,
        _ => return Err(format!("Malformed size {s}")),
    };
    n.checked_mul(base.pow(power))
        .ok_or_else(|| format!("Size {s} is out of range"))
}

async fn pools(c: &Client, flags: u32) -> R<Vec<StoragePool>> {
    let mut pools = c
        .call::<ConnectListAllStoragePools>(&ListAllArgs {
            need_results: 1,
            flags: flags.into(),
        })
        .await
        .map_err(err)?
        .pools;
    pools.sort_by_key(|p| p.name.to_string().to_lowercase());
    Ok(pools)
}

async fn pool_get_info(c: &Client, pool: &StoragePool) -> R<StoragePoolGetInfoRet> {
    c.call::<StoragePoolGetInfo>(&StoragePoolArgs { pool: pool.clone() })
        .await
        .map_err(err)
}

/// The pool's autostart flag as virsh prints it (`no autostart` when unreadable).
async fn pool_autostart(c: &Client, pool: &StoragePool) -> &'static str {
    match c
        .call::<StoragePoolGetAutostart>(&StoragePoolArgs { pool: pool.clone() })
        .await
    {
        Ok(a) => yes_no(a.autostart != 0),
        Err(_) => "no autostart",
    }
}

async fn pool_list(c: &Client, all: bool, inactive: bool) -> R {
    let flags = match (all, inactive) {
        (true, _) => 0,
        (false, true) => ConnectListAllStoragePoolsFlags::INACTIVE.bits(),
        (false, false) => ConnectListAllStoragePoolsFlags::ACTIVE.bits(),
    };
    let mut t = Table::new(&["Name", "State", "Autostart"]);
    for p in pools(c, flags).await? {
        let active = c
            .call::<StoragePoolIsActive>(&StoragePoolArgs { pool: p.clone() })
            .await
            .map_err(err)?
            .active;
        let state = if active != 0 { "active" } else { "inactive" };
        let auto = pool_autostart(c, &p).await;
        t.row(vec![p.name.to_string(), state.into(), auto.into()]);
    }
    print!("{}", t.render());
    Ok(())
}

async fn pool_info(c: &Client, name: &str, bytes: bool) -> R {
    let p = lookup::pool(c, name).await?;
    let info = pool_get_info(c, &p).await?;
    let mut out = field("Name:", &p.name);
    out += &field("UUID:", p.uuid);
    out += &field("State:", pool_state_name(info.state));
    let persistent = c
        .call::<StoragePoolIsPersistent>(&StoragePoolArgs { pool: p.clone() })
        .await;
    out += &field(
        "Persistent:",
        persistent.map_or("unknown", |r| yes_no(r.persistent != 0)),
    );
    out += &field("Autostart:", pool_autostart(c, &p).await);
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

async fn volumes(c: &Client, pool: StoragePool) -> R<Vec<StorageVol>> {
    let mut vols = c
        .call::<StoragePoolListAllVolumes>(&StoragePoolListAllVolumesArgs {
            pool,
            need_results: 1,
            flags: Default::default(),
        })
        .await
        .map_err(err)?
        .vols;
    vols.sort_by_key(|v| v.name.to_string());
    Ok(vols)
}

async fn vol_info(c: &Client, vol: &StorageVol) -> R<StorageVolGetInfoRet> {
    c.call::<StorageVolGetInfo>(&StorageVolArgs { vol: vol.clone() })
        .await
        .map_err(err)
}

async fn vol_path(c: &Client, vol: &StorageVol) -> R<String> {
    Ok(
        c.call::<StorageVolGetPath>(&StorageVolArgs { vol: vol.clone() })
            .await
            .map_err(err)?
            .name
            .to_string(),
    )
}

async fn vol_list(c: &Client, pool: &str, details: bool) -> R {
    let p = lookup::pool(c, pool).await?;
    let mut t = if details {
        Table::new(&["Name", "Path", "Type", "Capacity", "Allocation"])
    } else {
        Table::new(&["Name", "Path"])
    };
    for v in volumes(c, p).await? {
        let path = vol_path(c, &v).await?;
        let mut row = vec![v.name.to_string(), path];
        if details {
            let info = vol_info(c, &v).await?;
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
