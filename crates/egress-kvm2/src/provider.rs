//! The [`Provider`] implementation.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use bytes::Bytes;
use egress_provider::{
    CreateSpec, FieldError, FieldErrors, Identifier, IdentifierError, ImageFormat, ImageSource,
    Instance, InstanceState, Listing, Problem, Provider, ProviderEntry, ProviderError, Unreadable,
    check_identifier,
};
use libvirt_remote::proto::ErrorCode;
use libvirt_remote::proto::names::{DomainState, ShutoffReason, StateReason};
use libvirt_remote::proto::procs::common::XmlFlagsArgs;
use libvirt_remote::proto::procs::connect::{ConnectListAllDomains, ConnectListAllDomainsArgs};
use libvirt_remote::proto::procs::domain::{
    DomainCreateWithFlags, DomainDefineFlags, DomainDefineXmlFlags, DomainDestroyFlags,
    DomainFlagsArgs, DomainInterfaceAddresses, DomainInterfaceAddressesArgs, DomainShutdownFlags,
    DomainUndefineFlags, DomainUndefineFlagsValues,
};
use libvirt_remote::proto::types::NonnullDomain;
use tracing::Instrument;

use crate::address::{self, SourceResult, Verdict};
use crate::classify::{LvError, provider_error};
use crate::config::Kvm2Settings;
use crate::faults::{FaultPoints, Point};
use crate::fence::{Leases, Subject, lease_name};
use crate::image::{BaseImage, ImageCache, ProgressFn};
use crate::keyed::KeyedLocks;
use crate::link::{Link, LinkPool};
use crate::meta::Meta;
use crate::seed::{self, SeedInput};
use crate::xml::{Backing, DomainSpec, domain_xml, volume_xml};
use crate::{monitor, ops};
use libvirt_remote::proto::procs::connect::ConnectListAllDomainsFlags;
use libvirt_remote::proto::procs::domain::{
    DomainCreateFlags, DomainDestroyFlagsValues, DomainShutdownFlagValues,
};

/// Why a provider could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The entry name breaks the identifier rule (it becomes part of volume and domain
    /// names, so it must be safe as a file name).
    #[error("provider entry name {name:?} is not a valid identifier: {error}")]
    InvalidName {
        /// The rejected name.
        name: String,
        /// Which part of the rule it breaks (formatted in the message, so not also the
        /// source).
        error: IdentifierError,
    },
    /// The settings are invalid.
    #[error("invalid kvm2 settings: {0}")]
    Settings(FieldErrors),
}

/// `disk-<entry>-<uid>.qcow2`: the instance's overlay.
pub fn disk_volume_name(entry: &str, uid: &str) -> String {
    format!("disk-{entry}-{uid}.qcow2")
}

/// `seed-<entry>-<uid>.img`: the instance's `NoCloud` seed.
pub fn seed_volume_name(entry: &str, uid: &str) -> String {
    format!("seed-{entry}-{uid}.img")
}

/// The KVM provider of one configuration entry.
pub struct Kvm2Provider {
    name: Identifier,
    settings: Kvm2Settings,
    links: LinkPool,
    images: ImageCache,
    uids: KeyedLocks<String>,
    leases: Leases,
    /// Domain starts in flight on the host ([`Kvm2Settings::max_parallel_starts`]).
    starts: tokio::sync::Semaphore,
    faults: FaultPoints,
    /// Tests: runs between the state read and the address read.
    #[cfg(test)]
    before_address: Option<AddressHook>,
}

/// One of the host's start turns ([`Kvm2Settings::max_parallel_starts`]), held by a create
/// from before its uid lease to its end.
struct Turn<'a>(#[allow(dead_code)] tokio::sync::SemaphorePermit<'a>);

#[cfg(test)]
type AddressHook = Arc<dyn Fn(&Link) + Send + Sync>;

impl std::fmt::Debug for Kvm2Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kvm2Provider")
            .field("name", &self.name)
            .field("uri", &self.settings.uri)
            .field("pool", &self.settings.pool)
            .finish_non_exhaustive()
    }
}

fn perr(context: impl Into<String>) -> impl FnOnce(LvError) -> ProviderError {
    let context = context.into();
    move |e| provider_error(context, e)
}

impl Kvm2Provider {
    /// The provider type name in configuration.
    pub const TYPE: &'static str = "kvm2";

