//! What every transport's tests check through the tokio client against a real daemon (a
//! private session libvirtd of the testbed): calls, a storage pool event, and a volume's
//! bytes up and down. One owner, so TLS, SASL and each SSH path prove the same things.

use std::time::{Duration, Instant};

use futures::StreamExt;
use libvirt_remote::client::{Client, DownloadOptions, UploadOptions};
use libvirt_remote::conn::StreamItem;
use libvirt_remote::proto::events::{StoragePoolEvent, StoragePoolRefreshed, pool_event_id};
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersion, ConnectGetUri};
use libvirt_remote::proto::procs::storage::{
    StoragePoolFlagsArgs, StoragePoolLookupByName, StoragePoolLookupByNameArgs, StoragePoolRefresh,
    StorageVolCreateFlags, StorageVolCreateXml, StorageVolCreateXmlArgs,
};
use libvirt_remote::proto::types::{NonnullDomain, NonnullStoragePool, NonnullStorageVol};

/// A transient domain started from `xml` (e.g. the testbed's `minimal_domain_xml`).
///
/// # Panics
/// If the daemon refuses it (the message names the domain's XML).
pub async fn create_domain(c: &Client, xml: &str) -> NonnullDomain {
    use libvirt_remote::proto::procs::domain::{DomainCreateXml, DomainCreateXmlArgs};
    c.call::<DomainCreateXml>(&DomainCreateXmlArgs {
        xml_desc: xml.into(),
        flags: Default::default(),
    })
    .await
    .unwrap_or_else(|e| panic!("start {xml}: {e}"))
    .dom
}

/// Create a node device on the test driver (`test:///default`): an NPIV vHBA on its
/// `fc_host`, `scsi_host1`, with WWNs ending in `n` (one per device a test creates).
///
/// # Panics
/// If the daemon refuses it.
pub async fn create_vhba(c: &Client, n: u8) -> libvirt_remote::proto::types::NonnullNodeDevice {
    use libvirt_remote::proto::procs::nodedev::{NodeDeviceCreateXml, NodeDeviceXmlArgs};
    let xml = format!(
        "<device><parent>scsi_host1</parent><capability type='scsi_host'>\
         <capability type='fc_host'><wwnn>20000000123400{n:02x}</wwnn>\
         <wwpn>10000000123400{n:02x}</wwpn></capability></capability></device>"
    );
    c.call::<NodeDeviceCreateXml>(&NodeDeviceXmlArgs {
        xml_desc: xml.into(),
        flags: 0,
    })
    .await
    .unwrap_or_else(|e| panic!("create vHBA {n}: {e}"))
    .dev
}

/// Define a volume-usage secret for `path` (no value set).
///
/// # Panics
/// If the daemon refuses it.
pub async fn define_volume_secret(
    c: &Client,
    path: &str,
) -> libvirt_remote::proto::types::NonnullSecret {
    use libvirt_remote::proto::procs::common::XmlFlagsArgs;
    use libvirt_remote::proto::procs::secret::SecretDefineXml;
    let xml = format!(
        "<secret ephemeral='no' private='no'><usage type='volume'>\
         <volume>{path}</volume></usage></secret>"
    );
    c.call::<SecretDefineXml>(&XmlFlagsArgs {
        xml: xml.into(),
        flags: 0,
    })
    .await
    .unwrap_or_else(|e| panic!("define the secret of {path}: {e}"))
    .secret
}

/// The pool named `name`.
///
/// # Panics
/// If the call fails.
pub async fn pool(c: &Client, name: &str) -> NonnullStoragePool {
    c.call::<StoragePoolLookupByName>(&StoragePoolLookupByNameArgs { name: name.into() })
        .await
        .unwrap()
        .pool
}

