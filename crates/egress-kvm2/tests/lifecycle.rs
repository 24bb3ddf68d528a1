//! The full lifecycle with a real KVM (or QEMU) domain against the private libvirtd. No
//! guest OS: the domain runs and stays `Provisioning` (sources `[agent, lease]`: the agent
//! fails, the lease source answers empty).

use egress_kvm2_testkit as common;

use std::time::Duration;

use common::*;
use egress_provider::{CreateSpec, InstanceState, Provider};
use serde_json::json;
use testbed::sshd::{Sshd, SshdOptions};

const HOSTILE: &str = r#"proxy <a> & "b" 'c' </title><devices/>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_lifecycle_with_a_real_domain() {
    let Some(env) = env().await else { return };
    let body = pattern(2 << 20, 21);
    env.http.serve("/img.raw", body.clone());
    let p = build(entry(
        &env,
        "life",
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({}),
    ));
    let spec = CreateSpec::new(id("0b7e2c1d-egress-a"), HOSTILE, id("img"))
        .with_vcpus(2)
        .with_memory_mib(96)
        .with_tag(id("blue"))
        .with_tag(id("green"))
        .with_user_data(b"#cloud-config\npassword: hunter2\n".to_vec())
        .with_ssh_authorized_key("ssh-ed25519 AAAAC3Nza test@egress");

    let made = p.create(&spec).await.unwrap();
    assert_eq!(made.state, InstanceState::Provisioning);
    assert_eq!(made.name, HOSTILE, "display name read back verbatim");
    assert_eq!(made.provider, "life");
    let domain = "life-0b7e2c1d-egress-a";
    assert_eq!(
        env.d.virsh(&["domstate", domain]).unwrap().trim(),
        "running"
    );
    let xml = env.d.virsh(&["dumpxml", domain]).unwrap();
    // The hostile name stayed text: escaped in <title>, no element injected.
    assert!(xml.contains("<title>proxy &lt;a&gt; &amp; "), "{xml}");
    assert!(
        xml.contains("&lt;/title&gt;&lt;devices/&gt;</title>"),
        "{xml}"
    );
    assert_eq!(xml.matches("<devices").count(), 1, "{xml}");
    assert!(xml.contains("<vcpu placement='static'>2</vcpu>"), "{xml}");
    assert!(xml.contains("org.qemu.guest_agent.0"), "{xml}");
    assert!(
        !xml.contains("hunter2"),
        "user-data must not be in the domain XML"
    );
    assert_eq!(
        volumes(&env.d),
        [
            "base-life-img.raw",
            "base-life-img.raw.sha256",
            "disk-life-0b7e2c1d-egress-a.qcow2",
            "seed-life-0b7e2c1d-egress-a.img"
        ]
    );
    // The seed went up sparse: its zeros are holes on the host, not written bytes.
    let seed =
        std::fs::metadata(env.d.pool_path().join("seed-life-0b7e2c1d-egress-a.img")).unwrap();
    let allocated = std::os::unix::fs::MetadataExt::blocks(&seed) * 512;
    assert!(
        allocated * 4 < seed.len(),
        "seed of {} bytes has {allocated} bytes allocated",
        seed.len()
    );

    // get: read back from the host (state, uid, created-at, tags).
    let got = p.get(&spec.uid).await.unwrap();
    assert_eq!(got, made);
    // A fresh provider (nothing remembered) reads the same.
    let fresh = build(entry(
        &env,
        "life",
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({}),
    ));
    assert_eq!(fresh.get(&spec.uid).await.unwrap(), made);

    // Idempotent create: same domain, same created_at.
    let again = p.create(&spec).await.unwrap();
    assert_eq!(again.created_at, made.created_at);
    assert_eq!(
        env.d.virsh(&["list", "--all", "--name"]).unwrap().trim(),
        domain
    );

    let listed = p.list_by_tag(&id("green")).await.unwrap();
    assert!(listed.is_complete(), "{listed:?}");
    assert_eq!(listed.instances.len(), 1);
    assert_eq!(listed.instances[0].uid, spec.uid);
    let red = p.list_by_tag(&id("red")).await.unwrap();
    assert!(red.instances.is_empty(), "{red:?}");

    // Delete: graceful (nothing inside listens), then destroy; twice is fine.
    p.delete(&spec.uid).await.unwrap();
    assert!(p.get(&spec.uid).await.unwrap_err().is_not_found());
    p.delete(&spec.uid).await.unwrap();
    assert_eq!(
        volumes(&env.d),
        ["base-life-img.raw", "base-life-img.raw.sha256"]
    );
    assert_eq!(
        env.d.virsh(&["list", "--all", "--name"]).unwrap().trim(),
        ""
    );
}

