//! Memory per idle connection: RSS of this process (one tokio runtime, like an operator
//! process) before and after opening N idle connections to one private libvirtd.
//!
//! ```text
//! cargo build --release -p benches --bin idle_rss
//! target/release/idle_rss [--unix N] [--ssh N]     # defaults: 1000 unix, 100 SSH
//! ```
//!
//! Unix: N connections to the daemon's socket (its `max_clients` raised to N + 10). SSH: N
//! `qemu+ssh://` connections through one testbed sshd to the same daemon. Each set is held
//! idle for 2 s (keepalive at its default), then RSS (`VmRSS`) is read; the figure is the
//! growth over a baseline taken with one connection already open (runtime, TLS/SSH crypto
//! set-up and first-use allocations are not per-connection costs), divided by N. The SSH set
//! runs after the unix set in the same process and may reuse its freed heap: `--unix 0` measures
//! SSH alone. Prints a markdown table and one JSON line.

#![allow(clippy::cast_precision_loss)] // KiB and connection counts far below 2^52.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use libvirt_remote::Client;
use libvirt_remote::client::ConnectOptions;
use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;
use testbed::libvirtd::Libvirtd;
use testbed::sshd::{Sshd, SshdOptions};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// (baseline KiB, after KiB, seconds to connect all) for `n` connections to `uri`.
async fn measure(uri: &str, n: usize) -> Result<(u64, u64, f64), String> {
    let open = || async {
        let c = Client::connect(uri, ConnectOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        c.call::<ConnectGetLibVersion>(&())
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(c)
    };
    let first = open().await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let base = rss_kib();
    let t = Instant::now();
    let mut all = Vec::with_capacity(n);
    for i in 0..n {
        all.push(open().await.map_err(|e| format!("connection {i}: {e}"))?);
    }
    let secs = t.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss_kib();
    for c in all.iter().chain([&first]) {
        if c.is_closed() {
            return Err(format!("a connection died while idle: {:?}", c.error()));
        }
    }
    for c in &all {
        c.close();
    }
    first.close();
    Ok((base, after, secs))
}

fn arg(name: &str, default: usize) -> usize {
    let a: Vec<String> = std::env::args().collect();
    a.iter()
        .position(|x| x == name)
        .and_then(|i| a.get(i + 1)?.parse().ok())
        .unwrap_or(default)
}

fn main() -> ExitCode {
    let (unix_n, ssh_n) = (arg("--unix", 1000), arg("--ssh", 100));
    // Two descriptors per unix connection (the socket and busy-poll's duplicate).
    let _ =
        nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, 20_000, 20_000);
    let d = match Libvirtd::builder()
        .config_line(format!("max_clients = {}", unix_n.max(ssh_n) + 10))
        .config_line(format!(
            "max_anonymous_clients = {}",
            unix_n.max(ssh_n) + 10
        ))
        .start()
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: private libvirtd: {e}");
            return ExitCode::FAILURE;
        }
    };
    let sshd = if ssh_n > 0 {
        match Sshd::start(&SshdOptions::default()) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("error: sshd: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at start: {}", load.trim());
    println!(
        "\n| transport | connections | RSS before / after (KiB) | per connection | connect time |"
    );
    println!("|---|---|---|---|---|");
    let mut json = Vec::new();
    let mut sets = vec![("unix", d.uri(), unix_n)];
    if let Some(s) = &sshd {
        sets.push(("ssh", s.qemu_uri(d.socket_path()), ssh_n));
    }
    for (name, uri, n) in sets {
        if n == 0 {
            continue;
        }
        match rt.block_on(measure(&uri, n)) {
            Ok((base, after, secs)) => {
                let per = after.saturating_sub(base) as f64 / n as f64;
                println!("| {name} | {n} | {base} / {after} | **{per:.1} KiB** | {secs:.1} s |");
                json.push(format!(
                    "\"{name}\":{{\"n\":{n},\"rss_before_kib\":{base},\"rss_after_kib\":{after},\"kib_per_conn\":{per:.1}}}"
                ));
            }
            Err(e) => {
                eprintln!("error: {name}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("\nload average at end: {}", load.trim());
    println!("{{{}}}", json.join(","));
    drop(rt);
    ExitCode::SUCCESS
}
