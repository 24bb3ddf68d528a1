//! White-box tests of the cache against a real private libvirtd and a loopback mirror.

use std::time::Duration;

use egress_provider::{Identifier, ProvidersConfig};
use testbed::http::{HttpServer, Route};
use testbed::libvirtd::Libvirtd;

use super::*;

fn sha256_hex(data: &[u8]) -> String {
    Sha256Digest::from_bytes(Sha256::digest(data).into()).to_string()
}

fn images(url: &str, sha: Option<&str>) -> BTreeMap<Identifier, ImageSource> {
    let mut img = serde_json::json!({"url": url, "format": "raw"});
    if let Some(s) = sha {
        img["sha256"] = s.into();
    }
    let doc = serde_json::json!({"providers": [{
        "name": "e", "type": "kvm2", "allow_unverified_images": sha.is_none(),
        "images": {"k": img}
    }]});
    ProvidersConfig::from_value(&doc).unwrap().providers[0]
        .images
        .clone()
}

/// Entry `e`'s cache of key `k` (the image at `url`, verified against `body`) with a
/// journal of its steps, and a link pool to `d`.
fn journaled(d: &Libvirtd, url: &str, body: &[u8]) -> (ImageCache, Journal, LinkPool) {
    let journal = Journal::default();
    let cache = ImageCache::new(
        "e",
        d.pool_name(),
        images(url, Some(&sha256_hex(body))),
        false,
        Budgets::default(),
    )
    .with_journal(journal.clone());
    let links = LinkPool::new(&d.uri(), Duration::from_secs(10), Duration::from_secs(10)).unwrap();
    (cache, journal, links)
}

/// Leases for a test cache (a daemon of the testbed: `kvm` or `qemu` domains).
fn leases(d: &Libvirtd) -> Leases {
    let t = if d.kvm() {
        crate::config::DomainType::Kvm
    } else {
        crate::config::DomainType::Qemu
    };
    Leases::new(t, Duration::from_secs(30), Duration::from_secs(5))
}

fn key() -> Identifier {
    Identifier::new("k").unwrap()
}

async fn vol_names(links: &LinkPool, d: &Libvirtd) -> Vec<String> {
    let link = links.link().await.unwrap();
    let pool = ops::pool(&link, d.pool_name()).await.unwrap();
    ops::vol_names(&link, &pool).await.unwrap()
}

/// H4: names carry the entry, so two entries with one key never meet on a file.
#[test]
fn volume_names_carry_the_entry() {
    assert_eq!(
        base_volume_name("kvm2-lab", "debian-13", ImageFormat::Qcow2),
        "base-kvm2-lab-debian-13.qcow2"
    );
    assert_ne!(
        base_volume_name("lab-a", "k", ImageFormat::Raw),
        base_volume_name("lab-b", "k", ImageFormat::Raw)
    );
    assert_eq!(
        marker_volume_name("lab-a", "k", ImageFormat::Raw),
        "base-lab-a-k.raw.sha256"
    );
    assert_eq!(
        temp_volume_prefix("lab-a", "k", ImageFormat::Raw),
        "tmp-lab-a-k.raw."
    );
}

/// H2 regression: a failed fetch closes the dedicated connection FIRST, then deletes the
/// unmarked base it was writing; nothing is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_upload_closes_dedicated_connection_before_deleting_the_base() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let http = HttpServer::start().await.unwrap();
    let body = vec![7u8; 256 << 10];
    http.route("/img", Route::new(body.clone()).die_after(100 << 10));
    let (cache, journal, links) = journaled(&d, &http.url("/img"), &body);
    let err = cache.ensure(&links, &leases(&d), &key()).await.unwrap_err();
    assert!(err.is_transient(), "{err}");
    let steps = journal.lock().unwrap().clone();
    let close = steps.iter().position(|s| s == "close-dedicated");
    let delete = steps.iter().position(|s| s == "delete base");
    assert!(
        matches!((close, delete), (Some(c), Some(d)) if c < d),
        "the dedicated connection must be closed before the unmarked base is deleted: {steps:?}"
    );
    let left = vol_names(&links, &d).await;
    assert!(left.is_empty(), "volumes left behind: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_writes_the_marker_last_and_reuses_it() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let http = HttpServer::start().await.unwrap();
    let body: Vec<u8> = (0..(3u32 << 20)).map(|i| (i % 251) as u8).collect();
    http.serve("/img", body.clone());
    let (cache, journal, links) = journaled(&d, &http.url("/img"), &body);
    let base = cache.ensure(&links, &leases(&d), &key()).await.unwrap();
    assert!(base.fetched);
    assert_eq!(base.capacity, body.len() as u64);
    assert_eq!(base.digest.to_string(), sha256_hex(&body));
    let steps = journal.lock().unwrap().clone();
    assert_eq!(steps, ["create-base", "marker"], "{steps:?}");
    let mut names = vol_names(&links, &d).await;
    names.sort();
    assert_eq!(names, ["base-e-k.raw", "base-e-k.raw.sha256"]);
    let on_disk = std::fs::read(d.pool_path().join("base-e-k.raw")).unwrap();
    assert!(on_disk == body, "published bytes differ");
    // Cached now: no second fetch.
    let again = cache.ensure(&links, &leases(&d), &key()).await.unwrap();
    assert!(!again.fetched);
    assert_eq!(http.hits("/img"), 1);
}