/// A create that crashed after define (defined, never started) is completed; one that
/// crashed before define (volumes, no domain) is finished with the same volumes. Never a
/// second domain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupted_creates_are_completed_not_duplicated() {
    let Some(env) = env().await else { return };
    let body = pattern(1 << 20, 22);
    env.http.serve("/img.raw", body.clone());
    let p = build(entry(
        &env,
        "crash",
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({}),
    ));
    let spec = CreateSpec::new(id("u1"), "u1", id("img"))
        .with_memory_mib(64)
        .with_tag(id("t"));
    let first = p.create(&spec).await.unwrap();

    // Crash after define: the domain is defined but never started.
    let xml = env.d.virsh(&["dumpxml", "--inactive", "crash-u1"]).unwrap();
    env.d.virsh(&["destroy", "crash-u1"]).unwrap();
    env.d.virsh(&["undefine", "crash-u1"]).unwrap();
    let file = env.d.dir().join("crash-u1.xml");
    std::fs::write(&file, xml).unwrap();
    env.d.virsh(&["define", file.to_str().unwrap()]).unwrap();
    assert_eq!(
        env.d.virsh(&["domstate", "crash-u1"]).unwrap().trim(),
        "shut off"
    );
    let again = p.create(&spec).await.unwrap();
    assert_eq!(again.state, InstanceState::Provisioning, "started");
    assert_eq!(again.created_at, first.created_at, "the same domain");

    // A domain stopped after it ran stays stopped: create answers it as it is.
    env.d.virsh(&["destroy", "crash-u1"]).unwrap();
    assert_eq!(p.create(&spec).await.unwrap().state, InstanceState::Stopped);
    assert_eq!(
        p.get(&spec.uid).await.unwrap().state,
        InstanceState::Stopped
    );

    // Crash before define: overlay and seed exist, no domain.
    env.d.virsh(&["undefine", "crash-u1"]).unwrap();
    assert!(p.get(&spec.uid).await.unwrap_err().is_not_found());
    let redone = p.create(&spec).await.unwrap();
    assert_eq!(redone.state, InstanceState::Provisioning);
    assert_eq!(p.list_by_tag(&id("t")).await.unwrap().instances.len(), 1);
    assert_eq!(
        env.d.virsh(&["list", "--all", "--name"]).unwrap().trim(),
        "crash-u1"
    );

    // Concurrent creates of one uid in one process: one domain.
    p.delete(&spec.uid).await.unwrap();
    let (a, b) = tokio::join!(p.create(&spec), p.create(&spec));
    assert_eq!(a.unwrap().created_at, b.unwrap().created_at);
    p.delete(&spec.uid).await.unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
}

/// A create interrupted after define whose volumes were lost meanwhile is completed, not
/// wedged (issue 19, found by the fleet run): under load a call that outlived its budget
/// (a define) landed on the daemon after the retry had deleted the stale seed and lost its
/// link, so the retry after it adopted a domain without its seed, and every later create
/// answered `NotFound` ("start domain …: no storage vol with matching name 'seed-…'").
/// A domain that never booted gets its overlay and seed again before it is started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_defined_domain_whose_volumes_are_gone_is_completed() {
    let Some(env) = env().await else { return };
    let body = pattern(1 << 20, 23);
    env.http.serve("/img.raw", body.clone());
    let p = build(entry(
        &env,
        "lost",
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({}),
    ));
    let spec = CreateSpec::new(id("u1"), "u1", id("img"))
        .with_memory_mib(32)
        .with_tag(id("t"));
    let first = p.create(&spec).await.unwrap();
    // Defined, never started, seed gone; then seed and overlay gone.
    let xml = env.d.virsh(&["dumpxml", "--inactive", "lost-u1"]).unwrap();
    let file = env.d.dir().join("lost-u1.xml");
    std::fs::write(&file, xml).unwrap();
    for lost in [
        &["seed-lost-u1.img"][..],
        &["seed-lost-u1.img", "disk-lost-u1.qcow2"],
    ] {
        env.d.virsh(&["destroy", "lost-u1"]).unwrap();
        env.d.virsh(&["undefine", "lost-u1"]).unwrap();
        env.d.virsh(&["define", file.to_str().unwrap()]).unwrap();
        for vol in lost {
            env.d
                .virsh(&["vol-delete", "--pool", env.d.pool_name(), vol])
                .unwrap();
        }
        let again = p
            .create(&spec)
            .await
            .unwrap_or_else(|e| panic!("create after losing {lost:?}: {}", e.chain()));
        assert_eq!(again.state, InstanceState::Provisioning, "started");
        assert_eq!(again.created_at, first.created_at, "the same domain");
        assert_eq!(
            env.d.virsh(&["domstate", "lost-u1"]).unwrap().trim(),
            "running"
        );
    }
    p.delete(&spec.uid).await.unwrap();
    assert_eq!(
        volumes(&env.d),
        ["base-lost-img.raw", "base-lost-img.raw.sha256"]
    );
}

