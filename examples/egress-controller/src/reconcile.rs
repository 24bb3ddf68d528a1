//! The reconcile decisions, as plain async functions over the provider contract: no API
//! server, no kube types but the resource's own. [`Reconciler::apply`] answers the status to
//! write and when to look again; [`Reconciler::cleanup`] deletes the VM before the
//! finalizer is removed. The kube side (`crate::controller`) only reads and writes objects.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use egress_provider::{
    CreateSpec, ErrorKind, Identifier, Instance, InstanceState, Provider, ProviderError,
    ProviderSet, ProvidersConfig, redact_urls_in,
};
use k8s_openapi::jiff::Timestamp;

use crate::resource::{Condition, EgressProxySpec, EgressProxyStatus, SecretKeyRef};

/// Timing of the controller's decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Policy {
    /// How long a VM that had an IP may read as `Provisioning` before the IP is cleared
    /// (an agent restarting inside a running VM reads exactly like a boot; H3). Default 90 s.
    pub ip_grace: Duration,
    /// Look again at a `Running` (or stopped, or failed) VM after this. Default 60 s.
    pub poll_running: Duration,
    /// Look again at a booting VM after this. Default 5 s.
    pub poll_provisioning: Duration,
    /// First retry after a `Transient` error; doubled on each consecutive one. Default 2 s.
    pub backoff_base: Duration,
    /// Longest retry interval after `Transient` errors. Default 300 s.
    pub backoff_max: Duration,
    /// Retry after a `Permanent` error (the operator may have fixed it). Default 300 s.
    pub permanent_retry: Duration,
    /// The reconcile budget of an entry whose provider documents no budgets of its own
    /// (every type but `kvm2`). Default 60 s.
    pub default_budget: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            ip_grace: Duration::from_secs(90),
            poll_running: Duration::from_secs(60),
            poll_provisioning: Duration::from_secs(5),
            backoff_base: Duration::from_secs(2),
            backoff_max: Duration::from_secs(300),
            permanent_retry: Duration::from_secs(300),
            default_budget: Duration::from_secs(60),
        }
    }
}

impl Policy {
    /// The retry interval after the `attempt`-th consecutive `Transient` error (1-based).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.backoff_base
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}

/// The reconcile budget of a `kvm2` entry, derived from its own budgets: a worst-case
/// `create` (connect, a lease wait, one image transfer, a dozen calls) or `delete`
/// (connect, a lease wait, the graceful shutdown, a dozen calls), plus 10 s. The provider
/// bounds each of its steps itself, so its own typed `Transient` comes first; the
/// reconcile's timeout only catches what the provider's budgets do not.
pub fn kvm2_budget(b: &egress_kvm2::Budgets) -> Duration {
    let calls = b.call.saturating_mul(12);
    let create = b.connect + b.lease_wait + b.transfer + calls;
    let delete = b.connect + b.lease_wait + b.shutdown + calls;
    create.max(delete) + Duration::from_secs(10)
}

/// Reads the user-data a spec refers to (a Secret key), for `create` only.
#[async_trait]
pub trait Secrets: Send + Sync {
    /// The bytes of `r`; `Permanent` when the Secret or the key does not exist.
    async fn read(&self, r: &SecretKeyRef) -> Result<Vec<u8>, ProviderError>;
}

/// What [`Reconciler::apply`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The status to write (the caller skips the write when it equals the current one).
    pub status: EgressProxyStatus,
    /// When to look again.
    pub requeue_after: Duration,
    /// `Some(n)`: the n-th consecutive `Transient` error (requeue with backoff).
    pub transient: Option<u32>,
}

/// One `EgressProxy` as the decisions need it.
#[derive(Debug, Clone, Copy)]
pub struct Proxy<'a> {
    /// `metadata.uid`: the VM's uid on the provider.
    pub uid: &'a str,
    /// `namespace/name`, for messages.
    pub name: &'a str,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// The desired spec.
    pub spec: &'a EgressProxySpec,
    /// The current status, if any.
    pub status: Option<&'a EgressProxyStatus>,
}

/// The providers, each entry's reconcile budget, the policy, and the count of consecutive
/// `Transient` errors per object.
pub struct Reconciler {
    providers: ProviderSet,
    budgets: HashMap<String, Duration>,
    policy: Policy,
    transient: Mutex<HashMap<String, u32>>,
}

impl std::fmt::Debug for Reconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconciler")
            .field("providers", &self.providers)
            .field("budgets", &self.budgets)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

