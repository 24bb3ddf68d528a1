//! The per-entry base image cache (H2, H4 and the atomic publish).
//!
//! # Names
//!
//! | volume | what |
//! | --- | --- |
//! | `base-<entry>-<key>.<format>` | the base image, byte for byte as fetched; overlays back onto it once its marker exists |
//! | `base-<entry>-<key>.<format>.sha256` | the marker: 64 hex digits, written **last**; it is what publishes the base |
//! | `tmp-<entry>-<key>.<format>.<nonce>` | an upload of an earlier version (temporary volume, then a server-side copy); debris, deleted by the next fetch |
//!
//! The entry name is part of every name, so two entries with the same key never share a
//! file (H4). The entry name is an identifier (checked when the provider is built), so it is
//! safe in a file name.
//!
//! # Ensure
//!
//! In-process single flight per (entry, key). Then:
//!
//! 1. Marker present with the configured digest (or any valid digest when the entry opted
//!    out of verification) and base present → reuse (no lease needed). The marker is read
//!    once per link: while the same link finds the same marker and base volumes (by their
//!    keys), the digest, path and capacity it read are reused without a download. A redial
//!    reads them again. (Bases are never replaced in place — the eviction recipe below
//!    retires a key — so a marker that is still there still says the same.)
//! 2. Marker with a **different** digest than configured → `Permanent`, naming both digests
//!    and telling the operator to add a new key. **Nothing is deleted**: live overlays may
//!    be backed by that base.
//! 3. Anything else is done under the key's cross-process lease ([`crate::fence`]), after
//!    looking again. Missing marker, non-hex marker, marker without base, base without
//!    marker → debris: delete (marker first) and fetch again; `tmp-` volumes of the key
//!    are debris too.
//! 4. Fetch: stream the URL with reqwest (its own deadline one minute inside the transfer
//!    budget, so a stalled mirror ends through the reader), counting length and sha256 over
//!    every byte while they stream into the base volume over a **dedicated** connection.
//!    The volume is declared `raw` (a plain file of the announced length, whatever the
//!    image's format: no pre-made qcow2 with bytes of its own), and the upload is sparse:
//!    runs of zeros go as holes ([`crate::sparse`]). The whole image is never buffered.
//!    Bounded while it streams: a `Content-Length` over the entry's `max_image_bytes` is
//!    refused before the volume is created, and the fetch stops as soon as the body passes
//!    the announced length or `max_image_bytes`. Redirects are followed, never from `https`
//!    to plain `http`. Errors show the URL without its userinfo and query.
//! 5. Verify length (against `Content-Length`) and digest (against the configuration).
//! 6. Publish: renew the lease once more, then write the marker, last. No copy: libvirt
//!    has no rename, and its server-side copy of a qcow2 file is a `qemu-img convert`, not
//!    the fetched bytes. The base needs no temporary name either: only the lease holder
//!    writes it, and without a marker nobody uses it.
//!
//! A failed fetch or upload **closes the dedicated connection first** (so the daemon lets
//! go of the stream's file), **then** deletes the unmarked base.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use bytes::Bytes;
use egress_provider::{
    ErrorKind, Identifier, ImageFormat, ImageSource, ProviderError, Sha256Digest, redact_url,
};
use futures::StreamExt;
use libvirt_remote::Client;
use libvirt_remote::client::UploadOptions;
use libvirt_remote::proto::types::{NonnullStoragePool, NonnullStorageVol};
use sha2::{Digest, Sha256};
use tokio::time::Instant;
use tracing::Instrument;

use crate::classify::{LvError, provider_error};
use crate::config::Budgets;
use crate::faults::{FaultPoints, Point};
use crate::fence::{Lease, Leases, Subject, lease_name};
use crate::keyed::KeyedLocks;
use crate::link::{Link, LinkPool};
use crate::ops;
use crate::sparse::ZeroRuns;
use crate::xml::volume_xml;

