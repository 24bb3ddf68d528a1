//! The steps of migration protocol v3 (with or without typed parameters) over one
//! migration's state: begin on the source, prepare on the destination, perform (watched: a
//! destination that dies meanwhile aborts the source's job), finish, confirm.

use bytes::Bytes;

use super::{Flags, MigrateOptions};
use crate::client::Client;
use crate::conn::CallError;
use crate::proto::procs::domain::{DomainAbortJob, DomainArgs};
use crate::proto::procs::migration::{
    DomainMigrateBegin3, DomainMigrateBegin3Args, DomainMigrateBegin3Params,
    DomainMigrateBegin3ParamsArgs, DomainMigrateConfirm3, DomainMigrateConfirm3Args,
    DomainMigrateConfirm3Params, DomainMigrateConfirm3ParamsArgs, DomainMigrateFinish3,
    DomainMigrateFinish3Args, DomainMigrateFinish3Params, DomainMigrateFinish3ParamsArgs,
    DomainMigrateFlags, DomainMigratePerform3, DomainMigratePerform3Args,
    DomainMigratePerform3Params, DomainMigratePerform3ParamsArgs, DomainMigratePrepare3,
    DomainMigratePrepare3Args, DomainMigratePrepare3Params, DomainMigratePrepare3ParamsArgs,
    migrate_param,
};
use crate::proto::types::{NonnullDomain, TypedParam, TypedParamValue};
use crate::wire::xdr::LvString;

/// How a watched perform step ended.
pub(super) enum Performed {
    /// The perform call answered (the destination's connection still up, or lost only
    /// after the answer).
    Done(Result<Bytes, CallError>),
    /// The destination's connection died while the source was performing: the source's
    /// migration job was aborted and the domain runs there again.
    DestinationLost(crate::conn::ConnectionError),
}

/// The v3 calls, with or without typed parameters, over one migration's state.
pub(super) struct V3<'a> {
    pub(super) src: &'a Client,
    pub(super) dest: &'a Client,
    pub(super) dom: &'a NonnullDomain,
    pub(super) opts: &'a MigrateOptions,
    /// The typed parameters (with parameters), kept up to date with the XML and URI.
    pub(super) params: Vec<TypedParam>,
    /// The data URI (without parameters).
    pub(super) uri: Option<String>,
    pub(super) with_params: bool,
}

