//! Thin typed helpers over the libvirt calls the provider makes. Every call goes through
//! [`Link::call`] (call budget, dead-link handling); small transfers are bounded by the call
//! budget too and mark the link dead when they overrun it.

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use libvirt_remote::Client;
use libvirt_remote::client::{DownloadOptions, Upload, UploadOptions};
use libvirt_remote::conn::StreamItem;
use libvirt_remote::proto::names::MetadataType;
use libvirt_remote::proto::procs::domain::{
    DomainFlagsArgs, DomainGetMetadata, DomainGetMetadataArgs, DomainGetState, DomainGetStateRet,
    DomainLookupByName, DomainLookupByNameArgs,
};
use libvirt_remote::proto::procs::storage::{
    StoragePoolListAllVolumes, StoragePoolListAllVolumesArgs, StoragePoolLookupByName,
    StoragePoolLookupByNameArgs, StorageVolArgs, StorageVolCreateXml, StorageVolCreateXmlArgs,
    StorageVolDelete, StorageVolFlagsArgs, StorageVolGetInfo, StorageVolGetInfoRet,
    StorageVolGetPath, StorageVolLookupByName, StorageVolLookupByNameArgs,
};
use libvirt_remote::proto::types::{NonnullDomain, NonnullStoragePool, NonnullStorageVol};

use egress_provider::ProviderError;

use crate::classify::{LvError, provider_error};
use crate::link::Link;
use crate::meta::NAMESPACE;
use crate::sparse::{Segment, ZeroRuns};
use libvirt_remote::proto::procs::domain::DomainModificationImpact;
use libvirt_remote::proto::procs::storage::{StorageVolCreateFlags, StorageVolDeleteFlags};

/// `Ok(None)` for "no such object" (domain or volume), the value otherwise.
pub fn absent_ok<T>(r: Result<T, LvError>) -> Result<Option<T>, LvError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The storage pool by name.
pub async fn pool(link: &Link, name: &str) -> Result<NonnullStoragePool, LvError> {
    link.call::<StoragePoolLookupByName>(&StoragePoolLookupByNameArgs { name: name.into() })
        .await
        .map(|r| r.pool)
}

/// The entry's storage pool, its absence classified with the operator's advice
/// ([`provider_error`]).
pub async fn entry_pool(link: &Link, name: &str) -> Result<NonnullStoragePool, ProviderError> {
    pool(link, name)
        .await
        .map_err(|e| provider_error(format!("look up storage pool {name:?}"), e))
}

/// A volume by name, `None` if absent.
pub async fn vol(
    link: &Link,
    pool: &NonnullStoragePool,
    name: &str,
) -> Result<Option<NonnullStorageVol>, LvError> {
    absent_ok(
        link.call::<StorageVolLookupByName>(&StorageVolLookupByNameArgs {
            pool: pool.clone(),
            name: name.into(),
        })
        .await
        .map(|r| r.vol),
    )
}

/// Creates a volume from XML.
pub async fn create_vol(
    link: &Link,
    pool: &NonnullStoragePool,
    xml: String,
) -> Result<NonnullStorageVol, LvError> {
    link.call::<StorageVolCreateXml>(&StorageVolCreateXmlArgs {
        pool: pool.clone(),
        xml: xml.into(),
        flags: StorageVolCreateFlags::empty(),
    })
    .await
    .map(|r| r.vol)
}

