//! Calls/s of `get_lib_version`, sequential and concurrent on one connection: ours vs the C
//! library, interleaved.

use std::fmt::Write as _;

use super::Res;
use super::bench::{Bench, Client, Sample};
use super::json::{Calls, CallsMode, Num, Ordered, nums};
use super::measure::loadavg;
use super::stats::{f1, median, spread, thousands};

impl Bench {
    /// One calls run: (calls/s, whole-process sample, daemon CPU s, box busy %).
    fn calls_once(&self, c: Client, n: usize, conc: usize) -> Res<(f64, Sample, f64, f64)> {
        let (prog, args) = self.calls_cmd(c, n, conc);
        let s = self.run(&prog, &args)?;
        let rate = if n == 0 { 0.0 } else { s.field("calls/s:")? };
        let (daemon, busy) = (s.daemon_cpu, s.busy);
        Ok((rate, s, daemon, busy))
    }

    pub(super) fn calls(&mut self) -> Res<()> {
        let n = self.o.calls;
        eprintln!("== calls: warm-up");
        for c in [Client::Ours, Client::C] {
            self.calls_once(c, 2000, 1)?;
            self.calls_once(c, 2000, self.o.threads)?;
        }
        // Fixed cost (start, connect, close) of each client: subtracted from its CPU.
        let mut base = [(Client::Ours, 0.0), (Client::C, 0.0)];
        for (c, cpu) in &mut base {
            let v: Vec<f64> = (0..3)
                .map(|_| self.calls_once(*c, 0, 1).map(|r| r.1.cpu))
                .collect::<Res<_>>()?;
            *cpu = median(&v);
            eprintln!("   fixed cost {}: {:.1} ms CPU", c.label(), *cpu * 1e3);
        }
        let _ = writeln!(
            self.report,
            "\n### Calls: `get_lib_version` on one connection, {} calls per run, {} runs \
             (interleaved)\n\n\
             | mode | ours calls/s | C library calls/s | ours/C | client CPU µs/call ours / C | \
             daemon CPU µs/call ours / C | box CPU busy % ours / C |\n\
             |---|---|---|---|---|---|---|",
            thousands(n as f64),
            self.o.reps
        );
        let mut modes = Ordered::default();
        for (mode, conc) in [("sequential", 1), ("concurrent", self.o.threads)] {
            let mut rate = [Vec::new(), Vec::new()];
            let mut ccpu = [Vec::new(), Vec::new()];
            let mut dcpu = [Vec::new(), Vec::new()];
            let mut busy = [Vec::new(), Vec::new()];
            for rep in 0..self.o.reps {
                let order = if rep % 2 == 0 { [0, 1] } else { [1, 0] };
                for i in order {
                    let (c, fixed) = base[i];
                    let (r, sample, dcpu_run, b) = self.calls_once(c, n, conc)?;
                    eprintln!(
                        "   {mode} x{conc} {}: {r:.0} calls/s, client {:.1} µs/call, daemon \
                         {:.1} µs/call, box busy {b:.0}%, load {}",
                        c.label(),
                        (sample.cpu - fixed) / n as f64 * 1e6,
                        dcpu_run / n as f64 * 1e6,
                        loadavg()
                    );
                    rate[i].push(r);
                    ccpu[i].push((sample.cpu - fixed) / n as f64 * 1e6);
                    dcpu[i].push(dcpu_run / n as f64 * 1e6);
                    busy[i].push(b);
                }
            }
            let ratio = median(&rate[0]) / median(&rate[1]);
            let _ = writeln!(
                self.report,
                "| {mode} ({conc} {}) | {} | {} | **{:.2}×** | {} / {} | {} / {} | {} / {} |",
                if conc == 1 { "task" } else { "tasks/threads" },
                spread(&rate[0], thousands),
                spread(&rate[1], thousands),
                ratio,
                f1(median(&ccpu[0])),
                f1(median(&ccpu[1])),
                f1(median(&dcpu[0])),
                f1(median(&dcpu[1])),
                thousands(median(&busy[0])),
                thousands(median(&busy[1])),
            );
            self.target(
                format!("calls {mode} ≥ 1.0× C"),
                format!("{ratio:.3}×"),
                ratio >= 1.0,
            );
            modes.0.push((
                mode.to_string(),
                CallsMode {
                    concurrency: conc,
                    ours_calls_s: nums(&rate[0]),
                    c_calls_s: nums(&rate[1]),
                    ours_client_cpu_us: nums(&ccpu[0]),
                    c_client_cpu_us: nums(&ccpu[1]),
                    ours_daemon_cpu_us: nums(&dcpu[0]),
                    c_daemon_cpu_us: nums(&dcpu[1]),
                    ours_box_busy_pct: nums(&busy[0]),
                    c_box_busy_pct: nums(&busy[1]),
                    ratio_ours_c: Num(ratio),
                },
            ));
        }
        let _ = writeln!(
            self.report,
            "\nClient CPU excludes each client's fixed cost (start, connect, close: ours {:.1} ms, \
             C/python {:.1} ms, from runs with 0 calls). Daemon CPU is libvirtd's utime+stime \
             delta over the run (10 ms ticks). The daemon runs on CPU {}.",
            base[0].1 * 1e3,
            base[1].1 * 1e3,
            self.o
                .daemon_cpus
                .as_deref()
                .unwrap_or("0 (pinned by the testbed)")
        );
        self.calls = Some(Calls { n, modes });
        Ok(())
    }
}
