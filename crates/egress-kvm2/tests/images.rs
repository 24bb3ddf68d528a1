//! The image cache through the provider, against the private libvirtd and a loopback
//! mirror: per-entry names (H4), digest changes (no deletes), stalled and dying mirrors
//! (H2), construction-time validation, and a daemon killed mid-upload.

use egress_kvm2_testkit as common;

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use common::*;
use egress_kvm2::{Kvm2Provider, Kvm2Settings};
use egress_provider::{ErrorKind, ProvidersConfig};
use serde_json::json;
use testbed::http::Route;

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Waits up to 5 s for the task count to come back to `baseline`.
async fn settle(baseline: usize) -> usize {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let n = alive_tasks();
        if n <= baseline || Instant::now() > until {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// H4: two entries with the same key never share a file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_entries_same_key_two_base_volumes() {
    let Some(env) = env().await else { return };
    let a_body = pattern(1 << 20, 1);
    let b_body = pattern(1 << 20, 2);
    env.http.serve("/a.raw", a_body.clone());
    env.http.serve("/b.raw", b_body.clone());
    let a = build(entry(
        &env,
        "lab-a",
        json!({"debian-13": image(&env.http.url("/a.raw"), &a_body)}),
        json!({}),
    ));
    let b = build(entry(
        &env,
        "lab-b",
        json!({"debian-13": image(&env.http.url("/b.raw"), &b_body)}),
        json!({}),
    ));
    let key = id("debian-13");
    let (ra, rb) = tokio::join!(a.ensure_image(&key), b.ensure_image(&key));
    let shared = "two entries with the same key must not share a base volume";
    let ra = ra.unwrap_or_else(|e| panic!("entry lab-a: {e}: {shared}"));
    let rb = rb.unwrap_or_else(|e| panic!("entry lab-b: {e}: {shared}"));
    assert_ne!(ra.path, rb.path);
    assert_eq!(
        volumes(&env.d),
        [
            "base-lab-a-debian-13.raw",
            "base-lab-a-debian-13.raw.sha256",
            "base-lab-b-debian-13.raw",
            "base-lab-b-debian-13.raw.sha256"
        ]
    );
    assert_eq!(std::fs::read(&ra.path).unwrap(), a_body);
    assert_eq!(std::fs::read(&rb.path).unwrap(), b_body);
}

/// A digest change is Permanent, names both digests, and deletes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn digest_change_is_permanent_and_deletes_nothing() {
    let Some(env) = env().await else { return };
    let old = pattern(1 << 20, 3);
    let new = pattern(1 << 20, 4);
    env.http.serve("/old.raw", old.clone());
    env.http.serve("/new.raw", new.clone());
    let first = build(entry(
        &env,
        "lab",
        json!({"k": image(&env.http.url("/old.raw"), &old)}),
        json!({}),
    ));
    let base = first.ensure_image(&id("k")).await.unwrap();
    let before: Vec<(String, u64, u64)> = volumes(&env.d)
        .into_iter()
        .map(|n| {
            let m = std::fs::metadata(env.d.pool_path().join(&n)).unwrap();
            (n, m.ino(), m.mtime_nsec() as u64)
        })
        .collect();
    drop(first);

    // The operator edits sha256 (and url) under the same key.
    let edited = build(entry(
        &env,
        "lab",
        json!({"k": image(&env.http.url("/new.raw"), &new)}),
        json!({}),
    ));
    let err = match edited.ensure_image(&id("k")).await {
        Ok(b) => panic!(
            "ensure after a sha256 edit = Ok (fetched: {}, {}): want Permanent telling the operator \
             to add a new key, with nothing deleted",
            b.fetched, b.volume.name
        ),
        Err(e) => e,
    };
    assert_eq!(err.kind(), ErrorKind::Permanent, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&sha256_hex(&old)) && msg.contains(&sha256_hex(&new)),
        "{msg}"
    );
    assert!(msg.contains("new key"), "{msg}");
    assert_eq!(env.http.hits("/new.raw"), 0, "nothing fetched");
    let after: Vec<(String, u64, u64)> = volumes(&env.d)
        .into_iter()
        .map(|n| {
            let m = std::fs::metadata(env.d.pool_path().join(&n)).unwrap();
            (n, m.ino(), m.mtime_nsec() as u64)
        })
        .collect();
    assert_eq!(before, after, "volumes must be untouched");
    assert_eq!(std::fs::read(&base.path).unwrap(), old);
}

