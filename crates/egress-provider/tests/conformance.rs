//! The conformance suite, proven on the in-memory reference provider, and
//! shown to catch providers that break the contract.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use egress_provider::conformance::{self, ConformanceFailure, Harness, Step};
use egress_provider::reference::{InMemoryFactory, InMemoryProvider};
use egress_provider::{
    CreateSpec, ErrorKind, Identifier, Instance, InstanceState, Listing, Provider, ProviderError,
    ProviderRegistry, ProvidersConfig,
};
use support::id;

fn lab(name: &str) -> InMemoryProvider {
    InMemoryProvider::new(name).with_image(id("debian-13"))
}

fn harness() -> Harness {
    Harness::new(
        id("debian-13"),
        id("no-such-image"),
        Arc::new(lab("lab-down").unreachable()),
    )
    .with_poll(Duration::from_millis(1), Duration::from_secs(2))
    .with_call_timeout(Duration::from_secs(5))
}

#[tokio::test]
async fn reference_provider_conforms() {
    let provider = Arc::new(lab("lab"));
    let h = harness().with_sickness(provider.clone());
    let report = conformance::assert_conforms(provider.clone(), &h).await;

    assert_eq!(report.provider, "lab");
    let steps: Vec<Step> = report.steps.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        steps,
        [
            Step::Name,
            Step::GetUnknown,
            Step::Create,
            Step::WaitReady,
            Step::ListByTag,
            Step::ListOneUnreadable,
            Step::CreateAgain,
            Step::Delete,
            Step::GetAfterDelete,
            Step::DeleteAgain,
            Step::ListAfterDelete,
            Step::BadImage,
            Step::InvalidSpec,
            Step::Unreachable,
        ]
    );
    assert!(report.skipped.is_empty(), "{report}");
    assert!(report.ready_state.is_running(), "{report}");
    assert!(report.polls >= 2, "boots over two observations: {report}");
    assert_eq!(report.transient_retries, 0);
    assert_eq!(provider.vm_count(), 0, "the suite leaves nothing behind");
    let text = report.to_string();
    assert!(text.contains("passed 14 conformance steps"), "{text}");
}

#[tokio::test]
async fn without_a_sickness_the_unreadable_step_is_skipped_and_named() {
    let report = conformance::assert_conforms(Arc::new(lab("lab")), &harness()).await;
    assert_eq!(report.skipped, [Step::ListOneUnreadable]);
    assert!(
        report.to_string().contains("list-one-unreadable skipped"),
        "{report}"
    );
}

#[tokio::test]
async fn conforms_when_built_from_configuration() {
    // How a provider crate wires the suite: both providers come from config.
    let config = ProvidersConfig::from_yaml_str(
        r#"
providers:
  - name: lab
    type: in-memory
    boot_observations: 5
    allow_unverified_images: true
    images:
      debian-13: {url: "https://images.example/d13.qcow2", format: qcow2}
  - name: lab-down
    type: in-memory
    unreachable: true
    allow_unverified_images: true
    images:
      debian-13: {url: "https://images.example/d13.qcow2", format: qcow2}
"#,
    )
    .unwrap();
    let mut registry = ProviderRegistry::new();
    registry
        .register(InMemoryProvider::TYPE, InMemoryFactory)
        .unwrap();
    let set = registry.build(&config).unwrap();
    let h = Harness::new(
        id("debian-13"),
        id("debian-99"),
        Arc::clone(set.get("lab-down").unwrap()),
    )
    .with_poll(Duration::from_millis(1), Duration::from_secs(2));
    let report = conformance::run(Arc::clone(set.get("lab").unwrap()), &h)
        .await
        .expect("conforms");
    assert!(report.polls >= 5, "{report}");
}

#[tokio::test]
async fn instant_boot_conforms() {
    let provider = Arc::new(lab("lab").with_boot_observations(0));
    let report = conformance::assert_conforms(provider, &harness()).await;
    assert_eq!(report.polls, 1);
}

/// The reference provider with one rule broken on purpose.
struct Flawed {
    inner: InMemoryProvider,
    flaw: Flaw,
    calls: AtomicU32,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Flaw {
    DeleteOfMissingIsNotFound,
    RecreatesOnRepeat,
    BadImageIsTransient,
    ListsWithoutFilter,
    GetFlakesTwice,
    GetHangs,
    DeleteLies,
    EmptyName,
    /// One unreadable instance fails the whole list (kvm2 before issue 19).
    ListFailsOnOneUnreadable,
    /// One unreadable instance is left out of the list, as if it were gone.
    ListDropsUnreadable,
    /// An unreadable instance is listed as if it were readable.
    ListShowsUnreadableAsHealthy,
}

impl Flawed {
    fn new(flaw: Flaw) -> Arc<Self> {
        Arc::new(Self {
            inner: lab("flawed"),
            flaw,
            calls: AtomicU32::new(0),
        })
    }
}

#[async_trait]
impl Provider for Flawed {
    fn name(&self) -> &str {
        if self.flaw == Flaw::EmptyName {
            ""
        } else {
            self.inner.name()
        }
    }

