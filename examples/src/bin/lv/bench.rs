//! `lv bench-calls`: call throughput on one connection (lv's own command).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use libvirt_rpc::Client;
use libvirt_rpc::proto::procs::connect::ConnectGetLibVersion;

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
            Ok::<(), libvirt_rpc::CallError>(())
        }));
    }
    for t in tasks {
        t.await.map_err(text)?.map_err(err)?;
    }
    let secs = t.elapsed().as_secs_f64();
    println!("calls/s: {:.0}", f64::from(a.calls) / secs);
    Ok(())
}
