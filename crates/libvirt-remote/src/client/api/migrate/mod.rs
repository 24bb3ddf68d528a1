//! Client-driven migration (libvirt's "managed direct" migration): the client runs the
//! steps between two connections, carrying each daemon's cookie to the other, as
//! `virDomainMigrate3` does without `PEER2PEER`. Protocol v3 with typed parameters by
//! default; v3 without parameters, v2 and v1 on request or when a daemon lacks the newer one
//! ([`MigrateProtocol`]).
//!
//! ```text
//!  source                        client                        destination
//!  Begin3Params ── xml, cookie ──▶      ── Prepare3Params ──▶  (qemu -incoming)
//!                                ◀── cookie, uri_out ──────────
//!  Perform3Params ◀─ uri, cookie ─      (the data flows source → destination directly)
//!                 ── cookie ─────▶      ── Finish3Params ───▶  (domain runs here)
//!  Confirm3Params ◀─ cookie, cancelled ─◀── domain, cookie ────
//! ```
//!
//! What the client library does besides the calls, done here the same way:
//! - `CHANGE_PROTECTION`: never sent to the destination; the source steps of v3 carry it
//!   whenever the source supports it (`VIR_DRV_FEATURE_MIGRATE_CHANGE_PROTECTION`), so that
//!   begin starts a migration job keeping the domain's configuration from changing until
//!   confirm ends it. Asked for explicitly on a source without that feature, the migration
//!   is refused before any step ("cannot enforce change protection").
//! - `PAUSED`: a domain paused on the source when begin returns migrates with `PAUSED`, so it
//!   arrives paused.
//! - `OFFLINE`: both daemons must support offline migration; there is no perform step.
//! - A failed step cancels the rest: a failed prepare is followed by a cancelled confirm
//!   (ending the source's migration job); a failed perform by a cancelled finish (the source
//!   itself already resumed the domain: no confirm); a failed finish by a cancelled confirm
//!   (the source resumes the domain).
//! - A failed confirm after a successful finish does not fail the migration: the domain runs
//!   on the destination, as `virDomainMigrateVersion3Full` has it (it only warns that the
//!   guest is "probably left in 'paused' state on source"). The error is logged as a warning
//!   and kept in [`Migrated::confirm_error`].
//! - A destination whose connection dies during perform (its daemon crashed or was killed):
//!   the source daemon would never hear of it (its data goes to the destination's hypervisor,
//!   which outlives its daemon), so the client aborts the source's job (`DomainAbortJob`) and
//!   reports the perform step with the destination's connection error. libvirt's client
//!   library has no such watch (it waits for the perform to end, then fails at finish).

use crate::conn::CallError;
use crate::proto::names::DomainState;
use crate::proto::procs::connect::{ConnectSupportsFeature, ConnectSupportsFeatureArgs};
use crate::proto::procs::domain::{
    DomainFlagsArgs, DomainGetState, DomainGetXmlDesc, DomainXmlFlags,
};
use crate::proto::procs::migration::{
    DomainMigrateFinish, DomainMigrateFinish2, DomainMigrateFinish2Args, DomainMigrateFinishArgs,
    DomainMigrateFlags, DomainMigratePerform, DomainMigratePerform3Params,
    DomainMigratePerform3ParamsArgs, DomainMigratePerformArgs, DomainMigratePrepare,
    DomainMigratePrepare2, DomainMigratePrepare2Args, DomainMigratePrepareArgs, migrate_param,
};
use crate::proto::types::{NonnullDomain, TypedParam, TypedParamValue};
use crate::proto::{ErrorCode, ErrorDomain};
use crate::wire::xdr::LvString;
use bytes::Bytes;
use tracing::Instrument;

mod v3;

use crate::client::Client;
use v3::{Performed, V3};

/// `VIR_DRV_FEATURE_*` numbers the migration logic asks the daemons about
/// (`ConnectSupportsFeature`).
mod feature {
    pub const MIGRATION_V1: i32 = 1;
    pub const MIGRATION_V2: i32 = 3;
    pub const MIGRATION_V3: i32 = 6;
    pub const MIGRATE_CHANGE_PROTECTION: i32 = 7;
    pub const MIGRATION_OFFLINE: i32 = 12;
    pub const MIGRATION_PARAMS: i32 = 13;
}