/// A link reads a marker once; an eviction (marker and base deleted) is still seen, and a
/// new link reads the marker again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_reads_the_marker_once_and_still_sees_an_eviction() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let http = HttpServer::start().await.unwrap();
    let body: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 241) as u8).collect();
    http.serve("/img", body.clone());
    let (cache, journal, links) = journaled(&d, &http.url("/img"), &body);
    let reads = || {
        journal
            .lock()
            .unwrap()
            .iter()
            .filter(|s| *s == "read-marker")
            .count()
    };
    let first = cache.ensure(&links, &leases(&d), &key()).await.unwrap();
    assert!(first.fetched);
    let second = cache.ensure(&links, &leases(&d), &key()).await.unwrap();
    assert_eq!(reads(), 1, "the first cached ensure reads the marker");
    let third = cache.ensure(&links, &leases(&d), &key()).await.unwrap();
    assert_eq!(reads(), 1, "the same link reuses what it verified");
    for b in [&second, &third] {
        assert!(!b.fetched);
        assert_eq!(
            (&b.path, b.capacity, b.digest),
            (&first.path, first.capacity, first.digest)
        );
    }
    // Evicted (marker first, then base): the next ensure fetches again.
    let link = links.link().await.unwrap();
    let pool = ops::pool(&link, d.pool_name()).await.unwrap();
    for name in ["base-e-k.raw.sha256", "base-e-k.raw"] {
        assert!(ops::delete_vol(&link, &pool, name).await.unwrap());
    }
    let refetched = cache.ensure(&links, &leases(&d), &key()).await.unwrap();
    assert!(refetched.fetched, "an evicted base must be fetched again");
    assert_eq!(http.hits("/img"), 2);
    // A new link reads the marker again.
    links.close("test: redial");
    let after = cache.ensure(&links, &leases(&d), &key()).await.unwrap();
    assert!(!after.fetched);
    assert_eq!(reads(), 2, "a new link reads the marker again");
}

/// An https mirror that redirects to plain http would hand the image (and any credentials of
/// the redirect) to whoever sits on the path: the fetch client refuses the downgrade and
/// never asks the http address; https → https is still followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_mirror_redirecting_to_http_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki =
        testbed::pki::Pki::generate(dir.path(), &testbed::pki::ServerCert::default()).unwrap();
    let ca = std::fs::read(pki.server_dir().join("cacert.pem")).unwrap();
    let client = http_client(&Budgets::default())
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .build()
        .unwrap();
    let plain = HttpServer::start().await.unwrap();
    plain.serve("/img", b"image".to_vec());
    let tls = HttpServer::start_tls(&pki.server_dir()).await.unwrap();
    tls.serve("/img", b"image".to_vec());
    tls.route("/down", Route::redirect(plain.url("/img")));
    tls.route("/up", Route::redirect(tls.url("/img")));

    let r = client.get(tls.url("/down")).send().await;
    assert_eq!(
        plain.hits("/img"),
        0,
        "the redirect from https to http was followed: {r:?}"
    );
    let e = r.expect_err("a downgrade is an error");
    assert!(e.is_redirect(), "{e:?}");
    let r = client.get(tls.url("/up")).send().await.unwrap();
    assert_eq!(r.bytes().await.unwrap().as_ref(), b"image");
}
