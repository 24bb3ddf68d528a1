//! Upload and download of the volume by every client, rotating order; MB/s over the
//! transfer proper, client CPU, peak RSS, daemon CPU.

use std::fmt::Write as _;
use std::fs;

use super::Res;
use super::bench::{Bench, Client, Program, Sample};
use super::files::same_content;
use super::json::{Num, Ordered, TransferRuns, Transfers, nums};
use super::measure::loadavg;
use super::stats::{MB, f1, f2, median, spread, thousands};

impl Bench {
    /// Seconds of the transfer proper, without process start and connect: virsh's own
    /// `--timing`, the python helper's own timer, and for `lv` (no timer of its own) the wall
    /// time minus its fixed cost (start + connect + lookups: a few ms, 20 ms on a busy box).
    fn net_secs(c: Client, s: &Sample, fixed_wall: f64) -> Res<f64> {
        match c.program() {
            Program::Lv => Ok(s.wall - fixed_wall),
            Program::Virsh => s
                .stdout
                .lines()
                .find_map(|l| {
                    l.trim()
                        .strip_prefix("(Time: ")?
                        .strip_suffix(" ms)")?
                        .parse::<f64>()
                        .ok()
                })
                .map(|ms| ms / 1e3)
                .ok_or_else(|| format!("no `(Time: … ms)` in virsh output: {:?}", s.stdout)),
            Program::Python => s.field("secs:"),
        }
    }

    /// Uploads and downloads in each schedule ([`Bench::schedules`]: unpinned then pinned,
    /// or `--daemon-cpus` alone).
    pub(super) fn transfers(&mut self) -> Res<()> {
        let _ = writeln!(
            self.report,
            "\n### Transfers: {} MiB volume, non-sparse, {} runs per client (rotating order)\n\n\
             | schedule | op | client | MB/s (transfer) | MB/s (whole process) | client CPU s \
             (user+sys) | peak RSS MiB | daemon CPU s | box CPU busy % | ours ÷ this |\n\
             |---|---|---|---|---|---|---|---|---|---|",
            self.o.mib, self.o.reps
        );
        let mut runs = Ordered::default();
        let mut notes = Vec::new();
        for (sched, cpus) in self.schedules() {
            self.pin_daemon(&cpus)?;
            notes.push(self.transfers_in(&sched, Self::schedule_key(&cpus), &mut runs)?);
        }
        self.pin_daemon(self.o.daemon_cpus.as_deref().unwrap_or("0"))?;
        let _ = writeln!(
            self.report,
            "\nMB/s (transfer) excludes process start and connect: virsh's own `--timing`, the \
             python helper's own timer (vol.upload/download → finish), and for ours the wall \
             time minus its fixed cost. Fixed cost = median of 3 connect-and-lookup runs of the \
             same client (ours `lv vol-list`, virsh `vol-info`, python `transfer.py noop`, with \
             event loop). MB = 10^6 bytes. Client CPU and peak RSS are of the whole client \
             process (`getrusage` / `wait4`), start-up included.\n\n{}",
            notes.join("\n")
        );
        self.transfers = Some(Transfers {
            mib: self.o.mib,
            runs,
        });
        Ok(())
    }