async fn failing_mirror(route: Route, what: &str) {
    let Some(env) = env().await else { return };
    let body = pattern(4 << 20, 5);
    env.http.route("/img.raw", route.clone());
    let p = build(entry(
        &env,
        "lab",
        json!({"k": image(&env.http.url("/img.raw"), &route.body)}),
        json!({"budgets": {"transfer_secs": 4, "shutdown_secs": 0.5}}),
    ));
    // Warm up: the shared link exists; count tasks from here.
    let link = p.links().link().await.unwrap();
    let baseline = alive_tasks();
    let started = Instant::now();
    let err = p.ensure_image(&id("k")).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(err.kind(), ErrorKind::Transient, "{what}: {err}");
    assert!(
        took < Duration::from_secs(4),
        "{what}: took {took:?}; the fetch deadline is 2 s"
    );
    assert_eq!(
        volumes(&env.d),
        Vec::<String>::new(),
        "{what}: temporary volume left behind"
    );
    let now = settle(baseline).await;
    assert!(
        now <= baseline,
        "{what}: {now} tasks alive, {baseline} before: a task leaked"
    );
    // The shared link was not touched and still works.
    let again = p.links().link().await.unwrap();
    assert_eq!(
        again.id(),
        link.id(),
        "{what}: the shared link was replaced"
    );
    assert!(!again.is_dead());
    // And a good mirror works on the same provider.
    env.http.serve("/img.raw", body.clone());
    let p2 = build(entry(
        &env,
        "lab",
        json!({"k": image(&env.http.url("/img.raw"), &body)}),
        json!({}),
    ));
    p2.ensure_image(&id("k")).await.unwrap();
    println!("{what}: Transient after {took:?}: {err}");
}

/// H2: a mirror that stalls past the fetch deadline ends through the reader: Transient,
/// temporary volume gone, no task left, shared link untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_mirror_is_transient_and_cleans_up() {
    failing_mirror(
        Route::new(pattern(4 << 20, 6)).stall_after(1 << 20),
        "stall",
    )
    .await;
}

/// A mirror that dies mid-body: the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dying_mirror_is_transient_and_cleans_up() {
    failing_mirror(Route::new(pattern(4 << 20, 7)).die_after(1 << 20), "die").await;
}

/// A mirror serves a complete body (the announced length) whose sha256 is not the configured
/// one: Permanent, naming both digests, and nothing is published or left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_complete_body_whose_sha256_does_not_match_is_never_published() {
    let Some(env) = env().await else { return };
    let served = pattern(2 << 20, 21);
    let configured = pattern(2 << 20, 22);
    env.http.serve("/img.raw", served.clone());
    let p = build(entry(
        &env,
        "lab",
        json!({"k": image(&env.http.url("/img.raw"), &configured)}),
        json!({}),
    ));
    let err = match p.ensure_image(&id("k")).await {
        Ok(b) => panic!(
            "published {} although the mirror served sha256 {} and the entry says {}",
            b.volume.name,
            sha256_hex(&served),
            sha256_hex(&configured)
        ),
        Err(e) => e,
    };
    assert_eq!(err.kind(), ErrorKind::Permanent, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&sha256_hex(&served)) && msg.contains(&sha256_hex(&configured)),
        "{msg}"
    );
    assert_eq!(env.http.hits("/img.raw"), 1);
    assert_eq!(
        volumes(&env.d),
        Vec::<String>::new(),
        "a base or marker was left for a body that failed its digest"
    );
}

/// A mirror that sends no length streams into the host's pool: the fetch stops as soon as
/// the body passes the entry's `max_image_bytes`, long before the transfer budget, with a
/// Permanent error naming the limit, and leaves nothing behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_over_the_maximum_is_stopped_while_it_streams() {
    let Some(env) = env().await else { return };
    let body = pattern(4 << 20, 23);
    // Three MiB without a length, then silence: only the limit can end it early.
    env.http.route(
        "/big.raw",
        Route::new(body.clone())
            .content_length(false)
            .stall_after(3 << 20),
    );
    let p = build(entry(
        &env,
        "lab",
        json!({"k": image(&env.http.url("/big.raw"), &body)}),
        json!({"max_image_bytes": 1 << 20, "budgets": {"transfer_secs": 40, "shutdown_secs": 0.5}}),
    ));
    let started = Instant::now();
    let err = p.ensure_image(&id("k")).await.unwrap_err();
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "the fetch went on for {took:?} past the 1 MiB maximum: {err}"
    );
    assert_eq!(err.kind(), ErrorKind::Permanent, "{err}");
    assert!(err.to_string().contains("max_image_bytes"), "{err}");
    assert_eq!(volumes(&env.d), Vec::<String>::new());
}