const READY: &str = "Ready";
const FAILED: &str = "Failed";
const SPEC_APPLIED: &str = "SpecApplied";

impl Reconciler {
    /// Over `providers` (built by the registry from `config`): every `kvm2` entry's budget is
    /// [`kvm2_budget`] of its settings, every other entry's [`Policy::default_budget`].
    pub fn new(providers: ProviderSet, config: &ProvidersConfig, policy: Policy) -> Self {
        let budgets = config
            .providers
            .iter()
            .map(|e| {
                let budget = if e.provider_type.as_str() == egress_kvm2::Kvm2Factory::TYPE {
                    e.settings::<egress_kvm2::Kvm2Settings>()
                        .map_or(policy.default_budget, |s| kvm2_budget(&s.budgets))
                } else {
                    policy.default_budget
                };
                (e.name.as_str().to_owned(), budget)
            })
            .collect();
        Self {
            providers,
            budgets,
            policy,
            transient: Mutex::new(HashMap::new()),
        }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The reconcile budget of entry `name`.
    pub fn budget(&self, name: &str) -> Duration {
        self.budgets
            .get(name)
            .copied()
            .unwrap_or(self.policy.default_budget)
    }

    /// Counts one more consecutive `Transient` error of object `uid` and returns the
    /// attempt number (also used by the kube side's error policy).
    pub fn note_transient(&self, uid: &str) -> u32 {
        let mut m = self
            .transient
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let n = m.entry(uid.to_owned()).or_insert(0);
        *n = n.saturating_add(1);
        *n
    }

    fn clear_transient(&self, uid: &str) {
        self.transient
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(uid);
    }

    fn provider(&self, entry: &str) -> Result<&std::sync::Arc<dyn Provider>, ProviderError> {
        self.providers.get(entry).ok_or_else(|| {
            let known: Vec<&str> = self.providers.names().map(Identifier::as_str).collect();
            ProviderError::permanent(format!(
                "provider entry {entry:?} is not configured (known: {}); fix spec.provider or \
                 the controller's provider configuration",
                known.join(", ")
            ))
        })
    }

    /// Drives the VM of `proxy` towards its spec: creates it when absent, reads its state
    /// and IP, and answers the status to write and when to look again.
    pub async fn apply(&self, proxy: Proxy<'_>, secrets: &dyn Secrets, now: SystemTime) -> Outcome {
        let prev = proxy.status.cloned().unwrap_or_default();
        let mut st = prev.clone();
        st.observed_generation = proxy.generation;
        let entry = prev
            .applied
            .as_ref()
            .map_or(proxy.spec.provider.as_str(), |a| a.provider.as_str());
        let budget = self.budget(entry);
        let read = tokio::time::timeout(budget, self.observe(proxy, &mut st, secrets)).await;
        let result = read.unwrap_or_else(|_| {
            Err(ProviderError::transient(format!(
                "reconcile of {} exceeded its budget of {budget:?} (provider entry {entry:?}); \
                 the provider's call was dropped and is retried",
                proxy.name
            )))
        });
        match result {
            Ok(inst) => {
                self.clear_transient(proxy.uid);
                let requeue_after = self.observed(&prev, &mut st, &inst, proxy, now);
                Outcome {
                    status: st,
                    requeue_after,
                    transient: None,
                }
            }
            Err(e) if e.kind() == ErrorKind::Permanent => {
                self.clear_transient(proxy.uid);
                if st.state.is_none() {
                    st.state = Some("Pending".into());
                }
                let g = proxy.generation;
                set(
                    &mut st,
                    FAILED,
                    true,
                    "PermanentError",
                    &e.chain().to_string(),
                    now,
                    g,
                );
                set(
                    &mut st,
                    READY,
                    false,
                    "PermanentError",
                    "see the Failed condition",
                    now,
                    g,
                );
                Outcome {
                    status: st,
                    requeue_after: self.policy.permanent_retry,
                    transient: None,
                }
            }
            Err(_) => {
                // Unreadable is not missing (H3): the last known state and IP stay as they
                // were; only the retry interval grows. The status is unchanged, so no write.
                let n = self.note_transient(proxy.uid);
                Outcome {
                    status: prev,
                    requeue_after: self.policy.backoff(n),
                    transient: Some(n),
                }
            }
        }
    }

    // get (or create when there is no VM yet), updating `st.applied` when it creates.
    async fn observe(
        &self,
        proxy: Proxy<'_>,
        st: &mut EgressProxyStatus,
        secrets: &dyn Secrets,
    ) -> Result<Instance, ProviderError> {
        let uid = instance_uid(proxy.uid)?;
        if let Some(applied) = &st.applied {
            match self.provider(&applied.provider)?.get(&uid).await {
                Err(e) if e.is_not_found() => {
                    // Gone behind our back (or never finished): made again, from the spec
                    // as it is now.
                    st.applied = None;
                }
                other => return other,
            }
        }
        let provider = self.provider(&proxy.spec.provider)?;
        let spec = create_spec(uid, proxy, secrets).await?;
        let inst = provider.create(&spec).await?;
        st.applied = Some(proxy.spec.clone());
        Ok(inst)
    }

    // The status for an instance the provider answered; returns when to look again.
    fn observed(
        &self,
        prev: &EgressProxyStatus,
        st: &mut EgressProxyStatus,
        inst: &Instance,
        proxy: Proxy<'_>,
        now: SystemTime,
    ) -> Duration {
        let g = proxy.generation;
        match st.applied.as_ref().map(|a| changed_fields(a, proxy.spec)) {
            Some(changed) if !changed.is_empty() => {
                let msg = format!(
                    "{} cannot change on an existing VM; the VM keeps running as created. \
                     To apply the change, delete this EgressProxy and create it again",
                    changed.join(", ")
                );
                set(
                    st,
                    SPEC_APPLIED,
                    false,
                    "ImmutableFieldChanged",
                    &msg,
                    now,
                    g,
                );
            }
            _ => set(
                st,
                SPEC_APPLIED,
                true,
                "Applied",
                "the VM runs this spec",
                now,
                g,
            ),
        }
        let mut requeue = self.policy.poll_running;
        let mut failed = None;
        match &inst.state {
            InstanceState::Running { ip } => {
                st.state = Some("Running".into());
                st.ip = Some(ip.to_string());
                st.provisioning_since = None;
                set(
                    st,
                    READY,
                    true,
                    "Running",
                    &format!("proxy at {ip}"),
                    now,
                    g,
                );
            }
            InstanceState::Stopped => {
                no_address(st, "Stopped", "Stopped", "the VM is powered off", now, g);
            }
            InstanceState::Failed { reason } => {
                let msg = "see the Failed condition";
                no_address(st, "Failed", "InstanceFailed", msg, now, g);
                failed = Some(reason.clone());
            }
            // Provisioning, and any state added later (the contract: treat as Provisioning).
            _ => {
                st.state = Some("Provisioning".into());
                requeue = self.policy.poll_provisioning;
                let since = prev
                    .provisioning_since
                    .as_deref()
                    .and_then(parse_time)
                    .unwrap_or(now);
                let left = self
                    .policy
                    .ip_grace
                    .checked_sub(now.duration_since(since).unwrap_or_default());
                match (prev.ip.as_deref(), left) {
                    (Some(ip), Some(left)) if !left.is_zero() => {
                        st.provisioning_since = Some(format_time(since));
                        let msg = format!(
                            "the VM reads as provisioning (an agent restart looks like a boot); \
                             keeping its last IP {ip} for up to {left:?} more"
                        );
                        set(st, READY, true, "AddressGrace", &msg, now, g);
                        requeue = requeue.min(left);
                    }
                    _ => {
                        let msg = "waiting for the VM's address";
                        no_address(st, "Provisioning", "Provisioning", msg, now, g);
                    }
                }
            }
        }
        match failed {
            Some(reason) => set(st, FAILED, true, "InstanceFailed", &reason, now, g),
            None => set(st, FAILED, false, "NoError", "", now, g),
        }
        requeue
    }

    /// Deletes the VM of `proxy` (and so its disks) from the entry it was created on; `Ok`
    /// means gone and the finalizer may go. Bounded by the entry's budget (`Transient`).
    pub async fn cleanup(&self, proxy: Proxy<'_>) -> Result<(), ProviderError> {
        let entry = proxy
            .status
            .and_then(|s| s.applied.as_ref())
            .map_or(proxy.spec.provider.as_str(), |a| a.provider.as_str());
        let budget = self.budget(entry);
        let uid = instance_uid(proxy.uid)?;
        let provider = self.provider(entry)?;
        let r = tokio::time::timeout(budget, provider.delete(&uid))
            .await
            .unwrap_or_else(|_| {
                Err(ProviderError::transient(format!(
                    "delete of {} exceeded its budget of {budget:?}; retried",
                    proxy.name
                )))
            });
        if r.is_ok() {
            self.clear_transient(proxy.uid);
        }
        r
    }
}

fn instance_uid(uid: &str) -> Result<Identifier, ProviderError> {
    Identifier::new(uid).map_err(|e| {
        ProviderError::permanent(format!("metadata.uid {uid:?} is not a provider uid: {e}"))
    })
}

fn field_id(field: &str, value: &str) -> Result<Identifier, ProviderError> {
    Identifier::new(value)
        .map_err(|e| ProviderError::permanent(format!("{field} {value:?} is invalid: {e}")))
}

async fn create_spec(
    uid: Identifier,
    proxy: Proxy<'_>,
    secrets: &dyn Secrets,
) -> Result<CreateSpec, ProviderError> {
    let s = proxy.spec;
    let mut spec = CreateSpec::new(uid, proxy.name, field_id("spec.image", &s.image)?)
        .with_vcpus(s.vcpus)
        .with_memory_mib(s.memory_mib);
    for t in &s.tags {
        spec = spec.with_tag(field_id("spec.tags[]", t)?);
    }
    if let Some(r) = &s.user_data {
        spec = spec.with_user_data(secrets.read(r).await?);
    }
    Ok(spec)
}

/// The spec fields that differ between what the VM was created with and what is asked now.
pub fn changed_fields(applied: &EgressProxySpec, spec: &EgressProxySpec) -> Vec<&'static str> {
    let (a, s) = (applied, spec);
    [
        ("spec.provider", a.provider != s.provider),
        ("spec.image", a.image != s.image),
        ("spec.vcpus", a.vcpus != s.vcpus),
        ("spec.memoryMib", a.memory_mib != s.memory_mib),
        ("spec.tags", a.tags != s.tags),
        ("spec.userData", a.user_data != s.user_data),
    ]
    .into_iter()
    .filter_map(|(name, differs)| differs.then_some(name))
    .collect()
}