/// Which sequence of migration calls [`Client::migrate`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MigrateProtocol {
    /// The newest both daemons support, as `virDomainMigrate3` picks: v3 with typed
    /// parameters, else v3, else v2, else v1 (asked with `ConnectSupportsFeature`).
    #[default]
    Auto,
    /// `Begin3Params`, `Prepare3Params`, `Perform3Params`, `Finish3Params`,
    /// `Confirm3Params` (libvirt 1.1.0).
    V3Params,
    /// `Begin3`, `Prepare3`, `Perform3`, `Finish3`, `Confirm3` (libvirt 0.9.2): no
    /// `listen_address`, no disk list, the destination XML only through begin.
    V3,
    /// The source's migratable XML, then `Prepare2`, `Perform`, `Finish2` (libvirt 0.5.0):
    /// no begin or confirm, so no change protection; no destination XML.
    V2,
    /// `Prepare`, `Perform`, `Finish` (libvirt 0.3.2; the qemu driver has no v1 prepare).
    V1,
}

/// What a [`Client::migrate`] does besides moving the domain.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct MigrateOptions {
    /// `virDomainMigrateFlags` of every step (`LIVE`, `PERSIST_DEST`, `UNDEFINE_SOURCE`,
    /// `OFFLINE`, `NON_SHARED_DISK`, …; the `*_PARAMS` calls carry them as a `u32`, so a
    /// bit above 31 (libvirt defines none) fails the step as an encode error, unsent).
    /// `PEER2PEER` and `TUNNELLED` are not
    /// client-driven (see [`Client::migrate_to_uri`]). `CHANGE_PROTECTION` and `PAUSED` are
    /// handled as the module documentation says.
    pub flags: DomainMigrateFlags,
    /// The sequence of calls; [`MigrateProtocol::Auto`] by default.
    pub protocol: MigrateProtocol,
    /// Where the destination receives the data (`migrate_uri`, e.g.
    /// `tcp://127.0.0.1:49200` or `unix:///path/to/socket`); `None`: the destination picks
    /// (from its host name).
    pub uri: Option<String>,
    /// The address the destination's hypervisor (and its disk-copy server) listens on
    /// (`listen_address`; v3 with parameters only); `None`: the destination's
    /// configuration, by default every address.
    pub listen_address: Option<String>,
    /// The domain's name on the destination (`destination_name`); `None`: the same.
    pub dname: Option<String>,
    /// The domain XML to run on the destination (`destination_xml`, e.g. with other disk
    /// paths; v3 only): the source's begin step checks it against the running domain.
    pub dest_xml: Option<String>,
    /// The disks (target names such as `vda`) whose contents are copied with
    /// `NON_SHARED_DISK` / `NON_SHARED_INC` (`migrate_disks`; v3 with parameters only);
    /// empty: every disk that is not shared or read-only.
    pub migrate_disks: Vec<String>,
    /// Bandwidth limit in MiB/s (`bandwidth`); 0: none.
    pub bandwidth: u64,
}

/// `fn field(self, value: impl Into<String>) -> Self` for each optional string field.
macro_rules! string_setters {
    ($($field:ident),*) => {$(
        #[doc = concat!("Set [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        #[must_use]
        pub fn $field(mut self, value: impl Into<String>) -> Self {
            self.$field = Some(value.into());
            self
        }
    )*};
}

impl MigrateOptions {
    /// Options with these flags.
    #[must_use]
    pub fn new(flags: DomainMigrateFlags) -> Self {
        Self {
            flags,
            ..Self::default()
        }
    }

    /// Set [`protocol`](Self::protocol).
    #[must_use]
    pub fn protocol(mut self, protocol: MigrateProtocol) -> Self {
        self.protocol = protocol;
        self
    }

    string_setters!(uri, listen_address, dname, dest_xml);

    /// Add a disk to [`migrate_disks`](Self::migrate_disks).
    #[must_use]
    pub fn migrate_disk(mut self, target: impl Into<String>) -> Self {
        self.migrate_disks.push(target.into());
        self
    }

    /// Set [`bandwidth`](Self::bandwidth).
    #[must_use]
    pub fn bandwidth(mut self, mib_per_s: u64) -> Self {
        self.bandwidth = mib_per_s;
        self
    }

    fn dname_or(&self, dom: &NonnullDomain) -> LvString {
        match &self.dname {
            Some(n) => n.as_str().into(),
            None => dom.name.clone(),
        }
    }

