//! The headline figures at the last step's domain count: `lv list --all` and `lv domstats`
//! against virsh (wall time, byte-for-byte output, the daemon's CPU per run), and the
//! library's bulk stats against the C library's `getAllDomainStats` (calls/s, client CPU
//! per domain).

use std::fmt::Write as _;

use testbed::libvirtd::Libvirtd;

use super::growth::{pair, same_output};
use super::run::{Cmd, Run, ms, ratio, rounds, row, spread, vs_ms, walls};
use super::{Res, Scale};
use crate::compare::measure::cmd_line;
use crate::compare::stats::median;

fn daemon_ms(v: &[Run]) -> Vec<f64> {
    v.iter().map(|r| r.daemon_cpu).collect()
}

pub(crate) fn headline(s: &mut Scale, d: &Libvirtd) -> Res<()> {
    let n = s.o.domains.last().copied().unwrap_or(0);
    let uri = d.uri();
    let tick: f64 = cmd_line("getconf", &["CLK_TCK"]).parse().unwrap_or(100.0);
    let daemon = Some((d.pid(), tick));
    let mut json = serde_json::Map::new();
    for (section, args, target, limit) in [
        (
            "list",
            &["list", "--all"][..],
            "`lv list --all` ≤ 1/3 of virsh's wall time",
            1.0 / 3.0,
        ),
        (
            "domstats",
            &["domstats"][..],
            "`lv domstats` ≤ 1/1.5 of virsh's wall time",
            1.0 / 1.5,
        ),
    ] {
        if !s.o.wants(section) {
            continue;
        }
        s.section(&format!("`{}` on {n} domains", args.join(" ")));
        let (lv, virsh) = pair(s, &uri, args);
        // One warm-up pair (page cache, the daemon's first list).
        lv.run(None)?;
        virsh.run(None)?;
        let (a, b) = rounds(s.o.rounds, &lv, &virsh, daemon, same_output(section))?;
        let (r, rs) = ratio(&walls(&a), &walls(&b));
        let bytes = a[0].stdout.len();
        s.report
            .push_str("| client | wall ms | client CPU ms | daemon CPU ms |\n|---|---|---|---|\n");
        for (label, v) in [(&lv.label, &a), (&virsh.label, &b)] {
            let cpu: Vec<f64> = v.iter().map(|r| r.cpu).collect();
            row(
                &mut s.report,
                &[
                    format!("`{label}`"),
                    spread(&walls(v), ms),
                    spread(&cpu, ms),
                    spread(&daemon_ms(v), ms),
                ],
            );
        }
        let masked = if section == "domstats" {
            " (the `cpu.*` values aside: for a domain that is not running, libvirt 9.0 reports \
             the daemon's own CPU time there)"
        } else {
            ""
        };
        let _ = write!(
            s.report,
            "\nlv ÷ virsh wall time: **{rs}**; the outputs ({bytes} bytes) were identical in \
             every round{masked}.\n"
        );
        s.target(target, vs_ms(&rs, &a, &b), Some(r <= limit));
        json.insert(
            section.into(),
            serde_json::json!({
                "domains": n,
                "lv_wall_s": walls(&a),
                "virsh_wall_s": walls(&b),
                "lv_daemon_cpu_s": daemon_ms(&a),
                "virsh_daemon_cpu_s": daemon_ms(&b),
                "ratio": r,
            }),
        );
    }
    if s.o.wants("bulk") {
        for (i, groups) in s.o.bulk_stats.clone().into_iter().enumerate() {
            bulk(s, &uri, daemon, groups, i == 0, &mut json)?;
        }
    }
    s.json.insert("headline".into(), json.into());
    Ok(())
}