    async fn create(&self, spec: &CreateSpec) -> Result<Instance, ProviderError> {
        match self.flaw {
            Flaw::BadImageIsTransient if spec.image == "no-such-image" => {
                Err(ProviderError::transient("image fetch failed"))
            }
            Flaw::RecreatesOnRepeat => {
                let mut inst = self.inner.create(spec).await?;
                let n = self.calls.fetch_add(1, Ordering::SeqCst);
                inst.created_at += Duration::from_secs(u64::from(n));
                Ok(inst)
            }
            _ => self.inner.create(spec).await,
        }
    }

    async fn get(&self, uid: &Identifier) -> Result<Instance, ProviderError> {
        match self.flaw {
            Flaw::GetFlakesTwice if self.calls.fetch_add(1, Ordering::SeqCst) < 2 => {
                Err(ProviderError::transient("connection reset"))
            }
            Flaw::GetHangs if self.inner.vm_count() > 0 => std::future::pending().await,
            _ => self.inner.get(uid).await,
        }
    }

    async fn delete(&self, uid: &Identifier) -> Result<(), ProviderError> {
        match self.flaw {
            Flaw::DeleteOfMissingIsNotFound => {
                self.inner.get(uid).await?;
                self.inner.delete(uid).await
            }
            Flaw::DeleteLies => Ok(()),
            _ => self.inner.delete(uid).await,
        }
    }