// A state without an address: the IP and the grace start cleared, `Ready=False`.
fn no_address(
    st: &mut EgressProxyStatus,
    state: &str,
    reason: &str,
    message: &str,
    now: SystemTime,
    generation: Option<i64>,
) {
    st.state = Some(state.into());
    st.ip = None;
    st.provisioning_since = None;
    set(st, READY, false, reason, message, now, generation);
}

// Sets condition `ty`, keeping its transition time when its status does not change.
fn set(
    st: &mut EgressProxyStatus,
    ty: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: SystemTime,
    generation: Option<i64>,
) {
    let status = if status { "True" } else { "False" };
    let old = st.conditions.iter().position(|c| c.type_ == ty);
    let last_transition_time = match old.map(|i| &st.conditions[i]) {
        Some(c) if c.status == status => c.last_transition_time.clone(),
        _ => format_time(now),
    };
    let c = Condition {
        type_: ty.into(),
        status: status.into(),
        reason: reason.into(),
        // Whoever may read the resource reads its status: a URL in a provider's message
        // (an image mirror's) is shown without its userinfo and query.
        message: redact_urls_in(message),
        last_transition_time,
        observed_generation: generation,
    };
    match old {
        Some(i) => st.conditions[i] = c,
        None => st.conditions.push(c),
    }
}