    /// Builds a provider. Checks everything that can be checked without the network: the
    /// entry name (identifier rule), the URI, the settings. Connects lazily.
    pub fn new(
        name: &str,
        images: BTreeMap<Identifier, ImageSource>,
        allow_unverified_images: bool,
        settings: Kvm2Settings,
    ) -> Result<Self, BuildError> {
        check_identifier(name).map_err(|error| BuildError::InvalidName {
            name: name.to_owned(),
            error,
        })?;
        let name = Identifier::new(name).map_err(|error| BuildError::InvalidName {
            name: name.to_owned(),
            error,
        })?;
        settings
            .validate("settings")
            .map_err(BuildError::Settings)?;
        let b = settings.budgets;
        let links = LinkPool::new(&settings.uri, b.connect, b.call)
            .map_err(|e| {
                BuildError::Settings(
                    FieldError::new("settings.uri", Problem::invalid_because("unusable URI", e))
                        .into(),
                )
            })?
            .with_ssh_config(settings.ssh_config_file())
            // Room for every start turn: beyond the default, the operator raised
            // `max_parallel_starts` with the daemon's `max_client_requests`.
            .with_max_in_flight(
                settings
                    .max_parallel_starts
                    .max(libvirt_remote::conn::DEFAULT_MAX_IN_FLIGHT.get()),
            );
        let images = ImageCache::new(
            name.as_str(),
            &settings.pool,
            images,
            allow_unverified_images,
            b,
        )
        .with_max_image_bytes(settings.max_image_bytes);
        let leases = Leases::new(settings.domain_type, b.lease, b.lease_wait);
        let starts = tokio::sync::Semaphore::new(settings.max_parallel_starts);
        Ok(Self {
            name,
            starts,
            settings,
            links,
            images,
            uids: KeyedLocks::default(),
            leases,
            faults: FaultPoints::default(),
            #[cfg(test)]
            before_address: None,
        })
    }

    /// Builds the provider of a configuration entry; errors carry the entry's paths.
    pub fn from_entry(entry: &ProviderEntry, settings: Kvm2Settings) -> Result<Self, FieldErrors> {
        settings.validate(&entry.path())?;
        Self::new(
            entry.name.as_str(),
            entry.images.clone(),
            entry.allow_unverified_images,
            settings,
        )
        .map_err(|e| match e {
            BuildError::Settings(f) => f,
            BuildError::InvalidName { name, error } => entry
                .field_error(
                    "name",
                    Problem::NotIdentifier {
                        value: name,
                        source: error,
                    },
                )
                .into(),
        })
    }

    /// Reports image fetch and upload progress to `f`.
    #[must_use]
    pub fn with_progress(mut self, f: ProgressFn) -> Self {
        self.images = self.images.with_progress(f);
        self
    }

    /// Runs `hook` at every step of create and delete (feature `fault-injection`, for the
    /// fault-injection tests only).
    #[cfg(feature = "fault-injection")]
    #[must_use]
    pub fn with_fault_hook(mut self, hook: crate::faults::FaultHook) -> Self {
        self.faults.hook = Some(hook.clone());
        self.images.faults.hook = Some(hook);
        self
    }

    /// The settings.
    pub fn settings(&self) -> &Kvm2Settings {
        &self.settings
    }

    /// The link pool (diagnostics, tests).
    pub fn links(&self) -> &LinkPool {
        &self.links
    }

    /// `<entry>-<uid>`: the domain's name on the host.
    pub fn domain_name(&self, uid: &Identifier) -> String {
        format!("{}-{uid}", self.name)
    }

    /// Where the serial console of instance `uid` is logged on the host, when
    /// `serial_log_dir` is set: `<dir>/<entry>-<uid>.serial.log`.
    pub fn serial_log_path(&self, uid: &Identifier) -> Option<String> {
        let name = self.domain_name(uid);
        self.settings
            .serial_log_dir
            .as_ref()
            .map(|dir| format!("{}/{name}.serial.log", dir.trim_end_matches('/')))
    }

    /// Makes sure the base image for `key` is cached and verified (fetching it if needed).
    pub async fn ensure_image(&self, key: &Identifier) -> Result<BaseImage, ProviderError> {
        self.images.ensure(&self.links, &self.leases, key).await
    }

    /// This provider's owner id in cross-process leases (`<host>:<pid>:<random>`).
    pub fn lease_owner(&self) -> &str {
        self.leases.owner()
    }