    async fn list_by_tag(&self, tag: &Identifier) -> Result<Listing, ProviderError> {
        let mut listing = self.inner.list_by_tag(tag).await?;
        match self.flaw {
            Flaw::ListsWithoutFilter => {
                for inst in &mut listing.instances {
                    inst.tags.clear();
                }
            }
            Flaw::ListFailsOnOneUnreadable => {
                if let Some(u) = listing.unreadable.pop() {
                    return Err(u.error);
                }
            }
            Flaw::ListDropsUnreadable => listing.unreadable.clear(),
            Flaw::ListShowsUnreadableAsHealthy => {
                for u in std::mem::take(&mut listing.unreadable) {
                    let uid = u.uid.expect("the reference knows its uids");
                    listing.instances.push(
                        Instance::new(
                            self.name(),
                            uid,
                            "egress-provider conformance",
                            InstanceState::Provisioning,
                            std::time::SystemTime::now(),
                        )
                        .with_tags([tag.clone()]),
                    );
                }
            }
            _ => {}
        }
        Ok(listing)
    }
}

async fn failure(flaw: Flaw) -> (ConformanceFailure, Arc<Flawed>) {
    let p = Flawed::new(flaw);
    let failure = conformance::run(p.clone(), &harness())
        .await
        .expect_err("a flawed provider must fail");
    (failure, p)
}

/// The flawed provider's VMs can be made unreadable through its inner reference provider.
struct Inner(Arc<Flawed>);

#[async_trait]
impl conformance::Sickness for Inner {
    async fn inflict(&self, uid: &Identifier) {
        conformance::Sickness::inflict(&self.0.inner, uid).await;
    }
    async fn cure(&self, uid: &Identifier) {
        conformance::Sickness::cure(&self.0.inner, uid).await;
    }
}

async fn unreadable_failure(flaw: Flaw) -> ConformanceFailure {
    let p = Flawed::new(flaw);
    let h = harness().with_sickness(Arc::new(Inner(p.clone())));
    let failure = conformance::run(p.clone(), &h)
        .await
        .expect_err("a flawed provider must fail");
    assert_eq!(p.inner.vm_count(), 0, "cleaned up after the failure");
    failure
}

#[tokio::test]
async fn catches_a_list_that_fails_for_one_unreadable_instance() {
    let f = unreadable_failure(Flaw::ListFailsOnOneUnreadable).await;
    assert_eq!(f.step, Step::ListOneUnreadable, "{f}");
    assert!(f.message.contains("not hide the others"), "{f}");
}

#[tokio::test]
async fn catches_a_list_that_drops_an_unreadable_instance() {
    let f = unreadable_failure(Flaw::ListDropsUnreadable).await;
    assert_eq!(f.step, Step::ListOneUnreadable, "{f}");
    assert!(f.message.contains("0 times in Listing::unreadable"), "{f}");
}

#[tokio::test]
async fn catches_a_list_that_shows_an_unreadable_instance_as_healthy() {
    let f = unreadable_failure(Flaw::ListShowsUnreadableAsHealthy).await;
    assert_eq!(f.step, Step::ListOneUnreadable, "{f}");
    assert!(f.message.contains("must be in Listing::unreadable"), "{f}");
}

#[tokio::test]
async fn catches_delete_that_is_not_idempotent() {
    let (f, p) = failure(Flaw::DeleteOfMissingIsNotFound).await;
    assert_eq!(f.step, Step::DeleteAgain, "{f}");
    assert_eq!(
        f.source.as_ref().map(ProviderError::kind),
        Some(ErrorKind::NotFound)
    );
    assert_eq!(p.inner.vm_count(), 0);
}

#[tokio::test]
async fn catches_create_that_makes_a_second_vm() {
    let (f, p) = failure(Flaw::RecreatesOnRepeat).await;
    assert_eq!(f.step, Step::CreateAgain, "{f}");
    assert!(f.message.contains("second VM"), "{f}");
    assert_eq!(p.inner.vm_count(), 0, "cleaned up after the failure");
}

#[tokio::test]
async fn catches_misclassified_bad_image() {
    let (f, _) = failure(Flaw::BadImageIsTransient).await;
    assert_eq!(f.step, Step::BadImage, "{f}");
    assert!(
        f.message.contains("must be permanent, got transient"),
        "{f}"
    );
}

#[tokio::test]
async fn catches_list_results_without_the_tag() {
    let (f, _) = failure(Flaw::ListsWithoutFilter).await;
    assert_eq!(f.step, Step::ListByTag, "{f}");
}

#[tokio::test]
async fn catches_a_delete_that_leaves_the_vm() {
    let (f, _) = failure(Flaw::DeleteLies).await;
    assert_eq!(f.step, Step::GetAfterDelete, "{f}");
}

#[tokio::test]
async fn catches_an_empty_name() {
    let (f, _) = failure(Flaw::EmptyName).await;
    assert_eq!(f.step, Step::Name, "{f}");
}

#[tokio::test]
async fn transient_blips_are_retried_and_counted() {
    let p = Flawed::new(Flaw::GetFlakesTwice);
    let report = conformance::run(p, &harness())
        .await
        .expect("blips are fine");
    assert_eq!(report.transient_retries, 2, "{report}");
}

#[tokio::test(start_paused = true)]
async fn a_hanging_call_is_bounded() {
    let p = Flawed::new(Flaw::GetHangs);
    let h = harness().with_call_timeout(Duration::from_secs(30));
    let f = conformance::run(p.clone(), &h).await.expect_err("hangs");
    assert_eq!(f.step, Step::WaitReady, "{f}");
    assert!(f.message.contains("did not return within 30s"), "{f}");
    assert_eq!(p.inner.vm_count(), 0, "cleaned up after the failure");
}

#[tokio::test(start_paused = true)]
async fn waiting_for_running_is_bounded() {
    let slow = || Arc::new(lab("slow").with_boot_observations(u32::MAX));
    let h = harness().with_poll(Duration::from_secs(1), Duration::from_secs(60));
    let f = conformance::run(slow(), &h).await.expect_err("never runs");
    assert_eq!(f.step, Step::WaitReady);
    assert!(f.message.contains("still provisioning"), "{f}");

    // A backend whose guests get no address in the test bed may opt out.
    let report = conformance::run(slow(), &h.with_require_running(false))
        .await
        .expect("provisioning accepted");
    assert_eq!(report.ready_state, InstanceState::Provisioning);
}

#[tokio::test]
async fn an_unreachable_host_must_not_answer_not_found() {
    // Pointing the unreachable slot at a reachable provider is how a provider
    // that swallows connection errors looks to the suite.
    let h = Harness::new(id("debian-13"), id("no-such-image"), Arc::new(lab("up")))
        .with_poll(Duration::from_millis(1), Duration::from_secs(2));
    let f = conformance::run(Arc::new(lab("lab")), &h)
        .await
        .expect_err("must fail");
    assert_eq!(f.step, Step::Unreachable);
    assert!(
        f.message
            .contains("create on an unreachable host must fail as transient"),
        "{f}"
    );
}

#[tokio::test]
#[should_panic(expected = "failed conformance step `delete-again`")]
async fn assert_conforms_panics_with_the_step() {
    conformance::assert_conforms(Flawed::new(Flaw::DeleteOfMissingIsNotFound), &harness()).await;
}
