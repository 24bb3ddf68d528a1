//! The conformance suite every provider must pass (feature `conformance`).
//!
//! A provider crate runs it from its own integration tests against a real
//! backend:
//!
//! ```no_run
//! # async fn example(
//! #     provider: std::sync::Arc<dyn egress_provider::Provider>,
//! #     unreachable: std::sync::Arc<dyn egress_provider::Provider>,
//! # ) -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use egress_provider::{Identifier, conformance::{Harness, assert_conforms}};
//!
//! // `unreachable`: the same provider type configured for a host that does
//! // not answer, e.g. a closed port on 127.0.0.1.
//! let harness = Harness::new(
//!     Identifier::new("debian-13")?,
//!     Identifier::new("no-such-image")?,
//!     unreachable,
//! )
//! .with_poll(Duration::from_secs(2), Duration::from_secs(300));
//! let report = assert_conforms(provider, &harness).await;
//! println!("{report}");
//! # Ok(()) }
//! ```
//!
//! The steps, in order (each one's name is a [`Step`]):
//!
//! 1. `name` is not empty; `get` of a uid never created is `NotFound`.
//! 2. `create` answers `Provisioning` or `Running` with the spec's uid,
//!    name and tags and the provider's name.
//! 3. `get` is polled until `Running` (or, if the harness allows, still
//!    `Provisioning` when the budget ends). `Transient` errors are retried;
//!    `NotFound`, `Permanent`, `Stopped` and `Failed` fail the suite.
//! 4. `list_by_tag` finds exactly this instance once; another tag does not.
//!    With a [`Sickness`] in the harness, a second instance with the same tag is
//!    made unreadable: `list_by_tag` still succeeds, lists the first one as
//!    before and reports the sick one once in [`Listing::unreadable`] (never as
//!    a normal instance, never by failing the call); `get` of the sick one is an
//!    error other than `NotFound`. Without one, the step is skipped (and named in
//!    [`ConformanceReport::skipped`]).
//! 5. `create` again with the same uid answers the same instance (same
//!    `created_at`) and no second one is listed.
//! 6. `delete` succeeds; `get` is then `NotFound`; `delete` again succeeds;
//!    `list_by_tag` no longer finds it.
//! 7. A bad image key and an invalid spec are `Permanent` and leave nothing
//!    behind.
//! 8. On the unreachable provider, `create`, `get`, `list_by_tag` and
//!    `delete` are all `Transient` (never `NotFound`, never success).
//!
//! Waiting is bounded: every call is limited by
//! [`Harness::call_timeout`] and polling by [`Harness::poll_budget`]. On a
//! failure the suite deletes what it created (best effort) before
//! returning.

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use tokio::time::{Instant, sleep, timeout};

use crate::error::{Chain, ErrorKind, ProviderError};
use crate::identifier::{IDENTIFIER_MAX_LEN, Identifier};
use crate::instance::{Instance, InstanceState};
use crate::listing::Listing;
use crate::provider::Provider;
use crate::spec::CreateSpec;

/// What the suite uses: image keys, the unreachable provider, names,
/// resources and time budgets.
#[derive(Clone)]
#[non_exhaustive]
pub struct Harness {
    /// An image key the provider under test can boot.
    pub valid_image: Identifier,
    /// An image key the provider does not know.
    pub bad_image: Identifier,
    /// The same provider type, pointed at a host that does not answer
    /// (a closed loopback port, say). Must know `valid_image`.
    pub unreachable: Arc<dyn Provider>,
    /// The uid of the instance the suite creates. Default: unique per run.
    pub uid: Identifier,
    /// The tag the suite creates it with. Default: unique per run.
    pub tag: Identifier,
    /// The test instance: display name, vCPUs, memory, user-data, SSH keys and
    /// any extra tags; default 1 vCPU, 512 MiB, no user-data, no keys. Each
    /// step creates it under its own uid and image, with [`tag`](Self::tag)
    /// added. Change it with [`with_spec`](Self::with_spec) and `CreateSpec`'s
    /// own `with_*` methods.
    pub spec: CreateSpec,
    /// Pause between polls of `get`; default 2 s.
    pub poll_interval: Duration,
    /// How long to poll for `Running`; default 5 min.
    pub poll_budget: Duration,
    /// Longest any single provider call may take; default 2 min.
    pub call_timeout: Duration,
    /// Whether the instance must reach `Running` within the budget (default
    /// `true`). `false` accepts `Provisioning` at the end, for backends whose
    /// guests never get an address in the test environment.
    pub require_running: bool,
    /// How to make one instance unreadable on the backend, for the step
    /// [`Step::ListOneUnreadable`]; skipped when `None` (the default).
    pub sickness: Option<Arc<dyn Sickness>>,
}