    /// Runs `work` under the cross-process lease of instance `uid` (see [`crate::fence`]),
    /// after the in-process lock of the same uid.
    async fn under_uid_lease<T>(
        &self,
        uid: &Identifier,
        work: impl Future<Output = Result<T, ProviderError>>,
    ) -> Result<T, ProviderError> {
        let name = lease_name(self.name.as_str(), Subject::Uid(uid.as_str()));
        let lease = Box::pin(self.leases.acquire(&self.links, &name, |_| {
            format!(
                "instance {uid} of provider {} is being created or deleted by another controller",
                self.name
            )
        }))
        .await?;
        let r = self.leases.hold(&self.links, &lease, work).await;
        self.leases.release(&self.links, lease).await;
        r
    }

    /// Polite teardown of the shared link (bounded by the close budget).
    pub async fn shutdown(&self) {
        if let Some(l) = self.links.current() {
            l.client().disconnect(self.settings.budgets.close).await;
        }
        self.links.close("provider shut down");
    }

    async fn link(&self) -> Result<Arc<Link>, ProviderError> {
        self.links.link().await.map_err(perr(format!(
            "cannot reach libvirt at {}",
            self.settings.uri
        )))
    }

    /// Our metadata on `dom`, which must be for `uid`; foreign domains are `Permanent`.
    async fn read_meta(
        &self,
        link: &Link,
        dom: &NonnullDomain,
        uid: &Identifier,
    ) -> Result<Meta, ProviderError> {
        let name = dom.name.to_string();
        let xml = ops::metadata(link, dom)
            .await
            .map_err(perr(format!("read metadata of domain {name}")))?;
        let foreign = |why: String| {
            ProviderError::permanent(format!(
                "domain {name} exists but was not made by provider {:?} ({why}); rename or remove it",
                self.name
            ))
        };
        let Some(xml) = xml else {
            return Err(foreign("it carries no egress-kvm2 metadata".into()));
        };
        let meta = Meta::parse(&xml).map_err(|e| foreign(e.to_string()))?;
        if meta.uid != *uid || meta.entry != self.name.as_str() {
            return Err(foreign(format!(
                "its metadata names uid {:?} of entry {:?}",
                meta.uid, meta.entry
            )));
        }
        Ok(meta)
    }

    /// The instance as the host reports it now.
    async fn instance(
        &self,
        link: &Link,
        dom: &NonnullDomain,
        meta: Meta,
    ) -> Result<Instance, ProviderError> {
        let name = dom.name.to_string();
        let st = ops::state(link, dom)
            .await
            .map_err(perr(format!("read state of domain {name}")))?;
        let state = match st.state {
            DomainState::RUNNING | DomainState::BLOCKED => match self.address(link, dom).await? {
                Some(ip) => InstanceState::Running { ip },
                None => InstanceState::Provisioning,
            },
            DomainState::SHUTOFF => match st.reason {
                StateReason::Shutoff(ShutoffReason::CRASHED) => InstanceState::Failed {
                    reason: "the guest crashed and is shut off".into(),
                },
                StateReason::Shutoff(ShutoffReason::FAILED) => InstanceState::Failed {
                    reason: "the domain failed to start".into(),
                },
                _ => InstanceState::Stopped,
            },
            DomainState::CRASHED => InstanceState::Failed {
                reason: format!("the guest crashed (reason {})", st.reason.code()),
            },
            // Paused, shutting down, suspended, no state: not usable now, look again.
            _ => InstanceState::Provisioning,
        };
        Ok(Instance::new(
            self.name.as_str(),
            meta.uid,
            meta.name,
            state,
            meta.created_at,
        )
        .with_tags(meta.tags))
    }