/// A new raw volume `name` of `bytes` in the pool named `pool_name`.
///
/// # Panics
/// If a call fails.
pub async fn make_vol(c: &Client, pool_name: &str, name: &str, bytes: u64) -> NonnullStorageVol {
    let xml = format!(
        "<volume><name>{name}</name><capacity unit='bytes'>{bytes}</capacity><allocation>0</allocation><target><format type='raw'/></target></volume>"
    );
    c.call::<StorageVolCreateXml>(&StorageVolCreateXmlArgs {
        pool: pool(c, pool_name).await,
        xml: xml.into(),
        flags: StorageVolCreateFlags::empty(),
    })
    .await
    .unwrap()
    .vol
}

/// An upload of `source` into `vol` on its own task, returned once it is under way (open, its
/// first chunk out): a fixed sleep was not enough on a loaded box, where the open was still
/// unanswered when a test froze or killed the daemon. The task yields the transfer's result.
///
/// # Panics
/// If the upload does not open, or makes no progress within 30 s.
pub async fn upload_under_way<R>(
    c: &Client,
    vol: NonnullStorageVol,
    source: R,
) -> tokio::task::JoinHandle<Result<u64, libvirt_remote::client::TransferError>>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    let (flowing, flows) = tokio::sync::oneshot::channel();
    let c = c.clone();
    let up = tokio::spawn(async move {
        let mut flowing = Some(flowing);
        let up = c
            .vol_upload(&vol, UploadOptions::new())
            .await
            .unwrap()
            .with_progress(move |_| {
                if let Some(tx) = flowing.take() {
                    let _ = tx.send(());
                }
            });
        up.send_all_and_finish(source).await
    });
    tokio::time::timeout(Duration::from_secs(30), flows)
        .await
        .expect("the upload got going within 30 s")
        .expect("the upload task reports progress");
    up
}

/// Uploads `data` into `vol` (dense, default options) and downloads it again.
///
/// # Panics
/// If the upload does not report every byte sent, or the download yields a hole or an error.
pub async fn round_trip(c: &Client, vol: &NonnullStorageVol, data: &[u8]) -> Vec<u8> {
    let up = c.vol_upload(vol, UploadOptions::new()).await.unwrap();
    assert_eq!(
        up.send_all_and_finish(std::io::Cursor::new(data.to_vec()))
            .await
            .unwrap(),
        data.len() as u64
    );
    let mut dl = c.vol_download(vol, DownloadOptions::new()).await.unwrap();
    let mut got = Vec::with_capacity(data.len());
    while let Some(item) = dl.next().await {
        let StreamItem::Data(b) = item.unwrap() else {
            panic!("hole")
        };
        got.extend_from_slice(&b);
    }
    got
}

/// Calls (the library version, `qemu:///session`), a refresh event of the pool named
/// `pool_name` within 10 s, and `data` up into a new volume `vol_name` and down again
/// byte-exact.
///
/// # Panics
/// On any call error, a missing or foreign event, or bytes that come back different.
pub async fn calls_events_transfers(c: &Client, pool_name: &str, vol_name: &str, data: &[u8]) {
    assert!(c.call::<ConnectGetLibVersion>(&()).await.unwrap().lib_ver >= 9_000_000);
    assert_eq!(
        c.call::<ConnectGetUri>(&()).await.unwrap().uri,
        "qemu:///session"
    );

    let pool = pool(c, pool_name).await;
    let mut refreshes = c
        .subscribe::<StoragePoolEvent>(pool_event_id::REFRESH, None)
        .await
        .unwrap();
    c.call::<StoragePoolRefresh>(&StoragePoolFlagsArgs { pool, flags: 0 })
        .await
        .unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(10), refreshes.next())
        .await
        .expect("a refresh event within 10 s")
        .expect("subscription alive");
    assert!(
        matches!(&ev, StoragePoolEvent::Refresh(StoragePoolRefreshed { pool: p }) if p.name == pool_name),
        "{ev:?}"
    );

    let vol = make_vol(c, pool_name, vol_name, data.len() as u64).await;
    let t = Instant::now();
    let got = round_trip(c, &vol, data).await;
    eprintln!(
        "{vol_name}: {} bytes up and down in {:?}",
        data.len(),
        t.elapsed()
    );
    assert_eq!(got.len(), data.len());
    assert!(got == data, "{} bytes came back different", data.len());
}