/// Makes one instance unreadable on a real backend, the way it can happen there (for a
/// KVM host: a guest whose address no source can read, a domain whose metadata is
/// damaged), so the suite can check that `list_by_tag` reports it on its own and still
/// lists the others.
#[async_trait]
pub trait Sickness: Send + Sync {
    /// Makes the instance `uid` (just created by the suite) unreadable.
    async fn inflict(&self, uid: &Identifier);
    /// Undoes [`inflict`](Self::inflict), so the suite can delete the instance.
    async fn cure(&self, uid: &Identifier);
}

/// The reference provider's sickness: [`set_unreadable`](crate::reference::InMemoryProvider::set_unreadable).
#[async_trait]
impl Sickness for crate::reference::InMemoryProvider {
    async fn inflict(&self, uid: &Identifier) {
        self.set_unreadable(uid, Some("no address source answers".into()));
    }

    async fn cure(&self, uid: &Identifier) {
        self.set_unreadable(uid, None);
    }
}

impl Harness {
    /// A harness with defaults and a fresh uid and tag.
    pub fn new(
        valid_image: Identifier,
        bad_image: Identifier,
        unreachable: Arc<dyn Provider>,
    ) -> Self {
        let suffix = run_suffix();
        let uid = Identifier::new(format!("conformance-{suffix}")).expect("valid by construction");
        let spec = CreateSpec::new(
            uid.clone(),
            "egress-provider conformance",
            valid_image.clone(),
        )
        .with_vcpus(1)
        .with_memory_mib(512);
        Self {
            valid_image,
            bad_image,
            unreachable,
            uid,
            tag: Identifier::new(format!("conformance-tag-{suffix}"))
                .expect("valid by construction"),
            spec,
            poll_interval: Duration::from_secs(2),
            poll_budget: Duration::from_secs(300),
            call_timeout: Duration::from_secs(120),
            require_running: true,
            sickness: None,
        }
    }

    /// Sets the poll interval and budget.
    #[must_use]
    pub fn with_poll(mut self, interval: Duration, budget: Duration) -> Self {
        self.poll_interval = interval;
        self.poll_budget = budget;
        self
    }

    /// Sets the per-call timeout.
    #[must_use]
    pub fn with_call_timeout(mut self, limit: Duration) -> Self {
        self.call_timeout = limit;
        self
    }

    /// Sets the uid of the test instance.
    #[must_use]
    pub fn with_uid(mut self, uid: Identifier) -> Self {
        self.uid = uid;
        self
    }

    /// Sets the tag of the test instance.
    #[must_use]
    pub fn with_tag(mut self, tag: Identifier) -> Self {
        self.tag = tag;
        self
    }

    /// Changes the test instance's spec, e.g.
    /// `.with_spec(|s| s.with_memory_mib(128).with_user_data(b"#cloud-config\n".to_vec()))`.
    #[must_use]
    pub fn with_spec(mut self, f: impl FnOnce(CreateSpec) -> CreateSpec) -> Self {
        self.spec = f(self.spec);
        self
    }

    /// Sets whether `Running` must be reached within the poll budget.
    #[must_use]
    pub fn with_require_running(mut self, require: bool) -> Self {
        self.require_running = require;
        self
    }

    /// Sets how to make one instance unreadable (enables [`Step::ListOneUnreadable`]).
    #[must_use]
    pub fn with_sickness(mut self, sickness: Arc<dyn Sickness>) -> Self {
        self.sickness = Some(sickness);
        self
    }

