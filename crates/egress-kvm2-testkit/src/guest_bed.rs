//! The real egress guest's surroundings, shared by egress-kvm2's `tests/guest.rs` and the
//! controller example's real-guest test (`examples/egress-controller/tests/kvm.rs`): a daemon
//! and a mirror serving the guest image, and a `kvm2` entry for it.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use serde_json::{Value, json};
use testbed::guest::{self, GuestImage, PROXY_PORT};

use super::{Env, entry, env, sha256_hex};

/// Daemon + mirror, the image, the entry JSON (not built yet), the forwarded port, the
/// serial log dir.
pub struct GuestEntry {
    /// The daemon and the mirror.
    pub env: Env,
    /// The guest image (built or cached).
    pub image: GuestImage,
    /// The entry's JSON, not built yet.
    pub entry: Value,
    /// The loopback address forwarded to the guest's proxy.
    pub proxy: SocketAddr,
    /// Where the guest's serial log goes (when asked for).
    pub logs: tempfile::TempDir,
    /// When the set-up began.
    pub started: Instant,
}

/// The image served by the mirror (in `format`: `qcow2` converted with qemu-img, or `raw`)
/// and an entry `entry_name` for it: TCG, user networking with a forward from a free
/// loopback port to the guest's proxy, sources `[agent, lease]`; without `serial_log` the
/// guest's serial port is a pty console instead of a log file. `None` (skip) when libvirt
/// or the image is missing and `TESTBED_REQUIRED` is not set.
pub async fn guest_entry(entry_name: &str, format: &str, serial_log: bool) -> Option<GuestEntry> {
    let started = Instant::now();
    let image = tokio::task::spawn_blocking(guest::image_or_skip)
        .await
        .unwrap()?;
    eprintln!(
        "guest-timing: image {} in {:.2?} ({}), {} bytes, sha256 {}",
        image.path.display(),
        image.build_time,
        if image.cached { "cached" } else { "built" },
        image.size,
        &image.sha256[..16]
    );
    let env = env().await?;
    let raw = std::fs::read(&image.path).expect("read the guest image");
    assert_eq!(raw.len() as u64, image.size);
    // The operator's images are qcow2: the raw guest converted with qemu-img.
    let body = if format == "qcow2" {
        let qcow2 = env.d.dir().join("egress-guest.qcow2");
        let out = std::process::Command::new("qemu-img")
            .args(["convert", "-O", "qcow2"])
            .arg(&image.path)
            .arg(&qcow2)
            .output()
            .expect("qemu-img runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read(&qcow2).unwrap()
    } else {
        raw
    };
    let sha256 = sha256_hex(&body);
    let path = format!("/egress-guest.{format}");
    env.http.serve(&path, body);
    let logs = guest::shared_dir("ekvm2-serial-").unwrap();
    let fwd = guest::free_loopback_port().unwrap();
    let mut kvm2 = json!({
        "domain_type": "qemu",
        "address_sources": ["agent", "lease"],
        "network": {"type": "user", "port_forwards": [
            {"host_addr": "127.0.0.1", "host_port": fwd, "guest_port": PROXY_PORT}
        ]},
        "budgets": {"shutdown_secs": 5, "transfer_secs": 120, "call_secs": 20},
    });
    if serial_log {
        kvm2["serial_log_dir"] = logs.path().display().to_string().into();
    }
    let entry = entry(
        &env,
        entry_name,
        json!({"guest": {"url": env.http.url(&path), "sha256": sha256, "format": format}}),
        kvm2,
    );
    Some(GuestEntry {
        env,
        image,
        entry,
        proxy: SocketAddr::from((Ipv4Addr::LOCALHOST, fwd)),
        logs,
        started,
    })
}