/// A mirror announcing more than `max_image_bytes` is refused before anything is created
/// on the host (the announced length would be the volume's capacity).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_announced_length_over_the_maximum_creates_nothing() {
    let Some(env) = env().await else { return };
    let body = pattern(64 << 10, 24);
    env.http
        .route("/liar.raw", Route::new(body.clone()).announce(1 << 40));
    let p = build(entry(
        &env,
        "lab",
        json!({"k": image(&env.http.url("/liar.raw"), &body)}),
        json!({"max_image_bytes": 1 << 20}),
    ));
    let err = p.ensure_image(&id("k")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Permanent, "{err}");
    assert!(err.to_string().contains("1099511627776"), "{err}");
    assert_eq!(volumes(&env.d), Vec::<String>::new());
}

/// An image URL's user, password and query (a signed mirror's token) never reach an error:
/// neither the mirror's refusal nor a connection failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_url_credentials_never_reach_errors() {
    let Some(env) = env().await else { return };
    let body = pattern(1024, 25);
    let with_secrets =
        |base: &str| base.replacen("http://", "http://ops:hunter2@", 1) + "?X-Token=s3cr3t-t0ken";
    let refused = with_secrets(&env.http.url("/gone.raw"));
    // A port nothing listens on.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        with_secrets(&format!("http://127.0.0.1:{port}/img.raw"))
    };
    let p = build(entry(
        &env,
        "lab",
        json!({"gone": image(&refused, &body), "down": image(&closed, &body)}),
        json!({}),
    ));
    for key in ["gone", "down"] {
        let err = p.ensure_image(&id(key)).await.unwrap_err();
        let text = format!("{err} {err:?}");
        for secret in ["hunter2", "s3cr3t-t0ken", "ops:"] {
            assert!(
                !text.contains(secret),
                "{key}: the image URL's {secret:?} is in the error: {text}"
            );
        }
        assert!(text.contains("127.0.0.1"), "{key}: {text}");
    }
    assert_eq!(env.http.hits("/gone.raw?X-Token=s3cr3t-t0ken"), 1);
}

/// H4: the entry name reaches file names, so a bad one fails at construction.
#[test]
fn invalid_entry_name_rejected_at_construction() {
    let settings = Kvm2Settings::new("qemu:///system", "default");
    for bad in ["Lab", "lab/a", "-lab", "lab a", "", "lab.a"] {
        let err = Kvm2Provider::new(
            bad,
            std::collections::BTreeMap::default(),
            false,
            settings.clone(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("not a valid identifier"),
            "{bad:?}: {err}"
        );
    }
    // And through the registry: the loader already refuses it, with a path.
    let doc = json!({"providers": [{"name": "Lab", "type": "kvm2",
        "images": {"k": {"url": "http://127.0.0.1/x", "sha256": "0".repeat(64), "format": "raw"}},
        "uri": "qemu:///system", "pool": "default"}]});
    let err = ProvidersConfig::from_value(&doc).unwrap_err();
    assert!(err.to_string().contains("providers[0].name"), "{err}");
    // A bad URI fails at construction too, not at first use.
    let doc = json!({"providers": [{"name": "lab", "type": "kvm2",
        "images": {"k": {"url": "http://127.0.0.1/x", "sha256": "0".repeat(64), "format": "raw"}},
        "uri": "qemu:///system?frobnicate=1", "pool": "default"}]});
    let cfg = ProvidersConfig::from_value(&doc).unwrap();
    let mut reg = egress_provider::ProviderRegistry::new();
    reg.register(
        egress_kvm2::Kvm2Factory::TYPE,
        egress_kvm2::Kvm2Factory::default(),
    )
    .unwrap();
    let err = reg.build(&cfg).unwrap_err();
    assert!(err.to_string().contains("providers[0].uri"), "{err}");
}

/// No sha256 configured: URL images are refused unless the entry opted out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unverified_images_need_the_opt_out() {
    let Some(env) = env().await else { return };
    let body = pattern(1 << 20, 8);
    env.http.serve("/u.raw", body.clone());
    let doc = json!({"providers": [{"name": "lab", "type": "kvm2", "allow_unverified_images": true,
        "images": {"k": {"url": env.http.url("/u.raw"), "format": "raw"}},
        "uri": env.d.uri(), "pool": env.d.pool_name()}]});
    let cfg = ProvidersConfig::from_value(&doc).unwrap();
    let e = &cfg.providers[0];
    let settings: Kvm2Settings = e.settings().unwrap();
    // The same images without the opt-out (as a program could pass them): refused.
    let strict = Kvm2Provider::new("lab", e.images.clone(), false, settings.clone()).unwrap();
    let err = strict.ensure_image(&id("k")).await.unwrap_err();
    assert!(
        err.is_permanent() && err.to_string().contains("allow_unverified_images"),
        "{err}"
    );
    assert_eq!(env.http.hits("/u.raw"), 0);
    // With the opt-out: fetched, and the marker records the computed digest.
    let open = Kvm2Provider::from_entry(e, settings).unwrap();
    let base = open.ensure_image(&id("k")).await.unwrap();
    assert_eq!(base.digest.to_string(), sha256_hex(&body));
    let again = open.ensure_image(&id("k")).await.unwrap();
    assert!(!again.fetched);
}

