//! `lv bench-calls` and `lv bench-stats`: call throughput on one connection (lv's own
//! commands, for the side-by-side harness in `benches/`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use libvirt_remote::Client;
use libvirt_remote::prelude::Connect;
use libvirt_remote::proto::procs::connect::{
    ConnectGetAllDomainStatsFlags, ConnectGetLibVersion, DomainStatsTypes,
};

use crate::{R, err, text};

#[derive(clap::Args)]
pub struct Args {
    /// Total calls.
    #[arg(long, default_value_t = 10_000)]
    calls: u32,
    /// Concurrent tasks on the one connection.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
}

pub async fn run(c: &Client, a: Args) -> R {
    let concurrency = a.concurrency.max(1);
    let t = Instant::now();
    let mut tasks = Vec::new();
    let left = Arc::new(AtomicU32::new(a.calls));
    for _ in 0..concurrency {
        let c = c.clone();
        let left = left.clone();
        tasks.push(tokio::spawn(async move {
            while left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
            {
                c.call::<ConnectGetLibVersion>(&()).await?;
            }
            Ok::<(), libvirt_remote::conn::CallError>(())
        }));
    }
    for t in tasks {
        t.await.map_err(text)?.map_err(err)?;
    }
    let secs = t.elapsed().as_secs_f64();
    println!("calls/s: {:.0}", f64::from(a.calls) / secs);
    Ok(())
}

#[derive(clap::Args)]
pub struct StatsArgs {
    /// Calls, one after the other.
    #[arg(long, default_value_t = 20)]
    calls: u32,
    /// The groups (`virDomainStatsTypes` bits; 0: every group the driver has).
    #[arg(long, default_value_t = 0)]
    stats: u32,
}

/// `bench-stats`: `ConnectGetAllDomainStats` for every domain, `calls` times after one
/// warm-up call; prints calls/s, the domains per call, and this process's CPU over the calls.
pub async fn stats(c: &Connect, a: StatsArgs) -> R {
    let groups = DomainStatsTypes::from_bits_retain(a.stats);
    let flags = ConnectGetAllDomainStatsFlags::empty();
    let domains = c
        .all_domain_stats(&[], groups, flags)
        .await
        .map_err(err)?
        .len();
    let cpu0 = cpu_secs();
    let t = Instant::now();
    let mut params = 0usize;
    for _ in 0..a.calls {
        let recs = c.all_domain_stats(&[], groups, flags).await.map_err(err)?;
        params += recs.iter().map(|r| r.params.len()).sum::<usize>();
    }
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_secs() - cpu0;
    println!("calls/s: {:.3}", f64::from(a.calls) / secs);
    println!("domains: {domains}");
    println!("params: {}", params / a.calls.max(1) as usize);
    println!("secs: {secs:.6}");
    println!("cpu_s: {cpu:.6}");
    Ok(())
}

/// user+sys CPU seconds of this process so far.
#[allow(clippy::cast_precision_loss, reason = "seconds far below 2^52")]
fn cpu_secs() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}