/// Progress of the image cache's `ensure` (a fetch, a verification, an upload), for progress
/// bars.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImageProgress {
    /// The base is cached and verified by its marker; nothing to transfer.
    Cached {
        /// The base volume.
        volume: String,
    },
    /// The fetch started; `total` is the `Content-Length`, if the mirror sent one.
    Fetching {
        /// Expected bytes.
        total: Option<u64>,
    },
    /// Bytes received from the mirror so far.
    Fetched(u64),
    /// Bytes handed to libvirt so far.
    Uploaded(u64),
    /// Verified; the marker is being written.
    Publishing,
    /// Published; the marker is written.
    Published {
        /// The base volume.
        volume: String,
        /// Its size in bytes.
        bytes: u64,
    },
}

/// Receives [`ImageProgress`].
pub type ProgressFn = Arc<dyn Fn(ImageProgress) + Send + Sync>;

/// A verified, published base image.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BaseImage {
    /// The volume.
    pub volume: NonnullStorageVol,
    /// Its path on the host (overlays name it as their backing file).
    pub path: String,
    /// Its format.
    pub format: ImageFormat,
    /// Its capacity (virtual size) in bytes.
    pub capacity: u64,
    /// The digest recorded in its marker.
    pub digest: Sha256Digest,
    /// Whether this call fetched it (false: it was cached).
    pub fetched: bool,
    /// Bytes this call sent to the host as data; runs of zeros went as holes and are not
    /// counted (0 when cached).
    pub uploaded: u64,
}

impl BaseImage {
    /// The published base `volume` as the host reports it now (capacity, path).
    async fn read(
        link: &Link,
        volume: NonnullStorageVol,
        format: ImageFormat,
        digest: Sha256Digest,
        uploaded: Option<u64>,
    ) -> Result<Self, ProviderError> {
        let read = |e| provider_error(format!("read volume {}", volume.name), e);
        let info = ops::vol_info(link, &volume).await.map_err(read)?;
        let path = ops::vol_path(link, &volume).await.map_err(read)?;
        Ok(Self {
            volume,
            path,
            format,
            capacity: info.capacity,
            digest,
            fetched: uploaded.is_some(),
            uploaded: uploaded.unwrap_or(0),
        })
    }
}

/// `base-<entry>-<key>.<format>`.
pub fn base_volume_name(entry: &str, key: &str, format: ImageFormat) -> String {
    format!("base-{entry}-{key}.{}", format.as_str())
}

/// `base-<entry>-<key>.<format>.sha256`.
pub fn marker_volume_name(entry: &str, key: &str, format: ImageFormat) -> String {
    format!("{}.sha256", base_volume_name(entry, key, format))
}

/// The prefix of the temporary upload volumes of earlier versions:
/// `tmp-<entry>-<key>.<format>.` (deleted as debris by the next fetch).
pub fn temp_volume_prefix(entry: &str, key: &str, format: ImageFormat) -> String {
    format!("tmp-{entry}-{key}.{}.", format.as_str())
}

/// In-process single flight per (entry, key), across every cache of the process.
static FLIGHTS: LazyLock<KeyedLocks<(String, String)>> = LazyLock::new(KeyedLocks::default);

/// What the cache check found.
enum Check {
    Cached(BaseImage),
    Debris(String),
    Missing,
}

/// What [`ImageCache::look`] found, with the link and pool it looked through.
struct Look {
    link: Arc<Link>,
    pool: NonnullStoragePool,
    base_name: String,
    marker_name: String,
    check: Check,
}

/// What a fetch under the key's lease works with.
#[derive(Clone, Copy)]
struct Leased<'a> {
    links: &'a LinkPool,
    leases: &'a Leases,
    lease: &'a Lease,
    link: &'a Link,
    pool: &'a NonnullStoragePool,
    key: &'a Identifier,
    src: &'a ImageSource,
}

/// The steps of a failed attempt, for tests that pin their order.
pub(crate) type Journal = Arc<Mutex<Vec<String>>>;

/// The base image cache of one provider entry.
pub struct ImageCache {
    entry: String,
    pool: String,
    images: BTreeMap<Identifier, ImageSource>,
    allow_unverified: bool,
    budgets: Budgets,
    /// The largest image fetched ([`Kvm2Settings::max_image_bytes`](crate::Kvm2Settings)).
    max_image_bytes: u64,
    http: reqwest::Client,
    progress: Option<ProgressFn>,
    journal: Option<Journal>,
    /// Bases verified through a link, per key: reused while that link sees the same volumes.
    verified: Mutex<BTreeMap<Identifier, Verified>>,
    pub(crate) faults: FaultPoints,
}

