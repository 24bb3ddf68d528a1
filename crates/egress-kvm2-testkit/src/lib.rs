//! Test support for egress-kvm2, shared by its integration tests and the controller
//! example's real-guest test: a private libvirtd, a loopback mirror, and providers built
//! through the real configuration path ([`env()`], [`entry`], [`build`]); sshds in front of the
//! daemon; the real guest's set-up ([`guest_bed`]); a relay that cuts or fails calls
//! ([`relay`]). Not published.
#![allow(clippy::needless_pass_by_value)]

pub mod guest_bed;
pub mod relay;

use std::sync::Arc;
use std::time::Duration;

use egress_kvm2::Kvm2Provider;
use egress_provider::{Identifier, ProvidersConfig, Sha256Digest};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
#[allow(unused_imports)] // not every test binary makes images
pub use testbed::data::pattern;
use testbed::http::HttpServer;
use testbed::libvirtd::{Libvirtd, short_socket_dir};
use testbed::sshd::{Sshd, SshdOptions};

/// A private daemon and a loopback mirror for one test.
pub struct Env {
    /// The daemon.
    pub d: Libvirtd,
    /// The mirror images are fetched from.
    pub http: HttpServer,
    /// Guest agent sockets (removed with the env).
    pub agent: tempfile::TempDir,
}

/// A daemon and a mirror, or `None` when libvirt is missing and `TESTBED_REQUIRED` is not set.
pub async fn env() -> Option<Env> {
    let d = Libvirtd::start_or_skip()?;
    let http = HttpServer::start().await.expect("loopback http server");
    Some(Env {
        d,
        http,
        agent: short_socket_dir(),
    })
}

/// The SHA-256 of `data`, as an entry's `sha256` field spells it.
pub fn sha256_hex(data: &[u8]) -> String {
    Sha256Digest::from_bytes(Sha256::digest(data).into()).to_string()
}

/// An identifier the test knows is valid.
pub fn id(s: &str) -> Identifier {
    Identifier::new(s).unwrap()
}

/// `{"url":…,"sha256":…,"format":"raw"}`.
pub fn image(url: &str, body: &[u8]) -> Value {
    json!({"url": url, "sha256": sha256_hex(body), "format": "raw"})
}

/// The entry JSON for `name` on `d`: sources `[agent, lease]` (Provisioning here), a
/// half-second graceful shutdown, 30 s transfers. `extra` keys override.
pub fn entry(env: &Env, name: &str, images: Value, extra: Value) -> Value {
    let d = &env.d;
    let mut e = json!({
        "name": name,
        "type": "kvm2",
        "images": images,
        "uri": d.uri(),
        "pool": d.pool_name(),
        "domain_type": d.domain_type(),
        "address_sources": ["agent", "lease"],
        "budgets": {"shutdown_secs": 0.5, "transfer_secs": 30, "call_secs": 30},
        "agent_socket_dir": env.agent.path().display().to_string(),
    });
    if let (Some(obj), Some(more)) = (e.as_object_mut(), extra.as_object()) {
        for (k, v) in more {
            obj.insert(k.clone(), v.clone());
        }
    }
    e
}

/// Builds the provider of one entry through the loader and the strict settings path.
pub fn build(entry: Value) -> Kvm2Provider {
    let cfg = ProvidersConfig::from_value(&json!({ "providers": [entry] })).expect("valid config");
    let e = &cfg.providers[0];
    Kvm2Provider::from_entry(e, e.settings().expect("valid settings")).expect("provider builds")
}

/// The provider, shared as the controller and the conformance suite hold it.
pub fn shared(p: Kvm2Provider) -> Arc<Kvm2Provider> {
    Arc::new(p)
}

/// Volume names in the daemon's pool, sorted.
pub fn volumes(d: &Libvirtd) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d.pool_path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// One second.
pub const SECOND: Duration = Duration::from_secs(1);

/// An sshd on 127.0.0.1 in front of `d` that refuses all forwarding (`AllowTcpForwarding no`,
/// `AllowStreamLocalForwarding no`: only an exec channel gets through), gives every session
/// the daemon's runtime dir (so `virt-ssh-helper qemu:///session` finds its socket) and logs
/// every exec request's command line and every `nc` run ([`Sshd::command_log`],
/// [`Sshd::nc_calls`]). `None` (skip) as [`Sshd::start_or_skip`].
pub fn locked_down_sshd(d: &Libvirtd) -> Option<Sshd> {
    let run = d.socket_path().parent()?.parent()?.display().to_string();
    Sshd::start_or_skip(&SshdOptions {
        forwarding: false,
        set_env: vec![("XDG_RUNTIME_DIR".into(), run)],
        log_commands: true,
        ..SshdOptions::default()
    })
}

/// `qemu+ssh://USER@127.0.0.1:PORT/session?keyfile=…&known_hosts=…` to `s` with no `socket=`:
/// libvirt's default exec channel for it, `virt-ssh-helper qemu:///session` on the far side.
pub fn session_uri(s: &Sshd) -> String {
    format!(
        "qemu+ssh://{}@127.0.0.1:{}/session?keyfile={}&known_hosts={}",
        s.user().name,
        s.port(),
        s.client_key().display(),
        s.known_hosts().display()
    )
}

/// A bastion sshd (forwarding allowed) in front of `target`, and the URI reaching `d`'s
/// socket on `target` through it (`proxy_jump=USER@127.0.0.1:PORT`, netcat on the target
/// through `socket=`). One key for both hops (the URI's `keyfile`: the bastion authorises the
/// target's client key too); the host keys of both hops from one `known_hosts` in `d`'s dir.
pub fn behind_bastion(d: &Libvirtd, target: &Sshd) -> Option<(Sshd, String)> {
    let bastion = Sshd::start_or_skip(&SshdOptions::default())?;
    let key = std::fs::read_to_string(target.client_key().with_extension("pub")).unwrap();
    let mut auth = std::fs::OpenOptions::new()
        .append(true)
        .open(bastion.dir().join("authorized_keys"))
        .unwrap();
    std::io::Write::write_all(&mut auth, key.as_bytes()).unwrap();
    let kh = d.dir().join("known_hosts_both");
    let both = std::fs::read_to_string(bastion.known_hosts()).unwrap()
        + &std::fs::read_to_string(target.known_hosts()).unwrap();
    std::fs::write(&kh, both).unwrap();
    let uri = format!(
        "{}&proxy_jump={}@127.0.0.1:{}",
        target.qemu_uri_via(target.port(), &kh, d.socket_path()),
        bastion.user().name,
        bastion.port()
    );
    Some((bastion, uri))
}
