//! Growth: the domains defined in steps, `list --all` and `domstats` at each step (ours and
//! virsh's: wall, CPU, peak RSS); and 10…1,000 idle connections in one process (ours and
//! the C library's: time to open, peak RSS).

use std::fmt::Write as _;
use std::time::Instant;

use testbed::libvirtd::Libvirtd;

use super::run::{Cmd, Run, ms, ratio, rounds, row, spread, walls};
use super::{Res, Scale, domains};
use crate::compare::stats::median;

/// One growth step's figures (medians; RSS in KiB).
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Step {
    pub domains: usize,
    pub define_s: f64,
    pub lv_list_s: f64,
    pub virsh_list_s: f64,
    pub lv_domstats_s: f64,
    pub virsh_domstats_s: f64,
    pub lv_list_cpu_s: f64,
    pub virsh_list_cpu_s: f64,
    pub lv_domstats_cpu_s: f64,
    pub virsh_domstats_cpu_s: f64,
    pub lv_list_rss_kib: u64,
    pub virsh_list_rss_kib: u64,
    pub lv_domstats_rss_kib: u64,
    pub virsh_domstats_rss_kib: u64,
}

/// One idle-connections step (RSS in KiB).
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct IdleStep {
    pub conns: usize,
    pub ours_open_s: f64,
    pub c_open_s: f64,
    pub ours_hwm_kib: u64,
    pub c_hwm_kib: u64,
    pub ours_cpu_s: f64,
    pub c_cpu_s: f64,
}

/// `lv ARGS` and `virsh ARGS` on `uri`.
pub(crate) fn pair(s: &Scale, uri: &str, args: &[&str]) -> (Cmd, Cmd) {
    let mut a = vec!["-c", uri];
    a.extend_from_slice(args);
    let what = args.join(" ");
    (
        Cmd::new(&format!("lv {what}"), &s.lv, &a),
        Cmd::new(&format!("virsh {what}"), "/usr/bin/virsh".as_ref(), &a),
    )
}

/// Both outputs the same, byte for byte (else both are kept in the temp dir, for `diff`);
/// for `domstats`, after [`mask_daemon_cpu`].
pub(crate) fn same_output(what: &str) -> impl Fn(&Run, &Run) -> Res<()> {
    let dir = std::env::temp_dir();
    let mask = what.starts_with("domstats");
    let what = format!("scale-{}", what.replace(' ', "_"));
    move |a: &Run, b: &Run| {
        let same = if mask {
            mask_daemon_cpu(&a.stdout) == mask_daemon_cpu(&b.stdout)
        } else {
            a.stdout == b.stdout
        };
        if same {
            return Ok(());
        }
        let (fa, fb) = (
            dir.join(format!("{what}.lv")),
            dir.join(format!("{what}.virsh")),
        );
        let _ = std::fs::write(&fa, &a.stdout);
        let _ = std::fs::write(&fb, &b.stdout);
        Err(format!(
            "lv's output differs from virsh's: diff {} {}",
            fa.display(),
            fb.display()
        ))
    }
}

/// `domstats` output with the values of `cpu.*` lines cut: for a domain that is not running,
/// libvirt 9.0's qemu driver reports its own process's CPU times there (it reads the stats of
/// pid 0, i.e. itself), which move between two runs.
pub(crate) fn mask_daemon_cpu(out: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(out.len());
    for line in out.split_inclusive(|&b| b == b'\n') {
        match (
            line.starts_with(b"  cpu."),
            line.iter().position(|&b| b == b'='),
        ) {
            (true, Some(eq)) => {
                v.extend_from_slice(&line[..=eq]);
                v.extend_from_slice(b"N\n");
            }
            _ => v.extend_from_slice(line),
        }
    }
    v
}

fn cpus(v: &[Run]) -> Vec<f64> {
    v.iter().map(|r| r.cpu).collect()
}

