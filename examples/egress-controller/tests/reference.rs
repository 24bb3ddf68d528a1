//! The reconcile decisions against the in-memory reference provider (`egress-provider`),
//! built by the registry from YAML like the real configuration. Time is an input
//! (`now`), so the grace period is tested without sleeping.
//!
//! The reference provider cannot make a running VM read as `Provisioning` again; the grace
//! test wraps it in [`Blip`], a labelled test double that answers `Provisioning` while a
//! flag is set (what an agent restart looks like) and forwards everything else.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use egress_controller::reconcile::{Outcome, Policy, Proxy, Reconciler, Secrets, condition};
use egress_controller::resource::{EgressProxySpec, EgressProxyStatus, SecretKeyRef};
use egress_provider::reference::InMemoryProvider;
use egress_provider::{
    FieldErrors, Identifier, Instance, InstanceState, Listing, Provider, ProviderEntry,
    ProviderError, ProviderFactory, ProviderRegistry, ProvidersConfig, reference,
};

const UID: &str = "5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b";

/// The reference provider, plus a switch that makes `get` answer `Provisioning` (test
/// double: an agent restart inside a running VM, which the reference cannot produce).
struct Blip {
    inner: InMemoryProvider,
    provisioning: AtomicBool,
    creates: Mutex<Vec<Vec<u8>>>,
    /// `create` fails Permanent with this message (a provider whose error names a URL).
    create_error: Mutex<Option<String>>,
}

#[async_trait]
impl Provider for Blip {
    fn name(&self) -> &str {
        self.inner.name()
    }
    async fn create(&self, spec: &egress_provider::CreateSpec) -> Result<Instance, ProviderError> {
        self.creates.lock().unwrap().push(spec.user_data.clone());
        if let Some(m) = self.create_error.lock().unwrap().clone() {
            return Err(ProviderError::permanent(m));
        }
        self.inner.create(spec).await
    }
    async fn get(&self, uid: &Identifier) -> Result<Instance, ProviderError> {
        let mut i = self.inner.get(uid).await?;
        if self.provisioning.load(Ordering::SeqCst) {
            i.state = InstanceState::Provisioning;
        }
        Ok(i)
    }
    async fn delete(&self, uid: &Identifier) -> Result<(), ProviderError> {
        self.inner.delete(uid).await
    }
    async fn list_by_tag(&self, tag: &Identifier) -> Result<Listing, ProviderError> {
        self.inner.list_by_tag(tag).await
    }
}

/// Hands out the one shared [`Blip`] for entries of type `blip`.
struct BlipFactory(Arc<Blip>);

impl ProviderFactory for BlipFactory {
    type Settings = egress_provider::NoSettings;
    fn build(
        &self,
        _: &ProviderEntry,
        _: Self::Settings,
    ) -> Result<Arc<dyn Provider>, FieldErrors> {
        Ok(self.0.clone())
    }
}

struct Bed {
    r: Reconciler,
    vm: Arc<Blip>,
    t0: SystemTime,
}

const CONFIG: &str = r#"
providers:
  - name: lab
    type: blip
    allow_unverified_images: true
    images:
      debian-13: { url: "https://images.example/d13.raw", format: raw }
      debian-14: { url: "https://images.example/d14.raw", format: raw }
  - name: mem
    type: in-memory
    allow_unverified_images: true
    images:
      debian-13: { url: "https://images.example/d13.raw", format: raw }
"#;

fn bed() -> Bed {
    let vm = Arc::new(Blip {
        inner: InMemoryProvider::new("lab")
            .with_images([id("debian-13"), id("debian-14")])
            .with_boot_observations(1),
        provisioning: AtomicBool::new(false),
        creates: Mutex::new(Vec::new()),
        create_error: Mutex::new(None),
    });
    let config = ProvidersConfig::from_yaml_str(CONFIG).unwrap();
    let mut registry = ProviderRegistry::new();
    registry.register("blip", BlipFactory(vm.clone())).unwrap();
    registry
        .register(InMemoryProvider::TYPE, reference::InMemoryFactory)
        .unwrap();
    let set = registry.build(&config).unwrap();
    let r = Reconciler::new(set, &config, Policy::default());
    Bed {
        r,
        vm,
        t0: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
    }
}

fn id(s: &str) -> Identifier {
    Identifier::new(s).unwrap()
}

