//! Finding objects the way virsh does: a domain by id, then UUID, then name; a pool or a
//! network by name, then UUID; a volume by name in `--pool`, then by key, then by path.
//! A failure reads like virsh's (`failed to get domain 'x'`) with libvirt's reason after it.

use libvirt_rpc::Client;
use libvirt_rpc::proto::procs::common::{NameArgs, UuidArgs};
use libvirt_rpc::proto::procs::domain::{
    DomainLookupById, DomainLookupByIdArgs, DomainLookupByName, DomainLookupByUuid,
};
use libvirt_rpc::proto::procs::network::{NetworkLookupByName, NetworkLookupByUuid};
use libvirt_rpc::proto::procs::storage::{
    StoragePoolLookupByName, StoragePoolLookupByUuid, StorageVolLookupByKey,
    StorageVolLookupByKeyArgs, StorageVolLookupByName, StorageVolLookupByNameArgs,
    StorageVolLookupByPath, StorageVolLookupByPathArgs,
};
use libvirt_rpc::proto::types::{Domain, Network, StoragePool, StorageVol, Uuid};

use crate::R;

/// `failed to get KIND 'NAME'`, then libvirt's reason on its own `error:` line.
fn failed(kind: &str, name: &str, e: &libvirt_rpc::CallError) -> String {
    format!("failed to get {kind} '{name}'\nerror: {}", crate::msg(e))
}

/// A domain by id, UUID or name.
pub async fn domain(c: &Client, name: &str) -> R<Domain> {
    if let Ok(id) = name.parse::<i32>()
        && id >= 0
        && let Ok(r) = c
            .call::<DomainLookupById>(&DomainLookupByIdArgs { id })
            .await
    {
        return Ok(r.dom);
    }
    if let Ok(uuid) = name.parse::<Uuid>()
        && let Ok(r) = c.call::<DomainLookupByUuid>(&UuidArgs { uuid }).await
    {
        return Ok(r.dom);
    }
    c.call::<DomainLookupByName>(&NameArgs { name: name.into() })
        .await
        .map(|r| r.dom)
        .map_err(|e| failed("domain", name, &e))
}

/// A storage pool by name or UUID.
pub async fn pool(c: &Client, name: &str) -> R<StoragePool> {
    let by_name = c
        .call::<StoragePoolLookupByName>(&NameArgs { name: name.into() })
        .await;
    match by_name {
        Ok(r) => Ok(r.pool),
        Err(e) => match name.parse::<Uuid>() {
            Ok(uuid) => c
                .call::<StoragePoolLookupByUuid>(&UuidArgs { uuid })
                .await
                .map(|r| r.pool)
                .map_err(|_| failed("pool", name, &e)),
            Err(_) => Err(failed("pool", name, &e)),
        },
    }
}

/// A volume: by name in `pool` when one is given, else (or then) by key, then by path.
pub async fn vol(c: &Client, pool: Option<&str>, name: &str) -> R<StorageVol> {
    if let Some(p) = pool {
        let p = self::pool(c, p).await?;
        if let Ok(r) = c
            .call::<StorageVolLookupByName>(&StorageVolLookupByNameArgs {
                pool: p,
                name: name.into(),
            })
            .await
        {
            return Ok(r.vol);
        }
    }
    if let Ok(r) = c
        .call::<StorageVolLookupByKey>(&StorageVolLookupByKeyArgs { key: name.into() })
        .await
    {
        return Ok(r.vol);
    }
    c.call::<StorageVolLookupByPath>(&StorageVolLookupByPathArgs { path: name.into() })
        .await
        .map(|r| r.vol)
        .map_err(|e| failed("vol", name, &e))
}

/// A network by name or UUID.
pub async fn network(c: &Client, name: &str) -> R<Network> {
    let by_name = c
        .call::<NetworkLookupByName>(&NameArgs { name: name.into() })
        .await;
    match by_name {
        Ok(r) => Ok(r.net),
        Err(e) => match name.parse::<Uuid>() {
            Ok(uuid) => c
                .call::<NetworkLookupByUuid>(&UuidArgs { uuid })
                .await
                .map(|r| r.net)
                .map_err(|_| failed("network", name, &e)),
            Err(_) => Err(failed("network", name, &e)),
        },
    }
}
