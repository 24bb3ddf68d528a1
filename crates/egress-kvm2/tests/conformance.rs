//! The provider conformance suite against the private libvirtd: real KVM (or QEMU) domains
//! with no guest OS. They run and stay `Provisioning` (session networking has no lease and
//! no agent answers), so the sources are `[agent, lease]` and `Running` is not required.
//! The instance the suite makes unreadable gets damaged metadata (`virsh metadata --set`).

use egress_kvm2_testkit as common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use egress_provider::conformance::{Harness, Sickness, run};
use egress_provider::{Identifier, InstanceState};
use serde_json::json;

/// Damages the egress-kvm2 metadata of a domain by hand (a half-edited `virsh metadata`),
/// and puts the original back on `cure`.
struct DamagedMetadata {
    uri: String,
    entry: String,
    saved: Mutex<HashMap<String, String>>,
}

impl DamagedMetadata {
    fn virsh(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("virsh")
            .arg("-c")
            .arg(&self.uri)
            .args(args)
            .env("LC_ALL", "C")
            .output()
            .expect("virsh runs");
        assert!(
            out.status.success(),
            "virsh {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn set(&self, domain: &str, xml: &str) {
        let ns = egress_kvm2::meta::NAMESPACE;
        self.virsh(&["metadata", domain, ns, "--key", "egress", "--set", xml]);
    }
}

#[async_trait::async_trait]
impl Sickness for DamagedMetadata {
    async fn inflict(&self, uid: &Identifier) {
        let domain = format!("{}-{uid}", self.entry);
        let original = self.virsh(&["metadata", &domain, egress_kvm2::meta::NAMESPACE]);
        self.saved.lock().unwrap().insert(domain.clone(), original);
        self.set(&domain, "<instance><uid>damaged</uid></instance>");
    }

    async fn cure(&self, uid: &Identifier) {
        let domain = format!("{}-{uid}", self.entry);
        let saved = self.saved.lock().unwrap().remove(&domain);
        if let Some(original) = saved {
            self.set(&domain, original.trim());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kvm2_passes_the_conformance_suite() {
    let Some(env) = env().await else { return };
    let body = pattern(4 << 20, 11);
    env.http.serve("/base.raw", body.clone());
    let images = json!({"img": image(&env.http.url("/base.raw"), &body)});
    let provider = shared(build(entry(&env, "conf", images.clone(), json!({}))));
    // Same type, same images, a socket nobody listens on.
    let unreachable = shared(build(entry(
        &env,
        "conf",
        images,
        json!({"uri": "qemu+unix:///session?socket=/nonexistent/egress-kvm2/libvirt-sock"}),
    )));
    let harness = Harness::new(id("img"), id("no-such-image"), unreachable)
        .with_poll(Duration::from_millis(500), Duration::from_secs(5))
        .with_call_timeout(Duration::from_secs(60))
        .with_spec(|s| {
            s.with_vcpus(1)
                .with_memory_mib(128)
                .with_user_data(b"#cloud-config\n".to_vec())
                .with_ssh_authorized_key("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGtest test@egress")
        })
        .with_require_running(false)
        .with_sickness(Arc::new(DamagedMetadata {
            uri: env.d.uri(),
            entry: "conf".into(),
            saved: Mutex::default(),
        }));
    let uid = harness.uid.clone();
    let report = match run(provider, &harness).await {
        Ok(r) => r,
        Err(f) => panic!(
            "{}\n--- domain log ---\n{}\n--- daemon log ---\n{}",
            egress_provider::error::Chain::of(&f),
            env.d.domain_log(&format!("conf-{uid}")),
            env.d.log_tail()
        ),
    };
    println!("{report}");
    assert!(report.skipped.is_empty(), "{report}");
    assert_eq!(report.ready_state, InstanceState::Provisioning);
    // Nothing of the instance is left: only the cached base and its marker.
    assert_eq!(
        volumes(&env.d),
        ["base-conf-img.raw", "base-conf-img.raw.sha256"]
    );
}