    /// The test instance's spec under `uid` and `image`, carrying the suite's tag.
    fn spec_for(&self, uid: Identifier, image: Identifier) -> CreateSpec {
        let mut spec = self.spec.clone().with_tag(self.tag.clone());
        spec.uid = uid;
        spec.image = image;
        spec
    }
}

impl fmt::Debug for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Harness")
            .field("valid_image", &self.valid_image)
            .field("bad_image", &self.bad_image)
            .field("unreachable", &self.unreachable.name())
            .field("uid", &self.uid)
            .field("tag", &self.tag)
            .field("spec", &self.spec)
            .field("poll_interval", &self.poll_interval)
            .field("poll_budget", &self.poll_budget)
            .field("call_timeout", &self.call_timeout)
            .field("require_running", &self.require_running)
            .field("sickness", &self.sickness.is_some())
            .finish_non_exhaustive()
    }
}

// Unique enough across runs and harnesses that a real backend's leftovers
// from an earlier, aborted run never collide.
fn run_suffix() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mixed = (nanos as u64) ^ (u64::from(std::process::id()) << 24);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{:010x}-{n}", mixed & 0xff_ffff_ffff)
}

/// `base-suffix`, shortening `base` to stay within the identifier limit.
fn derived_uid(base: &Identifier, suffix: &str) -> Identifier {
    let keep = IDENTIFIER_MAX_LEN - suffix.len() - 1;
    let head: String = base.as_str().chars().take(keep).collect();
    Identifier::new(format!("{head}-{suffix}")).expect("valid by construction")
}

/// One step of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Step {
    /// `name()` is not empty.
    Name,
    /// `get` of a uid never created is `NotFound`.
    GetUnknown,
    /// `create` answers a matching instance.
    Create,
    /// `get` reaches `Running` (or `Provisioning`, if allowed) in budget.
    WaitReady,
    /// `list_by_tag` finds the instance exactly once.
    ListByTag,
    /// One unreadable instance is reported on its own; the others are listed.
    ListOneUnreadable,
    /// `create` again returns the same instance.
    CreateAgain,
    /// `delete` succeeds.
    Delete,
    /// `get` after `delete` is `NotFound`.
    GetAfterDelete,
    /// `delete` of what is gone succeeds.
    DeleteAgain,
    /// `list_by_tag` after `delete` no longer finds it.
    ListAfterDelete,
    /// A bad image key is `Permanent` and leaves nothing behind.
    BadImage,
    /// An invalid spec is `Permanent` and leaves nothing behind.
    InvalidSpec,
    /// Every call on an unreachable host is `Transient`.
    Unreachable,
}

impl Step {
    /// A short kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::GetUnknown => "get-unknown",
            Self::Create => "create",
            Self::WaitReady => "wait-ready",
            Self::ListByTag => "list-by-tag",
            Self::ListOneUnreadable => "list-one-unreadable",
            Self::CreateAgain => "create-again",
            Self::Delete => "delete",
            Self::GetAfterDelete => "get-after-delete",
            Self::DeleteAgain => "delete-again",
            Self::ListAfterDelete => "list-after-delete",
            Self::BadImage => "bad-image",
            Self::InvalidSpec => "invalid-spec",
            Self::Unreachable => "unreachable",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a passing run saw.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConformanceReport {
    /// The provider's name.
    pub provider: String,
    /// Each step passed, with how long it took, in order.
    pub steps: Vec<(Step, Duration)>,
    /// Steps skipped because the harness lacks what they need.
    pub skipped: Vec<Step>,
    /// How many times `get` was called while waiting.
    pub polls: u32,
    /// `Transient` errors retried on the happy path (create, get, list, delete).
    pub transient_retries: u32,
    /// The state the wait ended in: `Running`, or `Provisioning` if allowed.
    pub ready_state: InstanceState,
    /// Wall time of the whole run.
    pub elapsed: Duration,
}

impl fmt::Display for ConformanceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "provider {:?} passed {} conformance steps in {:.1?} ({} polls, {} transient retries, ready state: {})",
            self.provider,
            self.steps.len(),
            self.elapsed,
            self.polls,
            self.transient_retries,
            self.ready_state
        )?;
        for (step, took) in &self.steps {
            writeln!(f, "  ok  {:<19} {took:.1?}", step.as_str())?;
        }
        for step in &self.skipped {
            writeln!(f, "  --  {:<19} skipped", step.as_str())?;
        }
        Ok(())
    }
}

