//! Defining and undefining many domains fast, through our library: several connections,
//! several calls in flight on each (the daemon serves `max_client_requests`, 5 by default, per
//! connection at once).

use std::future::Future;

use futures::StreamExt as _;
use libvirt_remote::prelude::*;

use super::Res;

/// Connections used to define or undefine.
const CONNS: usize = 4;
/// Calls in flight per connection.
const IN_FLIGHT: usize = 5;

/// The name of domain `i`: `scale-00042` (zero-padded, so names sort as numbers do).
pub(crate) fn name(i: usize) -> String {
    format!("scale-{i:05}")
}

/// The smallest domain the qemu driver accepts (what the testbed's tests define).
pub(crate) fn xml(kind: &str, name: &str) -> String {
    format!(
        "<domain type='{kind}'><name>{name}</name><memory unit='MiB'>64</memory>\
         <vcpu>1</vcpu><os><type arch='x86_64'>hvm</type></os></domain>"
    )
}

async fn conns(uri: &str) -> Res<Vec<Connect>> {
    let mut v = Vec::new();
    for _ in 0..CONNS {
        v.push(Connect::open(uri).await.map_err(|e| e.to_string())?);
    }
    Ok(v)
}

/// `op(connection, item)` for every item, spread over [`CONNS`] connections to `uri`,
/// [`IN_FLIGHT`] calls in flight on each; the first error, if any, once all are done.
async fn on_all<I, F, Fut>(uri: &str, items: Vec<I>, op: F) -> Res<()>
where
    F: Fn(&Connect, I) -> Fut,
    Fut: Future<Output = Res<()>>,
{
    let cs = conns(uri).await?;
    let results: Vec<Res<()>> = futures::stream::iter(items.into_iter().enumerate())
        .map(|(i, item)| op(&cs[i % CONNS], item))
        .buffer_unordered(CONNS * IN_FLIGHT)
        .collect()
        .await;
    for c in &cs {
        c.close();
    }
    results.into_iter().collect()
}

/// Define `scale-{from}` … `scale-{to - 1}` on `uri`, domain type `kind`.
pub(crate) async fn define_range(uri: &str, kind: &str, from: usize, to: usize) -> Res<()> {
    on_all(uri, (from..to).collect(), |c, i| {
        let (c, x) = (c.clone(), xml(kind, &name(i)));
        async move {
            c.define_domain_xml(&x)
                .await
                .map(drop)
                .map_err(|e| format!("defining {}: {e}", name(i)))
        }
    })
    .await
}

/// Undefine every domain of `uri`.
pub(crate) async fn undefine_all(uri: &str) -> Res<()> {
    let doms = {
        let c = Connect::open(uri).await.map_err(|e| e.to_string())?;
        let d = c.list_all_domains(Default::default()).await;
        c.close();
        d.map_err(|e| e.to_string())?
    };
    on_all(uri, doms, |c, d| {
        let d = c.bind(d.wire().clone());
        async move {
            d.undefine()
                .await
                .map_err(|e| format!("undefining {}: {e}", d.name()))
        }
    })
    .await
}