    /// The typed parameters every step starts from.
    fn params(&self, dom: &NonnullDomain) -> Vec<TypedParam> {
        let s = |field: &str, v: &str| TypedParam {
            field: field.into(),
            value: TypedParamValue::String(v.into()),
        };
        let mut p = Vec::new();
        if let Some(uri) = &self.uri {
            p.push(s(migrate_param::URI, uri));
        }
        if let Some(addr) = &self.listen_address {
            p.push(s(migrate_param::LISTEN_ADDRESS, addr));
        }
        if let Some(xml) = &self.dest_xml {
            p.push(s(migrate_param::DEST_XML, xml));
        }
        for disk in &self.migrate_disks {
            p.push(s(migrate_param::MIGRATE_DISKS, disk));
        }
        // libvirt names the destination domain explicitly for finish.
        p.push(TypedParam {
            field: migrate_param::DEST_NAME.into(),
            value: TypedParamValue::String(self.dname_or(dom)),
        });
        if self.bandwidth != 0 {
            p.push(TypedParam {
                field: migrate_param::BANDWIDTH.into(),
                value: TypedParamValue::ULLong(self.bandwidth),
            });
        }
        p
    }
}

/// The step of a migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MigrateStep {
    /// `ConnectSupportsFeature` on the source (protocol, change protection, offline).
    SourceFeatures,
    /// `ConnectSupportsFeature` on the destination.
    DestinationFeatures,
    /// `Begin3Params` / `Begin3` on the source (v2: its migratable XML).
    Begin,
    /// `Prepare3Params` / `Prepare3` / `Prepare2` / `Prepare` on the destination.
    Prepare,
    /// `Perform3Params` / `Perform3` / `Perform` on the source (the data transfer).
    Perform,
    /// `Finish3Params` / `Finish3` / `Finish2` / `Finish` on the destination.
    Finish,
    /// `Confirm3Params` / `Confirm3` on the source. Never the step of a [`MigrateError`]: a
    /// confirm that fails after finish succeeded is [`Migrated::confirm_error`].
    Confirm,
}

impl std::fmt::Display for MigrateStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::SourceFeatures => "feature check (source)",
            Self::DestinationFeatures => "feature check (destination)",
            Self::Begin => "begin (source)",
            Self::Prepare => "prepare (destination)",
            Self::Perform => "perform (source)",
            Self::Finish => "finish (destination)",
            Self::Confirm => "confirm (source)",
        })
    }
}

/// A migration refused before any step ran (by the client, as libvirt's client library
/// refuses it; nothing was sent to either daemon but feature checks).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateRefusal {
    /// `CHANGE_PROTECTION` asked for, and the source does not support it.
    #[error("cannot enforce change protection")]
    ChangeProtectionUnsupported,
    /// `OFFLINE` asked for, and a daemon does not support offline migration.
    #[error("offline migration is not supported by the {side} host")]
    OfflineUnsupported {
        /// `"source"` or `"destination"`.
        side: &'static str,
    },
    /// No migration protocol both daemons support.
    #[error("the two daemons have no migration protocol in common")]
    NoCommonProtocol,
    /// `PEER2PEER` or `TUNNELLED` in a client-driven migration.
    #[error("PEER2PEER and TUNNELLED are peer-to-peer: use migrate_to_uri")]
    PeerToPeerFlags,
    /// `NON_SHARED_DISK` together with `NON_SHARED_INC`.
    #[error("NON_SHARED_DISK and NON_SHARED_INC are mutually exclusive")]
    ExclusiveDiskFlags,
    /// An option the chosen protocol cannot carry (`listen_address` or `migrate_disks`
    /// without typed parameters, `dest_xml` with v2 or v1).
    #[error("{option} cannot be sent with migration protocol {protocol:?}")]
    NotInProtocol {
        /// The option.
        option: &'static str,
        /// The protocol.
        protocol: MigrateProtocol,
    },
}

/// A [`Client::migrate`] (or [`Client::migrate_to_uri`]) that failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// A step failed (the daemon's error, or the connection's). The steps after it were
    /// cancelled as the module documentation says.
    #[error("migration failed at {step}")]
    Step {
        /// Which step failed.
        step: MigrateStep,
        /// Why.
        #[source]
        error: CallError,
    },
    /// Refused before any step ran.
    #[error(transparent)]
    Refused(MigrateRefusal),
}

