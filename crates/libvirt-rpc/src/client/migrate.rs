//! Client-driven migration (libvirt's "managed direct" migration, protocol v3 with typed
//! parameters): the client runs the five steps between two connections, carrying each
//! daemon's cookie to the other, as `virDomainMigrate3` does without `PEER2PEER`.
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
//! As libvirt does, the source steps carry `CHANGE_PROTECTION` (unless `OFFLINE`): begin
//! starts a migration job on the source that keeps the domain's configuration from
//! changing until confirm ends it. A step that fails cancels the rest as libvirt does: a
//! failed prepare is followed by a cancelled confirm (ending that job), a failed perform by
//! a cancelled finish and a cancelled confirm (the source domain keeps running), a failed
//! finish by a cancelled confirm.

use crate::conn::CallError;
use crate::proto::procs::migration::{
    DomainMigrateBegin3Params, DomainMigrateBegin3ParamsArgs, DomainMigrateConfirm3Params,
    DomainMigrateConfirm3ParamsArgs, DomainMigrateFinish3Params, DomainMigrateFinish3ParamsArgs,
    DomainMigrateFlags, DomainMigratePerform3Params, DomainMigratePerform3ParamsArgs,
    DomainMigratePrepare3Params, DomainMigratePrepare3ParamsArgs, migrate_param,
};
use crate::proto::types::{Domain, TypedParam, TypedParamValue};
use tracing::Instrument;

use super::Client;

/// What a [`Client::migrate`] does besides moving the domain.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct MigrateOptions {
    /// `virDomainMigrateFlags` of every step (`LIVE`, `PERSIST_DEST`, `UNDEFINE_SOURCE`,
    /// …), sent as the `u32` the `*_PARAMS` calls carry (bits above 31 are dropped;
    /// libvirt defines none). `PEER2PEER` and `TUNNELLED` are not client-driven.
    pub flags: DomainMigrateFlags,
    /// Where the destination receives the data (`migrate_uri`, e.g.
    /// `tcp://127.0.0.1:49200`); `None`: the destination picks (from its host name).
    pub uri: Option<String>,
    /// The address the destination's hypervisor listens on (`listen_address`); `None`:
    /// the destination's configuration, by default every address.
    pub listen_address: Option<String>,
    /// The domain's name on the destination (`destination_name`); `None`: the same.
    pub dname: Option<String>,
    /// Bandwidth limit in MiB/s (`bandwidth`); 0: none.
    pub bandwidth: u64,
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

    /// Set [`uri`](Self::uri).
    #[must_use]
    pub fn uri(mut self, uri: impl Into<String>) -> Self {
        self.uri = Some(uri.into());
        self
    }

    /// Set [`listen_address`](Self::listen_address).
    #[must_use]
    pub fn listen_address(mut self, addr: impl Into<String>) -> Self {
        self.listen_address = Some(addr.into());
        self
    }

    /// Set [`dname`](Self::dname).
    #[must_use]
    pub fn dname(mut self, name: impl Into<String>) -> Self {
        self.dname = Some(name.into());
        self
    }

    /// The typed parameters every step starts from.
    fn params(&self, dom: &Domain) -> Vec<TypedParam> {
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
        // libvirt names the destination domain explicitly for finish.
        let dname = match &self.dname {
            Some(n) => n.clone(),
            None => dom.name.to_string_lossy().into_owned(),
        };
        p.push(s(migrate_param::DEST_NAME, &dname));
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
    /// `Begin3Params` on the source.
    Begin,
    /// `Prepare3Params` on the destination.
    Prepare,
    /// `Perform3Params` on the source (the data transfer).
    Perform,
    /// `Finish3Params` on the destination.
    Finish,
    /// `Confirm3Params` on the source.
    Confirm,
}

impl std::fmt::Display for MigrateStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Begin => "begin (source)",
            Self::Prepare => "prepare (destination)",
            Self::Perform => "perform (source)",
            Self::Finish => "finish (destination)",
            Self::Confirm => "confirm (source)",
        })
    }
}

/// A [`Client::migrate`] that failed: the step, and that step's error (the daemon's, or
/// the connection's). The steps after it were cancelled as [`Client::migrate`] says.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("migration failed at {step}")]
#[non_exhaustive]
pub struct MigrateError {
    /// Which step failed.
    pub step: MigrateStep,
    /// Why.
    #[source]
    pub error: CallError,
}

impl MigrateError {
    fn at(step: MigrateStep) -> impl FnOnce(CallError) -> Self {
        move |error| Self { step, error }
    }
}

impl Client {
    /// Migrate `dom` from this connection's daemon to `dest`'s, the client driving the five
    /// steps of libvirt's migration protocol v3 with typed parameters (as
    /// `virDomainMigrate3` without `PEER2PEER`). Returns the domain as the destination knows
    /// it. The domain's disks must be reachable from the destination under the same paths
    /// (or the domain has none).
    ///
    /// As libvirt does, the source steps carry `CHANGE_PROTECTION` (unless `OFFLINE`), and
    /// a failed step cancels the rest: a failed prepare is followed by a cancelled confirm
    /// (ending the source's migration job), a failed perform by a cancelled finish and a
    /// cancelled confirm (the source domain keeps running), a failed finish by a cancelled
    /// confirm. The error names the step that failed.
    ///
    /// ```no_run
    /// # async fn demo(src: libvirt_rpc::Client, dst: libvirt_rpc::Client,
    /// #               dom: libvirt_rpc::proto::types::Domain) -> Result<(), libvirt_rpc::client::MigrateError> {
    /// use libvirt_rpc::client::MigrateOptions;
    /// use libvirt_rpc::proto::procs::migration::DomainMigrateFlags;
    ///
    /// let opts = MigrateOptions::new(DomainMigrateFlags::LIVE)
    ///     .uri("tcp://127.0.0.1:49200")
    ///     .listen_address("127.0.0.1");
    /// let moved = src.migrate(&dst, &dom, &opts).await?;
    /// # let _ = moved; Ok(()) }
    /// ```
    pub async fn migrate(
        &self,
        dest: &Client,
        dom: &Domain,
        opts: &MigrateOptions,
    ) -> Result<Domain, MigrateError> {
        let span = tracing::debug_span!("libvirt.migrate", dom = %dom.name.to_string_lossy());
        self.migrate_steps(dest, dom, opts).instrument(span).await
    }