/// `lv bench-stats` against `stats.py` for the stats groups `groups`; `judged`: against the
/// target.
fn bulk(
    s: &mut Scale,
    uri: &str,
    daemon: Option<(u32, f64)>,
    groups: u32,
    judged: bool,
    json: &mut serde_json::Map<String, serde_json::Value>,
) -> Res<()> {
    let n = s.o.domains.last().copied().unwrap_or(0);
    s.section(&format!(
        "Bulk stats of {n} domains, groups `{groups}`, one connection"
    ));
    let calls = s.o.bulk_calls.to_string();
    let groups_s = groups.to_string();
    let ours = Cmd::new(
        "lv bench-stats",
        &s.lv,
        &[
            "-c",
            uri,
            "bench-stats",
            "--calls",
            &calls,
            "--stats",
            &groups_s,
        ],
    );
    let py = s.py("stats.py");
    let c = Cmd::new(
        "stats.py (C)",
        &s.o.python,
        &[&py.display().to_string(), uri, &calls, &groups_s],
    );
    let (a, b) = rounds(s.o.rounds, &ours, &c, daemon, |x, y| {
        let int = |r: &Run, k: &str| r.field(k).map(|v| v as u64);
        let (dx, dy) = (int(x, "domains:")?, int(y, "domains:")?);
        let (px, py) = (int(x, "params:")?, int(y, "params:")?);
        if dx == dy && px == py {
            Ok(())
        } else {
            Err(format!(
                "the clients saw different replies: {dx} vs {dy} domains, {px} vs {py} \
                 parameters"
            ))
        }
    })?;
    let f = |v: &[Run], k: &str| v.iter().map(|r| r.field(k)).collect::<Res<Vec<f64>>>();
    let (ra, rb) = (f(&a, "calls/s:")?, f(&b, "calls/s:")?);
    let doms = a[0].field("domains:")?;
    let params = a[0].field("params:")?;
    let n_calls = s.o.bulk_calls as f64;
    let per_dom = |v: &[Run]| -> Res<Vec<f64>> {
        Ok(f(v, "cpu_s:")?
            .iter()
            .map(|c| c / (n_calls * doms) * 1e6)
            .collect())
    };
    // The daemon's CPU over the whole run: the warm-up call too.
    let daemon_per = |v: &[Run]| -> Vec<f64> {
        v.iter()
            .map(|r| r.daemon_cpu / ((n_calls + 1.0) * doms) * 1e6)
            .collect()
    };
    let (r, rs) = ratio(&ra, &rb);
    let _ = write!(
        s.report,
        "{doms} domains, {params} typed parameters per reply, groups `{groups}` (0: all), \
         {calls} calls per run.\n\n| client | calls/s | client CPU µs per domain | daemon \
         CPU µs per domain (whole process run) |\n|---|---|---|---|\n"
    );
    let (ca, cb) = (per_dom(&a)?, per_dom(&b)?);
    for (label, rates, cpu, v) in [
        ("ours (`lv bench-stats`)", &ra, &ca, &a),
        ("C library (`getAllDomainStats`)", &rb, &cb, &b),
    ] {
        row(
            &mut s.report,
            &[
                label.to_string(),
                spread(rates, |x| format!("{x:.1}")),
                spread(cpu, |x| format!("{x:.2}")),
                spread(&daemon_per(v), |x| format!("{x:.2}")),
            ],
        );
    }
    let _ = write!(s.report, "\nours ÷ C library, calls/s: **{rs}**.\n");
    s.target(
        &format!("bulk stats (groups {groups}) ≥ 1.5× the C library's calls/s"),
        format!(
            "{rs}; client CPU per domain {:.2} vs {:.2} µs",
            median(&ca),
            median(&cb)
        ),
        judged.then_some(r >= 1.5),
    );
    json.insert(
        format!("bulk_{groups}"),
        serde_json::json!({
            "domains": doms, "params": params, "calls": s.o.bulk_calls,
            "ours_calls_s": ra, "c_calls_s": rb,
            "ours_cpu_us_per_domain": ca, "c_cpu_us_per_domain": cb,
            "ours_daemon_us_per_domain": daemon_per(&a),
            "c_daemon_us_per_domain": daemon_per(&b),
            "ratio": r,
        }),
    );
    Ok(())
}