fn spec() -> EgressProxySpec {
    EgressProxySpec::new("lab", "debian-13")
        .with_size_and_tags(256, &["egress"])
        .with_user_data("proxy-user-data", "user-data")
}

/// Secrets in memory: (name, key) → bytes.
#[derive(Default)]
struct MapSecrets(BTreeMap<(String, String), Vec<u8>>);

#[async_trait]
impl Secrets for MapSecrets {
    async fn read(&self, r: &SecretKeyRef) -> Result<Vec<u8>, ProviderError> {
        self.0
            .get(&(r.name.clone(), r.key.clone()))
            .cloned()
            .ok_or_else(|| ProviderError::permanent(format!("no Secret {:?}", r.name)))
    }
}

fn secrets() -> MapSecrets {
    let mut m = MapSecrets::default();
    m.0.insert(
        ("proxy-user-data".into(), "user-data".into()),
        b"#cloud-config\npassword: hunter2\n".to_vec(),
    );
    m
}

async fn apply(
    b: &Bed,
    spec: &EgressProxySpec,
    status: Option<&EgressProxyStatus>,
    at: Duration,
) -> Outcome {
    let proxy = Proxy {
        uid: UID,
        name: "default/egress-a",
        generation: Some(1),
        spec,
        status,
    };
    b.r.apply(proxy, &secrets(), b.t0 + at).await
}

fn cond<'a>(st: &'a EgressProxyStatus, ty: &str) -> (&'a str, &'a str) {
    let c = condition(st, ty).unwrap_or_else(|| panic!("no {ty} condition in {st:?}"));
    (c.status.as_str(), c.reason.as_str())
}

/// Create → Provisioning → Running with the IP in the status; the user-data is read from
/// the Secret and handed to the provider, and appears nowhere in the status.
async fn running(b: &Bed, spec: &EgressProxySpec) -> EgressProxyStatus {
    let first = apply(b, spec, None, Duration::ZERO).await;
    assert_eq!(first.status.state.as_deref(), Some("Provisioning"));
    assert_eq!(first.status.ip, None);
    assert_eq!(first.status.applied.as_ref(), Some(spec));
    assert_eq!(first.requeue_after, Policy::default().poll_provisioning);
    assert_eq!(cond(&first.status, "Ready"), ("False", "Provisioning"));
    let second = apply(b, spec, Some(&first.status), Duration::from_secs(5)).await;
    assert_eq!(second.status.state.as_deref(), Some("Running"));
    assert_eq!(second.status.ip.as_deref(), Some("192.0.2.1"));
    assert_eq!(cond(&second.status, "Ready"), ("True", "Running"));
    assert_eq!(cond(&second.status, "Failed"), ("False", "NoError"));
    assert_eq!(cond(&second.status, "SpecApplied"), ("True", "Applied"));
    assert_eq!(second.status.observed_generation, Some(1));
    assert_eq!(second.requeue_after, Policy::default().poll_running);
    second.status
}

#[tokio::test]
async fn create_then_running_with_ip_in_status() {
    let b = bed();
    let st = running(&b, &spec()).await;
    assert_eq!(b.vm.inner.vm_count(), 1);
    assert_eq!(
        b.vm.creates.lock().unwrap().as_slice(),
        [b"#cloud-config\npassword: hunter2\n".to_vec()]
    );
    let json = serde_json::to_string(&st).unwrap();
    assert!(!json.contains("hunter2"), "{json}");
    // Nothing changes: the same status again (the kube side writes nothing).
    let again = apply(&b, &spec(), Some(&st), Duration::from_secs(70)).await;
    assert_eq!(again.status, st);
}