impl V3<'_> {
    pub(super) fn set_param(&mut self, field: &str, value: LvString) {
        self.params.retain(|p| p.field.to_str() != Ok(field));
        self.params.push(TypedParam {
            field: field.into(),
            value: TypedParamValue::String(value),
        });
    }

    pub(super) fn set_uri(&mut self, uri: LvString) {
        self.uri = Some(uri.to_string_lossy().into_owned());
        self.set_param(migrate_param::URI, uri);
    }

    pub(super) fn dname(&self) -> Option<LvString> {
        self.opts.dname.as_deref().map(LvString::from)
    }

    pub(super) fn uri(&self) -> Option<LvString> {
        self.uri.as_deref().map(LvString::from)
    }

    pub(super) async fn begin(
        &mut self,
        flags: DomainMigrateFlags,
    ) -> Result<crate::proto::procs::migration::DomainMigrateBegin3Ret, CallError> {
        if self.with_params {
            self.src
                .call::<DomainMigrateBegin3Params>(&DomainMigrateBegin3ParamsArgs {
                    dom: self.dom.clone(),
                    params: self.params.clone(),
                    flags,
                })
                .await
        } else {
            self.src
                .call::<DomainMigrateBegin3>(&DomainMigrateBegin3Args {
                    dom: self.dom.clone(),
                    xmlin: self.opts.dest_xml.as_deref().map(LvString::from),
                    flags,
                    dname: self.dname(),
                    bandwidth: self.opts.bandwidth,
                })
                .await
        }
    }

    pub(super) async fn prepare(
        &mut self,
        xml: &LvString,
        cookie_in: Bytes,
        flags: DomainMigrateFlags,
    ) -> Result<crate::proto::procs::migration::DomainMigratePrepare3Ret, CallError> {
        if self.with_params {
            // The destination defines the domain from the source's XML.
            self.set_param(migrate_param::DEST_XML, xml.clone());
            self.dest
                .call::<DomainMigratePrepare3Params>(&DomainMigratePrepare3ParamsArgs {
                    params: self.params.clone(),
                    cookie_in,
                    flags,
                })
                .await
        } else {
            self.dest
                .call::<DomainMigratePrepare3>(&DomainMigratePrepare3Args {
                    cookie_in,
                    uri_in: self.uri(),
                    flags,
                    dname: self.dname(),
                    bandwidth: self.opts.bandwidth,
                    dom_xml: xml.clone(),
                })
                .await
        }
    }

    pub(super) async fn perform(
        &self,
        cookie_in: Bytes,
        flags: DomainMigrateFlags,
    ) -> Result<Bytes, CallError> {
        if self.with_params {
            self.src
                .call::<DomainMigratePerform3Params>(&DomainMigratePerform3ParamsArgs {
                    dom: self.dom.clone(),
                    dconnuri: None,
                    params: self.params.clone(),
                    cookie_in,
                    flags,
                })
                .await
        } else {
            self.src
                .call::<DomainMigratePerform3>(&DomainMigratePerform3Args {
                    dom: self.dom.clone(),
                    xmlin: None,
                    cookie_in,
                    dconnuri: None,
                    uri: self.uri(),
                    flags,
                    dname: self.dname(),
                    bandwidth: self.opts.bandwidth,
                })
                .await
        }
        .map(|r| r.cookie_out)
    }

    /// Perform, watching the destination's connection. In a client-driven migration the
    /// source daemon sends the data to the destination's hypervisor directly and never hears
    /// of the destination daemon: were it to die, the perform would run on (qemu keeps
    /// receiving, or never converges) and the migration could only fail at finish, if ever.
    /// So when the destination's connection dies first, the source's job is aborted
    /// (`DomainAbortJob`), the perform's answer awaited (the source resumes the domain), and a
    /// perform that completed all the same is confirmed as cancelled, so that the source
    /// resumes the domain it had paused for the switch-over.
    pub(super) async fn perform_watched(&self, cookie_in: Bytes, flags: Flags) -> Performed {
        let perform = self.perform(cookie_in, flags.source());
        tokio::pin!(perform);
        let lost = tokio::select! {
            biased;
            r = &mut perform => return Performed::Done(r),
            e = self.dest.closed() => e,
        };
        tracing::warn!(error = %lost, "destination lost during perform: aborting the source's job");
        let abort = self
            .src
            .call::<DomainAbortJob>(&DomainArgs {
                dom: self.dom.clone(),
            })
            .await;
        match perform.await {
            Ok(_) => {
                // The switch-over happened before the abort: the source paused the domain
                // and waits for confirm.
                if let Err(e) = self.confirm(Bytes::new(), flags.source(), true).await {
                    tracing::warn!(error = %e, "cancelled confirm after a lost destination");
                }
            }
            Err(e) => tracing::debug!(error = %e, ?abort, "perform after the abort"),
        }
        Performed::DestinationLost(lost)
    }

    pub(super) async fn finish(
        &self,
        cookie_in: Bytes,
        flags: DomainMigrateFlags,
        cancelled: bool,
    ) -> Result<crate::proto::procs::migration::DomainMigrateFinish3Ret, CallError> {
        if self.with_params {
            self.dest
                .call::<DomainMigrateFinish3Params>(&DomainMigrateFinish3ParamsArgs {
                    params: self.params.clone(),
                    cookie_in,
                    flags,
                    cancelled: i32::from(cancelled),
                })
                .await
        } else {
            self.dest
                .call::<DomainMigrateFinish3>(&DomainMigrateFinish3Args {
                    dname: self.dname().unwrap_or_else(|| self.dom.name.clone()),
                    cookie_in,
                    dconnuri: None,
                    uri: self.uri(),
                    flags,
                    cancelled: i32::from(cancelled),
                })
                .await
        }
    }

    pub(super) async fn confirm(
        &self,
        cookie_in: Bytes,
        flags: DomainMigrateFlags,
        cancelled: bool,
    ) -> Result<(), CallError> {
        if self.with_params {
            self.src
                .call::<DomainMigrateConfirm3Params>(&DomainMigrateConfirm3ParamsArgs {
                    dom: self.dom.clone(),
                    params: self.params.clone(),
                    cookie_in,
                    flags,
                    cancelled: i32::from(cancelled),
                })
                .await
        } else {
            self.src
                .call::<DomainMigrateConfirm3>(&DomainMigrateConfirm3Args {
                    dom: self.dom.clone(),
                    cookie_in,
                    flags,
                    cancelled: i32::from(cancelled),
                })
                .await
        }
    }
}