/// Why a run failed: the step, what was expected, and the provider's error.
#[derive(Debug, thiserror::Error)]
#[error("provider {provider:?} failed conformance step `{step}`: {message}")]
#[non_exhaustive]
pub struct ConformanceFailure {
    /// The provider's name.
    pub provider: String,
    /// The step that failed.
    pub step: Step,
    /// What was expected and what happened instead.
    pub message: String,
    /// The provider's error, when the failure is about one.
    #[source]
    pub source: Option<ProviderError>,
}

/// Runs the suite and returns the report, or the first failure.
pub async fn run(
    provider: Arc<dyn Provider>,
    harness: &Harness,
) -> Result<ConformanceReport, ConformanceFailure> {
    let mut runner = Runner::new(provider, harness);
    let result = runner.all_steps().await;
    if result.is_err() {
        runner.cleanup().await;
    }
    result.map(|ready_state| runner.into_report(ready_state))
}

/// Runs the suite and panics with the failure's full message if it fails.
pub async fn assert_conforms(provider: Arc<dyn Provider>, harness: &Harness) -> ConformanceReport {
    match run(provider, harness).await {
        Ok(report) => report,
        Err(failure) => panic!("{}", Chain::of(&failure)),
    }
}

struct Runner<'h> {
    provider: Arc<dyn Provider>,
    name: String,
    h: &'h Harness,
    started: std::time::Instant,
    step_started: std::time::Instant,
    steps: Vec<(Step, Duration)>,
    skipped: Vec<Step>,
    polls: u32,
    transient_retries: u32,
}

type StepResult<T> = Result<T, ConformanceFailure>;

impl<'h> Runner<'h> {
    fn new(provider: Arc<dyn Provider>, h: &'h Harness) -> Self {
        let name = provider.name().to_owned();
        let now = std::time::Instant::now();
        Self {
            provider,
            name,
            h,
            started: now,
            step_started: now,
            steps: Vec::new(),
            skipped: Vec::new(),
            polls: 0,
            transient_retries: 0,
        }
    }

    fn into_report(self, ready_state: InstanceState) -> ConformanceReport {
        ConformanceReport {
            provider: self.name,
            steps: self.steps,
            skipped: self.skipped,
            polls: self.polls,
            transient_retries: self.transient_retries,
            ready_state,
            elapsed: self.started.elapsed(),
        }
    }

    fn fail(&self, step: Step, message: impl Into<String>) -> ConformanceFailure {
        ConformanceFailure {
            provider: self.name.clone(),
            step,
            message: message.into(),
            source: None,
        }
    }

    fn fail_with(
        &self,
        step: Step,
        message: impl Into<String>,
        source: ProviderError,
    ) -> ConformanceFailure {
        ConformanceFailure {
            source: Some(source),
            ..self.fail(step, message)
        }
    }

    fn passed(&mut self, step: Step) {
        let now = std::time::Instant::now();
        self.steps.push((step, now - self.step_started));
        self.step_started = now;
    }

    /// One call, bounded by the call timeout.
    async fn call<T>(
        &self,
        step: Step,
        what: &str,
        fut: impl Future<Output = Result<T, ProviderError>>,
    ) -> StepResult<Result<T, ProviderError>> {
        timeout(self.h.call_timeout, fut).await.map_err(|_| {
            self.fail(
                step,
                format!(
                    "{what} did not return within {:?}; a provider must bound its own calls",
                    self.h.call_timeout
                ),
            )
        })
    }

