//! Calls/s of `get_lib_version`, sequential and concurrent on one connection: ours (busy-poll
//! at its default and off) vs the C library, and the floor (a minimal blocking client on our
//! core) in both modes; interleaved, with the daemon unpinned then pinned.

use std::fmt::Write as _;
use std::process::{Command, Stdio};

use super::Res;
use super::bench::{Bench, Client, Sample};
use super::json::{Calls, CallsMode, Num, Ordered, nums};
use super::measure::loadavg;
use super::stats::{f1, median, spread, thousands};

/// Per client and run: calls/s, client CPU µs/call, daemon CPU µs/call, box busy %, client
/// context switches per call, daemon context switches per call.
#[derive(Default)]
struct Series {
    rate: Vec<f64>,
    ccpu: Vec<f64>,
    dcpu: Vec<f64>,
    busy: Vec<f64>,
    csw: Vec<f64>,
    dcsw: Vec<f64>,
}

impl Bench {
    /// One calls run: (calls/s, whole-process sample).
    pub(super) fn calls_once(&self, c: Client, n: usize, conc: usize) -> Res<(f64, Sample)> {
        let (prog, args) = self.calls_cmd(c, n, conc);
        let s = self.run(&prog, &args)?;
        let rate = if n == 0 { 0.0 } else { s.field("calls/s:")? };
        Ok((rate, s))
    }