/// Define the domains step by step; at each step (with `growth` wanted) measure.
pub(crate) fn domains_and_growth(
    s: &mut Scale,
    rt: &tokio::runtime::Runtime,
    d: &Libvirtd,
) -> Res<()> {
    let uri = d.uri();
    let kind = d.domain_type();
    let mut have = 0;
    let steps = s.o.domains.clone();
    if s.o.wants("growth") {
        s.section("Growth: domains");
        s.report.push_str(
            "| domains | define (library, 20 in flight) | `lv list --all` ms | `virsh list --all` ms | \
             ratio | `lv domstats` ms | `virsh domstats` ms | ratio | CPU ms lv / virsh (list; domstats) | \
             peak RSS MiB lv / virsh (list; domstats) |\n|---|---|---|---|---|---|---|---|---|---|\n",
        );
    }
    for &n in &steps {
        let t = Instant::now();
        if n > have {
            eprintln!("== defining domains {have}..{n}");
            rt.block_on(domains::define_range(&uri, kind, have, n))?;
            have = n;
        }
        let define_s = t.elapsed().as_secs_f64();
        if !s.o.wants("growth") {
            continue;
        }
        eprintln!("   {n} domains, defined at {:.0}/s", n as f64 / define_s);
        let (lv_l, vi_l) = pair(s, &uri, &["list", "--all"]);
        let (lv_d, vi_d) = pair(s, &uri, &["domstats"]);
        let r = s.o.growth_rounds;
        let (a, b) = rounds(r, &lv_l, &vi_l, None, same_output("list"))?;
        let (c, e) = rounds(r, &lv_d, &vi_d, None, same_output("domstats"))?;
        let work = s.work.path().to_path_buf();
        let step = Step {
            domains: n,
            define_s,
            lv_list_s: median(&walls(&a)),
            virsh_list_s: median(&walls(&b)),
            lv_domstats_s: median(&walls(&c)),
            virsh_domstats_s: median(&walls(&e)),
            lv_list_cpu_s: median(&cpus(&a)),
            virsh_list_cpu_s: median(&cpus(&b)),
            lv_domstats_cpu_s: median(&cpus(&c)),
            virsh_domstats_cpu_s: median(&cpus(&e)),
            lv_list_rss_kib: lv_l.peak_rss(&work)?,
            virsh_list_rss_kib: vi_l.peak_rss(&work)?,
            lv_domstats_rss_kib: lv_d.peak_rss(&work)?,
            virsh_domstats_rss_kib: vi_d.peak_rss(&work)?,
        };
        let mib = |k: u64| format!("{:.1}", k as f64 / 1024.0);
        row(
            &mut s.report,
            &[
                n.to_string(),
                format!("{:.1} s ({:.0}/s)", define_s, n as f64 / define_s),
                spread(&walls(&a), ms),
                spread(&walls(&b), ms),
                ratio(&walls(&a), &walls(&b)).1,
                spread(&walls(&c), ms),
                spread(&walls(&e), ms),
                ratio(&walls(&c), &walls(&e)).1,
                format!(
                    "{} / {}; {} / {}",
                    ms(step.lv_list_cpu_s),
                    ms(step.virsh_list_cpu_s),
                    ms(step.lv_domstats_cpu_s),
                    ms(step.virsh_domstats_cpu_s)
                ),
                format!(
                    "{} / {}; {} / {}",
                    mib(step.lv_list_rss_kib),
                    mib(step.virsh_list_rss_kib),
                    mib(step.lv_domstats_rss_kib),
                    mib(step.virsh_domstats_rss_kib)
                ),
            ],
        );
        s.growth.push(step);
    }
    if s.growth.len() >= 2 {
        let (first, last) = (&s.growth[0], &s.growth[s.growth.len() - 1]);
        let per = |a: f64, b: f64| (b - a) / (last.domains - first.domains) as f64 * 1e6;
        let _ = write!(
            s.report,
            "\nPer added domain ({} → {}): lv list {:.1} µs, virsh list {:.1} µs; lv domstats \
             {:.1} µs, virsh domstats {:.1} µs of wall time; lv list {:.2} KiB, lv domstats \
             {:.2} KiB of peak RSS.\n",
            first.domains,
            last.domains,
            per(first.lv_list_s, last.lv_list_s),
            per(first.virsh_list_s, last.virsh_list_s),
            per(first.lv_domstats_s, last.lv_domstats_s),
            per(first.virsh_domstats_s, last.virsh_domstats_s),
            (last.lv_list_rss_kib as f64 - first.lv_list_rss_kib as f64)
                / (last.domains - first.domains) as f64,
            (last.lv_domstats_rss_kib as f64 - first.lv_domstats_rss_kib as f64)
                / (last.domains - first.domains) as f64,
        );
        s.json.insert(
            "growth".into(),
            serde_json::to_value(&s.growth).map_err(|e| e.to_string())?,
        );
    }
    Ok(())
}