/// Deletes a volume by name; `Ok(false)` if it was not there.
pub async fn delete_vol(
    link: &Link,
    pool: &NonnullStoragePool,
    name: &str,
) -> Result<bool, LvError> {
    let Some(v) = vol(link, pool, name).await? else {
        return Ok(false);
    };
    match link
        .call::<StorageVolDelete>(&StorageVolFlagsArgs {
            vol: v,
            flags: StorageVolDeleteFlags::empty(),
        })
        .await
    {
        Ok(()) => Ok(true),
        Err(e) if e.is_not_found() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Capacity and allocation of a volume.
pub async fn vol_info(
    link: &Link,
    vol: &NonnullStorageVol,
) -> Result<StorageVolGetInfoRet, LvError> {
    link.call::<StorageVolGetInfo>(&StorageVolArgs { vol: vol.clone() })
        .await
}

/// The host path of a volume.
pub async fn vol_path(link: &Link, vol: &NonnullStorageVol) -> Result<String, LvError> {
    link.call::<StorageVolGetPath>(&StorageVolArgs { vol: vol.clone() })
        .await
        .map(|r| r.name.to_string())
}

/// Names of every volume in the pool.
pub async fn vol_names(link: &Link, pool: &NonnullStoragePool) -> Result<Vec<String>, LvError> {
    link.call::<StoragePoolListAllVolumes>(&StoragePoolListAllVolumesArgs {
        pool: pool.clone(),
        need_results: 1,
        flags: Default::default(),
    })
    .await
    .map(|r| r.vols.into_iter().map(|v| v.name.to_string()).collect())
}

/// A domain by name, `None` if absent.
pub async fn domain(link: &Link, name: &str) -> Result<Option<NonnullDomain>, LvError> {
    absent_ok(
        link.call::<DomainLookupByName>(&DomainLookupByNameArgs { name: name.into() })
            .await
            .map(|r| r.dom),
    )
}

/// The domain's state and reason.
pub async fn state(link: &Link, dom: &NonnullDomain) -> Result<DomainGetStateRet, LvError> {
    link.call::<DomainGetState>(&DomainFlagsArgs {
        dom: dom.clone(),
        flags: Default::default(),
    })
    .await
}

/// Our metadata element as XML; `Ok(None)` when the domain carries none of ours.
pub async fn metadata(link: &Link, dom: &NonnullDomain) -> Result<Option<String>, LvError> {
    metadata_in(link, dom, NAMESPACE).await
}

/// The domain's metadata element in `namespace` as XML; `Ok(None)` when it carries none.
pub async fn metadata_in(
    link: &Link,
    dom: &NonnullDomain,
    namespace: &str,
) -> Result<Option<String>, LvError> {
    match link
        .call::<DomainGetMetadata>(&DomainGetMetadataArgs {
            dom: dom.clone(),
            kind: MetadataType::ELEMENT,
            uri: Some(namespace.into()),
            flags: DomainModificationImpact::empty(),
        })
        .await
    {
        Ok(r) => Ok(Some(r.metadata.to_string())),
        Err(e)
            if e.remote()
                .is_some_and(libvirt_remote::proto::RemoteError::is_no_metadata) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Downloads a small volume (at most `max` bytes kept) within the link's call budget; an
/// overrun marks the link dead.
pub async fn small_download(
    link: &Link,
    vol: &NonnullStorageVol,
    max: usize,
) -> Result<Vec<u8>, LvError> {
    let budget = link.call_budget();
    let work = async {
        // Asked for no more than is kept: the daemon sends at most that, and the stream
        // fails on anything past it.
        let mut dl = link
            .client()
            .vol_download(vol, DownloadOptions::new().length(max as u64))
            .await?;
        let mut out = Vec::new();
        while let Some(item) = dl.next().await {
            if let StreamItem::Data(d) = item? {
                let room = max.saturating_sub(out.len());
                out.extend_from_slice(&d[..d.len().min(room)]);
            }
        }
        Ok::<_, LvError>(out)
    };
    if let Ok(r) = tokio::time::timeout(budget, work).await {
        r
    } else {
        link.mark_dead(format!(
            "downloading {} did not finish within the call budget of {budget:?}",
            vol.name
        ));
        Err(link.dead_error())
    }
}

/// Uploads `data` into the fresh volume `vol` over `client` within `budget`. Runs of zero
/// blocks go as holes (a sparse stream: a fresh volume reads as zeros there, and the daemon
/// neither receives nor writes them); the rest as data.
pub async fn upload_bytes(
    client: &Client,
    vol: &NonnullStorageVol,
    data: Bytes,
    budget: Duration,
) -> Result<(), LvError> {
    let work = async {
        let mut segments = Vec::new();
        let mut zeros = ZeroRuns::new();
        zeros.push(&data, &mut segments);
        zeros.finish(&mut segments);
        let sparse = zeros.hole_bytes() > 0;
        let mut up = client
            .vol_upload(vol, UploadOptions::new().sparse(sparse))
            .await?;
        send_segments(&mut up, &mut segments).await?;
        up.finish().await?;
        Ok::<_, LvError>(())
    };
    match tokio::time::timeout(budget, work).await {
        Ok(r) => r,
        Err(_) => Err(LvError::Budget {
            what: format!("uploading {}", vol.name),
            budget,
        }),
    }
}

/// Sends (and drains) the segments: data as data, holes as holes.
pub async fn send_segments(
    upload: &mut Upload,
    segments: &mut Vec<Segment>,
) -> Result<(), libvirt_remote::conn::StreamError> {
    for s in segments.drain(..) {
        match s {
            Segment::Data(d) => upload.send(d).await?,
            Segment::Hole(n) => upload.send_hole(n).await?,
        }
    }
    Ok(())
}

/// Uploads a small volume over the shared link within its call budget; an overrun marks the
/// link dead.
pub async fn small_upload(
    link: &Link,
    vol: &NonnullStorageVol,
    data: Bytes,
) -> Result<(), LvError> {
    match upload_bytes(link.client(), vol, data, link.call_budget()).await {
        Err(LvError::Budget { what, budget }) => {
            link.mark_dead(format!(
                "{what} did not finish within the call budget of {budget:?}"
            ));
            Err(link.dead_error())
        }
        Err(e) if e.is_dead_link() => {
            link.mark_dead(format!("connection lost during a transfer: {e}"));
            Err(link.dead_error())
        }
        other => other,
    }
}