/// A domain with our name that we did not make is never touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_domain_with_our_name_is_permanent_and_untouched() {
    let Some(env) = env().await else { return };
    let body = pattern(1 << 20, 23);
    env.http.serve("/img.raw", body.clone());
    let p = build(entry(
        &env,
        "own",
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({}),
    ));
    let file = env.d.dir().join("foreign.xml");
    std::fs::write(&file, env.d.minimal_domain_xml("own-u1")).unwrap();
    env.d.virsh(&["define", file.to_str().unwrap()]).unwrap();
    let spec = CreateSpec::new(id("u1"), "u1", id("img"));
    assert!(p.create(&spec).await.unwrap_err().is_permanent());
    assert!(p.get(&spec.uid).await.unwrap_err().is_permanent());
    assert!(p.delete(&spec.uid).await.unwrap_err().is_permanent());
    assert!(
        env.d
            .virsh(&["list", "--all", "--name"])
            .unwrap()
            .contains("own-u1")
    );
}

/// A port forward whose host port is taken: `create` fails `Transient` naming the address,
/// the domain runs without it; once the port is free a retried create adds it (the forward
/// path is idempotent: a third create adds nothing). `delete` frees the port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn port_forward_on_a_taken_port_is_transient_and_completed_by_a_retried_create() {
    let Some(env) = env().await else { return };
    let body = pattern(1 << 20, 24);
    env.http.serve("/img.raw", body.clone());
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let p = build(entry(
        &env,
        "fwd",
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({"network": {"type": "user", "port_forwards": [{"host_port": port, "guest_port": 8888}]}}),
    ));
    let spec = CreateSpec::new(id("u1"), "u1", id("img")).with_memory_mib(64);
    let err = p.create(&spec).await.unwrap_err();
    let msg = err.chain().to_string();
    assert!(err.is_transient(), "{msg}");
    assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");
    assert_eq!(
        env.d.virsh(&["domstate", "fwd-u1"]).unwrap().trim(),
        "running"
    );
    let usernet = || {
        env.d
            .virsh(&["qemu-monitor-command", "fwd-u1", "--hmp", "info usernet"])
            .unwrap()
    };
    let rule = format!("127.0.0.1 {port}");
    assert!(!usernet().contains(&rule), "{}", usernet());

    drop(taken);
    let i = p.create(&spec).await.unwrap();
    assert_eq!(i.state, InstanceState::Provisioning);
    let u = usernet();
    assert!(u.contains("(hostnet0):"), "libvirt's backend id: {u}");
    let forwards = |u: &str| {
        u.lines()
            .filter(|l| l.contains("HOST_FORWARD") && l.contains(&rule))
            .count()
    };
    assert_eq!(forwards(&u), 1, "{u}");
    p.create(&spec).await.unwrap();
    assert_eq!(forwards(&usernet()), 1, "added once only");

    p.delete(&spec.uid).await.unwrap();
    std::net::TcpListener::bind(("127.0.0.1", port)).expect("delete frees the forwarded port");
}

