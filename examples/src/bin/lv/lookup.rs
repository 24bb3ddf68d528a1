//! Finding objects the way virsh does: a domain by id, then UUID, then name; a pool or a
//! network by name, then UUID; a volume by name in `--pool`, then by key, then by path.
//! A failure reads like virsh's (`failed to get domain 'x'`) with libvirt's reason after it.

use libvirt_remote::prelude::*;

use crate::R;

/// `failed to get KIND 'NAME'`, then libvirt's reason on its own `error:` line.
fn failed(kind: &str, name: &str, e: &impl crate::Failure) -> String {
    format!("failed to get {kind} '{name}'\nerror: {}", crate::msg(e))
}

/// A domain by id, UUID or name.
pub async fn domain(c: &Connect, name: &str) -> R<Domain> {
    if let Ok(id) = name.parse::<i32>()
        && id >= 0
        && let Ok(d) = c.lookup_domain_by_id(id).await
    {
        return Ok(d);
    }
    if let Ok(uuid) = name.parse::<Uuid>()
        && let Ok(d) = c.lookup_domain_by_uuid(uuid).await
    {
        return Ok(d);
    }
    c.lookup_domain_by_name(name)
        .await
        .map_err(|e| failed("domain", name, &e))
}

/// A storage pool by name or UUID.
pub async fn pool(c: &Connect, name: &str) -> R<StoragePool> {
    match c.lookup_storage_pool_by_name(name).await {
        Ok(p) => Ok(p),
        Err(e) => match name.parse::<Uuid>() {
            Ok(uuid) => c
                .lookup_storage_pool_by_uuid(uuid)
                .await
                .map_err(|_| failed("pool", name, &e)),
            Err(_) => Err(failed("pool", name, &e)),
        },
    }
}

/// A volume: by name in `pool` when one is given, else (or then) by key, then by path.
pub async fn vol(c: &Connect, pool: Option<&str>, name: &str) -> R<StorageVol> {
    if let Some(p) = pool
        && let Ok(v) = self::pool(c, p).await?.lookup_volume_by_name(name).await
    {
        return Ok(v);
    }
    if let Ok(v) = c.lookup_storage_vol_by_key(name).await {
        return Ok(v);
    }
    c.lookup_storage_vol_by_path(name)
        .await
        .map_err(|e| failed("vol", name, &e))
}

/// A network by name or UUID.
pub async fn network(c: &Connect, name: &str) -> R<Network> {
    match c.lookup_network_by_name(name).await {
        Ok(n) => Ok(n),
        Err(e) => match name.parse::<Uuid>() {
            Ok(uuid) => c
                .lookup_network_by_uuid(uuid)
                .await
                .map_err(|_| failed("network", name, &e)),
            Err(_) => Err(failed("network", name, &e)),
        },
    }
}