/// `fanin --hold-ms 1000 K URI` (ours) and `fanin.py` (the C library) for each K.
pub(crate) fn idle(s: &mut Scale, d: &Libvirtd) -> Res<()> {
    s.section("Growth: idle connections in one process");
    s.report.push_str(
        "| connections | open + 1 call each, s: ours / C | peak RSS MiB: ours / C | per connection KiB: ours / C | CPU s (held 1 s): ours / C |\n|---|---|---|---|---|\n",
    );
    let uri = d.uri();
    let fanin = s.lv.with_file_name("fanin");
    let fanin_py = s.py("fanin.py");
    let mut base: Option<(u64, u64)> = None;
    for (i, &k) in s.o.idle.clone().iter().enumerate() {
        let ks = k.to_string();
        let ours = Cmd::new(
            "fanin (ours)",
            &fanin,
            &["--hold-ms", "1000", &ks, uri.as_str()],
        );
        let c = Cmd::new(
            "fanin.py (C)",
            &s.o.python,
            &[
                &fanin_py.display().to_string(),
                "--hold-ms",
                "1000",
                &ks,
                uri.as_str(),
            ],
        );
        let (a, b) = if i % 2 == 0 {
            let a = ours.run(None)?;
            (a, c.run(None)?)
        } else {
            let b = c.run(None)?;
            (ours.run(None)?, b)
        };
        let step = IdleStep {
            conns: k,
            ours_open_s: a.field("ready:")?,
            c_open_s: b.field("ready:")?,
            ours_hwm_kib: a.field("hwm_kib:")? as u64,
            c_hwm_kib: b.field("hwm_kib:")? as u64,
            ours_cpu_s: a.field("cpu_s:")?,
            c_cpu_s: b.field("cpu_s:")?,
        };
        eprintln!(
            "   {k} idle connections: ours {:.2} s {} KiB, C {:.2} s {} KiB",
            step.ours_open_s, step.ours_hwm_kib, step.c_open_s, step.c_hwm_kib
        );
        // Per connection: the growth over the first (smallest) step.
        let (bo, bc) = *base.get_or_insert((step.ours_hwm_kib, step.c_hwm_kib));
        let per = |now: u64, b: u64| {
            if k > s.o.idle[0] {
                format!("{:.1}", (now as f64 - b as f64) / (k - s.o.idle[0]) as f64)
            } else {
                "—".into()
            }
        };
        row(
            &mut s.report,
            &[
                k.to_string(),
                format!("{:.3} / {:.3}", step.ours_open_s, step.c_open_s),
                format!(
                    "{:.1} / {:.1}",
                    step.ours_hwm_kib as f64 / 1024.0,
                    step.c_hwm_kib as f64 / 1024.0
                ),
                format!(
                    "{} / {}",
                    per(step.ours_hwm_kib, bo),
                    per(step.c_hwm_kib, bc)
                ),
                format!("{:.3} / {:.3}", step.ours_cpu_s, step.c_cpu_s),
            ],
        );
        s.idle.push(step);
    }
    s.json.insert(
        "idle".into(),
        serde_json::to_value(&s.idle).map_err(|e| e.to_string())?,
    );
    Ok(())
}
