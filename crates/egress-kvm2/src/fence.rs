//! Cross-process fencing: leases held in libvirt itself, so they work between processes and
//! between the hosts the controllers run on.
//!
//! In-process single flight and per-uid locks serialise the calls of one provider. Two
//! controllers (two replicas during a leader hand-over, a controller and a hand-run
//! `proxyctl`) share nothing but the libvirt host, so that is where their lease lives.
//!
//! # The lease object
//!
//! A lease is a **domain that is never started**, `lease.<entry>.uid.<uid>` (guards `create`
//! and `delete` of one instance) or `lease.<entry>.image.<key>` (guards the fetch and publish
//! of one base image). Its metadata (namespace `https://egress-proxy.dev/kvm2/lease/1`)
//! records the owner, the lease duration, a renewal counter and, for people reading it, the
//! owner's idea of when it expires. The names hold a `.`, which neither entry names nor uids
//! may contain, so a lease never looks like an instance (`<entry>-<uid>`).
//!
//! A domain and not a volume because libvirt gives domains what a lease needs:
//!
//! * **atomic create**: defining a name that exists fails (our XML carries no UUID, so
//!   libvirt makes a new one and refuses the name: `domain … already exists with uuid …`);
//! * **a generation**: every define gets a new UUID, and libvirt resolves a domain handle by
//!   its UUID, so `virDomainSetMetadata` (renew) and `virDomainUndefineFlags` (release,
//!   break) on a handle are **compare-and-swap**: they fail with `NO_DOMAIN` once the lease
//!   was broken and taken again by someone else. A volume has no such token (its key is its
//!   path), so a late breaker could delete a lease someone else just took.
//!
//! # The algorithm
//!
//! * **Take**: define the lease domain with our record. Success: held.
//! * **Taken by someone else**: read its record. If its owner is this provider (a dropped or
//!   failed call of ours left it; we hold the in-process lock of the same subject, so no call
//!   of ours is using it) it is broken at once. Otherwise the caller *observes* it: the
//!   (UUID, record) pair and the local monotonic time it was first seen unchanged. It is
//!   broken (undefined **by its UUID**) only once this process has seen it unchanged for the
//!   lease duration (the larger of ours and the holder's). Until then the call polls, and
//!   after `lease_wait_secs` answers `Transient`: "busy, retry".
//! * **Hold**: while the guarded work runs, the holder renews every third of the duration
//!   (`virDomainSetMetadata` with the counter + 1, by UUID). A renewal that finds the lease
//!   gone (`NO_DOMAIN`) means it was broken: the work is stopped (its future is dropped, which
//!   is safe: every step converges when repeated; `tests/faults.rs`) and the call answers
//!   `Transient`. If renewals keep failing for two thirds of the duration, the holder stops
//!   too, before anyone may break it.
//! * **Check**: right before an irreversible step (writing the image marker), the holder
//!   renews once more and goes on only if that succeeds.
//! * **Release**: undefine by UUID (a lease already broken is left alone). A call dropped
//!   mid-way releases from a spawned task; a process that died leaves the lease to expire.
//!
//! # Failure modes
//!
//! * **Clock skew** between controller hosts and the libvirt host does not matter: nobody
//!   compares wall clocks. A breaker measures on its own monotonic clock how long it has seen
//!   the record unchanged; the holder changes it every third of the duration. The `expires`
//!   field is only for people. Only a difference in clock *rate* of more than a third would
//!   matter.
//! * **A paused owner** (`SIGSTOP`, a VM suspended, a long GC pause) longer than the
//!   duration loses its lease: another controller breaks it and goes on. When the owner
//!   resumes, its next renewal (at most a third of the duration later) or its check before
//!   the marker fails, and it stops. Until then it may still make one step it had started:
//!   a call in flight when it paused, or the next one. Its unmarked base may already be
//!   deleted by the new holder (debris of a lease that is gone), so its upload writes into a
//!   file nobody sees, and it never writes the marker after losing the lease, except when
//!   the pause falls between its last check and the marker write (microseconds) and
//!   outlasts the duration: then a marker may land next to a base the new holder is still
//!   uploading. The new holder deletes a stale marker before it writes its own.
//! * **A crashed owner** leaves its lease: the next controller that needs the subject waits
//!   one duration (30 s by default) and breaks it. A restarted controller is a new owner.
//! * **The libvirt daemon restarting** keeps leases (they are persistent domains).
//! * **A dead link** during a renewal is retried; the holder stops if it cannot renew for
//!   two thirds of the duration.
//!
//! Leases show up in `virsh list --all` as shut-off domains named `lease.…`; undefining one
//! whose owner is gone is always safe.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use egress_provider::ProviderError;
use libvirt_remote::proto::ErrorCode;
use libvirt_remote::proto::names::MetadataType;
use libvirt_remote::proto::procs::common::XmlFlagsArgs;
use libvirt_remote::proto::procs::domain::{
    DomainDefineXmlFlags, DomainFlagsArgs, DomainSetMetadata, DomainSetMetadataArgs,
    DomainUndefineFlags,
};
use libvirt_remote::proto::types::NonnullDomain;
use libvirt_xml::XmlElement;
use tokio::time::Instant;

