//! The address rule on a real domain, with the failure injected between the state read and
//! the address read (states a daemon cannot produce on demand otherwise).

use std::sync::Mutex;
use std::time::Duration;

use egress_provider::{Identifier, ProvidersConfig};
use serde_json::json;
use testbed::http::HttpServer;
use testbed::libvirtd::{Libvirtd, short_socket_dir};

use super::*;

fn setup(
    d: &Libvirtd,
    http: &HttpServer,
    sources: &[&str],
    ga: &tempfile::TempDir,
) -> Kvm2Provider {
    let body = vec![0x5au8; 1 << 20];
    http.serve("/b.raw", body.clone());
    let sha = egress_provider::Sha256Digest::from_bytes(
        <sha2::Sha256 as sha2::Digest>::digest(&body).into(),
    );
    let dir = ga.path().display().to_string();
    let doc = json!({"providers": [{
        "name": "h3", "type": "kvm2",
        "images": {"k": {"url": http.url("/b.raw"), "sha256": sha.to_string(), "format": "raw"}},
        "uri": d.uri(), "pool": d.pool_name(), "domain_type": d.domain_type(),
        "address_sources": sources, "agent_socket_dir": dir,
        "budgets": {"shutdown_secs": 0, "call_secs": 5, "connect_secs": 5},
    }]});
    let cfg = ProvidersConfig::from_value(&doc).unwrap();
    let e = &cfg.providers[0];
    Kvm2Provider::from_entry(e, e.settings().unwrap()).unwrap()
}

/// The error of a get that must fail; a clear message when it answered an instance.
fn get_err(r: Result<Instance, ProviderError>, want: &str) -> ProviderError {
    match r {
        Ok(i) => panic!(
            "get = {} instance, want {want}: an unreadable address must not look like a missing one",
            i.state
        ),
        Err(e) => e,
    }
}

fn uid() -> Identifier {
    Identifier::new("u1").unwrap()
}

async fn created(d: &Libvirtd, http: &HttpServer, ga: &tempfile::TempDir) -> Kvm2Provider {
    let p = setup(d, http, &["agent", "lease"], ga);
    let spec = CreateSpec::new(uid(), "h3", Identifier::new("k").unwrap()).with_memory_mib(64);
    let i = p.create(&spec).await.unwrap();
    assert_eq!(
        i.state,
        InstanceState::Provisioning,
        "agent fails + lease empty"
    );
    p
}

/// H3: the link killed during the address read is Transient, never Provisioning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_killed_during_address_read_is_transient() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let http = HttpServer::start().await.unwrap();
    let ga = short_socket_dir();
    let mut p = created(&d, &http, &ga).await;
    p.before_address = Some(Arc::new(|link: &Link| {
        link.mark_dead("test: killed during the address read");
    }));
    let err = get_err(p.get(&uid()).await, "Transient");
    assert!(err.is_transient(), "{err}");
    assert!(
        err.to_string().contains("killed during the address read"),
        "{err}"
    );
    // The next call reconnects.
    p.before_address = None;
    assert_eq!(
        p.get(&uid()).await.unwrap().state,
        InstanceState::Provisioning
    );
    p.delete(&uid()).await.unwrap();
}

/// H3: the daemon dying during the address read (a real connection loss) is Transient.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_dying_during_address_read_is_transient() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let http = HttpServer::start().await.unwrap();
    let ga = short_socket_dir();
    let mut p = created(&d, &http, &ga).await;
    let d = Arc::new(Mutex::new(d));
    let killer = d.clone();
    p.before_address = Some(Arc::new(move |_: &Link| {
        killer.lock().unwrap().kill().unwrap();
    }));
    let err = get_err(p.get(&uid()).await, "Transient");
    assert!(err.is_transient(), "{err}");
    p.before_address = None;
    d.lock().unwrap().restart().unwrap();
    p.get(&uid()).await.unwrap();
    p.delete(&uid()).await.unwrap();
}

/// The domain vanishing between the state read and the address read is `NotFound`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_vanishing_during_address_read_is_not_found() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let http = HttpServer::start().await.unwrap();
    let ga = short_socket_dir();
    let mut p = created(&d, &http, &ga).await;
    let d = Arc::new(d);
    let dd = d.clone();
    p.before_address = Some(Arc::new(move |_: &Link| {
        dd.virsh(&["destroy", "h3-u1"]).unwrap();
        dd.virsh(&["undefine", "h3-u1"]).unwrap();
    }));
    let err = get_err(p.get(&uid()).await, "NotFound");
    assert!(err.is_not_found(), "{err}");
    p.before_address = None;
    p.delete(&uid()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
}

/// On this daemon the ARP source fails ("wrong nlmsg len") and the agent source fails (no
/// agent): every source failing is Transient, explicitly, although the agent's code
/// (`ARGUMENT_UNSUPPORTED` or `AGENT_UNRESPONSIVE`) alone would classify as `Permanent` or
/// Transient by the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_source_failing_is_transient() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let http = HttpServer::start().await.unwrap();
    let ga = short_socket_dir();
    let p = created(&d, &http, &ga).await;
    let arp = setup(&d, &http, &["agent", "arp"], &ga);
    let err = get_err(arp.get(&uid()).await, "Transient");
    assert!(err.is_transient(), "{err}");
    let text = err.to_string();
    assert!(text.contains("agent:") && text.contains("arp:"), "{text}");
    p.delete(&uid()).await.unwrap();
}