#[tokio::test]
async fn immutable_field_change_is_a_condition_and_the_vm_stays() {
    let b = bed();
    let st = running(&b, &spec()).await;
    let mut changed = spec();
    changed.image = "debian-14".into();
    changed.vcpus = 2;
    let out = apply(&b, &changed, Some(&st), Duration::from_secs(10)).await;
    let c = condition(&out.status, "SpecApplied").unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "ImmutableFieldChanged")
    );
    assert!(
        c.message.contains("spec.image, spec.vcpus") && c.message.contains("delete"),
        "{}",
        c.message
    );
    assert_eq!(
        out.status.applied.as_ref(),
        Some(&spec()),
        "applied = as created"
    );
    assert_eq!(out.status.ip.as_deref(), Some("192.0.2.1"));
    assert_eq!(cond(&out.status, "Ready"), ("True", "Running"));
    assert_eq!(b.vm.inner.vm_count(), 1, "no second VM");
    assert_eq!(b.vm.creates.lock().unwrap().len(), 1, "no create");
    // Changing it back clears the condition.
    let back = apply(&b, &spec(), Some(&out.status), Duration::from_secs(20)).await;
    assert_eq!(cond(&back.status, "SpecApplied"), ("True", "Applied"));
}

#[tokio::test]
async fn delete_removes_the_instance_from_the_entry_it_was_created_on() {
    let b = bed();
    let st = running(&b, &spec()).await;
    // Even with spec.provider changed since, cleanup deletes on the entry of `applied`.
    let mut moved = spec();
    moved.provider = "mem".into();
    let proxy = Proxy {
        uid: UID,
        name: "default/egress-a",
        generation: Some(2),
        spec: &moved,
        status: Some(&st),
    };
    b.r.cleanup(proxy).await.unwrap();
    assert_eq!(b.vm.inner.vm_count(), 0);
    assert!(b.vm.get(&id(UID)).await.unwrap_err().is_not_found());
    // Again: gone already is success (the finalizer may be retried).
    b.r.cleanup(proxy).await.unwrap();
    // A host that does not answer keeps the finalizer: an error, never Ok.
    b.vm.inner.set_reachable(false);
    assert!(b.r.cleanup(proxy).await.unwrap_err().is_transient());
}

#[tokio::test]
async fn transient_errors_requeue_with_backoff_and_keep_the_last_state() {
    let b = bed();
    let st = running(&b, &spec()).await;
    b.vm.inner.set_reachable(false);
    let p = Policy::default();
    let mut waits = Vec::new();
    for n in 1..=4 {
        let out = apply(&b, &spec(), Some(&st), Duration::from_secs(10 * n)).await;
        assert_eq!(out.transient, Some(u32::try_from(n).unwrap()));
        assert_eq!(
            out.status, st,
            "unreadable is not missing: status unchanged"
        );
        waits.push(out.requeue_after);
    }
    assert_eq!(
        waits,
        [p.backoff(1), p.backoff(2), p.backoff(3), p.backoff(4)]
    );
    assert_eq!(
        waits,
        [2, 4, 8, 16].map(Duration::from_secs),
        "doubling from 2 s"
    );
    assert_eq!(p.backoff(30), p.backoff_max);
    b.vm.inner.set_reachable(true);
    let out = apply(&b, &spec(), Some(&st), Duration::from_secs(60)).await;
    assert_eq!(out.transient, None);
    assert_eq!(out.requeue_after, p.poll_running);
    // The count starts again after a success.
    b.vm.inner.set_reachable(false);
    let out = apply(&b, &spec(), Some(&st), Duration::from_secs(70)).await;
    assert_eq!(out.transient, Some(1));
}

#[tokio::test]
async fn permanent_errors_set_the_failed_condition() {
    let b = bed();
    let mut bad = spec();
    bad.image = "debian-99".into();
    let out = apply(&b, &bad, None, Duration::ZERO).await;
    let c = condition(&out.status, "Failed").unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("True", "PermanentError")
    );
    assert!(c.message.contains("debian-99"), "{}", c.message);
    assert_eq!(out.status.state.as_deref(), Some("Pending"));
    assert_eq!(out.transient, None);
    assert_eq!(out.requeue_after, Policy::default().permanent_retry);
    assert_eq!(b.vm.inner.vm_count(), 0);
    // A missing Secret and an unknown entry are Permanent too, naming what to fix.
    let mut no_secret = spec();
    no_secret.user_data.as_mut().unwrap().name = "missing".into();
    let out = apply(&b, &no_secret, None, Duration::ZERO).await;
    assert!(
        condition(&out.status, "Failed")
            .unwrap()
            .message
            .contains("missing")
    );
    let mut no_entry = spec();
    no_entry.provider = "kvm-z".into();
    let out = apply(&b, &no_entry, None, Duration::ZERO).await;
    let m = &condition(&out.status, "Failed").unwrap().message;
    assert!(
        m.contains("\"kvm-z\" is not configured (known: lab, mem)"),
        "{m}"
    );
    // Fixed: the next reconcile creates it and the Failed condition clears.
    let out = apply(&b, &spec(), Some(&out.status), Duration::from_secs(300)).await;
    assert_eq!(cond(&out.status, "Failed"), ("False", "NoError"));
    assert_eq!(b.vm.inner.vm_count(), 1);
}