use crate::classify::{LvError, provider_error};
use crate::config::DomainType;
use crate::link::{Link, LinkPool};
use crate::ops;
use libvirt_remote::proto::procs::domain::{
    DomainDefineFlags, DomainModificationImpact, DomainUndefineFlagsValues,
};

/// The namespace of a lease record.
pub const NAMESPACE: &str = "https://egress-proxy.dev/kvm2/lease/1";
const PREFIX: &str = "lease";
/// How often a waiting call looks at a lease someone else holds.
const POLL: Duration = Duration::from_millis(100);

/// What a lease guards.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// `create` and `delete` of the instance with this uid.
    Uid(&'a str),
    /// Fetch and publish of the base image with this key.
    Image(&'a str),
}

/// `lease.<entry>.uid.<uid>` or `lease.<entry>.image.<key>`: names no instance can have.
pub fn lease_name(entry: &str, subject: Subject<'_>) -> String {
    match subject {
        Subject::Uid(uid) => format!("lease.{entry}.uid.{uid}"),
        Subject::Image(key) => format!("lease.{entry}.image.{key}"),
    }
}

/// `<host>:<pid>:<random>`: one per provider, so two providers of one entry in one process
/// are two owners too.
fn new_owner() -> String {
    use sha2::Digest;
    static N: AtomicU64 = AtomicU64::new(0);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map_or_else(|_| "unknown".to_owned(), |h| h.trim().to_owned());
    let mut h = sha2::Sha256::new();
    let t = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.update(t.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(N.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    h.update(format!("{:p}", &h).as_bytes());
    let random = h.finalize()[..6].iter().fold(String::new(), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    });
    format!("{host}:{}:{random}", std::process::id())
}

/// What a holder writes into its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    owner: String,
    duration: Duration,
    renewals: u64,
}

impl Record {
    /// The `<lease>` element: with our prefix and namespace declaration inside a domain's
    /// `<metadata>` (`qualified`), bare for `virDomainSetMetadata` (libvirt adds them from
    /// its `key` and `uri` arguments and refuses an element that declares them itself).
    fn to_element(&self, qualified: bool) -> XmlElement {
        let expires = humantime::format_rfc3339_millis(SystemTime::now() + self.duration);
        let el = if qualified {
            XmlElement::new(format!("{PREFIX}:lease"))
                .with_attribute(format!("xmlns:{PREFIX}"), NAMESPACE)
        } else {
            XmlElement::new("lease")
        };
        el.with_attribute("owner", self.owner.as_str())
            .with_attribute("duration-ms", self.duration.as_millis().to_string())
            .with_attribute("renewals", self.renewals.to_string())
            .with_attribute("expires", expires.to_string())
    }

    /// The element as a string.
    fn to_xml(&self, qualified: bool) -> String {
        self.to_element(qualified).to_xml()
    }

    /// Owner and duration of a record as `virDomainGetMetadata` returns it.
    fn parse(xml: &str) -> Option<(String, Duration)> {
        let e = XmlElement::from_xml(xml).ok()?;
        if e.local_name() != "lease" {
            return None;
        }
        let owner = e.attribute("owner")?.to_owned();
        let ms: u64 = e.attribute("duration-ms")?.parse().ok()?;
        Some((owner, Duration::from_millis(ms)))
    }
}

/// The XML of a lease domain: never started, smallest definition libvirt accepts.
fn lease_domain_xml(name: &str, domain_type: DomainType, record: &Record) -> String {
    libvirt_xml::Domain {
        r#type: Some(domain_type.xml()),
        name: Some(name.to_owned()),
        title: Some("egress-kvm2 lease (never started; see docs/kvm2-provider.md)".to_owned()),
        memory: Some(libvirt_xml::DomainMemory {
            unit: Some("KiB".into()),
            value: Some(4096),
            ..Default::default()
        }),
        os: Some(libvirt_xml::Os {
            r#type: Some(libvirt_xml::OsType {
                value: Some(libvirt_xml::OsTypeValue::Hvm),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
    .with_vcpus(1)
    .with_metadata(record.to_element(true))
    .to_xml()
}

/// A lease this provider holds.
pub(crate) struct Lease {
    name: String,
    dom: NonnullDomain,
    renewals: AtomicU64,
    /// Where a dropped holder releases it from.
    link: Arc<Link>,
    released: bool,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.released || self.link.is_dead() {
            return;
        }
        // A call dropped mid-way: release from a task (a lease broken meanwhile is not ours
        // any more, and the undefine by UUID leaves a new holder's lease alone).
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let link = self.link.clone();
            let dom = self.dom.clone();
            rt.spawn(async move {
                let _ = link
                    .call::<DomainUndefineFlags>(&DomainFlagsArgs {
                        dom,
                        flags: DomainUndefineFlagsValues::empty(),
                    })
                    .await;
            });
        }
    }
}

struct Observed {
    uuid: [u8; 16],
    record: Option<String>,
    since: Instant,
}

/// The leases of one provider.
pub(crate) struct Leases {
    owner: String,
    domain_type: DomainType,
    duration: Duration,
    wait: Duration,
    observed: Mutex<HashMap<String, Observed>>,
}

impl std::fmt::Debug for Leases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leases")
            .field("owner", &self.owner)
            .field("duration", &self.duration)
            .finish_non_exhaustive()
    }
}