    /// One call on the happy path: `Transient` is retried (as a controller
    /// would) until the poll budget is spent; anything else is returned.
    async fn call_retrying<T, F, Fut>(
        &mut self,
        step: Step,
        what: &str,
        mut f: F,
    ) -> StepResult<Result<T, ProviderError>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ProviderError>>,
    {
        let deadline = Instant::now() + self.h.poll_budget;
        loop {
            match self.call(step, what, f()).await? {
                Err(e) if e.is_transient() && Instant::now() < deadline => {
                    self.transient_retries += 1;
                    sleep(self.h.poll_interval).await;
                }
                other => return Ok(other),
            }
        }
    }

    async fn all_steps(&mut self) -> StepResult<InstanceState> {
        let p = Arc::clone(&self.provider);
        let h = self.h;
        let spec = h.spec_for(h.uid.clone(), h.valid_image.clone());

        if self.name.is_empty() {
            return Err(self.fail(Step::Name, "name() is empty"));
        }
        self.passed(Step::Name);

        let never = derived_uid(&h.uid, "never-created");
        self.expect_not_found(Step::GetUnknown, &never, "get of a uid never created")
            .await?;
        self.passed(Step::GetUnknown);

        let created = match self
            .call_retrying(Step::Create, "create", || p.create(&spec))
            .await?
        {
            Ok(i) => i,
            Err(e) => {
                return Err(self.fail_with(Step::Create, "create of a valid spec failed", e));
            }
        };
        self.check_instance(Step::Create, &created, &spec)?;
        self.check_alive(Step::Create, &created.state)?;
        self.passed(Step::Create);

        let ready_state = self.wait_ready(&spec).await?;
        self.passed(Step::WaitReady);

        self.expect_listed_once(Step::ListByTag, &spec).await?;
        let other_tag = derived_uid(&h.tag, "other");
        let others = self
            .call_retrying(Step::ListByTag, "list_by_tag", || p.list_by_tag(&other_tag))
            .await?
            .map_err(|e| {
                self.fail_with(Step::ListByTag, "list_by_tag of an unused tag failed", e)
            })?;
        if others.instances.iter().any(|i| i.uid == spec.uid) {
            return Err(self.fail(
                Step::ListByTag,
                format!(
                    "list_by_tag({other_tag}) returned {}, which lacks that tag",
                    spec.uid
                ),
            ));
        }
        self.passed(Step::ListByTag);

        if let Some(sickness) = h.sickness.clone() {
            self.one_unreadable(&spec, sickness.as_ref()).await?;
            self.passed(Step::ListOneUnreadable);
        } else {
            self.skipped.push(Step::ListOneUnreadable);
        }

        let again = match self
            .call_retrying(Step::CreateAgain, "create", || p.create(&spec))
            .await?
        {
            Ok(i) => i,
            Err(e) => {
                return Err(self.fail_with(
                    Step::CreateAgain,
                    "create with an existing uid must return the existing instance",
                    e,
                ));
            }
        };
        self.check_instance(Step::CreateAgain, &again, &spec)?;
        if again.created_at != created.created_at {
            return Err(self.fail(
                Step::CreateAgain,
                format!(
                    "create with the same uid answered created_at {:?}, the first create {:?}: \
                     a second VM was made, or created_at is not read from the host",
                    again.created_at, created.created_at
                ),
            ));
        }
        self.check_alive(Step::CreateAgain, &again.state)?;
        self.expect_listed_once(Step::CreateAgain, &spec).await?;
        self.passed(Step::CreateAgain);

        self.expect_deleted(Step::Delete, &spec.uid).await?;
        self.passed(Step::Delete);

        self.expect_not_found(Step::GetAfterDelete, &spec.uid, "get after delete")
            .await?;
        self.passed(Step::GetAfterDelete);

        self.expect_deleted(Step::DeleteAgain, &spec.uid).await?;
        self.passed(Step::DeleteAgain);

        let left = self
            .call_retrying(Step::ListAfterDelete, "list_by_tag", || {
                p.list_by_tag(&h.tag)
            })
            .await?
            .map_err(|e| self.fail_with(Step::ListAfterDelete, "list_by_tag failed", e))?;
        if left.uids().any(|u| *u == spec.uid) {
            return Err(self.fail(
                Step::ListAfterDelete,
                format!("list_by_tag still returns {} after delete", spec.uid),
            ));
        }
        self.passed(Step::ListAfterDelete);

        let bad_uid = derived_uid(&h.uid, "bad-image");
        let bad = h.spec_for(bad_uid.clone(), h.bad_image.clone());
        let r = self.call(Step::BadImage, "create", p.create(&bad)).await?;
        self.expect_kind(
            Step::BadImage,
            "create with a bad image key",
            r,
            ErrorKind::Permanent,
        )?;
        self.expect_not_found(Step::BadImage, &bad_uid, "get after a rejected create")
            .await?;
        self.passed(Step::BadImage);

        let invalid_uid = derived_uid(&h.uid, "bad-spec");
        let mut invalid = h.spec_for(invalid_uid.clone(), h.valid_image.clone());
        invalid.vcpus = 0;
        let r = self
            .call(Step::InvalidSpec, "create", p.create(&invalid))
            .await?;
        self.expect_kind(
            Step::InvalidSpec,
            "create with vcpus = 0",
            r,
            ErrorKind::Permanent,
        )?;
        self.expect_not_found(
            Step::InvalidSpec,
            &invalid_uid,
            "get after a rejected create",
        )
        .await?;
        self.passed(Step::InvalidSpec);

        self.unreachable(&spec).await?;
        self.passed(Step::Unreachable);

        Ok(ready_state)
    }

