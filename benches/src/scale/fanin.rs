//! Event fan-in: one subscriber process (ours: `fanin`; the C library's: `fanin.py` with
//! libvirt's default event loop) holding `--event-conns` connections to each of
//! `--event-daemons` daemons, each subscribed to every domain's lifecycle events, while this
//! process defines and then undefines `--event-domains` domains spread over the daemons (one
//! connection and one call at a time per daemon, through our library).
//!
//! Emission time: the daemon queues a lifecycle event in the same API call whose reply this
//! process then reads, and its main loop writes both (event dispatch and replies run on that
//! one thread), so the moment the reply arrives here (`CLOCK_MONOTONIC`, the clock the
//! subscribers stamp arrivals with) stands for the emission. A latency is arrival − that
//! moment: it can be slightly negative when a subscriber reads its copy before this process
//! reads the reply.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libvirt_remote::prelude::*;
use nix::time::{ClockId, clock_gettime};

use super::run::{quantile, row};
use super::{Res, Scale, daemon, domains};
use crate::compare::measure::loadavg;
use crate::compare::stats::median;

/// (daemon index, domain name, event code 0 = defined / 1 = undefined) → reply time, ns.
type Emitted = HashMap<(u16, String, i32), i64>;

fn now_ns() -> i64 {
    let t = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("clock_gettime");
    t.tv_sec() * 1_000_000_000 + t.tv_nsec()
}

/// Define, then undefine, domains `i` with `i % daemons == index` on `uri`, one call at a time.
async fn churn(uri: String, index: usize, daemons: usize, n: usize, kind: &str) -> Res<Emitted> {
    let c = Connect::open(&uri).await.map_err(|e| e.to_string())?;
    let mine: Vec<String> = (0..n)
        .filter(|i| i % daemons == index)
        .map(domains::name)
        .collect();
    let mut out = Emitted::new();
    let mut handles = Vec::new();
    for name in &mine {
        let dom = c
            .define_domain_xml(&domains::xml(kind, name))
            .await
            .map_err(|e| format!("defining {name}: {e}"))?;
        out.insert((index as u16, name.clone(), 0), now_ns());
        handles.push(dom);
    }
    for dom in handles {
        dom.undefine()
            .await
            .map_err(|e| format!("undefining {}: {e}", dom.name()))?;
        out.insert((index as u16, dom.name().into_owned(), 1), now_ns());
    }
    c.close();
    Ok(out)
}

/// What one subscriber run found.
struct Found {
    delivered: usize,
    expected: usize,
    missing: usize,
    duplicates: usize,
    /// Latencies, µs.
    lat: Vec<f64>,
    cpu_s: f64,
    churn_s: f64,
    hwm_kib: u64,
}

fn one(
    s: &Scale,
    rt: &tokio::runtime::Runtime,
    ours: bool,
    uris: &[String],
    kind: &'static str,
) -> Res<Found> {
    let log = s
        .work
        .path()
        .join(if ours { "events.ours" } else { "events.c" });
    let per = s.o.event_conns.to_string();
    let log_s = log.display().to_string();
    let mut cmd = if ours {
        Command::new(s.lv.with_file_name("fanin"))
    } else {
        let mut c = Command::new(&s.o.python);
        c.arg(s.py("fanin.py"));
        c
    };
    cmd.args(["--subscribe", "--log", &log_s, &per])
        .args(uris)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("subscriber: {e}"))?;
    let mut out = BufReader::new(child.stdout.take().ok_or("stdout")?);
    let mut line = String::new();
    out.read_line(&mut line).map_err(|e| e.to_string())?;
    if !line.starts_with("ready:") {
        let _ = child.kill();
        return Err(format!("subscriber said {line:?}"));
    }
    let t = Instant::now();
    let n = s.o.event_domains;
    let daemons = uris.len();
    let emitted: Vec<Res<Emitted>> = rt.block_on(futures::future::join_all(
        uris.iter()
            .enumerate()
            .map(|(i, u)| churn(u.clone(), i, daemons, n, kind)),
    ));
    let churn_s = t.elapsed().as_secs_f64();
    let mut all = Emitted::new();
    for e in emitted {
        all.extend(e?);
    }
    // Late deliveries still count; then the subscriber stops and reports.
    std::thread::sleep(Duration::from_secs(3));
    drop(child.stdin.take());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).map_err(|e| e.to_string())?;
    let st = child.wait().map_err(|e| e.to_string())?;
    if !st.success() {
        return Err(format!("subscriber failed ({st})"));
    }
    let field = |k: &str| -> Res<f64> {
        rest.lines()
            .find_map(|l| l.strip_prefix(k)?.trim().parse().ok())
            .ok_or_else(|| format!("no {k} in {rest:?}"))
    };
    let text = std::fs::read_to_string(&log).map_err(|e| e.to_string())?;
    let mut seen: HashMap<(u16, u32, String, i32), usize> = HashMap::new();
    let mut lat = Vec::new();
    for l in text.lines() {
        let f: Vec<&str> = l.splitn(5, ' ').collect();
        let [ui, ci, at, ev, name] = f[..] else {
            return Err(format!("bad event line {l:?}"));
        };
        let parse = |v: &str| v.parse::<i64>().map_err(|e| format!("{l:?}: {e}"));
        let (ui, ci, at, ev) = (
            parse(ui)? as u16,
            parse(ci)? as u32,
            parse(at)?,
            parse(ev)? as i32,
        );
        *seen.entry((ui, ci, name.to_string(), ev)).or_default() += 1;
        if let Some(t0) = all.get(&(ui, name.to_string(), ev)) {
            lat.push((at - t0) as f64 / 1e3);
        }
    }
    let conns = s.o.event_conns;
    let expected = all.len() * conns;
    let mut missing = 0;
    for (ui, name, ev) in all.keys() {
        for ci in 0..conns as u32 {
            if !seen.contains_key(&(*ui, ci, name.clone(), *ev)) {
                missing += 1;
            }
        }
    }
    let duplicates = seen.values().map(|c| c - 1).sum();
    Ok(Found {
        delivered: text.lines().count(),
        expected,
        missing,
        duplicates,
        lat,
        cpu_s: field("cpu_s:")?,
        churn_s,
        hwm_kib: field("hwm_kib:")? as u64,
    })
}