fn format_time(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Timestamp::from_second(i64::try_from(secs).unwrap_or(i64::MAX))
        .unwrap_or(Timestamp::UNIX_EPOCH)
        .to_string()
}

fn parse_time(s: &str) -> Option<SystemTime> {
    s.parse::<Timestamp>().ok().map(SystemTime::from)
}

/// The status IP as an address, when there is one.
pub fn status_ip(st: &EgressProxyStatus) -> Option<IpAddr> {
    st.ip.as_deref().and_then(|s| s.parse().ok())
}

/// The condition `ty` of `st`.
pub fn condition<'a>(st: &'a EgressProxyStatus, ty: &str) -> Option<&'a Condition> {
    st.conditions.iter().find(|c| c.type_ == ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kvm2_budget_with_the_default_budgets() {
        // connect 15 + lease wait 5 + transfer 1200 + 12 calls of 60 + 10 (README figure).
        let b = egress_kvm2::Budgets::default();
        assert_eq!(kvm2_budget(&b), Duration::from_secs(1950));
    }

    #[test]
    fn backoff_doubles_to_its_cap() {
        let p = Policy::default();
        let got: Vec<u64> = (1..=10).map(|n| p.backoff(n).as_secs()).collect();
        assert_eq!(got, [2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
        assert_eq!(p.backoff(u32::MAX), p.backoff_max);
    }
}
