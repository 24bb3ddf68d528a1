//! `fanin`: one process holding many connections, for the `scale` harness (benches/src/scale/):
//! our side of the event fan-in and of the idle-connection growth runs. The C library's side is
//! `benches/compare/fanin.py`, with the same arguments and output.
//!
//! ```text
//! fanin [--subscribe] [--log FILE] [--hold-ms N] PER URI...
//! ```
//!
//! Opens `PER` connections to each `URI` (one after the other, on one tokio runtime with its
//! default workers, as an operator process has) and, with `--subscribe`, subscribes each to
//! every domain's lifecycle events. Then prints `ready: <seconds to connect and subscribe>`
//! and waits: for stdin to close, or `--hold-ms` milliseconds. Each event is stamped with
//! `CLOCK_MONOTONIC` on arrival; at the end the events go to `--log` as
//! `uri_index conn_index t_ns event name` lines, and stdout gets:
//!
//! ```text
//! events: N
//! cpu_s: <user+sys seconds of this process after `ready`>
//! hwm_kib: <peak RSS>
//! ```

#![allow(clippy::cast_precision_loss)]

use std::io::{Read as _, Write as _};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libvirt_remote::client::ConnectOptions;
use libvirt_remote::proto::events::event_id;
use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;
use libvirt_remote::{Client, Connect};
use nix::time::{ClockId, clock_gettime};

/// One delivered event: (uri index, connection index, arrival ns, event code, domain name).
type Event = (u16, u32, i64, i32, String);

fn now_ns(clock: ClockId) -> i64 {
    let t = clock_gettime(clock).expect("clock_gettime");
    t.tv_sec() * 1_000_000_000 + t.tv_nsec()
}

struct Opts {
    subscribe: bool,
    log: Option<std::path::PathBuf>,
    hold: Option<Duration>,
    per: usize,
    uris: Vec<String>,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        subscribe: false,
        log: None,
        hold: None,
        per: 0,
        uris: Vec::new(),
    };
    let mut rest = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--subscribe" => o.subscribe = true,
            "--log" => o.log = Some(args.next().ok_or("--log needs a file")?.into()),
            "--hold-ms" => {
                let ms: u64 = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--hold-ms needs milliseconds")?;
                o.hold = Some(Duration::from_millis(ms));
            }
            _ => rest.push(a),
        }
    }
    let mut rest = rest.into_iter();
    o.per = rest
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or("usage: fanin [--subscribe] [--log FILE] [--hold-ms N] PER URI...")?;
    o.uris = rest.collect();
    if o.uris.is_empty() {
        return Err("no URI".into());
    }
    Ok(o)
}

fn hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

async fn run(o: Opts) -> Result<(), String> {
    let events: Arc<Mutex<Vec<Event>>> = Arc::new(Mutex::new(Vec::with_capacity(1 << 16)));
    let t = Instant::now();
    let mut conns = Vec::new();
    let mut tasks = Vec::new();
    for (ui, uri) in o.uris.iter().enumerate() {
        for ci in 0..o.per {
            let c = Client::connect(uri, ConnectOptions::default())
                .await
                .map_err(|e| format!("{uri} connection {ci}: {e}"))?;
            c.call::<ConnectGetLibVersion>(&())
                .await
                .map_err(|e| e.to_string())?;
            if o.subscribe {
                let mut sub = Connect::from(c.clone())
                    .subscribe::<event_id::Lifecycle>()
                    .await
                    .map_err(|e| format!("{uri} subscribe: {e}"))?;
                let events = events.clone();
                let ci = ci as u32;
                let ui = ui as u16;
                tasks.push(tokio::spawn(async move {
                    while let Some(ev) = sub.next().await {
                        let at = now_ns(ClockId::CLOCK_MONOTONIC);
                        let name = ev.dom.name.to_string_lossy().into_owned();
                        events
                            .lock()
                            .expect("events lock")
                            .push((ui, ci, at, ev.event.0, name));
                    }
                }));
            }
            conns.push(c);
        }
    }
    println!("ready: {:.6}", t.elapsed().as_secs_f64());
    let _ = std::io::stdout().flush();
    let cpu0 = now_ns(ClockId::CLOCK_PROCESS_CPUTIME_ID);
    match o.hold {
        Some(d) => tokio::time::sleep(d).await,
        None => {
            tokio::task::spawn_blocking(|| {
                let _ = std::io::stdin().read_to_end(&mut Vec::new());
            })
            .await
            .map_err(|e| e.to_string())?;
        }
    }
    let cpu = (now_ns(ClockId::CLOCK_PROCESS_CPUTIME_ID) - cpu0) as f64 / 1e9;
    for c in &conns {
        if c.is_closed() {
            return Err(format!("a connection died: {:?}", c.error()));
        }
    }
    let events = std::mem::take(&mut *events.lock().expect("events lock"));
    if let Some(path) = &o.log {
        let mut text = String::with_capacity(events.len() * 48);
        for (ui, ci, at, ev, name) in &events {
            use std::fmt::Write as _;
            let _ = writeln!(text, "{ui} {ci} {at} {ev} {name}");
        }
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!("events: {}", events.len());
    println!("cpu_s: {cpu:.6}");
    println!("hwm_kib: {}", hwm_kib());
    for c in &conns {
        c.close();
    }
    Ok(())
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // Two descriptors per unix connection (the socket and busy-poll's duplicate).
    let _ =
        nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, 20_000, 20_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match rt.block_on(run(o)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