/// A 404 is the operator's to fix; a 503 may pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirror_status_codes() {
    let Some(env) = env().await else { return };
    let body = pattern(1024, 9);
    env.http
        .route("/503.raw", Route::new(body.clone()).status(503));
    let p = build(entry(
        &env,
        "lab",
        json!({"gone": image(&env.http.url("/missing.raw"), &body), "busy": image(&env.http.url("/503.raw"), &body)}),
        json!({}),
    ));
    assert!(
        p.ensure_image(&id("gone"))
            .await
            .unwrap_err()
            .is_permanent()
    );
    assert!(
        p.ensure_image(&id("busy"))
            .await
            .unwrap_err()
            .is_transient()
    );
    assert_eq!(volumes(&env.d), Vec::<String>::new());
}

/// The daemon is killed while an image upload is in flight: the ensure fails Transient,
/// and after the daemon is back the next operation reconnects (a new link), deletes the
/// interrupted upload's unmarked base and publishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_killed_during_upload_next_operation_reconnects() {
    let Some(mut env) = env().await else { return };
    let body = pattern(4 << 20, 10);
    env.http
        .route("/img.raw", Route::new(body.clone()).stall_after(2 << 20));
    let p = shared(build(entry(
        &env,
        "lab",
        json!({"k": image(&env.http.url("/img.raw"), &body)}),
        json!({"budgets": {"transfer_secs": 6, "call_secs": 2, "connect_secs": 2}}),
    )));
    let first = p.links().link().await.unwrap().id();
    let task = tokio::spawn({
        let p = p.clone();
        async move { p.ensure_image(&id("k")).await }
    });
    // Wait until the base volume holds data (its file is sparse until the upload writes),
    // then kill the daemon under the upload.
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let started = std::fs::metadata(env.d.pool_path().join("base-lab-k.raw"))
            .is_ok_and(|m| m.blocks() > 0);
        if started {
            break;
        }
        assert!(
            Instant::now() < until,
            "upload never started: {:?}",
            volumes(&env.d)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    env.d.kill().unwrap();
    let err = task.await.unwrap().unwrap_err();
    assert!(err.is_transient(), "{err}");
    env.d.restart().unwrap();
    env.http.serve("/img.raw", body.clone());
    let base = p.ensure_image(&id("k")).await.unwrap();
    assert!(base.fetched);
    let second = p.links().current().unwrap().id();
    assert_ne!(first, second, "the dead link must have been replaced");
    assert_eq!(volumes(&env.d), ["base-lab-k.raw", "base-lab-k.raw.sha256"]);
}