    async fn wait_ready(&mut self, spec: &CreateSpec) -> StepResult<InstanceState> {
        let step = Step::WaitReady;
        let p = Arc::clone(&self.provider);
        let deadline = Instant::now() + self.h.poll_budget;
        loop {
            self.polls += 1;
            match self.call(step, "get", p.get(&spec.uid)).await? {
                Ok(inst) => {
                    self.check_instance(step, &inst, spec)?;
                    self.check_alive(step, &inst.state)?;
                    if inst.state.is_running() {
                        return Ok(inst.state);
                    }
                    if Instant::now() >= deadline {
                        if self.h.require_running {
                            return Err(self.fail(
                                step,
                                format!(
                                    "still {} after {} polls over {:?}; expected running",
                                    inst.state, self.polls, self.h.poll_budget
                                ),
                            ));
                        }
                        return Ok(inst.state);
                    }
                }
                Err(e) if e.is_transient() && Instant::now() < deadline => {
                    self.transient_retries += 1;
                }
                Err(e) => {
                    let msg = match e.kind() {
                        ErrorKind::NotFound => {
                            "get answered NotFound for an instance that create just made"
                        }
                        ErrorKind::Transient => {
                            "get was still failing when the poll budget ran out"
                        }
                        _ => "get failed while waiting for the instance",
                    };
                    return Err(self.fail_with(step, msg, e));
                }
            }
            sleep(self.h.poll_interval).await;
        }
    }

    async fn unreachable(&mut self, spec: &CreateSpec) -> StepResult<()> {
        let step = Step::Unreachable;
        let u = Arc::clone(&self.h.unreachable);
        let r = self.call(step, "create", u.create(spec)).await?;
        self.expect_kind(
            step,
            "create on an unreachable host",
            r,
            ErrorKind::Transient,
        )?;
        let r = self.call(step, "get", u.get(&spec.uid)).await?;
        self.expect_kind(step, "get on an unreachable host", r, ErrorKind::Transient)?;
        let r = self
            .call(step, "list_by_tag", u.list_by_tag(&self.h.tag))
            .await?;
        self.expect_kind(
            step,
            "list_by_tag on an unreachable host",
            r,
            ErrorKind::Transient,
        )?;
        let r = self.call(step, "delete", u.delete(&spec.uid)).await?;
        self.expect_kind(
            step,
            "delete on an unreachable host",
            r,
            ErrorKind::Transient,
        )?;
        Ok(())
    }

    fn expect_kind<T: fmt::Debug>(
        &self,
        step: Step,
        what: &str,
        result: Result<T, ProviderError>,
        want: ErrorKind,
    ) -> StepResult<()> {
        match result {
            Err(e) if e.kind() == want => Ok(()),
            Err(e) => {
                Err(self.fail_with(step, format!("{what} must be {want}, got {}", e.kind()), e))
            }
            Ok(v) => Err(self.fail(
                step,
                format!("{what} must fail as {want}, but succeeded with {v:?}"),
            )),
        }
    }