pub(crate) fn events(s: &mut Scale, rt: &tokio::runtime::Runtime) -> Res<()> {
    let nd = s.o.event_daemons;
    s.section(&format!(
        "Event fan-in: {} connections ({nd} daemons × {}) in one process, {} domains defined \
         and undefined",
        nd * s.o.event_conns,
        s.o.event_conns,
        s.o.event_domains
    ));
    let ds: Vec<_> = (0..nd).map(|_| daemon(false)).collect::<Res<_>>()?;
    let uris: Vec<String> = ds.iter().map(testbed::libvirtd::Libvirtd::uri).collect();
    let kind = ds[0].domain_type();
    s.report.push_str(
        "| round | client | delivered / expected | missing | duplicates | latency p50 / p99 ms | \
         client CPU µs per event | define+undefine s | peak RSS MiB | load |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut json = Vec::new();
    let (mut p50s, mut p99s, mut cpus) = ([vec![], vec![]], [vec![], vec![]], [vec![], vec![]]);
    let mut all_once = true;
    for round in 0..s.o.event_rounds {
        let order = if round % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for ours in order {
            eprintln!(
                "   round {round}: {} (load {})",
                if ours { "ours" } else { "C library" },
                loadavg()
            );
            let mut f = one(s, rt, ours, &uris, kind)?;
            let p50 = quantile(&mut f.lat, 0.5) / 1e3;
            let p99 = quantile(&mut f.lat, 0.99) / 1e3;
            let cpu_us = f.cpu_s / f.delivered.max(1) as f64 * 1e6;
            let k = usize::from(!ours);
            p50s[k].push(p50);
            p99s[k].push(p99);
            cpus[k].push(cpu_us);
            all_once &= !ours || (f.missing == 0 && f.duplicates == 0);
            row(
                &mut s.report,
                &[
                    round.to_string(),
                    if ours {
                        "ours (`fanin`)"
                    } else {
                        "C library (`fanin.py`)"
                    }
                    .into(),
                    format!("{} / {}", f.delivered, f.expected),
                    f.missing.to_string(),
                    f.duplicates.to_string(),
                    format!("{p50:.2} / {p99:.2}"),
                    format!("{cpu_us:.1}"),
                    format!("{:.1}", f.churn_s),
                    format!("{:.1}", f.hwm_kib as f64 / 1024.0),
                    loadavg(),
                ],
            );
            json.push(serde_json::json!({
                "round": round, "ours": ours, "delivered": f.delivered, "expected": f.expected,
                "missing": f.missing, "duplicates": f.duplicates, "p50_ms": p50, "p99_ms": p99,
                "cpu_us_per_event": cpu_us, "churn_s": f.churn_s, "hwm_kib": f.hwm_kib,
            }));
        }
    }
    let (o, c) = (median(&cpus[0]), median(&cpus[1]));
    let _ = write!(
        s.report,
        "\nMedians over the rounds: p50 {:.2} vs {:.2} ms, p99 {:.2} vs {:.2} ms, client CPU \
         {o:.1} vs {c:.1} µs per event (ours vs the C library).\n",
        median(&p50s[0]),
        median(&p50s[1]),
        median(&p99s[0]),
        median(&p99s[1])
    );
    s.target(
        "fan-in: every event delivered once (ours)",
        if all_once {
            "yes, every round".into()
        } else {
            "events missing or duplicated".into()
        },
        Some(all_once),
    );
    s.target(
        "fan-in: client CPU per event, ours ÷ C",
        format!("{:.2}× ({o:.1} vs {c:.1} µs)", o / c),
        None,
    );
    s.target(
        "fan-in: p99 latency, ours ÷ C",
        format!(
            "{:.2}× ({:.2} vs {:.2} ms)",
            median(&p99s[0]) / median(&p99s[1]),
            median(&p99s[0]),
            median(&p99s[1])
        ),
        None,
    );
    s.json.insert("events".into(), json.into());
    drop(ds);
    Ok(())
}
