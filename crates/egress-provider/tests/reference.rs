//! The in-memory reference provider, rule by rule.

mod support;

use std::collections::BTreeSet;
use std::net::IpAddr;

use egress_provider::reference::InMemoryProvider;
use egress_provider::{CreateSpec, ErrorKind, FieldErrors, InstanceState, Provider};
use support::id;

fn provider() -> InMemoryProvider {
    InMemoryProvider::new("lab").with_images([id("debian-13"), id("alpine")])
}

fn spec(uid: &str) -> CreateSpec {
    CreateSpec::new(id(uid), format!("proxy {uid}"), id("debian-13")).with_tag(id("blue"))
}

#[tokio::test]
async fn boots_through_provisioning_to_running() {
    let p = provider().with_boot_observations(2);
    let created = p.create(&spec("a")).await.unwrap();
    assert_eq!(created.state, InstanceState::Provisioning);
    assert_eq!(created.ip(), None, "no address while provisioning");
    assert_eq!(created.provider, "lab");
    assert_eq!(created.name, "proxy a");
    assert_eq!(created.tags, BTreeSet::from([id("blue")]));

    assert_eq!(
        p.get(&id("a")).await.unwrap().state,
        InstanceState::Provisioning
    );
    let running = p.get(&id("a")).await.unwrap();
    let ip = running.ip().expect("running has an address");
    assert!(
        matches!(ip, IpAddr::V4(v4) if v4.octets()[..3] == [192, 0, 2]),
        "{ip}"
    );
    assert_eq!(running.created_at, created.created_at);
    // Stays running with the same address.
    assert_eq!(p.get(&id("a")).await.unwrap().ip(), Some(ip));
}

#[tokio::test]
async fn create_is_idempotent_per_uid() {
    let p = provider().with_boot_observations(0);
    let first = p.create(&spec("a")).await.unwrap();
    // A different spec with the same uid: the existing VM is returned as is.
    let mut other = spec("a").with_vcpus(8);
    other.name = "renamed".into();
    let again = p.create(&other).await.unwrap();
    assert_eq!(p.vm_count(), 1);
    assert_eq!(again.created_at, first.created_at);
    assert_eq!(again.name, "proxy a");
    assert_eq!(again.ip(), first.ip());
}

#[tokio::test]
async fn addresses_are_unique_and_reused_after_delete() {
    let p = provider().with_boot_observations(0);
    let a = p.create(&spec("a")).await.unwrap().ip().unwrap();
    let b = p.create(&spec("b")).await.unwrap().ip().unwrap();
    assert_ne!(a, b);
    p.delete(&id("a")).await.unwrap();
    let c = p.create(&spec("c")).await.unwrap().ip().unwrap();
    assert_eq!(c, a, "the lowest free address is reused");
}

#[tokio::test]
async fn state_is_read_from_the_host() {
    let p = provider().with_boot_observations(0);
    p.create(&spec("a")).await.unwrap();
    assert!(p.power_off(&id("a")));
    assert_eq!(p.get(&id("a")).await.unwrap().state, InstanceState::Stopped);
    assert!(p.fail(&id("a"), "disk gone"));
    let inst = p.get(&id("a")).await.unwrap();
    assert_eq!(
        inst.state,
        InstanceState::Failed {
            reason: "disk gone".into()
        }
    );
    assert_eq!(inst.ip(), None);
    // A repeated create returns the failed VM rather than hiding it.
    assert_eq!(p.create(&spec("a")).await.unwrap().state.as_str(), "failed");
    assert!(!p.power_off(&id("nope")));
}