impl MigrateError {
    fn at(step: MigrateStep) -> impl FnOnce(CallError) -> Self {
        move |error| Self::Step { step, error }
    }

    /// The step that failed (`None`: refused before any step).
    pub fn step(&self) -> Option<MigrateStep> {
        match self {
            Self::Step { step, .. } => Some(*step),
            Self::Refused(_) => None,
        }
    }

    /// The failed step's error.
    pub fn call_error(&self) -> Option<&CallError> {
        match self {
            Self::Step { error, .. } => Some(error),
            Self::Refused(_) => None,
        }
    }

    /// Why the client refused it.
    pub fn refusal(&self) -> Option<&MigrateRefusal> {
        match self {
            Self::Refused(r) => Some(r),
            Self::Step { .. } => None,
        }
    }
}

/// A [`Client::migrate`] that went through: the domain runs on the destination.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Migrated {
    /// The domain as the destination knows it.
    pub dom: NonnullDomain,
    /// The source's confirm step failed after the destination had finished (v3 only). As in
    /// libvirt, that does not fail the migration (the domain already runs on the destination);
    /// the domain is probably left paused on the source, its migration job ended or not
    /// depending on how far the source got. Also logged as a `tracing` warning.
    pub confirm_error: Option<CallError>,
}

impl Migrated {
    fn new(dom: NonnullDomain) -> Self {
        Self {
            dom,
            confirm_error: None,
        }
    }
}

/// The flags of one migration, as the client library derives them.
#[derive(Debug, Clone, Copy)]
struct Flags {
    /// The user's flags without `CHANGE_PROTECTION`, plus `PAUSED` once known.
    base: DomainMigrateFlags,
    /// `CHANGE_PROTECTION` when the source supports it (v3 source steps only).
    protection: DomainMigrateFlags,
}

impl Flags {
    fn source(&self) -> DomainMigrateFlags {
        self.base | self.protection
    }

    /// libvirt keeps these two from the destination.
    fn dest(&self) -> DomainMigrateFlags {
        self.base - (DomainMigrateFlags::ABORT_ON_ERROR | DomainMigrateFlags::AUTO_CONVERGE)
    }
}

/// Whether a daemon answered `supported` for a `VIR_DRV_FEATURE_*`.
async fn supports(c: &Client, feature: i32, step: MigrateStep) -> Result<bool, MigrateError> {
    c.call::<ConnectSupportsFeature>(&ConnectSupportsFeatureArgs { feature })
        .await
        .map(|r| r.supported != 0)
        .map_err(MigrateError::at(step))
}

/// The first error of a cancelled migration, after the cancelled finish answered `finish`:
/// as `virDomainMigrateVersion3Full`, a qemu `OPERATION_FAILED` from perform gives way to a
/// real error of the finish step (the destination's domain died: more useful than
/// "migration unexpectedly failed"), never to the finish's "migration successfully aborted".
fn perform_or_finish_error(perform: CallError, finish: Option<CallError>) -> MigrateError {
    let qemu = |e: &CallError, pred: &dyn Fn(ErrorCode) -> bool| matches!(e, CallError::Remote(r) if r.domain == ErrorDomain::QEMU && pred(r.code));
    match finish {
        Some(f)
            if qemu(&perform, &|c| c == ErrorCode::OPERATION_FAILED)
                && qemu(&f, &|c| c != ErrorCode::MIGRATE_FINISH_OK) =>
        {
            MigrateError::at(MigrateStep::Finish)(f)
        }
        _ => MigrateError::at(MigrateStep::Perform)(perform),
    }
}