/// The lease is gone or could not be kept: the guarded work must stop.
fn lost(name: &str, why: &str) -> ProviderError {
    ProviderError::transient(format!(
        "lease {name} {why}; another controller may have taken over. Retry"
    ))
}

impl Leases {
    pub(crate) fn new(domain_type: DomainType, duration: Duration, wait: Duration) -> Self {
        Self {
            owner: new_owner(),
            domain_type,
            duration,
            wait,
            observed: Mutex::default(),
        }
    }

    /// This provider's owner id.
    pub(crate) fn owner(&self) -> &str {
        &self.owner
    }

    fn record(&self, renewals: u64) -> Record {
        Record {
            owner: self.owner.clone(),
            duration: self.duration,
            renewals,
        }
    }

    /// How long this process has seen `name` held with this UUID and record, unchanged.
    fn observe(&self, name: &str, uuid: [u8; 16], record: Option<String>) -> Duration {
        let mut seen = self.observed.lock().unwrap_or_else(PoisonError::into_inner);
        let stale = self.duration * 10;
        seen.retain(|_, o| o.since.elapsed() < stale);
        let o = seen.entry(name.to_owned()).or_insert_with(|| Observed {
            uuid,
            record: record.clone(),
            since: Instant::now(),
        });
        if o.uuid != uuid || o.record != record {
            *o = Observed {
                uuid,
                record,
                since: Instant::now(),
            };
        }
        o.since.elapsed()
    }