    async fn expect_not_found(
        &mut self,
        step: Step,
        uid: &Identifier,
        what: &str,
    ) -> StepResult<()> {
        let p = Arc::clone(&self.provider);
        let r = self.call_retrying(step, "get", || p.get(uid)).await?;
        self.expect_kind(step, what, r, ErrorKind::NotFound)
    }

    async fn expect_deleted(&mut self, step: Step, uid: &Identifier) -> StepResult<()> {
        let p = Arc::clone(&self.provider);
        match self.call_retrying(step, "delete", || p.delete(uid)).await? {
            Ok(()) => Ok(()),
            Err(e) => Err(self.fail_with(step, "delete must succeed (also when already gone)", e)),
        }
    }

    async fn expect_listed_once(&mut self, step: Step, spec: &CreateSpec) -> StepResult<()> {
        let p = Arc::clone(&self.provider);
        let tag = self.h.tag.clone();
        let listed = self
            .call_retrying(step, "list_by_tag", || p.list_by_tag(&tag))
            .await?
            .map_err(|e| self.fail_with(step, "list_by_tag failed", e))?;
        self.check_listed_once(step, &listed, spec)
    }

    fn check_listed_once(&self, step: Step, listed: &Listing, spec: &CreateSpec) -> StepResult<()> {
        let tag = &self.h.tag;
        if let Some(u) = listed
            .unreadable
            .iter()
            .find(|u| u.uid.as_ref() == Some(&spec.uid))
        {
            return Err(self.fail(
                step,
                format!(
                    "list_by_tag({tag}) reported {} as unreadable ({}); it is readable",
                    spec.uid, u.error
                ),
            ));
        }
        for inst in &listed.instances {
            if !inst.tags.contains(tag) {
                return Err(self.fail(
                    step,
                    format!(
                        "list_by_tag({tag}) returned {}, which lacks that tag",
                        inst.uid
                    ),
                ));
            }
        }
        let mine: Vec<&Instance> = listed
            .instances
            .iter()
            .filter(|i| i.uid == spec.uid)
            .collect();
        match mine.as_slice() {
            [one] => self.check_instance(step, one, spec),
            [] => Err(self.fail(
                step,
                format!("list_by_tag({tag}) did not return {}", spec.uid),
            )),
            many => Err(self.fail(
                step,
                format!(
                    "list_by_tag({tag}) returned {} {} times: one uid must be one VM",
                    spec.uid,
                    many.len()
                ),
            )),
        }
    }

    /// A second instance with the same tag, made unreadable: reported on its own, the
    /// first one listed as before, the call a success; then cured and deleted.
    async fn one_unreadable(
        &mut self,
        spec: &CreateSpec,
        sickness: &dyn Sickness,
    ) -> StepResult<()> {
        let step = Step::ListOneUnreadable;
        let p = Arc::clone(&self.provider);
        let h = self.h;
        let sick_uid = derived_uid(&h.uid, "sick");
        let sick = h.spec_for(sick_uid.clone(), h.valid_image.clone());
        match self
            .call_retrying(step, "create", || p.create(&sick))
            .await?
        {
            Ok(i) => self.check_instance(step, &i, &sick)?,
            Err(e) => return Err(self.fail_with(step, "create of a second instance failed", e)),
        }
        sickness.inflict(&sick_uid).await;
        let outcome = self.check_one_unreadable(step, spec, &sick_uid).await;
        sickness.cure(&sick_uid).await;
        outcome?;
        self.expect_deleted(step, &sick_uid).await?;
        self.expect_not_found(step, &sick_uid, "get of the cured instance after delete")
            .await
    }