impl Client {
    /// Migrate `dom` from this connection's daemon to `dest`'s, the client driving the
    /// steps of libvirt's migration protocol (as `virDomainMigrate3` without `PEER2PEER`;
    /// [`MigrateOptions::protocol`] picks v3 with parameters, v3, v2 or v1). Returns the
    /// domain as the destination knows it, with the error of a confirm step that failed after
    /// the destination finished ([`Migrated`]). The domain's disks must be reachable from the
    /// destination under the same paths, or be copied (`NON_SHARED_DISK`), or the domain
    /// has none.
    ///
    /// `CHANGE_PROTECTION`, `PAUSED`, `OFFLINE` and failed steps are handled as libvirt's
    /// client library handles them (module documentation). The error names the step that
    /// failed, or why the client refused the migration.
    ///
    /// ```no_run
    /// # async fn demo(src: libvirt_remote::Client, dst: libvirt_remote::Client,
    /// #               dom: libvirt_remote::proto::types::NonnullDomain) -> Result<(), libvirt_remote::client::MigrateError> {
    /// use libvirt_remote::client::MigrateOptions;
    /// use libvirt_remote::proto::procs::migration::DomainMigrateFlags;
    ///
    /// let opts = MigrateOptions::new(DomainMigrateFlags::LIVE)
    ///     .uri("tcp://127.0.0.1:49200")
    ///     .listen_address("127.0.0.1");
    /// let moved = src.migrate(&dst, &dom, &opts).await?;
    /// if let Some(e) = &moved.confirm_error {
    ///     eprintln!("{} runs on the destination; the source did not confirm: {e}", moved.dom.name);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn migrate(
        &self,
        dest: &Client,
        dom: &NonnullDomain,
        opts: &MigrateOptions,
    ) -> Result<Migrated, MigrateError> {
        let span = tracing::debug_span!("libvirt.migrate", dom = %dom.name.to_string_lossy());
        self.migrate_checked(dest, dom, opts).instrument(span).await
    }

    /// Peer-to-peer migration (`virDomainMigrateToURI3` with `PEER2PEER`): one
    /// `Perform3Params` call on this connection's daemon, which connects to `dconnuri` (a
    /// libvirt URI the *source daemon* can reach) and runs the other steps itself. `flags`
    /// gain `PEER2PEER`; add `TUNNELLED` to carry the data over that libvirt connection
    /// (then [`uri`](MigrateOptions::uri) and
    /// [`listen_address`](MigrateOptions::listen_address) do not apply). A failure is
    /// reported as the perform step.
    pub async fn migrate_to_uri(
        &self,
        dconnuri: &str,
        dom: &NonnullDomain,
        opts: &MigrateOptions,
    ) -> Result<(), MigrateError> {
        let flags = opts.flags | DomainMigrateFlags::PEER2PEER;
        let span =
            tracing::debug_span!("libvirt.migrate", dom = %dom.name.to_string_lossy(), p2p = true);
        self.call::<DomainMigratePerform3Params>(&DomainMigratePerform3ParamsArgs {
            dom: dom.clone(),
            dconnuri: Some(dconnuri.into()),
            params: opts.params(dom),
            cookie_in: Default::default(),
            flags,
        })
        .instrument(span)
        .await
        .map(drop)
        .map_err(MigrateError::at(MigrateStep::Perform))
    }

    /// The checks `virDomainMigrate3` makes before any step, then the protocol's steps.
    async fn migrate_checked(
        &self,
        dest: &Client,
        dom: &NonnullDomain,
        opts: &MigrateOptions,
    ) -> Result<Migrated, MigrateError> {
        use MigrateStep::{DestinationFeatures as Dst, SourceFeatures as Src};
        let refuse = |r| Err(MigrateError::Refused(r));
        let f = opts.flags;
        if f.intersects(DomainMigrateFlags::PEER2PEER | DomainMigrateFlags::TUNNELLED) {
            return refuse(MigrateRefusal::PeerToPeerFlags);
        }
        if f.contains(DomainMigrateFlags::NON_SHARED_DISK | DomainMigrateFlags::NON_SHARED_INC) {
            return refuse(MigrateRefusal::ExclusiveDiskFlags);
        }
        if f.contains(DomainMigrateFlags::OFFLINE) {
            if !supports(self, feature::MIGRATION_OFFLINE, Src).await? {
                return refuse(MigrateRefusal::OfflineUnsupported { side: "source" });
            }
            if !supports(dest, feature::MIGRATION_OFFLINE, Dst).await? {
                return refuse(MigrateRefusal::OfflineUnsupported {
                    side: "destination",
                });
            }
        }
        // Change protection needs support on the source only and is sent by the v3 source
        // steps alone: the flag never reaches the destination.
        let protection = supports(self, feature::MIGRATE_CHANGE_PROTECTION, Src).await?;
        if f.contains(DomainMigrateFlags::CHANGE_PROTECTION) && !protection {
            return refuse(MigrateRefusal::ChangeProtectionUnsupported);
        }
        let mut flags = Flags {
            base: f - DomainMigrateFlags::CHANGE_PROTECTION,
            protection: if protection {
                DomainMigrateFlags::CHANGE_PROTECTION
            } else {
                DomainMigrateFlags::empty()
            },
        };
        let protocol = match opts.protocol {
            MigrateProtocol::Auto => {
                let mut chosen = None;
                for (feat, p) in [
                    (feature::MIGRATION_PARAMS, MigrateProtocol::V3Params),
                    (feature::MIGRATION_V3, MigrateProtocol::V3),
                    (feature::MIGRATION_V2, MigrateProtocol::V2),
                    (feature::MIGRATION_V1, MigrateProtocol::V1),
                ] {
                    if supports(self, feat, Src).await? && supports(dest, feat, Dst).await? {
                        chosen = Some(p);
                        break;
                    }
                }
                chosen.ok_or(MigrateError::Refused(MigrateRefusal::NoCommonProtocol))?
            }
            p => p,
        };
        let not_in = |option| {
            Err(MigrateError::Refused(MigrateRefusal::NotInProtocol {
                option,
                protocol,
            }))
        };
        if protocol != MigrateProtocol::V3Params {
            if opts.listen_address.is_some() {
                return not_in("listen_address");
            }
            if !opts.migrate_disks.is_empty() {
                return not_in("migrate_disks");
            }
        }
        tracing::debug!(?protocol, protection, "migrate");
        match protocol {
            MigrateProtocol::V2 | MigrateProtocol::V1 => {
                if opts.dest_xml.is_some() {
                    return not_in("dest_xml");
                }
                // No begin, no confirm: nothing for change protection to span.
                flags.protection = DomainMigrateFlags::empty();
                self.migrate_v2(dest, dom, opts, flags, protocol == MigrateProtocol::V1)
                    .await
            }
            _ => {
                self.migrate_v3(
                    dest,
                    dom,
                    opts,
                    flags,
                    protocol == MigrateProtocol::V3Params,
                )
                .await
            }
        }
    }

    /// `PAUSED` joins the flags when the source domain is paused (a failed look is ignored,
    /// as libvirt ignores it).
    async fn paused_flag(&self, dom: &NonnullDomain, flags: &mut Flags) {
        let state = self
            .call::<DomainGetState>(&DomainFlagsArgs {
                dom: dom.clone(),
                flags: 0,
            })
            .await;
        if matches!(state, Ok(s) if s.state == DomainState::PAUSED) {
            flags.base |= DomainMigrateFlags::PAUSED;
        }
    }

    /// The five steps of v3, with typed parameters (`params`) or without.
    async fn migrate_v3(
        &self,
        dest: &Client,
        dom: &NonnullDomain,
        opts: &MigrateOptions,
        mut flags: Flags,
        params: bool,
    ) -> Result<Migrated, MigrateError> {
        let mut steps = V3 {
            src: self,
            dest,
            dom,
            opts,
            params: opts.params(dom),
            uri: opts.uri.clone(),
            with_params: params,
        };
        let begin = steps
            .begin(flags.source())
            .await
            .map_err(MigrateError::at(MigrateStep::Begin))?;
        tracing::debug!(cookie = begin.cookie_out.len(), "begin");
        self.paused_flag(dom, &mut flags).await;

        let prepared = match steps
            .prepare(&begin.xml, begin.cookie_out, flags.dest())
            .await
        {
            Ok(p) => p,
            Err(e) => {
                // Begin started a migration job on the source: end it (its error is not
                // the one to report).
                if !flags.protection.is_empty() {
                    let _ = steps.confirm(Bytes::new(), flags.source(), true).await;
                }
                return Err(MigrateError::at(MigrateStep::Prepare)(e));
            }
        };
        tracing::debug!(uri_out = ?prepared.uri_out, "prepare");
        // The destination's own URI replaces ours, as libvirt does.
        if let Some(uri) = prepared.uri_out {
            steps.set_uri(uri);
        }

        let (cookie, perform_error) = if flags.base.contains(DomainMigrateFlags::OFFLINE) {
            // Offline: only the definition moves, there is nothing to perform.
            (Bytes::new(), None)
        } else {
            match steps.perform_watched(prepared.cookie_out, flags).await {
                Performed::Done(Ok(cookie)) => (cookie, None),
                Performed::Done(Err(e)) => (Bytes::new(), Some(e)),
                Performed::DestinationLost(e) => {
                    return Err(MigrateError::at(MigrateStep::Perform)(
                        CallError::Connection(e),
                    ));
                }
            }
        };
        let finished = steps
            .finish(cookie, flags.dest(), perform_error.is_some())
            .await;
        if let Some(e) = perform_error {
            // A failed perform already cancelled the migration on the source (the domain
            // runs there again): libvirt does not confirm it.
            if finished.is_ok() {
                tracing::error!("finish step ignored that migration was cancelled");
            }
            return Err(perform_or_finish_error(e, finished.err()));
        }
        match finished {
            Ok(f) => {
                // As virDomainMigrateVersion3Full: the domain runs on the destination now;
                // a failed confirm is a warning, not a failed migration.
                let confirm_error = steps
                    .confirm(f.cookie_out, flags.source(), false)
                    .await
                    .err();
                if let Some(e) = &confirm_error {
                    tracing::warn!(error = %e, "confirm failed: the domain runs on the destination and is probably left paused on the source");
                }
                Ok(Migrated {
                    dom: f.dom,
                    confirm_error,
                })
            }
            Err(e) => {
                // The source resumes its domain.
                let _ = steps.confirm(Bytes::new(), flags.source(), true).await;
                Err(MigrateError::at(MigrateStep::Finish)(e))
            }
        }
    }

    /// v2 (the source's migratable XML, `Prepare2`, `Perform`, `Finish2`) or v1 (`Prepare`,
    /// `Perform`, `Finish`).
    async fn migrate_v2(
        &self,
        dest: &Client,
        dom: &NonnullDomain,
        opts: &MigrateOptions,
        mut flags: Flags,
        v1: bool,
    ) -> Result<Migrated, MigrateError> {
        let dname = opts.dname.as_deref().map(LvString::from);
        let uri_in = opts.uri.as_deref().map(LvString::from);
        let prepared = if v1 {
            self.paused_flag(dom, &mut flags).await;
            dest.call::<DomainMigratePrepare>(&DomainMigratePrepareArgs {
                uri_in,
                flags: flags.dest(),
                dname: dname.clone(),
                bandwidth: opts.bandwidth,
            })
            .await
        } else {
            let xml = self
                .call::<DomainGetXmlDesc>(&DomainFlagsArgs {
                    dom: dom.clone(),
                    flags: DomainXmlFlags::MIGRATABLE,
                })
                .await
                .map_err(MigrateError::at(MigrateStep::Begin))?
                .xml;
            self.paused_flag(dom, &mut flags).await;
            dest.call::<DomainMigratePrepare2>(&DomainMigratePrepare2Args {
                uri_in,
                flags: flags.dest(),
                dname: dname.clone(),
                bandwidth: opts.bandwidth,
                dom_xml: xml,
            })
            .await
        }
        .map_err(MigrateError::at(MigrateStep::Prepare))?;
        let uri: LvString = match prepared.uri_out.or(opts.uri.as_deref().map(LvString::from)) {
            Some(u) => u,
            // libvirt: "domainMigratePrepare did not set uri"; let the destination's perform
            // and finish say what they make of an empty one.
            None => LvString::from(""),
        };
        let performed = self
            .call::<DomainMigratePerform>(&DomainMigratePerformArgs {
                dom: dom.clone(),
                cookie: prepared.cookie.clone(),
                uri: uri.clone(),
                flags: flags.source(),
                dname: dname.clone(),
                bandwidth: opts.bandwidth,
            })
            .await;
        let dname = dname.unwrap_or_else(|| dom.name.clone());
        let finished = if v1 {
            if let Err(e) = performed {
                return Err(MigrateError::at(MigrateStep::Perform)(e));
            }
            dest.call::<DomainMigrateFinish>(&DomainMigrateFinishArgs {
                dname,
                cookie: prepared.cookie,
                uri,
                flags: flags.dest(),
            })
            .await
        } else {
            let finished = dest
                .call::<DomainMigrateFinish2>(&DomainMigrateFinish2Args {
                    dname,
                    cookie: prepared.cookie,
                    uri,
                    flags: flags.dest(),
                    retcode: i32::from(performed.is_err()),
                })
                .await;
            if let Err(e) = performed {
                return Err(perform_or_finish_error(e, finished.err()));
            }
            finished
        };
        finished
            .map(|f| Migrated::new(f.ddom))
            .map_err(MigrateError::at(MigrateStep::Finish))
    }
}