    /// One schedule's transfers: rows of the report, its runs (keys end in `_{key}`) and
    /// targets; returns its line of notes (fixed costs, load).
    fn transfers_in(
        &mut self,
        sched: &str,
        key: &str,
        runs: &mut Ordered<TransferRuns>,
    ) -> Res<String> {
        let bytes = self.o.mib << 20;
        let clients = [Client::Ours, Client::Virsh, Client::C, Client::CEv];
        let nc = clients.len();
        let vol_file = self.pool_dir.join(super::bench::VOL);
        let dst = self.work.join("download.out");
        eprintln!("== transfers, {sched}: warm-up (virsh upload + download, untimed)");
        let (prog, args) = self.transfer_cmd(Client::Virsh, "vol-upload", &self.src);
        self.run(&prog, &args)?;
        let (prog, args) = self.transfer_cmd(Client::Virsh, "vol-download", &dst);
        self.run(&prog, &args)?;
        if !same_content(&self.src, &dst)? {
            return Err("warm-up download differs from the source".into());
        }
        fs::remove_file(&dst).map_err(|e| e.to_string())?;

        let mut fixed = Vec::new();
        for c in clients {
            let v: Vec<Sample> = (0..3)
                .map(|_| {
                    let (prog, args) = self.fixed_cmd(c);
                    self.run(&prog, &args)
                })
                .collect::<Res<_>>()?;
            let wall = median(&v.iter().map(|s| s.wall).collect::<Vec<_>>());
            let cpu = median(&v.iter().map(|s| s.cpu).collect::<Vec<_>>());
            let rss = median(&v.iter().map(|s| s.rss_kib as f64).collect::<Vec<_>>());
            eprintln!(
                "   fixed cost {}: {:.1} ms wall, {:.1} ms CPU, {:.1} MiB RSS",
                c.label(),
                wall * 1e3,
                cpu * 1e3,
                rss / 1024.0
            );
            fixed.push((wall, cpu, rss));
        }

        // [op][client] -> (sample, net seconds)
        let mut res: Vec<Vec<Vec<(Sample, f64)>>> = vec![vec![Vec::new(); nc]; 2];
        let mut load = Vec::new();
        for rep in 0..self.o.reps {
            for k in 0..nc {
                let i = (rep + k) % nc;
                let c = clients[i];
                for (oi, op) in ["vol-upload", "vol-download"].iter().enumerate() {
                    let file = if oi == 0 { &self.src } else { &dst };
                    let (prog, args) = self.transfer_cmd(c, op, file);
                    let s = self.run(&prog, &args)?;
                    let net = Self::net_secs(c, &s, fixed[i].0)?;
                    eprintln!(
                        "   {sched} rep {rep} {op} {}: {:.0} MB/s net ({:.3} s, whole process {:.3} s), \
                         CPU {:.2} s, RSS {:.1} MiB, daemon CPU {:.2} s, load {}",
                        c.label(),
                        bytes as f64 / net / MB,
                        net,
                        s.wall,
                        s.cpu,
                        s.rss_kib as f64 / 1024.0,
                        s.daemon_cpu,
                        loadavg()
                    );
                    // Verify outside the timed run.
                    let copy = if oi == 0 { &vol_file } else { &dst };
                    if !same_content(&self.src, copy)? {
                        return Err(format!("{op} by {}: content differs", c.label()));
                    }
                    if oi == 1 {
                        fs::remove_file(&dst).map_err(|e| e.to_string())?;
                    }
                    res[oi][i].push((s, net));
                }
            }
            load.push(loadavg());
        }

        let mut net_med = vec![vec![0.0f64; nc]; 2];
        let mut rss_med = vec![vec![0.0f64; nc]; 2];
        for (oi, op) in ["upload", "download"].iter().enumerate() {
            for i in 0..nc {
                let v = &res[oi][i];
                net_med[oi][i] = median(
                    &v.iter()
                        .map(|(_, n)| bytes as f64 / n / MB)
                        .collect::<Vec<_>>(),
                );
                rss_med[oi][i] =
                    median(&v.iter().map(|(s, _)| s.rss_kib as f64).collect::<Vec<_>>());
            }
            for (i, c) in clients.iter().enumerate() {
                let v = &res[oi][i];
                let net: Vec<f64> = v.iter().map(|(_, n)| bytes as f64 / n / MB).collect();
                let gross: Vec<f64> = v.iter().map(|(s, _)| bytes as f64 / s.wall / MB).collect();
                let cpu: Vec<f64> = v.iter().map(|(s, _)| s.cpu).collect();
                let rss: Vec<f64> = v.iter().map(|(s, _)| s.rss_kib as f64 / 1024.0).collect();
                let dcpu: Vec<f64> = v.iter().map(|(s, _)| s.daemon_cpu).collect();
                let busy: Vec<f64> = v.iter().map(|(s, _)| s.busy).collect();
                let ratio = net_med[oi][0] / net_med[oi][i];
                let _ = writeln!(
                    self.report,
                    "| {sched} | {op} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    c.label(),
                    spread(&net, thousands),
                    spread(&gross, thousands),
                    spread(&cpu, f2),
                    spread(&rss, f1),
                    f2(median(&dcpu)),
                    thousands(median(&busy)),
                    if i == 0 {
                        "—".into()
                    } else {
                        format!("**{ratio:.2}×**")
                    }
                );
                runs.0.push((
                    format!("{op}_{}_{key}", c.key()),
                    TransferRuns {
                        net_mb_s: nums(&net),
                        gross_mb_s: nums(&gross),
                        cpu_s: nums(&cpu),
                        rss_mib: nums(&rss),
                        daemon_cpu_s: nums(&dcpu),
                        box_busy_pct: nums(&busy),
                        fixed_wall_s: Num(fixed[i].0),
                        fixed_cpu_s: Num(fixed[i].1),
                        fixed_rss_mib: Num(fixed[i].2 / 1024.0),
                    },
                ));
            }
            let r = net_med[oi][0] / net_med[oi][2];
            self.target(
                format!("{op}, {sched} ≥ 1.1× C"),
                format!("{r:.3}×"),
                r >= 1.1,
            );
            let r = net_med[oi][0] / net_med[oi][3];
            self.target(
                format!("(extra) {op}, {sched} ≥ 1.1× C with its event loop thread"),
                format!("{r:.3}×"),
                r >= 1.1,
            );
        }
        let up_rss = rss_med[0][0] / 1024.0;
        self.target(
            format!("upload peak RSS, {sched} ≤ 8 MiB"),
            format!("{up_rss:.1} MiB"),
            up_rss <= 8.0,
        );
        Ok(format!(
            "* {sched}: fixed cost ours {:.0} ms, virsh {:.0} ms, python {:.0} ms, with event \
             loop {:.0} ms (peak RSS {:.1} / {:.1} / {:.1} / {:.1} MiB); load average after each \
             rep: {}.",
            fixed[0].0 * 1e3,
            fixed[1].0 * 1e3,
            fixed[2].0 * 1e3,
            fixed[3].0 * 1e3,
            fixed[0].2 / 1024.0,
            fixed[1].2 / 1024.0,
            fixed[2].2 / 1024.0,
            fixed[3].2 / 1024.0,
            load.join(" | ")
        ))
    }
}