    /// Peer-to-peer migration (`virDomainMigrateToURI3` with `PEER2PEER`): one
    /// `Perform3Params` call on this connection's daemon, which connects to `dconnuri` (a
    /// libvirt URI the *source daemon* can reach) and runs the other steps itself. `flags`
    /// gain `PEER2PEER`; add `TUNNELLED` to carry the data over that libvirt connection
    /// (then [`uri`](MigrateOptions::uri) and
    /// [`listen_address`](MigrateOptions::listen_address) do not apply).
    pub async fn migrate_to_uri(
        &self,
        dconnuri: &str,
        dom: &Domain,
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
            flags: flags.bits() as u32,
        })
        .instrument(span)
        .await
        .map(drop)
        .map_err(MigrateError::at(MigrateStep::Perform))
    }

    async fn migrate_steps(
        &self,
        dest: &Client,
        dom: &Domain,
        opts: &MigrateOptions,
    ) -> Result<Domain, MigrateError> {
        // The *_PARAMS calls carry the flags as u32 (libvirt defines none above bit 20).
        let protection = !opts.flags.contains(DomainMigrateFlags::OFFLINE);
        let src_flags = if protection {
            opts.flags | DomainMigrateFlags::CHANGE_PROTECTION
        } else {
            opts.flags
        };
        // libvirt keeps these two from the destination.
        let dst_flags =
            opts.flags - (DomainMigrateFlags::ABORT_ON_ERROR | DomainMigrateFlags::AUTO_CONVERGE);
        let (flags, dflags) = (src_flags.bits() as u32, dst_flags.bits() as u32);
        let mut params = opts.params(dom);
        let begin = self
            .call::<DomainMigrateBegin3Params>(&DomainMigrateBegin3ParamsArgs {
                dom: dom.clone(),
                params: params.clone(),
                flags,
            })
            .await
            .map_err(MigrateError::at(MigrateStep::Begin))?;
        tracing::debug!(cookie = begin.cookie_out.len(), "begin");

        // The destination defines the domain from the source's XML.
        params.push(TypedParam {
            field: migrate_param::DEST_XML.into(),
            value: TypedParamValue::String(begin.xml.clone()),
        });
        let prepared = match dest
            .call::<DomainMigratePrepare3Params>(&DomainMigratePrepare3ParamsArgs {
                params: params.clone(),
                cookie_in: begin.cookie_out,
                flags: dflags,
            })
            .await
        {
            Ok(p) => p,
            Err(e) => {
                // End the source's migration job (its error is not the one to report).
                if protection {
                    let _ = self
                        .confirm(dom, &params, Default::default(), flags, true)
                        .await;
                }
                return Err(MigrateError::at(MigrateStep::Prepare)(e));
            }
        };
        tracing::debug!(uri_out = ?prepared.uri_out, "prepare");
        // The destination's own URI replaces ours, as libvirt does.
        if let Some(uri) = &prepared.uri_out {
            params.retain(|p| p.field.to_str() != Ok(migrate_param::URI));
            params.push(TypedParam {
                field: migrate_param::URI.into(),
                value: TypedParamValue::String(uri.clone()),
            });
        }

        let performed = self
            .call::<DomainMigratePerform3Params>(&DomainMigratePerform3ParamsArgs {
                dom: dom.clone(),
                dconnuri: None,
                params: params.clone(),
                cookie_in: prepared.cookie_out,
                flags,
            })
            .await;
        let (cookie, perform_error) = match performed {
            Ok(r) => (r.cookie_out, None),
            Err(e) => (Default::default(), Some(e)),
        };
        let cancelled = perform_error.is_some();
        let finished = dest
            .call::<DomainMigrateFinish3Params>(&DomainMigrateFinish3ParamsArgs {
                params: params.clone(),
                cookie_in: cookie,
                flags: dflags,
                cancelled: i32::from(cancelled),
            })
            .await;
        if let Some(e) = perform_error {
            let _ = self
                .confirm(dom, &params, Default::default(), flags, true)
                .await;
            return Err(MigrateError::at(MigrateStep::Perform)(e));
        }
        let finished = match finished {
            Ok(f) => f,
            Err(e) => {
                let _ = self
                    .confirm(dom, &params, Default::default(), flags, true)
                    .await;
                return Err(MigrateError::at(MigrateStep::Finish)(e));
            }
        };
        self.confirm(dom, &params, finished.cookie_out, flags, false)
            .await
            .map_err(MigrateError::at(MigrateStep::Confirm))?;
        Ok(finished.dom)
    }

    async fn confirm(
        &self,
        dom: &Domain,
        params: &[TypedParam],
        cookie_in: bytes::Bytes,
        flags: u32,
        cancelled: bool,
    ) -> Result<(), CallError> {
        self.call::<DomainMigrateConfirm3Params>(&DomainMigrateConfirm3ParamsArgs {
            dom: dom.clone(),
            params: params.to_vec(),
            cookie_in,
            flags,
            cancelled: i32::from(cancelled),
        })
        .await
    }
}