/// `qemu-img` with arguments; panics with its stderr.
fn qemu_img(args: &[&str]) {
    let out = std::process::Command::new("qemu-img")
        .args(args)
        .output()
        .expect("qemu-img runs (scripts/install-deps installs qemu-utils)");
    assert!(
        out.status.success(),
        "qemu-img {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// qcow2 base images (issue 19) go through fetch → verify → publish and are stored byte for
/// byte as fetched, whatever their size: one smaller than the empty qcow2 libvirt's
/// `qemu-img create` makes (~192 KiB: uploaded into such a file, an image keeps its trailing
/// bytes) and a 4 MiB one. An instance on the small one starts (its overlay opens the base
/// as qcow2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qcow2_images_are_stored_byte_for_byte_whatever_their_size() {
    let Some(env) = env().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let tiny = dir.path().join("tiny.qcow2");
    qemu_img(&[
        "create",
        "-f",
        "qcow2",
        "-o",
        "cluster_size=512",
        tiny.to_str().unwrap(),
        "64K",
    ]);
    let raw = dir.path().join("data.raw");
    std::fs::write(&raw, pattern(4 << 20, 61)).unwrap();
    let big = dir.path().join("data.qcow2");
    qemu_img(&[
        "convert",
        "-O",
        "qcow2",
        raw.to_str().unwrap(),
        big.to_str().unwrap(),
    ]);
    let mut images = serde_json::Map::new();
    let mut bodies = Vec::new();
    for (key, file) in [("tiny", &tiny), ("big", &big)] {
        let body = std::fs::read(file).unwrap();
        env.http.serve(&format!("/{key}.qcow2"), body.clone());
        images.insert(
            key.into(),
            json!({"url": env.http.url(&format!("/{key}.qcow2")), "sha256": sha256_hex(&body), "format": "qcow2"}),
        );
        bodies.push((key, body));
    }
    let p = build(entry(
        &env,
        "q",
        images.into(),
        json!({"budgets": {"shutdown_secs": 0}}),
    ));
    for (key, body) in &bodies {
        let base = p.ensure_image(&id(key)).await.unwrap();
        assert!(base.fetched);
        let stored = std::fs::read(&base.path).unwrap();
        assert_eq!(
            stored.len(),
            body.len(),
            "{key}: the stored base must be exactly the fetched {} bytes",
            body.len()
        );
        assert!(
            stored == *body,
            "{key}: stored bytes differ from the fetched image"
        );
        println!(
            "{key}.qcow2: {} bytes fetched, stored byte for byte ({} sent as data)",
            body.len(),
            base.uploaded
        );
    }
    assert!(
        bodies[0].1.len() < 192 << 10,
        "the tiny image is smaller than an empty qcow2"
    );
    let spec = egress_provider::CreateSpec::new(id("u1"), "u1", id("tiny")).with_memory_mib(32);
    let i = egress_provider::Provider::create(&p, &spec).await.unwrap();
    assert_eq!(i.state, egress_provider::InstanceState::Provisioning);
    assert_eq!(
        env.d.virsh(&["domstate", "q-u1"]).unwrap().trim(),
        "running",
        "{}",
        env.d.domain_log("q-u1")
    );
    let info = env
        .d
        .virsh(&[
            "vol-dumpxml",
            "--pool",
            env.d.pool_name(),
            "disk-q-u1.qcow2",
        ])
        .unwrap();
    assert!(info.contains("<backingStore>"), "{info}");
    egress_provider::Provider::delete(&p, &spec.uid)
        .await
        .unwrap();
}

/// Raw images are uploaded sparse (issue 19): runs of zeros in the fetched stream go as
/// holes, the volume keeps them (its allocation is measured), and the stored bytes, the
/// length and the digest are still those of every fetched byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_images_are_uploaded_sparse() {
    let Some(env) = env().await else { return };
    // 64 MiB, of which 192 KiB data: a boot sector, a few data clusters, an odd-length tail.
    let mut body = vec![0u8; 64 << 20];
    body[..512].copy_from_slice(&pattern(512, 62));
    body[(8 << 20)..(8 << 20) + (64 << 10)].copy_from_slice(&pattern(64 << 10, 63));
    body[(40 << 20) + 100..(40 << 20) + 100 + (128 << 10)].copy_from_slice(&pattern(128 << 10, 64));
    body.extend_from_slice(b"tail");
    env.http.serve("/sparse.raw", body.clone());
    let p = build(entry(
        &env,
        "s",
        json!({"k": image(&env.http.url("/sparse.raw"), &body)}),
        // 64 MiB through a debug build's sha256 and zero detection on a loaded CI box: the
        // default 30 s (a 15 s fetch deadline) was seen running out.
        json!({"budgets": {"shutdown_secs": 0.5, "transfer_secs": 120, "call_secs": 30}}),
    ));
    let base = p.ensure_image(&id("k")).await.unwrap();
    let m = std::fs::metadata(&base.path).unwrap();
    let allocated = m.blocks() * 512;
    let stored = std::fs::read(&base.path).unwrap();
    assert_eq!(stored.len(), body.len());
    assert!(stored == body, "stored bytes differ from the fetched image");
    assert_eq!(base.digest.to_string(), sha256_hex(&body));
    assert!(
        base.uploaded < 1 << 20,
        "{} of {} bytes sent as data: runs of zeros must go as holes",
        base.uploaded,
        body.len()
    );
    assert!(
        allocated < 2 << 20,
        "{allocated} bytes allocated for a {}-byte image with 196 KiB of data: the volume must keep the holes",
        body.len()
    );
    let xml = env
        .d
        .virsh(&["vol-dumpxml", "--pool", env.d.pool_name(), "base-s-k.raw"])
        .unwrap();
    println!(
        "64 MiB raw image: {} bytes sent as data, {allocated} bytes allocated; libvirt: {}",
        base.uploaded,
        xml.lines()
            .filter(|l| l.contains("allocation") || l.contains("capacity"))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ")
    );
}
