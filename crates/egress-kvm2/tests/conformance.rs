//! The provider conformance suite against the private libvirtd: real KVM (or QEMU) domains
//! with no guest OS. They run and stay `Provisioning` (session networking has no lease and
//! no agent answers), so the sources are `[agent, lease]` and `Running` is not required.

mod common;

use std::time::Duration;

use common::*;
use egress_provider::InstanceState;
use egress_provider::conformance::{Harness, run};
use serde_json::json;

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
        .with_require_running(false);
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
    assert_eq!(report.ready_state, InstanceState::Provisioning);
    // Nothing of the instance is left: only the cached base and its marker.
    assert_eq!(
        volumes(&env.d),
        ["base-conf-img.raw", "base-conf-img.raw.sha256"]
    );
}