    /// H3: try the configured sources in order; see [`crate::address`].
    async fn address(
        &self,
        link: &Link,
        dom: &NonnullDomain,
    ) -> Result<Option<IpAddr>, ProviderError> {
        #[cfg(test)]
        if let Some(hook) = &self.before_address {
            hook(link);
        }
        let mut results = Vec::new();
        for &source in &self.settings.address_sources {
            let r = if link.dead_reason().is_some() {
                Err(link.dead_error())
            } else {
                link.call::<DomainInterfaceAddresses>(&DomainInterfaceAddressesArgs {
                    dom: dom.clone(),
                    source: source.wire(),
                    flags: Default::default(),
                })
                .await
            };
            let result = match r {
                Ok(ret) => match address::pick(&ret.ifaces) {
                    Some(ip) => SourceResult::Found(ip),
                    None => SourceResult::Empty,
                },
                Err(e) => {
                    tracing::debug!(source = source.as_str(), error = %e, "address source failed");
                    SourceResult::Failed(e)
                }
            };
            let stop = address::is_final(&result);
            results.push((source, result));
            if stop {
                break;
            }
        }
        match address::decide(&results) {
            Verdict::Address(ip) => Ok(Some(ip)),
            Verdict::NoAddressYet => Ok(None),
            Verdict::Vanished(e) => Err(ProviderError::not_found(format!(
                "domain {} vanished while its address was read",
                dom.name
            ))
            .with_source(e)),
            Verdict::Unreadable(e) => Err(ProviderError::transient(format!(
                "cannot read the address of domain {}: every source failed or the link died ({e})",
                dom.name
            ))
            .with_source(e)),
        }
    }

    /// Starts `dom` if it never booted (its volumes are ready). A domain stopped after
    /// running stays stopped.
    async fn start_if_not_run(
        &self,
        link: &Link,
        dom: &NonnullDomain,
        turn: &Turn<'_>,
    ) -> Result<(), ProviderError> {
        if self.never_booted(link, dom).await? {
            tracing::info!(domain = %dom.name, "completing an interrupted create: starting the domain");
            self.start(link, dom, turn).await?;
        }
        Ok(())
    }

    /// The configured port forwards, on a domain whose qemu runs (running, blocked or
    /// paused); nothing for a domain that is not running (its next start adds them). Called
    /// after every start and on every create of an existing domain, so a domain started
    /// outside the provider gets its forwards at the next create.
    async fn forward_ports(&self, link: &Link, dom: &NonnullDomain) -> Result<(), ProviderError> {
        let forwards = self.settings.network.port_forwards();
        if forwards.is_empty() {
            return Ok(());
        }
        let st = ops::state(link, dom)
            .await
            .map_err(perr(format!("read state of domain {}", dom.name)))?;
        if !matches!(
            st.state,
            DomainState::RUNNING | DomainState::BLOCKED | DomainState::PAUSED
        ) {
            return Ok(());
        }
        monitor::ensure_port_forwards(link, dom, forwards)
            .await
            .map(|_| ())
    }