    /// Re-pin every daemon thread to `cpus` (`taskset -a`).
    pub(super) fn pin_daemon(&self, cpus: &str) -> Res<()> {
        let st = Command::new("taskset")
            .args(["-a", "-p", "-c", cpus, &self.daemon_pid.to_string()])
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("taskset: {e}"))?;
        if !st.success() {
            return Err(format!("taskset -a -p -c {cpus} failed ({st})"));
        }
        Ok(())
    }

    /// The key of a schedule's figures in the JSON report: `pinned` for CPU 0 alone, else
    /// `unpinned`.
    pub(super) fn schedule_key(cpus: &str) -> &'static str {
        if cpus == "0" { "pinned" } else { "unpinned" }
    }

    /// The schedules to measure: `--daemon-cpus` alone, else unpinned (every CPU: what
    /// users have) then pinned to CPU 0 (the testbed's default).
    pub(super) fn schedules(&self) -> Vec<(String, String)> {
        if let Some(c) = &self.o.daemon_cpus {
            return vec![(format!("daemon on {c}"), c.clone())];
        }
        let n = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let all = if n > 1 {
            format!("0-{}", n - 1)
        } else {
            "0".into()
        };
        vec![
            (format!("unpinned ({all})"), all),
            ("pinned (0)".into(), "0".into()),
        ]
    }

    pub(super) fn calls(&mut self) -> Res<()> {
        let n = self.o.calls;
        let seq = [
            Client::Ours,
            Client::OursNoSpin,
            Client::OursTwoWorkers,
            Client::C,
            Client::Floor,
            Client::FloorTokio,
        ];
        // The same clients, sequential and with calls in flight.
        let conc_clients = seq;
        eprintln!("== calls: warm-up");
        for &c in &seq {
            self.calls_once(c, 2000, 1)?;
        }
        for &c in &conc_clients {
            self.calls_once(c, 2000, self.o.threads)?;
        }
        // Fixed cost (start, connect, close) of each client: subtracted from its CPU.
        let mut fixed = Vec::new();
        for &c in &seq {
            let v: Vec<f64> = (0..3)
                .map(|_| self.calls_once(c, 0, 1).map(|r| r.1.cpu))
                .collect::<Res<_>>()?;
            fixed.push((c, median(&v)));
            eprintln!(
                "   fixed cost {}: {:.1} ms CPU",
                c.label(),
                median(&v) * 1e3
            );
        }
        let fixed_of = |c: Client| fixed.iter().find(|f| f.0 == c).map_or(0.0, |f| f.1);
        let _ = writeln!(
            self.report,
            "\n### Calls: `get_lib_version` on one connection, {} calls per run, {} runs \
             (interleaved)\n\n\
             | schedule | mode | client | calls/s | ÷ C | client CPU µs/call | ÷ floor CPU | \
             daemon CPU µs/call | csw/call client / daemon | box busy % |\n\
             |---|---|---|---|---|---|---|---|---|---|",
            thousands(n as f64),
            self.o.reps
        );
        let mut modes = Ordered::default();
        let mut vs_baseline = Vec::new();
        for (sched, cpus) in self.schedules() {
            self.pin_daemon(&cpus)?;
            for (mode, conc) in [("sequential", 1), ("concurrent", self.o.threads)] {
                let clients: &[Client] = if conc == 1 { &seq } else { &conc_clients };
                let mut series: Vec<Series> = clients.iter().map(|_| Series::default()).collect();
                for rep in 0..self.o.reps {
                    // Rotate the order so that no client always runs first.
                    for k in 0..clients.len() {
                        let i = (k + rep) % clients.len();
                        let c = clients[i];
                        let (r, sample) = self.calls_once(c, n, conc)?;
                        let per = |v: f64| v / n as f64;
                        let ccpu = per(sample.cpu - fixed_of(c)) * 1e6;
                        let dcpu = per(sample.daemon_cpu) * 1e6;
                        eprintln!(
                            "   {sched} {mode} x{conc} {}: {r:.0} calls/s, client {ccpu:.1} \
                             µs/call, daemon {dcpu:.1} µs/call, csw/call {:.2} / {:.2}, box \
                             busy {:.0}%, load {}",
                            c.label(),
                            per(sample.csw),
                            per(sample.daemon_csw),
                            sample.busy,
                            loadavg()
                        );
                        let row = &mut series[i];
                        row.rate.push(r);
                        row.ccpu.push(ccpu);
                        row.dcpu.push(dcpu);
                        row.busy.push(sample.busy);
                        row.csw.push(per(sample.csw));
                        row.dcsw.push(per(sample.daemon_csw));
                    }
                }
                let idx = |c: Client| clients.iter().position(|x| *x == c);
                let c_rate = idx(Client::C).map_or(f64::NAN, |i| median(&series[i].rate));
                let floor_cpu = idx(Client::Floor).map_or(f64::NAN, |i| median(&series[i].ccpu));
                for (i, c) in clients.iter().enumerate() {
                    let row = &series[i];
                    let _ = writeln!(
                        self.report,
                        "| {sched} | {mode} ({conc}) | {} | {} | {:.2}× | {} | {} | {} | {:.2} / \
                         {:.2} | {} |",
                        c.label(),
                        spread(&row.rate, thousands),
                        median(&row.rate) / c_rate,
                        f1(median(&row.ccpu)),
                        if floor_cpu.is_finite() {
                            format!("{:.1}×", median(&row.ccpu) / floor_cpu)
                        } else {
                            "—".into()
                        },
                        f1(median(&row.dcpu)),
                        median(&row.csw),
                        median(&row.dcsw),
                        thousands(median(&row.busy)),
                    );
                }
                let ours = idx(Client::Ours).expect("ours always runs");
                let off = idx(Client::OursNoSpin).expect("ours without busy-poll always runs");
                let ratio = median(&series[ours].rate) / c_rate;
                let goal = match (mode, cpus == "0") {
                    ("sequential", _) => 1.5,
                    (_, false) => 1.3,
                    (_, true) => 1.1,
                };
                self.target(
                    format!("calls {mode}, {sched} ≥ {goal}× C"),
                    format!("{ratio:.3}×"),
                    ratio >= goal,
                );
                if let Some(b) = idx(Client::OursTwoWorkers) {
                    let med = |i: usize, f: fn(&Series) -> &Vec<f64>| median(f(&series[i]));
                    vs_baseline.push(format!(
                        "* {sched}, {mode}: calls/s {:.2}× of 2 workers'; client CPU per call {} \
                         vs {} µs; client context switches per call {:.2} vs {:.2}",
                        med(ours, |s| &s.rate) / med(b, |s| &s.rate),
                        f1(med(ours, |s| &s.ccpu)),
                        f1(med(b, |s| &s.ccpu)),
                        med(ours, |s| &s.csw),
                        med(b, |s| &s.csw),
                    ));
                }
                let vs_off = median(&series[ours].rate) / median(&series[off].rate);
                self.target(
                    format!("calls {mode}, {sched}: busy-poll ≥ 1.0× busy-poll off"),
                    format!("{vs_off:.3}×"),
                    vs_off >= 1.0,
                );
                let cpu_goal = if conc == 1 { 8.0 } else { 6.0 };
                let cpu = median(&series[ours].ccpu);
                self.target(
                    format!("calls {mode}, {sched}: client CPU ≤ {cpu_goal} µs/call"),
                    format!("{cpu:.1} µs"),
                    cpu <= cpu_goal,
                );
                let mut more = Ordered::default();
                for (i, c) in clients.iter().enumerate() {
                    if !matches!(c, Client::Ours | Client::C) {
                        more.0
                            .push((format!("{}_calls_s", c.key()), nums(&series[i].rate)));
                        more.0
                            .push((format!("{}_client_cpu_us", c.key()), nums(&series[i].ccpu)));
                        more.0
                            .push((format!("{}_daemon_cpu_us", c.key()), nums(&series[i].dcpu)));
                    }
                    more.0
                        .push((format!("{}_csw_per_call", c.key()), nums(&series[i].csw)));
                    more.0.push((
                        format!("{}_daemon_csw_per_call", c.key()),
                        nums(&series[i].dcsw),
                    ));
                }
                let cidx = idx(Client::C).expect("C always runs");
                modes.0.push((
                    format!("{mode}_{}", Self::schedule_key(&cpus)),
                    CallsMode {
                        concurrency: conc,
                        ours_calls_s: nums(&series[ours].rate),
                        c_calls_s: nums(&series[cidx].rate),
                        ours_client_cpu_us: nums(&series[ours].ccpu),
                        c_client_cpu_us: nums(&series[cidx].ccpu),
                        ours_daemon_cpu_us: nums(&series[ours].dcpu),
                        c_daemon_cpu_us: nums(&series[cidx].dcpu),
                        ours_box_busy_pct: nums(&series[ours].busy),
                        c_box_busy_pct: nums(&series[cidx].busy),
                        ratio_ours_c: Num(ratio),
                        more,
                    },
                ));
            }
        }
        if !vs_baseline.is_empty() {
            let _ = writeln!(
                self.report,
                "\nOurs (lv: one runtime worker) against ours with 2 runtime workers \
                 (`--worker-threads 2`, what a program on a multi-thread runtime has; medians, \
                 same run):\n\n{}",
                vs_baseline.join("\n")
            );
        }
        // Back to where the rest of the run expects the daemon.
        self.pin_daemon(self.o.daemon_cpus.as_deref().unwrap_or("0"))?;
        let _ = writeln!(
            self.report,
            "\nClient CPU excludes each client's fixed cost (start, connect, close; from runs \
             with 0 calls: {}). Daemon CPU is libvirtd's utime+stime delta over the run (10 ms \
             ticks); context switches are the client's (rusage of the child, all threads) and \
             the daemon's (its threads' /proc status), per call. The floor is `floor_calls`: \
             one blocking write and read per call on our sans-io core, no runtime (in flight: \
             one thread blocking in `read`, a new call for each reply, written together); the \
             floor on tokio's reactor is the same thread waiting in a current-thread runtime's \
             epoll instead (one `block_on` per read or write: no task, no hand-off).",
            fixed
                .iter()
                .map(|(c, v)| format!("{} {:.1} ms", c.label(), v * 1e3))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.calls = Some(Calls { n, modes });
        Ok(())
    }
}