/// A base whose marker one link has read.
#[derive(Clone)]
struct Verified {
    link: u64,
    marker_key: libvirt_remote::wire::xdr::LvString,
    base: BaseImage,
}

impl std::fmt::Debug for ImageCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageCache")
            .field("entry", &self.entry)
            .field("pool", &self.pool)
            .field("images", &self.images.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// An attempt's resources, cleaned up in order on failure.
#[derive(Default)]
struct Attempt {
    dedicated: Option<Client>,
    /// The unmarked base being written.
    base: Option<String>,
}

impl ImageCache {
    /// A cache for `entry`'s images in `pool`.
    pub fn new(
        entry: &str,
        pool: &str,
        images: BTreeMap<Identifier, ImageSource>,
        allow_unverified: bool,
        budgets: Budgets,
    ) -> Self {
        let http = http_client(&budgets)
            .build()
            .expect("a TLS backend is compiled in");
        Self {
            entry: entry.to_owned(),
            pool: pool.to_owned(),
            images,
            allow_unverified,
            budgets,
            max_image_bytes: crate::config::DEFAULT_MAX_IMAGE_BYTES,
            http,
            progress: None,
            journal: None,
            verified: Mutex::default(),
            faults: FaultPoints::default(),
        }
    }

    /// Fetches no image larger than `max` bytes (see
    /// [`Kvm2Settings::max_image_bytes`](crate::Kvm2Settings::max_image_bytes)).
    #[must_use]
    pub fn with_max_image_bytes(mut self, max: u64) -> Self {
        self.max_image_bytes = max;
        self
    }

    /// Reports progress to `f`.
    #[must_use]
    pub fn with_progress(mut self, f: ProgressFn) -> Self {
        self.progress = Some(f);
        self
    }

    #[cfg(test)]
    pub(crate) fn with_journal(mut self, j: Journal) -> Self {
        self.journal = Some(j);
        self
    }

    fn note(&self, step: impl Into<String>) {
        if let Some(j) = &self.journal {
            j.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(step.into());
        }
    }

    fn report(&self, p: ImageProgress) {
        if let Some(f) = &self.progress {
            f(p);
        }
    }

    /// The image source for `key`, or `Permanent` naming the known keys.
    pub fn source(&self, key: &Identifier) -> Result<&ImageSource, ProviderError> {
        let src = self.images.get(key).ok_or_else(|| {
            let known: Vec<&str> = self.images.keys().map(Identifier::as_str).collect();
            ProviderError::permanent(format!(
                "image key {key:?} is not configured for provider {:?} (known: {}); add it under this entry's images or fix the spec",
                self.entry,
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ))
        })?;
        if src.sha256.is_none() && !self.allow_unverified {
            return Err(ProviderError::permanent(format!(
                "image {key:?} of provider {:?} has no sha256; refusing to boot an unverified image. \
                 Add its sha256, or set `allow_unverified_images: true` on the entry",
                self.entry
            )));
        }
        Ok(src)
    }

    /// Makes sure the base image for `key` is published and verified, fetching it if needed.
    /// A fetch runs under the cross-process lease of the key (see [`crate::fence`]).
    pub(crate) async fn ensure(
        &self,
        links: &LinkPool,
        leases: &Leases,
        key: &Identifier,
    ) -> Result<BaseImage, ProviderError> {
        let span = tracing::info_span!("kvm2.image.ensure", entry = %self.entry, key = %key);
        self.ensure_inner(links, leases, key).instrument(span).await
    }

    async fn ensure_inner(
        &self,
        links: &LinkPool,
        leases: &Leases,
        key: &Identifier,
    ) -> Result<BaseImage, ProviderError> {
        let src = self.source(key)?.clone();
        let _guard = FLIGHTS.lock((self.entry.clone(), key.to_string())).await;
        // Cached: no lease needed (a published base never changes).
        if let Some(base) = self.cached(links, key, &src).await? {
            return Ok(base);
        }
        // Missing or debris: another controller may be fetching it. Take the key's lease,
        // then look again: it may have been published meanwhile.
        let name = lease_name(&self.entry, Subject::Image(key.as_str()));
        let lease = Box::pin(leases.acquire(links, &name, |_| {
            format!(
                "image {key:?} of provider {:?} is being fetched by another controller",
                self.entry
            )
        }))
        .await?;
        let r = leases
            .hold(
                links,
                &lease,
                self.ensure_leased(links, leases, &lease, key, &src),
            )
            .await;
        leases.release(links, lease).await;
        r
    }

    /// The cached base, if the marker says so; `None` when it must be fetched.
    async fn cached(
        &self,
        links: &LinkPool,
        key: &Identifier,
        src: &ImageSource,
    ) -> Result<Option<BaseImage>, ProviderError> {
        let Look {
            base_name, check, ..
        } = self.look(links, key, src).await?;
        match check {
            Check::Cached(base) => {
                tracing::debug!(volume = %base_name, "base image cached");
                self.report(ImageProgress::Cached { volume: base_name });
                Ok(Some(base))
            }
            Check::Debris(_) | Check::Missing => Ok(None),
        }
    }

    /// Under the key's lease: look again, delete debris, fetch and publish.
    async fn ensure_leased(
        &self,
        links: &LinkPool,
        leases: &Leases,
        lease: &Lease,
        key: &Identifier,
        src: &ImageSource,
    ) -> Result<BaseImage, ProviderError> {
        let Look {
            link,
            pool,
            base_name,
            marker_name,
            check,
        } = self.look(links, key, src).await?;
        match check {
            Check::Cached(base) => {
                tracing::debug!(volume = %base_name, "base image published by another controller");
                self.report(ImageProgress::Cached { volume: base_name });
                return Ok(base);
            }
            Check::Debris(why) => {
                tracing::warn!(volume = %base_name, %why, "deleting base image debris");
                for name in [&marker_name, &base_name] {
                    ops::delete_vol(&link, &pool, name)
                        .await
                        .map_err(|e| provider_error(format!("delete debris {name}"), e))?;
                }
            }
            Check::Missing => {}
        }
        // Boxed: the fetch's state (HTTP body, upload stream, hasher) is large.
        Box::pin(self.fetch_and_publish(Leased {
            links,
            leases,
            lease,
            link: &link,
            pool: &pool,
            key,
            src,
        }))
        .await
    }

    /// One link to the daemon, the entry's pool, the key's volume names and what the marker
    /// says about them.
    async fn look(
        &self,
        links: &LinkPool,
        key: &Identifier,
        src: &ImageSource,
    ) -> Result<Look, ProviderError> {
        let link = links
            .link()
            .await
            .map_err(|e| provider_error(format!("cannot reach libvirt at {}", links.uri()), e))?;
        let pool = ops::entry_pool(&link, &self.pool).await?;
        let base_name = base_volume_name(&self.entry, key.as_str(), src.format);
        let marker_name = marker_volume_name(&self.entry, key.as_str(), src.format);
        let check = self
            .check(&link, &pool, key, src, &base_name, &marker_name)
            .await?;
        Ok(Look {
            link,
            pool,
            base_name,
            marker_name,
            check,
        })
    }

    /// Reads the marker (`marker_name`) and decides about the base (`base_name`).
    async fn check(
        &self,
        link: &Link,
        pool: &NonnullStoragePool,
        key: &Identifier,
        src: &ImageSource,
        base_name: &str,
        marker_name: &str,
    ) -> Result<Check, ProviderError> {
        let lookup = |name: String| async move {
            ops::vol(link, pool, &name)
                .await
                .map_err(|e| provider_error(format!("look up volume {name}"), e))
        };
        let marker = lookup(marker_name.to_owned()).await?;
        let base = lookup(base_name.to_owned()).await?;
        let Some(marker) = marker else {
            return Ok(match base {
                Some(_) => Check::Debris("base without marker (an interrupted publish)".into()),
                None => Check::Missing,
            });
        };
        if let Some(base) = &base
            && let Some(v) = self.remembered(link, key, &marker, base)
        {
            return Ok(Check::Cached(v));
        }
        self.note("read-marker");
        let text = ops::small_download(link, &marker, 256)
            .await
            .map_err(|e| provider_error(format!("read marker {marker_name}"), e))?;
        let Some(found) = std::str::from_utf8(&text)
            .ok()
            .and_then(|t| Sha256Digest::from_hex(t.trim()))
        else {
            return Ok(Check::Debris("marker does not hold a sha256 digest".into()));
        };
        if let Some(want) = src.sha256
            && want != found
        {
            return Err(ProviderError::permanent(format!(
                "image {key:?} of provider {entry:?}: the cached base {base_name} was verified as \
                     sha256 {found}, but the configuration now says sha256 {want}. Nothing was deleted: \
                     running VMs may be backed by this base. To use a different image, add it under a \
                     new key (e.g. {key}-2) and point specs at it; to evict the old base, follow the \
                     eviction recipe in docs/kvm2-provider.md",
                entry = self.entry
            )));
        }
        let Some(volume) = base else {
            return Ok(Check::Debris("marker without base".into()));
        };
        let base = BaseImage::read(link, volume, src.format, found, None).await?;
        self.remember(link, key, &marker, &base);
        Ok(Check::Cached(base))
    }

    /// The base this link verified for `key`, if it still finds the same marker and base.
    fn remembered(
        &self,
        link: &Link,
        key: &Identifier,
        marker: &NonnullStorageVol,
        base: &NonnullStorageVol,
    ) -> Option<BaseImage> {
        let verified = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
        let v = verified.get(key)?;
        (v.link == link.id() && v.marker_key == marker.key && v.base.volume.key == base.key)
            .then(|| v.base.clone())
    }

    /// Remembers that `link` verified `base` for `key` through `marker`.
    fn remember(
        &self,
        link: &Link,
        key: &Identifier,
        marker: &NonnullStorageVol,
        base: &BaseImage,
    ) {
        let v = Verified {
            link: link.id(),
            marker_key: marker.key.clone(),
            base: BaseImage {
                fetched: false,
                uploaded: 0,
                ..base.clone()
            },
        };
        self.verified
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), v);
    }

    async fn fetch_and_publish(&self, at: Leased<'_>) -> Result<BaseImage, ProviderError> {
        let Leased {
            links,
            pool,
            key,
            src,
            link,
            ..
        } = at;
        // Temporary volumes of earlier versions (which uploaded into one and copied it):
        // nobody else fetches this (entry, key) while we hold its lease, so they are debris.
        let prefix = temp_volume_prefix(&self.entry, key.as_str(), src.format);
        let names = ops::vol_names(link, pool)
            .await
            .map_err(|e| provider_error("list pool volumes", e))?;
        for old in names.iter().filter(|n| n.starts_with(&prefix)) {
            tracing::warn!(volume = %old, "deleting an interrupted upload");
            ops::delete_vol(link, pool, old)
                .await
                .map_err(|e| provider_error(format!("delete debris {old}"), e))?;
        }

        let mut attempt = Attempt::default();
        let budget = self.budgets.transfer;
        let deadline = Instant::now() + budget;
        let outcome = tokio::time::timeout_at(deadline, self.attempt(at, deadline, &mut attempt))
            .await
            .unwrap_or_else(|_| {
                Err(provider_error(
                    format!("fetch and upload of image {key:?}"),
                    LvError::Budget {
                        what: format!("fetch and upload of image {key:?}"),
                        budget,
                    },
                ))
            });
        match outcome {
            Ok(base) => {
                if let Some(c) = attempt.dedicated.take() {
                    c.disconnect(self.budgets.close).await;
                }
                Ok(base)
            }
            Err(e) => {
                self.clean_up(links, pool, attempt).await;
                Err(e)
            }
        }
    }

    /// Failure path: close the dedicated connection FIRST (the daemon lets go of the
    /// stream's file), THEN delete the unmarked base the attempt was writing.
    async fn clean_up(&self, links: &LinkPool, pool: &NonnullStoragePool, attempt: Attempt) {
        if let Some(c) = attempt.dedicated {
            c.close();
            self.note("close-dedicated");
        }
        let Some(name) = attempt.base else {
            return;
        };
        let link = match links.link().await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, volume = %name, "cannot delete after a failed fetch; the next ensure deletes it");
                return;
            }
        };
        match ops::delete_vol(&link, pool, &name).await {
            Ok(_) => self.note("delete base"),
            Err(e) => {
                tracing::warn!(error = %e, volume = %name, "cannot delete after a failed fetch; the next ensure deletes it");
            }
        }
    }

    async fn attempt(
        &self,
        at: Leased<'_>,
        deadline: Instant,
        attempt: &mut Attempt,
    ) -> Result<BaseImage, ProviderError> {
        let Leased {
            links,
            leases,
            lease,
            link,
            pool,
            key,
            src,
        } = at;
        // Shown in errors: the URL without its userinfo and query (credentials, tokens).
        let what = format!("image {key:?} from {}", redact_url(src.url.as_str()));
        let max = self.max_image_bytes;
        let too_big = |size: String| {
            ProviderError::permanent(format!(
                "fetch {what}: {size}, over this entry's max_image_bytes ({max}); raise it or \
                 fix the url (nothing was published)"
            ))
        };
        let fetch_deadline = Instant::now() + self.budgets.fetch_deadline();
        let resp = self
            .http
            .get(src.url.clone())
            .timeout(self.budgets.fetch_deadline())
            .send()
            .await
            .map_err(|e| fetch_error(&what, e))?;
        let status = resp.status();
        if !status.is_success() {
            let kind = if status.is_client_error()
                && status != reqwest::StatusCode::REQUEST_TIMEOUT
                && status != reqwest::StatusCode::TOO_MANY_REQUESTS
            {
                ErrorKind::Permanent
            } else {
                ErrorKind::Transient
            };
            return Err(ProviderError::new(
                kind,
                format!("fetch {what}: the mirror answered {status}; check the url"),
            ));
        }
        let total = resp.content_length();
        // The announced length becomes the volume's capacity: check it before creating it.
        if let Some(t) = total.filter(|&t| t > max) {
            return Err(too_big(format!("the mirror announces {t} bytes")));
        }
        self.report(ImageProgress::Fetching { total });

        // The base is written in place, under the key's lease: nobody else writes it, and
        // without its marker nobody uses it. Declared `raw` whatever the image's format, so
        // libvirt creates a plain (sparse) file of the announced length and runs no
        // `qemu-img create`: the upload then leaves exactly the fetched bytes, whatever
        // their size (a pre-made qcow2 would keep its own trailing bytes past a smaller
        // image). libvirt probes the format afterwards; overlays name it from the config.
        self.faults.at(Point::CreateBaseVolume).await;
        let base_name = base_volume_name(&self.entry, key.as_str(), src.format);
        let base = ops::create_vol(
            link,
            pool,
            volume_xml(&base_name, total.unwrap_or(0), ImageFormat::Raw, None),
        )
        .await
        .map_err(|e| provider_error(format!("create volume {base_name}"), e))?;
        attempt.base = Some(base_name.clone());
        self.note("create-base");

        self.faults.at(Point::CreateBaseUpload).await;
        let dedicated = links
            .dedicated()
            .await
            .map_err(|e| provider_error("open a dedicated upload connection", e))?;
        attempt.dedicated = Some(dedicated.clone());
        // Sparse: runs of zeros go as holes (see `sparse`); the daemon seeks over them.
        let mut upload = dedicated
            .vol_upload(&base, UploadOptions::new().sparse(true))
            .await
            .map_err(|e| provider_error(format!("start upload into {base_name}"), e.into()))?;
        if let Some(f) = self.progress.clone() {
            upload = upload.with_progress(move |p| f(ImageProgress::Uploaded(p.done)));
        }

        let mut body = resp.bytes_stream();
        let mut hasher = Sha256::new();
        let mut len = 0u64;
        let mut zeros = ZeroRuns::new();
        let mut segments = Vec::new();
        let sent = |e: libvirt_remote::conn::StreamError| {
            provider_error(format!("upload {what} into {base_name}"), e.into())
        };
        loop {
            let next = tokio::time::timeout_at(fetch_deadline, body.next()).await;
            let chunk = match next {
                Err(_) => {
                    return Err(ProviderError::transient(format!(
                        "fetch {what}: the mirror did not finish within {:?}",
                        self.budgets.fetch_deadline()
                    )));
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => return Err(fetch_error(&what, e)),
                Ok(Some(Ok(c))) => c,
            };
            // The digest and the length cover every byte as fetched; a body past the
            // announced length or the maximum stops here, not after the whole upload.
            len += chunk.len() as u64;
            if len > max {
                return Err(too_big(format!("the body passed {max} bytes")));
            }
            if let Some(t) = total
                && len > t
            {
                return Err(ProviderError::transient(format!(
                    "fetch {what}: the mirror sent more than the {t} bytes it announced"
                )));
            }
            hasher.update(&chunk);
            self.report(ImageProgress::Fetched(len));
            zeros.push(&chunk, &mut segments);
            ops::send_segments(&mut upload, &mut segments)
                .await
                .map_err(sent)?;
        }
        zeros.finish(&mut segments);
        ops::send_segments(&mut upload, &mut segments)
            .await
            .map_err(sent)?;
        let uploaded = upload.sent();
        upload
            .finish()
            .await
            .map_err(|e| provider_error(format!("finish upload into {base_name}"), e.into()))?;

        if let Some(t) = total
            && t != len
        {
            return Err(ProviderError::transient(format!(
                "fetch {what}: got {len} bytes, the mirror announced {t}"
            )));
        }
        let digest = Sha256Digest::from_bytes(hasher.finalize().into());
        if let Some(want) = src.sha256
            && want != digest
        {
            return Err(ProviderError::permanent(format!(
                "fetch {what}: the mirror served sha256 {digest} ({len} bytes), the configuration says {want}; \
                     fix the url or the sha256 (nothing was published)"
            )));
        }
        tracing::info!(bytes = len, uploaded, holes = zeros.hole_bytes(), %digest, "image fetched and verified");

        // Publish: the marker, LAST, and only while the lease is still ours.
        self.faults.at(Point::CreateBaseMarker).await;
        self.report(ImageProgress::Publishing);
        leases.check(links, lease).await?;
        let marker_name = marker_volume_name(&self.entry, key.as_str(), src.format);
        ops::delete_vol(link, pool, &marker_name)
            .await
            .map_err(|e| provider_error(format!("delete stale {marker_name}"), e))?;
        let hex = digest.to_string();
        let marker = ops::create_vol(
            link,
            pool,
            volume_xml(&marker_name, hex.len() as u64, ImageFormat::Raw, None),
        )
        .await
        .map_err(|e| provider_error(format!("create {marker_name}"), e))?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        ops::upload_bytes(&dedicated, &marker, Bytes::from(hex), remaining)
            .await
            .map_err(|e| provider_error(format!("write {marker_name}"), e))?;
        attempt.base = None;
        self.note("marker");

        self.report(ImageProgress::Published {
            volume: base_name,
            bytes: len,
        });
        BaseImage::read(link, base, src.format, digest, Some(uploaded)).await
    }
}

