//! A provider entry whose host is reached over TLS with SCRAM-SHA-256 (`qemu+tls://…`, the
//! way most remote libvirt hosts are set up): create, get, list and delete a real domain.

use egress_kvm2_testkit as common;

use common::*;
use egress_provider::{CreateSpec, InstanceState, Provider};
use serde_json::json;
use testbed::libvirtd::Libvirtd;
use testbed::pki::ServerCert;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_host_entry_creates_lists_and_deletes() {
    let Some(d) = Libvirtd::builder()
        .tls(ServerCert::default())
        .sasl_user("egress", "tls-host-pw")
        .start_or_skip()
    else {
        return;
    };
    let http = testbed::http::HttpServer::start().await.unwrap();
    let env = Env {
        d,
        http,
        agent: testbed::libvirtd::short_socket_dir(),
    };
    let auth = env.d.dir().join("client-auth.conf");
    std::fs::write(
        &auth,
        "[credentials-e]\nauthname=egress\npassword=tls-host-pw\n[auth-libvirt-127.0.0.1]\ncredentials=e\n",
    )
    .unwrap();
    let uri = format!(
        "{}&auth=sasl.scram-sha-256&authfile={}",
        env.d.tls_uri(),
        auth.display()
    );
    let body = pattern(1 << 20, 31);
    env.http.serve("/img.raw", body.clone());
    let p = build(entry(
        &env,
        "tls",
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({ "uri": uri }),
    ));
    let spec = CreateSpec::new(id("tls-1"), "over tls", id("img"))
        .with_memory_mib(64)
        .with_tag(id("t"));
    let made = p.create(&spec).await.unwrap();
    assert_eq!(made.state, InstanceState::Provisioning);
    assert_eq!(
        env.d.virsh(&["domstate", "tls-tls-1"]).unwrap().trim(),
        "running"
    );
    assert_eq!(p.get(&spec.uid).await.unwrap().uid, spec.uid);
    assert_eq!(p.list_by_tag(&id("t")).await.unwrap().instances.len(), 1);
    p.delete(&spec.uid).await.unwrap();
    assert!(p.get(&spec.uid).await.unwrap_err().is_not_found());
}