    fn forget(&self, name: &str) {
        self.observed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name);
    }

    /// Takes the lease `name`, waiting up to `lease_wait` for another holder; `busy` words
    /// the "busy, retry" answer from the holder's owner id.
    pub(crate) async fn acquire(
        &self,
        links: &LinkPool,
        name: &str,
        busy: impl Fn(&str) -> String,
    ) -> Result<Lease, ProviderError> {
        let deadline = Instant::now() + self.wait;
        let what = |e: LvError| provider_error(format!("take lease {name}"), e);
        loop {
            let link = links.link().await.map_err(|e| {
                provider_error(format!("cannot reach libvirt at {}", links.uri()), e)
            })?;
            let xml = lease_domain_xml(name, self.domain_type, &self.record(0));
            let refused = match link
                .call::<DomainDefineXmlFlags>(&XmlFlagsArgs {
                    xml: xml.into(),
                    flags: DomainDefineFlags::empty(),
                })
                .await
            {
                Ok(r) => {
                    self.forget(name);
                    tracing::debug!(lease = name, "lease taken");
                    return Ok(Lease {
                        name: name.to_owned(),
                        dom: r.dom,
                        renewals: AtomicU64::new(0),
                        link,
                        released: false,
                    });
                }
                Err(e) if e.is_dead_link() => return Err(what(e)),
                Err(e) => e,
            };
            // Held by someone? Look at the holder.
            let Some(held) = ops::domain(&link, name).await.map_err(what)? else {
                if matches!(
                    refused.code(),
                    Some(ErrorCode::OPERATION_FAILED | ErrorCode::DOM_EXIST)
                ) && Instant::now() < deadline
                {
                    continue; // released meanwhile
                }
                return Err(what(refused));
            };
            let record = match ops::metadata_in(&link, &held, NAMESPACE).await {
                Ok(r) => r,
                Err(e) if e.is_no_domain() => continue,
                Err(e) => return Err(what(e)),
            };
            let parsed = record.as_deref().and_then(Record::parse);
            let holder = parsed
                .as_ref()
                .map_or("an unknown owner", |(o, _)| o.as_str())
                .to_owned();
            let limit = parsed
                .as_ref()
                .map_or(self.duration, |(_, d)| (*d).max(self.duration));
            let mine = parsed.as_ref().is_some_and(|(o, _)| *o == self.owner);
            let seen = self.observe(name, held.uuid.0, record);
            if mine || seen >= limit {
                tracing::warn!(
                    lease = name,
                    owner = %holder,
                    unchanged_for = ?seen,
                    "breaking a lease ({})",
                    if mine { "left by a call of this provider" } else { "expired" }
                );
                match link
                    .call::<DomainUndefineFlags>(&DomainFlagsArgs {
                        dom: held,
                        flags: DomainUndefineFlagsValues::empty(),
                    })
                    .await
                {
                    Ok(()) => {}
                    Err(e) if e.is_no_domain() => {}
                    Err(e) => return Err(what(e)),
                }
                self.forget(name);
                continue;
            }
            if Instant::now() >= deadline {
                return Err(ProviderError::transient(format!(
                    "{}: lease {name} is held by {holder}; busy, retry",
                    busy(&holder)
                )));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// One renewal, by UUID: `Err` when the lease is gone (broken) or cannot be renewed now.
    async fn renew(
        &self,
        links: &LinkPool,
        lease: &Lease,
    ) -> Result<(), Result<ProviderError, LvError>> {
        let link = links.link().await.map_err(Err)?;
        let n = lease.renewals.fetch_add(1, Ordering::Relaxed) + 1;
        match link
            .call::<DomainSetMetadata>(&DomainSetMetadataArgs {
                dom: lease.dom.clone(),
                kind: MetadataType::ELEMENT,
                metadata: Some(self.record(n).to_xml(false).into()),
                key: Some(PREFIX.into()),
                uri: Some(NAMESPACE.into()),
                flags: DomainModificationImpact::empty(),
            })
            .await
        {
            Ok(()) => Ok(()),
            Err(e) if e.is_no_domain() => Err(Ok(lost(&lease.name, "was broken"))),
            Err(e) => Err(Err(e)),
        }
    }

    /// Renews now; `Transient` when the lease is no longer ours (before an irreversible step).
    pub(crate) async fn check(&self, links: &LinkPool, lease: &Lease) -> Result<(), ProviderError> {
        match self.renew(links, lease).await {
            Ok(()) => Ok(()),
            Err(Ok(e)) => Err(e),
            Err(Err(e)) => Err(provider_error(format!("renew lease {}", lease.name), e)),
        }
    }

    /// Runs `work` while renewing `lease`; stops it when the lease is lost.
    pub(crate) async fn hold<T>(
        &self,
        links: &LinkPool,
        lease: &Lease,
        work: impl Future<Output = Result<T, ProviderError>>,
    ) -> Result<T, ProviderError> {
        let period = self.duration / 3;
        let renewing = async {
            let mut last = Instant::now();
            loop {
                tokio::time::sleep(period).await;
                match tokio::time::timeout(period, self.renew(links, lease)).await {
                    Ok(Ok(())) => last = Instant::now(),
                    Ok(Err(Ok(gone))) => return gone,
                    Ok(Err(Err(e))) => {
                        tracing::warn!(lease = %lease.name, error = %e, "lease renewal failed");
                    }
                    Err(_) => tracing::warn!(lease = %lease.name, "lease renewal timed out"),
                }
                if last.elapsed() >= self.duration * 2 / 3 {
                    return lost(&lease.name, "could not be renewed in time");
                }
            }
        };
        // Boxed: the guarded work is a whole create or fetch.
        let (work, renewing) = (Box::pin(work), Box::pin(renewing));
        tokio::select! {
            biased;
            r = work => r,
            gone = renewing => Err(gone),
        }
    }

    /// Releases `lease` (best effort: a lease that cannot be released expires).
    pub(crate) async fn release(&self, links: &LinkPool, mut lease: Lease) {
        lease.released = true;
        let link = match links.link().await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(lease = %lease.name, error = %e, "cannot release lease; it expires");
                return;
            }
        };
        match link
            .call::<DomainUndefineFlags>(&DomainFlagsArgs {
                dom: lease.dom.clone(),
                flags: DomainUndefineFlagsValues::empty(),
            })
            .await
        {
            Ok(()) => tracing::debug!(lease = %lease.name, "lease released"),
            Err(e) if e.is_no_domain() => {
                tracing::warn!(lease = %lease.name, "lease was broken before its release");
            }
            Err(e) => {
                tracing::warn!(lease = %lease.name, error = %e, "cannot release lease; it expires");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_look_like_instances() {
        let n = lease_name("kvm-a", Subject::Uid("u1"));
        assert_eq!(n, "lease.kvm-a.uid.u1");
        assert!(!n.starts_with("kvm-a-"));
        assert_eq!(
            lease_name("lease", Subject::Image("k")),
            "lease.lease.image.k"
        );
        assert!(!lease_name("lease", Subject::Uid("x")).starts_with("lease-"));
    }

    #[test]
    fn records_round_trip_owner_and_duration() {
        let r = Record {
            owner: "h:1:ab\"<&".into(),
            duration: Duration::from_millis(1500),
            renewals: 7,
        };
        let xml = r.to_xml(true);
        assert!(xml.contains("renewals='7'"), "{xml}");
        assert_eq!(Record::parse(&xml), Some((r.owner.clone(), r.duration)));
        let bare = r.to_xml(false);
        assert!(bare.starts_with("<lease owner="), "{bare}");
        assert_eq!(Record::parse(&bare), Some((r.owner, r.duration)));
        // libvirt hands the element back with its own prefix.
        let back = xml
            .replace("lease:", "x:")
            .replace("xmlns:lease", "xmlns:x");
        assert!(Record::parse(&back).is_some(), "{back}");
        assert_eq!(Record::parse("<other/>"), None);
    }

    #[test]
    fn lease_domains_are_valid_for_libvirt() {
        let r = Record {
            owner: "h:1:ab".into(),
            duration: Duration::from_secs(30),
            renewals: 0,
        };
        for t in [DomainType::Kvm, DomainType::Qemu] {
            let xml = lease_domain_xml("lease.e.uid.u", t, &r);
            libvirt_xml::fuzzing::assert_schema_valid(&xml, "domain.rng");
            let d = libvirt_xml::Domain::from_xml(&xml).expect("parses");
            let m = d.metadata_element(NAMESPACE).expect("the record");
            assert_eq!(
                Record::parse(&m.to_xml()),
                Some((r.owner.clone(), r.duration))
            );
        }
    }

    #[test]
    fn owners_differ() {
        assert_ne!(new_owner(), new_owner());
    }
}