    async fn check_one_unreadable(
        &mut self,
        step: Step,
        spec: &CreateSpec,
        sick_uid: &Identifier,
    ) -> StepResult<()> {
        let p = Arc::clone(&self.provider);
        let tag = self.h.tag.clone();
        // No retries: one unreadable instance must not fail the call, not even once.
        let listed = match self.call(step, "list_by_tag", p.list_by_tag(&tag)).await? {
            Ok(l) => l,
            Err(e) => {
                return Err(self.fail_with(
                    step,
                    format!(
                        "list_by_tag({tag}) failed while one instance ({sick_uid}) was unreadable: \
                         one sick instance must be reported on its own, not hide the others"
                    ),
                    e,
                ));
            }
        };
        if let Some(i) = listed.instances.iter().find(|i| i.uid == *sick_uid) {
            return Err(self.fail(
                step,
                format!(
                    "list_by_tag({tag}) listed the unreadable instance {sick_uid} as {}; \
                     it must be in Listing::unreadable",
                    i.state
                ),
            ));
        }
        let reported = listed
            .unreadable
            .iter()
            .filter(|u| u.uid.as_ref() == Some(sick_uid))
            .count();
        if reported != 1 {
            return Err(self.fail(
                step,
                format!(
                    "list_by_tag({tag}) reported the unreadable instance {sick_uid} {reported} \
                     times in Listing::unreadable; expected once"
                ),
            ));
        }
        // The healthy one is listed as before.
        self.check_listed_once(step, &listed, spec)?;
        // Unreadable is not missing.
        match self.call(step, "get", p.get(sick_uid)).await? {
            Err(e) if e.is_not_found() => Err(self.fail_with(
                step,
                format!("get of the unreadable instance {sick_uid} answered NotFound"),
                e,
            )),
            Err(_) => Ok(()),
            Ok(i) => Err(self.fail(
                step,
                format!(
                    "get of the unreadable instance {sick_uid} answered {}; expected an error",
                    i.state
                ),
            )),
        }
    }

    fn check_instance(&self, step: Step, inst: &Instance, spec: &CreateSpec) -> StepResult<()> {
        let mut wrong = Vec::new();
        if inst.uid != spec.uid {
            wrong.push(format!("uid {} (expected {})", inst.uid, spec.uid));
        }
        if inst.name != spec.name {
            wrong.push(format!("name {:?} (expected {:?})", inst.name, spec.name));
        }
        if inst.provider != self.name {
            wrong.push(format!(
                "provider {:?} (expected the provider's name {:?})",
                inst.provider, self.name
            ));
        }
        let missing: BTreeSet<_> = spec.tags.difference(&inst.tags).collect();
        if !missing.is_empty() {
            wrong.push(format!("tags lack {missing:?}"));
        }
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(self.fail(
                step,
                format!("instance {} has {}", spec.uid, wrong.join(", ")),
            ))
        }
    }

    fn check_alive(&self, step: Step, state: &InstanceState) -> StepResult<()> {
        match state {
            InstanceState::Provisioning | InstanceState::Running { .. } => Ok(()),
            other => Err(self.fail(
                step,
                format!("instance is {other}; expected provisioning or running"),
            )),
        }
    }

    /// Best effort: remove whatever the suite may have created.
    async fn cleanup(&self) {
        let h = self.h;
        let sick = derived_uid(&h.uid, "sick");
        if let Some(s) = &h.sickness {
            s.cure(&sick).await;
        }
        for uid in [
            h.uid.clone(),
            sick,
            derived_uid(&h.uid, "bad-image"),
            derived_uid(&h.uid, "bad-spec"),
        ] {
            let _ = timeout(h.call_timeout, self.provider.delete(&uid)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_uids_stay_valid() {
        let long = Identifier::new("a".repeat(63)).unwrap();
        let d = derived_uid(&long, "never-created");
        assert_eq!(d.as_str().len(), 63);
        assert!(d.as_str().ends_with("-never-created"));
        let short = Identifier::new("x").unwrap();
        assert_eq!(derived_uid(&short, "bad-image"), "x-bad-image");
    }

    #[test]
    fn run_suffixes_differ() {
        let a = run_suffix();
        let b = run_suffix();
        assert_ne!(a, b);
        assert!(a.len() <= 20);
        assert!(Identifier::new(format!("conformance-tag-{a}")).is_ok());
    }
}
