//! Defining and undefining many domains fast, through our library: several connections,
//! several calls in flight on each (the daemon serves `max_client_requests`, 5 by default, per
//! connection at once).

use futures::StreamExt as _;
use libvirt_rpc::prelude::*;

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

/// Define `scale-{from}` … `scale-{to - 1}` on `uri`, domain type `kind`.
pub(crate) async fn define_range(uri: &str, kind: &str, from: usize, to: usize) -> Res<()> {
    let cs = conns(uri).await?;
    let results: Vec<Res<()>> = futures::stream::iter(from..to)
        .map(|i| {
            let c = cs[i % CONNS].clone();
            let x = xml(kind, &name(i));
            async move {
                c.define_domain_xml(&x)
                    .await
                    .map(drop)
                    .map_err(|e| format!("defining {}: {e}", name(i)))
            }
        })
        .buffer_unordered(CONNS * IN_FLIGHT)
        .collect()
        .await;
    for c in &cs {
        c.close();
    }
    results.into_iter().collect()
}

/// Undefine every domain of `uri`.
pub(crate) async fn undefine_all(uri: &str) -> Res<()> {
    let cs = conns(uri).await?;
    let doms = cs[0]
        .list_all_domains(Default::default())
        .await
        .map_err(|e| e.to_string())?;
    let results: Vec<Res<()>> = futures::stream::iter(doms.into_iter().enumerate())
        .map(|(i, d)| {
            let d = cs[i % CONNS].bind(d.wire().clone());
            async move {
                d.undefine()
                    .await
                    .map_err(|e| format!("undefining {}: {e}", d.name()))
            }
        })
        .buffer_unordered(CONNS * IN_FLIGHT)
        .collect()
        .await;
    for c in &cs {
        c.close();
    }
    results.into_iter().collect()
}