    /// Waits for one of the host's `max_parallel_starts` turns. A create takes it after its
    /// base image and before its uid lease, and holds it to the end: a create waiting for a
    /// turn holds no lease (so it renews none, and another controller waits for nothing),
    /// and the wait is ours, not the daemon's, so it is not counted in the start budget.
    async fn start_turn(&self) -> Result<Turn<'_>, ProviderError> {
        let link = self.link().await?;
        tokio::select! {
            permit = self.starts.acquire() => Ok(Turn(permit.expect("the start semaphore is never closed"))),
            // A link that dies while we wait (a frozen daemon found by another call): the
            // create would fail at once anyway.
            _ = link.dead() => Err(provider_error(
                format!("wait for a start turn on {}", self.settings.uri),
                link.dead_error(),
            )),
        }
    }

    /// Starts `dom` within the start budget, in the caller's `turn`.
    async fn start(
        &self,
        link: &Link,
        dom: &NonnullDomain,
        turn: &Turn<'_>,
    ) -> Result<(), ProviderError> {
        let _ = turn;
        match link
            .call_within::<DomainCreateWithFlags>(
                &DomainFlagsArgs {
                    dom: dom.clone(),
                    flags: DomainCreateFlags::empty(),
                },
                self.settings.budgets.start,
                "start budget",
            )
            .await
        {
            Ok(_) => Ok(()),
            // Already running (someone else started it): fine.
            Err(e) if e.code() == Some(ErrorCode::OPERATION_INVALID) => Ok(()),
            Err(e) => Err(provider_error(format!("start domain {}", dom.name), e)),
        }
    }

    async fn create_inner(&self, spec: &CreateSpec) -> Result<Instance, ProviderError> {
        spec.validate().map_err(|e| {
            ProviderError::permanent(format!("invalid spec: {e}; fix the spec")).with_source(e)
        })?;
        self.images.source(&spec.image)?;
        if spec.user_data.len() > seed::MAX_USER_DATA {
            return Err(ProviderError::permanent(format!(
                "user-data is {} bytes; at most {} are supported",
                spec.user_data.len(),
                seed::MAX_USER_DATA
            )));
        }
        // The base first, under its key's own lease: a fetch holds neither the instance's
        // lease nor a start turn.
        self.faults.at(Point::CreateBase).await;
        let base = self
            .images
            .ensure(&self.links, &self.leases, &spec.image)
            .await?;
        self.faults.at(Point::CreateLock).await;
        let _guard = self.uids.lock(spec.uid.to_string()).await;
        let turn = self.start_turn().await?;
        self.under_uid_lease(&spec.uid, Box::pin(self.create_leased(spec, &base, &turn)))
            .await
    }

    /// `create` under the per-uid lock, a start turn and the uid lease, on the ensured `base`.
    async fn create_leased(
        &self,
        spec: &CreateSpec,
        base: &BaseImage,
        turn: &Turn<'_>,
    ) -> Result<Instance, ProviderError> {
        self.faults.at(Point::CreateAdopt).await;
        let link = self.link().await?;
        let name = self.domain_name(&spec.uid);
        if let Some(dom) = ops::domain(&link, &name)
            .await
            .map_err(perr(format!("look up domain {name}")))?
        {
            // Same uid again (or a create that crashed after define): the same domain.
            let meta = self.read_meta(&link, &dom, &spec.uid).await?;
            let link = if self.never_booted(&link, &dom).await? {
                // A create interrupted after define. Its volumes may be gone since (a
                // define that outlived its budget can land after a retry deleted the stale
                // seed): nothing has booted from them, so make them again, then start.
                tracing::info!(domain = %dom.name, "completing an interrupted create: volumes, then start");
                self.prepare_volumes(spec, &name, base).await?;
                let link = self.link().await?;
                self.start(&link, &dom, turn).await?;
                link
            } else {
                link
            };
            self.forward_ports(&link, &dom).await?;
            return self.instance(&link, &dom, meta).await;
        }

        let (disk_name, seed_name) = self.prepare_volumes(spec, &name, base).await?;
        let link = self.link().await?;

        let meta = Meta {
            uid: spec.uid.clone(),
            name: spec.name.clone(),
            created_at: SystemTime::now(),
            entry: self.name.to_string(),
            image: spec.image.to_string(),
            tags: spec.tags.clone(),
        };
        let agent_socket = self.settings.agent_socket_dir.as_ref().map(|dir| {
            use sha2::Digest;
            let h = sha2::Sha256::digest(name.as_bytes());
            let hex: String = h.iter().take(8).fold(String::new(), |mut s, b| {
                use std::fmt::Write as _;
                let _ = write!(s, "{b:02x}");
                s
            });
            format!("{}/{hex}.agent", dir.trim_end_matches('/'))
        });
        let serial_log = self.serial_log_path(&spec.uid);
        let xml = domain_xml(&DomainSpec {
            name: &name,
            title: &spec.name,
            domain_type: self.settings.domain_type,
            memory_mib: spec.memory_mib,
            vcpus: spec.vcpus,
            pool: &self.settings.pool,
            disk_volume: &disk_name,
            seed_volume: &seed_name,
            network: &self.settings.network,
            meta: &meta,
            agent_socket: agent_socket.as_deref(),
            serial_log: serial_log.as_deref(),
        });
        self.faults.at(Point::CreateDefine).await;
        let dom = match link
            .call::<DomainDefineXmlFlags>(&XmlFlagsArgs {
                xml: xml.into(),
                flags: DomainDefineFlags::VALIDATE,
            })
            .await
        {
            Ok(r) => r.dom,
            Err(e) => {
                // Defined meanwhile by another process with the same uid? Then it is ours.
                if !e.is_dead_link()
                    && let Ok(Some(dom)) = ops::domain(&link, &name).await
                {
                    let meta = self.read_meta(&link, &dom, &spec.uid).await?;
                    self.start_if_not_run(&link, &dom, turn).await?;
                    self.forward_ports(&link, &dom).await?;
                    return self.instance(&link, &dom, meta).await;
                }
                return Err(provider_error(format!("define domain {name}"), e));
            }
        };
        self.faults.at(Point::CreateStart).await;
        self.start(&link, &dom, turn).await?;
        self.faults.at(Point::CreateForwards).await;
        self.forward_ports(&link, &dom).await?;
        // Read back, not remembered.
        self.faults.at(Point::CreateReadBack).await;
        let meta = self.read_meta(&link, &dom, &spec.uid).await?;
        tracing::info!(domain = %name, "domain defined and started");
        self.instance(&link, &dom, meta).await
    }

    /// Overlay on `base` (reused if present: nothing has booted from it) and seed (always
    /// rebuilt: a crashed upload may have left a partial one) of `spec`'s domain `name`,
    /// which does not exist or has never booted. Answers the overlay's and the seed's names.
    async fn prepare_volumes(
        &self,
        spec: &CreateSpec,
        name: &str,
        base: &BaseImage,
    ) -> Result<(String, String), ProviderError> {
        self.faults.at(Point::CreateOverlay).await;
        let link = self.link().await?;
        let pool = ops::entry_pool(&link, &self.settings.pool).await?;

        // The overlay: created, or reused when an interrupted create left one (nothing has
        // booted from it). No look-up first: libvirt refuses a name in use
        // (`STORAGE_VOL_EXIST`) before touching anything, so a fresh create makes one call.
        let disk_name = disk_volume_name(self.name.as_str(), spec.uid.as_str());
        let xml = volume_xml(
            &disk_name,
            base.capacity,
            ImageFormat::Qcow2,
            Some(Backing {
                path: &base.path,
                format: base.format,
            }),
        );
        match ops::create_vol(&link, &pool, xml).await {
            Ok(_) => {}
            Err(e) if e.code() == Some(ErrorCode::STORAGE_VOL_EXIST) => {}
            Err(e) => return Err(provider_error(format!("create overlay {disk_name}"), e)),
        }

        // The seed: always rebuilt while nothing has booted from it (a crashed upload may
        // have left a partial one).
        self.faults.at(Point::CreateSeed).await;
        let seed_name = seed_volume_name(self.name.as_str(), spec.uid.as_str());
        let hostname = if name.len() <= 63 {
            name
        } else {
            spec.uid.as_str()
        };
        let image = seed::build(&SeedInput {
            instance_id: spec.uid.as_str(),
            hostname,
            user_data: &spec.user_data,
            ssh_keys: &spec.ssh_authorized_keys,
        })
        .map_err(|e| {
            ProviderError::permanent(format!("build the NoCloud seed: {e}")).with_source(e)
        })?;
        // Created first; one left by an interrupted create (the name in use) is deleted and
        // created again, so a fresh create makes one call.
        let seed_xml = volume_xml(&seed_name, image.len() as u64, ImageFormat::Raw, None);
        let seed_vol = match ops::create_vol(&link, &pool, seed_xml.clone()).await {
            Ok(v) => v,
            Err(e) if e.code() == Some(ErrorCode::STORAGE_VOL_EXIST) => {
                ops::delete_vol(&link, &pool, &seed_name)
                    .await
                    .map_err(perr(format!("delete stale seed {seed_name}")))?;
                ops::create_vol(&link, &pool, seed_xml)
                    .await
                    .map_err(perr(format!("create seed {seed_name}")))?
            }
            Err(e) => return Err(provider_error(format!("create seed {seed_name}"), e)),
        };
        self.faults.at(Point::CreateSeedUpload).await;
        ops::small_upload(&link, &seed_vol, Bytes::from(image))
            .await
            .map_err(perr(format!("upload seed {seed_name}")))?;
        Ok((disk_name, seed_name))
    }

    /// Defined and never started (a create interrupted between define and start), or a
    /// start that failed. A domain stopped after running is not.
    async fn never_booted(&self, link: &Link, dom: &NonnullDomain) -> Result<bool, ProviderError> {
        let st = ops::state(link, dom)
            .await
            .map_err(perr(format!("read state of domain {}", dom.name)))?;
        Ok(matches!(
            st.reason,
            StateReason::Shutoff(ShutoffReason::UNKNOWN | ShutoffReason::FAILED)
        ))
    }

    async fn get_inner(&self, uid: &Identifier) -> Result<Instance, ProviderError> {
        let link = self.link().await?;
        let name = self.domain_name(uid);
        let dom = ops::domain(&link, &name)
            .await
            .map_err(perr(format!("look up domain {name}")))?
            .ok_or_else(|| {
                ProviderError::not_found(format!("no instance {uid} on provider {}", self.name))
            })?;
        let meta = self.read_meta(&link, &dom, uid).await?;
        self.instance(&link, &dom, meta).await
    }

    /// Graceful shutdown within the budget, then destroy. `Ok` when it is not running.
    async fn stop(&self, link: &Link, dom: &NonnullDomain) -> Result<(), ProviderError> {
        let budget = self.settings.budgets.shutdown;
        let gone = |e: &LvError| e.is_no_domain() || e.code() == Some(ErrorCode::OPERATION_INVALID);
        let st = match ops::state(link, dom).await {
            Ok(s) => s,
            Err(e) if e.is_no_domain() => return Ok(()),
            Err(e) => {
                return Err(provider_error(
                    format!("read state of domain {}", dom.name),
                    e,
                ));
            }
        };
        if st.state == DomainState::SHUTOFF {
            return Ok(());
        }
        if !budget.is_zero() {
            let r = link
                .call::<DomainShutdownFlags>(&DomainFlagsArgs {
                    dom: dom.clone(),
                    flags: DomainShutdownFlagValues::empty(),
                })
                .await;
            match r {
                Ok(()) => {
                    let until = tokio::time::Instant::now() + budget;
                    while tokio::time::Instant::now() < until {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        match ops::state(link, dom).await {
                            Ok(s) if s.state == DomainState::SHUTOFF => return Ok(()),
                            Ok(_) => {}
                            Err(e) if e.is_no_domain() => return Ok(()),
                            Err(e) => {
                                return Err(provider_error(
                                    format!("read state of domain {}", dom.name),
                                    e,
                                ));
                            }
                        }
                    }
                }
                Err(e) if gone(&e) => return Ok(()),
                Err(e) if e.is_dead_link() => {
                    return Err(provider_error(format!("shut down domain {}", dom.name), e));
                }
                Err(e) => tracing::debug!(error = %e, "graceful shutdown refused; destroying"),
            }
        }
        self.faults.at(Point::DeleteDestroy).await;
        match link
            .call::<DomainDestroyFlags>(&DomainFlagsArgs {
                dom: dom.clone(),
                flags: DomainDestroyFlagsValues::empty(),
            })
            .await
        {
            Ok(()) => Ok(()),
            Err(e) if gone(&e) => Ok(()),
            Err(e) => Err(provider_error(format!("destroy domain {}", dom.name), e)),
        }
    }

    async fn undefine(&self, link: &Link, dom: &NonnullDomain) -> Result<(), ProviderError> {
        let full = DomainUndefineFlagsValues::MANAGED_SAVE
            | DomainUndefineFlagsValues::SNAPSHOTS_METADATA
            | DomainUndefineFlagsValues::NVRAM
            | DomainUndefineFlagsValues::CHECKPOINTS_METADATA;
        for flags in [
            full,
            DomainUndefineFlagsValues::MANAGED_SAVE | DomainUndefineFlagsValues::NVRAM,
            DomainUndefineFlagsValues::empty(),
        ] {
            match link
                .call::<DomainUndefineFlags>(&DomainFlagsArgs {
                    dom: dom.clone(),
                    flags,
                })
                .await
            {
                Ok(()) => return Ok(()),
                Err(e) if e.is_no_domain() => return Ok(()),
                Err(e)
                    if flags != DomainUndefineFlagsValues::empty()
                        && (e.code() == Some(ErrorCode::INVALID_ARG)
                            || e.remote().is_some_and(
                                libvirt_remote::proto::RemoteError::is_unsupported,
                            )) =>
                {
                    tracing::debug!(%flags, error = %e, "undefine flags refused; trying fewer");
                }
                Err(e) => return Err(provider_error(format!("undefine domain {}", dom.name), e)),
            }
        }
        Ok(())
    }

    async fn delete_inner(&self, uid: &Identifier) -> Result<(), ProviderError> {
        self.faults.at(Point::DeleteLock).await;
        let _guard = self.uids.lock(uid.to_string()).await;
        self.under_uid_lease(uid, Box::pin(self.delete_leased(uid)))
            .await
    }

    /// `delete` under the per-uid lock and lease.
    async fn delete_leased(&self, uid: &Identifier) -> Result<(), ProviderError> {
        let link = self.link().await?;
        let name = self.domain_name(uid);
        if let Some(dom) = ops::domain(&link, &name)
            .await
            .map_err(perr(format!("look up domain {name}")))?
        {
            match self.read_meta(&link, &dom, uid).await {
                Ok(_) => {}
                // Vanished since the lookup: nothing left to stop.
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
            self.faults.at(Point::DeleteShutdown).await;
            self.stop(&link, &dom).await?;
            self.faults.at(Point::DeleteUndefine).await;
            self.undefine(&link, &dom).await?;
        }
        self.faults.at(Point::DeleteVolumes).await;
        let pool = ops::entry_pool(&link, &self.settings.pool).await?;
        for vol in [
            disk_volume_name(self.name.as_str(), uid.as_str()),
            seed_volume_name(self.name.as_str(), uid.as_str()),
        ] {
            ops::delete_vol(&link, &pool, &vol)
                .await
                .map_err(perr(format!("delete volume {vol}")))?;
        }
        Ok(())
    }

    /// Every domain of this entry carrying `tag`. Once the host answered the list, one
    /// domain's failure (its metadata unreadable or damaged, its state or address
    /// unreadable) is reported for that domain in [`Listing::unreadable`]; a domain that
    /// vanished meanwhile is left out (it is gone); a dead link fails the whole call.
    async fn list_inner(&self, tag: &Identifier) -> Result<Listing, ProviderError> {
        let link = self.link().await?;
        let all = link
            .call::<ConnectListAllDomains>(&ConnectListAllDomainsArgs {
                need_results: 1,
                flags: ConnectListAllDomainsFlags::empty(),
            })
            .await
            .map_err(perr("list domains"))?;
        let prefix = format!("{}-", self.name);
        let mut out = Listing::default();
        for dom in all.domains {
            let Ok(name) = dom.name.to_str() else {
                continue;
            };
            let Some(rest) = name.strip_prefix(&prefix) else {
                continue;
            };
            let named_uid = Identifier::new(rest).ok();
            let unreadable = |error| Unreadable::new(name, named_uid.clone(), error);
            let xml = match ops::metadata(&link, &dom).await {
                Ok(Some(x)) => x,
                // Not ours (no metadata in our namespace), or gone.
                Ok(None) => continue,
                Err(e) if e.is_no_domain() => continue,
                Err(e) => {
                    let err = provider_error(format!("read metadata of domain {name}"), e);
                    if link.is_dead() {
                        return Err(err);
                    }
                    out.unreadable.push(unreadable(err));
                    continue;
                }
            };
            let meta = match Meta::parse(&xml) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(domain = name, error = %e, "damaged egress-kvm2 metadata");
                    out.unreadable.push(unreadable(
                        ProviderError::permanent(format!(
                            "domain {name} carries damaged egress-kvm2 metadata ({e}); its tags \
                             are unknown. Repair its metadata or remove the domain by hand"
                        ))
                        .with_source(e),
                    ));
                    continue;
                }
            };
            if meta.entry != self.name.as_str() {
                continue;
            }
            if named_uid.as_ref() != Some(&meta.uid) {
                out.unreadable
                    .push(unreadable(ProviderError::permanent(format!(
                        "domain {name} carries egress-kvm2 metadata for uid {:?}, which does not \
                     match its name; rename or remove it by hand",
                        meta.uid.as_str()
                    ))));
                continue;
            }
            if !meta.tags.contains(tag) {
                continue;
            }
            match self.instance(&link, &dom, meta).await {
                Ok(i) => out.instances.push(i),
                // Vanished mid-list: gone, as a list a moment later would say.
                Err(e) if e.is_not_found() => {}
                Err(e) if link.is_dead() => return Err(e),
                Err(e) => out.unreadable.push(unreadable(e)),
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl Provider for Kvm2Provider {
    fn name(&self) -> &str {
        self.name.as_str()
    }

    async fn create(&self, spec: &CreateSpec) -> Result<Instance, ProviderError> {
        let span = tracing::info_span!("kvm2.create", entry = %self.name, uid = %spec.uid, image = %spec.image);
        self.create_inner(spec).instrument(span).await
    }

    async fn get(&self, uid: &Identifier) -> Result<Instance, ProviderError> {
        let span = tracing::debug_span!("kvm2.get", entry = %self.name, uid = %uid);
        self.get_inner(uid).instrument(span).await
    }

    async fn delete(&self, uid: &Identifier) -> Result<(), ProviderError> {
        let span = tracing::info_span!("kvm2.delete", entry = %self.name, uid = %uid);
        self.delete_inner(uid).instrument(span).await
    }

    async fn list_by_tag(&self, tag: &Identifier) -> Result<Listing, ProviderError> {
        let span = tracing::debug_span!("kvm2.list_by_tag", entry = %self.name, tag = %tag);
        self.list_inner(tag).instrument(span).await
    }
}

#[cfg(test)]
mod tests;