/// Redirects followed at most, as reqwest's default policy.
const MAX_REDIRECTS: usize = 10;

/// The HTTP client images are fetched with. It follows redirects but never from `https` to
/// anything else: a downgrade would hand the image (and what the redirect carries) to
/// whoever sits on the path, and the configured sha256 is all that would be left to catch it
/// (an entry may opt out of it).
pub(crate) fn http_client(budgets: &Budgets) -> reqwest::ClientBuilder {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let from_https = attempt
            .previous()
            .last()
            .is_some_and(|u| u.scheme() == "https");
        if from_https && attempt.url().scheme() != "https" {
            let to = redact_url(attempt.url().as_str());
            attempt.error(format!("refusing a redirect from https to {to}"))
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .connect_timeout(budgets.call)
        .redirect(policy)
}

/// `what` names the image by its redacted URL; reqwest's own text would repeat the whole
/// URL (credentials, tokens), so it is left out.
fn fetch_error(what: &str, e: reqwest::Error) -> ProviderError {
    use std::fmt::Write as _;
    let kind = if e.is_builder() {
        ErrorKind::Permanent
    } else {
        ErrorKind::Transient
    };
    let e = e.without_url();
    let mut msg = format!("fetch {what}: {e}");
    let mut src = std::error::Error::source(&e);
    while let Some(s) = src {
        let _ = write!(msg, ": {s}");
        src = s.source();
    }
    ProviderError::new(kind, msg)
}

#[cfg(test)]
mod tests;
