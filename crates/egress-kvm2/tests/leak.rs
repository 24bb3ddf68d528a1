//! 1,000 failed fetch + upload cycles (a mirror that dies mid-body) leave no task and no
//! memory behind. Its own test binary, so nothing else runs in this runtime or process.

use egress_kvm2_testkit as common;

use std::time::{Duration, Instant};

use common::*;
use egress_provider::ErrorKind;
use serde_json::json;
use testbed::http::Route;

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_failed_fetch_upload_cycles_leak_nothing() {
    let Some(env) = env().await else { return };
    let body = pattern(256 << 10, 31);
    env.http
        .route("/img.raw", Route::new(body.clone()).die_after(96 << 10));
    let p = build(entry(
        &env,
        "leak",
        json!({"k": image(&env.http.url("/img.raw"), &body)}),
        json!({}),
    ));
    let key = id("k");
    let cycle = || async {
        let err = p.ensure_image(&key).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Transient, "{err}");
    };
    for _ in 0..50 {
        cycle().await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let tasks_before = alive_tasks();
    let rss_before = rss_kib();
    let started = Instant::now();
    for _ in 0..1000 {
        cycle().await;
    }
    let took = started.elapsed();
    let until = Instant::now() + Duration::from_secs(5);
    let mut tasks_after = alive_tasks();
    while tasks_after > tasks_before && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
        tasks_after = alive_tasks();
    }
    let rss_after = rss_kib();
    println!(
        "1000 cycles in {took:?}: tasks {tasks_before} -> {tasks_after}, RSS {rss_before} KiB -> {rss_after} KiB ({:+} KiB)",
        rss_after as i64 - rss_before as i64
    );
    assert_eq!(env.http.hits("/img.raw"), 1050);
    assert!(
        tasks_after <= tasks_before,
        "tasks {tasks_before} -> {tasks_after}: a task leaked per cycle?"
    );
    assert!(
        rss_after < rss_before + 16 * 1024,
        "RSS grew from {rss_before} KiB to {rss_after} KiB over 1000 cycles"
    );
    assert_eq!(
        volumes(&env.d),
        Vec::<String>::new(),
        "temporary volumes left behind"
    );
}
