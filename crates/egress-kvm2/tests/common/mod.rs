//! Shared set-up of the integration tests: a private libvirtd, a loopback mirror, and
//! providers built through the real configuration path.
#![allow(dead_code, clippy::needless_pass_by_value)]

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

pub struct Env {
    pub d: Libvirtd,
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

pub fn sha256_hex(data: &[u8]) -> String {
    Sha256Digest::from_bytes(Sha256::digest(data).into()).to_string()
}

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

pub const SECOND: Duration = Duration::from_secs(1);