/// A provider's error that names an image URL with credentials (a user and password, a
/// signed query) reaches the custom resource's status without them: the status is readable
/// by whoever may read the resource.
#[tokio::test]
async fn urls_in_errors_reach_the_status_without_credentials() {
    let b = bed();
    *b.vm.create_error.lock().unwrap() = Some(
        "fetch image \"debian-13\" from https://ops:hunter2@mirror.example/d13.raw?X-Token=s3cret: \
         the mirror answered 404 Not Found"
            .into(),
    );
    let out = apply(&b, &spec(), None, Duration::ZERO).await;
    let shown = format!("{:?}", out.status);
    for secret in ["hunter2", "s3cret", "ops:"] {
        assert!(!shown.contains(secret), "{secret:?} in the status: {shown}");
    }
    let m = &condition(&out.status, "Failed").unwrap().message;
    assert!(
        m.contains("https://***@mirror.example/d13.raw?***: the mirror answered 404"),
        "{m}"
    );
}

#[tokio::test]
async fn grace_period_keeps_the_ip_across_a_provisioning_blip() {
    let b = bed();
    let p = Policy::default();
    let st = running(&b, &spec()).await;
    // The agent restarts: the running VM reads as Provisioning.
    b.vm.provisioning.store(true, Ordering::SeqCst);
    let blip = apply(&b, &spec(), Some(&st), Duration::from_secs(100)).await;
    assert_eq!(blip.status.state.as_deref(), Some("Provisioning"));
    assert_eq!(blip.status.ip.as_deref(), Some("192.0.2.1"), "IP kept");
    assert_eq!(cond(&blip.status, "Ready"), ("True", "AddressGrace"));
    assert!(blip.status.provisioning_since.is_some());
    assert_eq!(blip.requeue_after, p.poll_provisioning);
    // Still inside the grace period (89 s after the blip began): still kept.
    let inside = apply(&b, &spec(), Some(&blip.status), Duration::from_secs(189)).await;
    assert_eq!(inside.status.ip.as_deref(), Some("192.0.2.1"));
    assert_eq!(
        inside.status.provisioning_since, blip.status.provisioning_since,
        "measured from the first Provisioning answer"
    );
    assert_eq!(
        inside.requeue_after,
        Duration::from_secs(1),
        "not past the grace"
    );
    // The agent is back: Running, the blip forgotten.
    b.vm.provisioning.store(false, Ordering::SeqCst);
    let back = apply(&b, &spec(), Some(&inside.status), Duration::from_secs(190)).await;
    assert_eq!(back.status.state.as_deref(), Some("Running"));
    assert_eq!(back.status.provisioning_since, None);
    assert_eq!(cond(&back.status, "Ready"), ("True", "Running"));
    // A blip longer than the grace period clears the IP.
    b.vm.provisioning.store(true, Ordering::SeqCst);
    let start = apply(&b, &spec(), Some(&back.status), Duration::from_secs(200)).await;
    assert_eq!(start.status.ip.as_deref(), Some("192.0.2.1"));
    let past = apply(&b, &spec(), Some(&start.status), Duration::from_secs(290)).await;
    assert_eq!(past.status.ip, None, "grace of {:?} is over", p.ip_grace);
    assert_eq!(past.status.provisioning_since, None);
    assert_eq!(cond(&past.status, "Ready"), ("False", "Provisioning"));
}

#[tokio::test]
async fn a_vm_gone_behind_our_back_is_created_again() {
    let b = bed();
    let st = running(&b, &spec()).await;
    b.vm.delete(&id(UID)).await.unwrap();
    let out = apply(&b, &spec(), Some(&st), Duration::from_secs(30)).await;
    assert_eq!(b.vm.inner.vm_count(), 1);
    assert_eq!(b.vm.creates.lock().unwrap().len(), 2);
    assert_eq!(out.status.applied.as_ref(), Some(&spec()));
}