/// One sick instance never hides the others (issue 19). With `address_sources: [agent]`
/// a running domain without a guest agent has no readable address (every source fails:
/// `get` is Transient), while a stopped one is read without its address. A third domain's
/// metadata is damaged by hand. `list_by_tag` lists the stopped one and reports the other
/// two, each with its own error; a dead link still fails the whole call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sick_instance_is_reported_alone_and_the_others_are_listed() {
    let Some(env) = env().await else { return };
    let body = pattern(1 << 20, 25);
    env.http.serve("/img.raw", body.clone());
    let p = build(entry(
        &env,
        "sick",
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({"address_sources": ["agent"], "budgets": {"shutdown_secs": 0, "call_secs": 10}}),
    ));
    let spec = |uid: &str| {
        CreateSpec::new(id(uid), uid, id("img"))
            .with_memory_mib(32)
            .with_tag(id("t"))
    };
    // create answers the instance as it is: a running domain whose address cannot be read
    // makes create fail Transient (unreadable is not missing), so make all three first.
    for uid in ["a", "b", "c"] {
        let r = p.create(&spec(uid)).await;
        assert!(
            r.as_ref()
                .is_ok_and(|i| i.state == InstanceState::Provisioning)
                || r.as_ref()
                    .is_err_and(egress_provider::ProviderError::is_transient),
            "{uid}: {r:?}"
        );
    }
    env.d.virsh(&["destroy", "sick-a"]).unwrap();
    assert_eq!(p.get(&id("a")).await.unwrap().state, InstanceState::Stopped);
    assert!(p.get(&id("b")).await.unwrap_err().is_transient());
    env.d
        .virsh(&[
            "metadata",
            "sick-c",
            egress_kvm2::meta::NAMESPACE,
            "--key",
            "egress",
            "--set",
            "<instance><uid>not an identifier</uid></instance>",
        ])
        .unwrap();

    let listed = match p.list_by_tag(&id("t")).await {
        Ok(l) => l,
        Err(e) => panic!(
            "list_by_tag = {e}: one sick instance must be reported on its own, not hide the others"
        ),
    };
    let listed_uids: Vec<&str> = listed.instances.iter().map(|i| i.uid.as_str()).collect();
    assert_eq!(listed_uids, ["a"], "{listed:?}");
    assert_eq!(listed.instances[0].state, InstanceState::Stopped);
    let mut sick: Vec<(&str, Option<&str>, bool)> = listed
        .unreadable
        .iter()
        .map(|u| {
            (
                u.object.as_str(),
                u.uid.as_ref().map(egress_provider::Identifier::as_str),
                u.error.is_transient(),
            )
        })
        .collect();
    sick.sort_unstable();
    assert_eq!(
        sick,
        [
            ("sick-b", Some("b"), true),  // address unreadable: Transient
            ("sick-c", Some("c"), false), // damaged metadata: Permanent, tags unknown
        ],
        "{listed:?}"
    );
    let c = listed
        .unreadable
        .iter()
        .find(|u| u.object == "sick-c")
        .unwrap();
    assert!(c.error.is_permanent(), "{}", c.error);
    assert!(c.error.to_string().contains("damaged"), "{}", c.error);
    // Damaged metadata means unknown tags: reported whatever the tag.
    let other = p.list_by_tag(&id("other")).await.unwrap();
    assert!(other.instances.is_empty());
    assert_eq!(other.unreadable.len(), 1, "{other:?}");

    // A dead link still fails the whole call.
    env.d.freeze().unwrap();
    let frozen = build(entry(
        &env,
        "sick",
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({"address_sources": ["agent"], "budgets": {"call_secs": 1, "connect_secs": 1}}),
    ));
    let err = frozen.list_by_tag(&id("t")).await;
    env.d.thaw().unwrap();
    assert!(err.unwrap_err().is_transient());

    for uid in ["a", "b"] {
        p.delete(&id(uid)).await.unwrap();
    }
    // The damaged one is not ours to delete: Permanent, untouched.
    assert!(p.delete(&id("c")).await.unwrap_err().is_permanent());
    env.d.virsh(&["destroy", "sick-c"]).unwrap();
    env.d.virsh(&["undefine", "sick-c"]).unwrap();
}

/// The lifecycle over `qemu+ssh://`: an OpenSSH sshd on 127.0.0.1 in front of the same
/// daemon. Every link — the shared one and the dedicated image upload — is dialled by
/// `Client::connect` (libvirt-remote's `ssh` feature), the one dial path. `socket=` makes it
/// libvirt's netcat exec channel (`nc -U SOCKET` on the remote side).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_over_qemu_ssh() {
    let Some(env) = env().await else { return };
    let Some(sshd) = Sshd::start_or_skip(&SshdOptions::default()) else {
        return;
    };
    let uri = sshd.qemu_uri(env.d.socket_path());
    lifecycle_through(&env, "viassh", &uri, &sshd).await;
}

