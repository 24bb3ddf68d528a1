//! The kube side: the finalizer, the status patch, the user-data Secret, the error policy,
//! and `runtime::Controller` around [`Reconciler`].

use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use egress_provider::ProviderError;
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event, finalizer};
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt as _};
use serde_json::{Value, json};

use crate::reconcile::{Proxy, Reconciler, Secrets};
use crate::resource::{EgressProxy, EgressProxyStatus, FINALIZER, SecretKeyRef};

/// What every reconcile shares.
pub struct Context {
    /// The API client.
    pub client: Client,
    /// The decisions and the providers.
    pub reconciler: Reconciler,
}

/// Why a reconcile failed (the error policy requeues it with backoff).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The provider could not delete the VM; the finalizer stays.
    #[error("delete the VM: {}", .0.chain())]
    Cleanup(ProviderError),
    /// An API call failed.
    #[error("kubernetes API: {0}")]
    Kube(kube::Error),
    /// The finalizer helper failed (adding or removing the finalizer, or the cleanup).
    #[error("finalizer: {0}")]
    Finalizer(Box<kube::runtime::finalizer::Error<Error>>),
    /// The object has no namespace, name or uid.
    #[error("object without {0}")]
    Incomplete(&'static str),
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("reconciler", &self.reconciler)
            .finish_non_exhaustive()
    }
}

fn proxy_of<'a>(obj: &'a EgressProxy, name: &'a str) -> Result<Proxy<'a>, Error> {
    Ok(Proxy {
        uid: obj
            .metadata
            .uid
            .as_deref()
            .ok_or(Error::Incomplete("uid"))?,
        name,
        generation: obj.metadata.generation,
        spec: &obj.spec,
        status: obj.status.as_ref(),
    })
}

/// One reconcile of one object, through kube's finalizer helper: the finalizer is added
/// before anything is created; `Apply` runs [`Reconciler::apply`] and patches the status
/// when it changed; `Cleanup` runs [`Reconciler::cleanup`], and the helper removes the
/// finalizer only once it succeeded.
pub async fn reconcile(obj: Arc<EgressProxy>, ctx: Arc<Context>) -> Result<Action, Error> {
    let ns = obj.namespace().ok_or(Error::Incomplete("namespace"))?;
    let api: Api<EgressProxy> = Api::namespaced(ctx.client.clone(), &ns);
    let secrets = KubeSecrets(Api::namespaced(ctx.client.clone(), &ns));
    finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            Event::Apply(obj) => apply(&api, &ctx, &secrets, &obj, &ns).await,
            Event::Cleanup(obj) => {
                let name = format!("{ns}/{}", obj.name_any());
                let proxy = proxy_of(&obj, &name)?;
                ctx.reconciler
                    .cleanup(proxy)
                    .await
                    .map_err(Error::Cleanup)?;
                tracing::info!(object = %name, "VM deleted; removing the finalizer");
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

async fn apply(
    api: &Api<EgressProxy>,
    ctx: &Context,
    secrets: &KubeSecrets,
    obj: &EgressProxy,
    ns: &str,
) -> Result<Action, Error> {
    let name = format!("{ns}/{}", obj.name_any());
    let proxy = proxy_of(obj, &name)?;
    let out = ctx
        .reconciler
        .apply(proxy, secrets, SystemTime::now())
        .await;
    if let Some(n) = out.transient {
        tracing::warn!(object = %name, attempt = n, retry_in = ?out.requeue_after, "provider answered Transient");
    }
    if obj.status.as_ref() != Some(&out.status) {
        api.patch_status(
            &obj.name_any(),
            &PatchParams::default(),
            &Patch::Merge(status_patch(&out.status)),
        )
        .await
        .map_err(Error::Kube)?;
    }
    Ok(Action::requeue(out.requeue_after))
}

/// The merge patch that makes `.status` exactly `st`: absent fields are written as `null`,
/// so a cleared IP is removed, not kept by the merge.
pub fn status_patch(st: &EgressProxyStatus) -> Value {
    let mut v = serde_json::to_value(st).expect("status serializes");
    if let Some(m) = v.as_object_mut() {
        for key in [
            "state",
            "ip",
            "provisioningSince",
            "applied",
            "conditions",
            "observedGeneration",
        ] {
            m.entry(key).or_insert(Value::Null);
        }
    }
    json!({ "status": v })
}

/// Requeue after a failed reconcile: the object's consecutive-failure backoff.
#[allow(clippy::needless_pass_by_value)] // the signature `Controller::run` takes
pub fn error_policy(obj: Arc<EgressProxy>, err: &Error, ctx: Arc<Context>) -> Action {
    let uid = obj.metadata.uid.as_deref().unwrap_or_default();
    let n = ctx.reconciler.note_transient(uid);
    let after = ctx.reconciler.policy().backoff(n);
    let error = egress_provider::redact_urls_in(&err.to_string());
    tracing::warn!(object = %obj.name_any(), %error, attempt = n, retry_in = ?after, "reconcile failed");
    Action::requeue(after)
}

/// Secrets of the object's namespace.
struct KubeSecrets(Api<Secret>);

#[async_trait]
impl Secrets for KubeSecrets {
    async fn read(&self, r: &SecretKeyRef) -> Result<Vec<u8>, ProviderError> {
        let secret = match self.0.get_opt(&r.name).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                return Err(ProviderError::permanent(format!(
                    "user-data Secret {:?} does not exist; create it or fix spec.userData",
                    r.name
                )));
            }
            // The message names the Secret, never its data.
            Err(e) => {
                return Err(ProviderError::transient(format!(
                    "cannot read user-data Secret {:?}",
                    r.name
                ))
                .with_source(e));
            }
        };
        secret
            .data
            .and_then(|mut d| d.remove(&r.key))
            .map(|b| b.0)
            .ok_or_else(|| {
                ProviderError::permanent(format!(
                    "user-data Secret {:?} has no key {:?}; fix spec.userData",
                    r.name, r.key
                ))
            })
    }
}

/// Runs the controller over every namespace until SIGINT/SIGTERM.
pub async fn run(client: Client, reconciler: Reconciler) {
    let api: Api<EgressProxy> = Api::all(client.clone());
    let ctx = Arc::new(Context { client, reconciler });
    Controller::new(api, watcher::Config::default())
        .shutdown_on_signal()
        .run(reconcile, error_policy, ctx)
        .for_each(|r| async move {
            match r {
                Ok((obj, action)) => tracing::debug!(object = %obj, ?action, "reconciled"),
                Err(e) => tracing::warn!(error = %e, "reconcile error"),
            }
        })
        .await;
}