#[tokio::test]
async fn get_and_delete_of_absent_uids() {
    let p = provider();
    let err = p.get(&id("nope")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(
        err.to_string()
            .contains("\"nope\" does not exist on provider \"lab\""),
        "{err}"
    );
    p.delete(&id("nope"))
        .await
        .expect("deleting what is gone is success");
}

#[tokio::test]
async fn list_by_tag_filters() {
    let p = provider();
    p.create(&spec("a")).await.unwrap();
    p.create(&spec("b").with_tag(id("green"))).await.unwrap();
    p.create(&CreateSpec::new(id("c"), "c", id("alpine")))
        .await
        .unwrap();
    let blue: BTreeSet<_> = p
        .list_by_tag(&id("blue"))
        .await
        .unwrap()
        .instances
        .into_iter()
        .map(|i| i.uid)
        .collect();
    assert_eq!(blue, BTreeSet::from([id("a"), id("b")]));
    assert_eq!(
        p.list_by_tag(&id("green")).await.unwrap().instances.len(),
        1
    );
    assert!(
        p.list_by_tag(&id("red"))
            .await
            .unwrap()
            .instances
            .is_empty()
    );
}

#[tokio::test]
async fn one_unreadable_vm_is_reported_alone_and_the_others_are_listed() {
    let p = provider().with_boot_observations(0);
    p.create(&spec("a")).await.unwrap();
    p.create(&spec("b")).await.unwrap();
    assert!(p.set_unreadable(&id("b"), Some("agent broken, ARP fails".into())));
    let listing = p.list_by_tag(&id("blue")).await.unwrap();
    assert_eq!(listing.instances.len(), 1);
    assert_eq!(listing.instances[0].uid, id("a"));
    assert!(listing.instances[0].state.is_running());
    assert_eq!(listing.unreadable.len(), 1);
    let sick = &listing.unreadable[0];
    assert_eq!(sick.uid, Some(id("b")));
    assert!(sick.error.is_transient(), "{}", sick.error);
    assert!(
        sick.error.to_string().contains("agent broken"),
        "{}",
        sick.error
    );
    assert!(!listing.is_complete());
    assert_eq!(listing.uids().count(), 2);
    // get: unreadable is not missing.
    assert!(p.get(&id("b")).await.unwrap_err().is_transient());
    // A host that does not answer still fails the whole call.
    p.set_reachable(false);
    assert!(p.list_by_tag(&id("blue")).await.unwrap_err().is_transient());
    p.set_reachable(true);
    p.set_unreadable(&id("b"), None);
    assert_eq!(p.list_by_tag(&id("blue")).await.unwrap().instances.len(), 2);
}

#[tokio::test]
async fn bad_image_and_bad_spec_are_permanent_and_leave_nothing() {
    let p = provider();
    let err = p
        .create(&CreateSpec::new(id("a"), "a", id("debian-99")))
        .await
        .unwrap_err();
    assert!(err.is_permanent());
    let text = err.to_string();
    assert!(
        text.contains("image key \"debian-99\" is not configured"),
        "{text}"
    );
    assert!(text.contains("known: alpine, debian-13"), "{text}");
    assert!(text.contains("add it under this entry's images"), "{text}");

    let err = p.create(&spec("b").with_memory_mib(0)).await.unwrap_err();
    assert!(err.is_permanent());
    let source = std::error::Error::source(&err).expect("field errors kept");
    let fields = source.downcast_ref::<FieldErrors>().expect("typed source");
    assert!(fields.at("spec.memory_mib").is_some());
    assert_eq!(p.vm_count(), 0);
}

#[tokio::test]
async fn an_unreachable_host_is_transient_everywhere_and_vms_survive() {
    let p = provider().with_boot_observations(0);
    p.create(&spec("a")).await.unwrap();
    p.set_reachable(false);

    let e = p.get(&id("a")).await.unwrap_err();
    assert!(e.is_transient(), "never NotFound: {e}");
    assert!(
        e.chain()
            .to_string()
            .ends_with("simulated unreachable host"),
        "the I/O cause is kept: {}",
        e.chain()
    );
    assert!(
        p.delete(&id("a")).await.unwrap_err().is_transient(),
        "never Ok"
    );
    assert!(p.list_by_tag(&id("blue")).await.unwrap_err().is_transient());
    assert!(p.create(&spec("b")).await.unwrap_err().is_transient());

    p.set_reachable(true);
    assert!(p.get(&id("a")).await.unwrap().state.is_running());
    assert_eq!(p.vm_count(), 1);
}

#[tokio::test]
async fn is_usable_as_a_trait_object() {
    let p: std::sync::Arc<dyn Provider> = std::sync::Arc::new(provider());
    assert_eq!(p.name(), "lab");
    p.create(&spec("a")).await.unwrap();
    assert_eq!(p.list_by_tag(&id("blue")).await.unwrap().instances.len(), 1);
}