/// The same on a host whose sshd refuses all forwarding (`AllowTcpForwarding no`,
/// `AllowStreamLocalForwarding no`): only the exec channel gets through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_over_qemu_ssh_where_forwarding_is_refused() {
    let Some(env) = env().await else { return };
    let Some(sshd) = Sshd::start_or_skip(&SshdOptions {
        forwarding: false,
        ..SshdOptions::default()
    }) else {
        return;
    };
    let uri = sshd.qemu_uri(env.d.socket_path());
    lifecycle_through(&env, "sshexec", &uri, &sshd).await;
    assert!(
        !sshd.log().contains("direct-streamlocal"),
        "no forwarding was asked for"
    );
}

/// The same on a host behind a bastion, named in the host entry's URI (`proxy_jump=`); the
/// target refuses forwarding, the bastion carries the `direct-tcpip` hop. Host keys of both
/// hops from one `known_hosts`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_over_qemu_ssh_through_a_bastion() {
    let Some(env) = env().await else { return };
    let Some(target) = Sshd::start_or_skip(&SshdOptions {
        forwarding: false,
        ..SshdOptions::default()
    }) else {
        return;
    };
    let Some((bastion, uri)) = behind_bastion(&env.d, &target) else {
        return;
    };
    lifecycle_through(&env, "viajump", &uri, &target).await;
    let log = bastion.log();
    assert!(
        log.matches("Accepted publickey").count() >= 2 && log.contains("direct-tcpip"),
        "the bastion did not carry the link and the upload:\n{log}"
    );
}

/// Image ensure, create (Running, `Provisioning` with no guest OS), get, list, delete through
/// `uri` for the provider entry `name`; `sshd` (the last hop) saw at least two sessions.
async fn lifecycle_through(env: &Env, name: &str, uri: &str, sshd: &Sshd) {
    let body = pattern(1 << 20, 25);
    env.http.serve("/img.raw", body.clone());
    let p = build(entry(
        env,
        name,
        json!({"img": image(&env.http.url("/img.raw"), &body)}),
        json!({"uri": uri}),
    ));
    let spec = CreateSpec::new(id("u1"), "u1", id("img"))
        .with_memory_mib(64)
        .with_tag(id("t"));
    let made = p
        .create(&spec)
        .await
        .unwrap_or_else(|e| panic!("create over {uri}: {}", e.chain()));
    assert_eq!(made.state, InstanceState::Provisioning);
    assert_eq!(
        env.d
            .virsh(&["domstate", &format!("{name}-u1")])
            .unwrap()
            .trim(),
        "running"
    );
    assert_eq!(p.get(&spec.uid).await.unwrap(), made);
    assert_eq!(p.list_by_tag(&id("t")).await.unwrap().instances.len(), 1);
    p.delete(&spec.uid).await.unwrap();
    assert!(p.get(&spec.uid).await.unwrap_err().is_not_found());
    assert_eq!(
        volumes(&env.d),
        [
            format!("base-{name}-img.raw"),
            format!("base-{name}-img.raw.sha256")
        ]
    );
    // Through sshd, with our key: the shared link and the dedicated upload connection.
    let log = sshd.log();
    let sessions = log.matches("Accepted publickey").count();
    assert!(
        sessions >= 2,
        "{sessions} ssh sessions, want the link and the upload:\n{log}"
    );
}

/// An entry whose `ssh_config` names a file that is not there fails its first call
/// `Permanent`, naming the file, before anything is dialled (a typo in the entry is not a
/// host that is down).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_ssh_config_file_is_permanent_and_named() {
    let Some(env) = env().await else { return };
    let missing = env.d.dir().join("no-such-ssh_config");
    let p = build(entry(
        &env,
        "nocfg",
        json!({"img": image(&env.http.url("/img.raw"), b"x")}),
        json!({"uri": "qemu+ssh://target/session", "ssh_config": missing.display().to_string()}),
    ));
    let err = p.get(&id("u1")).await.unwrap_err();
    let msg = err.chain().to_string();
    assert!(err.is_permanent(), "{msg}");
    assert!(msg.contains(&missing.display().to_string()), "{msg}");
}
