//! `compare --counts`: what a sequential `get_lib_version` costs the client in figures that
//! do not move with the load of the box — user-space instructions (valgrind's callgrind),
//! syscalls (`strace -c -f`) and context switches (`perf stat -e context-switches`) — for ours,
//! the C library and the blocking floor client, on one daemon.
//!
//! Each client runs twice per tool, with `--count-calls LO,HI` calls; the difference divided by
//! `HI - LO` is the cost of one call, with start-up, connect and close cancelled out. The C
//! library runs inside python3: its figure has the interpreter's own `for` loop subtracted
//! (the same script with an empty loop body, `calls.py … empty`), and is also given for the
//! objects outside the interpreter only (libvirt, glib, `GnuTLS`, libc … — libc's share includes
//! the interpreter's own allocations, so neither number is the C library alone; they bracket it).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use super::Res;
use super::bench::{Bench, Client, Sample};
use super::json::{Num, Ordered};
use super::measure::loadavg;
use super::stats::{f1, f2, median, thousands};

/// The clients counted, in report order.
const CLIENTS: [Client; 5] = [
    Client::Ours,
    Client::OursNoSpin,
    Client::OursDriverWrite,
    Client::C,
    Client::Floor,
];

/// Syscalls reported in their own column (the rest are in the total).
const SYSCALL_GROUPS: [(&str, &[&str]); 4] = [
    ("futex", &["futex"]),
    (
        "wait",
        &["epoll_wait", "epoll_pwait", "poll", "ppoll", "select"],
    ),
    ("read", &["read", "recvfrom", "recvmsg", "readv"]),
    ("write", &["write", "writev", "sendto", "sendmsg"]),
];

/// Per-call figures of one client, one entry per repetition.
#[derive(Default, Debug, serde::Serialize)]
pub(super) struct Counted {
    pub instructions: Vec<Num>,
    /// The C library: instructions outside the python interpreter's objects.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instructions_outside_python: Vec<Num>,
    pub syscalls: Vec<Num>,
    /// `futex`, `wait`, `read`, `write` (see [`SYSCALL_GROUPS`]), and `read_errors` (EAGAIN).
    #[serde(flatten)]
    pub groups: Ordered<Vec<Num>>,
    pub context_switches: Vec<Num>,
    pub cpu_migrations: Vec<Num>,
    pub daemon_context_switches: Vec<Num>,
}

/// The JSON section.
#[derive(Debug, serde::Serialize)]
pub(super) struct Counts {
    pub lo: usize,
    pub hi: usize,
    /// The python interpreter's empty loop, instructions per iteration.
    pub python_empty_loop: Vec<Num>,
    #[serde(flatten)]
    pub clients: Ordered<Counted>,
}

/// Instructions (`Ir`) per ELF object, from a callgrind output file. Self cost only: the
/// line after a `calls=` line is the call's inclusive cost and is skipped.
pub(super) fn callgrind_objects(text: &str) -> Vec<(String, u64)> {
    let mut names: Vec<(String, String)> = Vec::new();
    let mut totals: Vec<(String, u64)> = Vec::new();
    let mut current = String::new();
    let mut skip_next = false;
    let resolve = |names: &mut Vec<(String, String)>, spec: &str| -> String {
        // `(id) name` defines, `(id)` refers, a bare name is a name.
        let spec = spec.trim();
        if let Some(rest) = spec.strip_prefix('(')
            && let Some((id, name)) = rest.split_once(')')
        {
            let name = name.trim();
            if name.is_empty() {
                return names
                    .iter()
                    .find(|(i, _)| i == id)
                    .map_or_else(|| format!("({id})"), |(_, n)| n.clone());
            }
            names.push((id.to_string(), name.to_string()));
            return name.to_string();
        }
        spec.to_string()
    };
    for line in text.lines() {
        if let Some(spec) = line.strip_prefix("ob=") {
            current = resolve(&mut names, spec);
            continue;
        }
        if let Some(spec) = line.strip_prefix("cob=") {
            // Defines a name for later `ob=(id)` references; not the current object.
            let _ = resolve(&mut names, spec);
            continue;
        }
        if line.starts_with("calls=") {
            skip_next = true;
            continue;
        }
        let first = line.chars().next().unwrap_or(' ');
        if !(first.is_ascii_digit() || matches!(first, '+' | '-' | '*')) {
            continue;
        }
        if std::mem::take(&mut skip_next) {
            continue;
        }
        let ir = line
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        match totals.iter_mut().find(|(o, _)| *o == current) {
            Some((_, n)) => *n += ir,
            None => totals.push((current.clone(), ir)),
        }
    }
    totals
}

/// An object of the python interpreter (its binary or libpython).
fn is_python(object: &str) -> bool {
    let base = object.rsplit('/').next().unwrap_or(object);
    base.starts_with("libpython") || base.starts_with("python3")
}

/// Calls and errors per syscall name, from `strace -c` output.
pub(super) fn strace_table(text: &str) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 || f[0].starts_with('%') || f[0].starts_with('-') {
            continue;
        }
        let Some(name) = f.last() else { continue };
        if *name == "total" {
            continue;
        }
        let (Ok(calls), errors) = (
            f[3].parse::<u64>(),
            if f.len() >= 6 {
                f[4].parse::<u64>().unwrap_or(0)
            } else {
                0
            },
        ) else {
            continue;
        };
        out.push(((*name).to_string(), calls, errors));
    }
    out
}

/// A counter from `perf stat -x,` output.
pub(super) fn perf_value(text: &str, event: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(',').collect();
        (f.len() > 2 && f[2].starts_with(event))
            .then(|| f[0].parse().ok())
            .flatten()
    })
}

/// One client's figures for `n` calls.
#[derive(Default, Clone)]
struct Raw {
    ir: f64,
    ir_outside_python: f64,
    syscalls: f64,
    groups: Vec<f64>,
    read_errors: f64,
    csw: f64,
    migrations: f64,
    daemon_csw: f64,
}

impl Bench {
    /// `prog args` for `c` with `n` sequential calls; `empty`: the C library's script with an
    /// empty loop body.
    fn count_cmd(&self, c: Client, n: usize, empty: bool) -> (std::path::PathBuf, Vec<OsString>) {
        let (prog, mut args) = self.calls_cmd(c, n, 1);
        if empty {
            args.push("empty".into());
        }
        (prog, args)
    }

    fn count_once(&self, c: Client, n: usize, empty: bool) -> Res<Raw> {
        let (prog, args) = self.count_cmd(c, n, empty);
        let out = self.work.join("counts.out");
        let _ = fs::remove_file(&out);
        let mut raw = Raw::default();

        // Instructions.
        let vg: Vec<OsString> = vec!["valgrind".into(), "--tool=callgrind".into(), "-q".into(), {
            let mut a = OsString::from("--callgrind-out-file=");
            a.push(&out);
            a
        }];
        self.run_wrapped(&vg, &prog, &args)?;
        let text = fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let objects = callgrind_objects(&text);
        raw.ir = objects.iter().map(|o| o.1 as f64).sum();
        raw.ir_outside_python = objects
            .iter()
            .filter(|o| !is_python(&o.0))
            .map(|o| o.1 as f64)
            .sum();
        let _ = fs::remove_file(&out);

        // Syscalls.
        let st: Vec<OsString> = vec![
            "strace".into(),
            "-c".into(),
            "-f".into(),
            "-o".into(),
            out.clone().into(),
        ];
        self.run_wrapped(&st, &prog, &args)?;
        let text = fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let table = strace_table(&text);
        raw.syscalls = table.iter().map(|t| t.1 as f64).sum();
        raw.groups = SYSCALL_GROUPS
            .iter()
            .map(|(_, names)| {
                table
                    .iter()
                    .filter(|t| names.contains(&t.0.as_str()))
                    .map(|t| t.1 as f64)
                    .sum()
            })
            .collect();
        raw.read_errors = table
            .iter()
            .filter(|t| SYSCALL_GROUPS[2].1.contains(&t.0.as_str()))
            .map(|t| t.2 as f64)
            .sum();
        let _ = fs::remove_file(&out);

        // Context switches.
        let ps: Vec<OsString> = vec![
            "perf".into(),
            "stat".into(),
            "-x,".into(),
            "-e".into(),
            "context-switches,cpu-migrations".into(),
            "-o".into(),
            out.clone().into(),
            "--".into(),
        ];
        let s: Sample = self.run_wrapped(&ps, &prog, &args)?;
        let text = fs::read_to_string(&out).unwrap_or_default();
        raw.csw = perf_value(&text, "context-switches").unwrap_or(f64::NAN);
        raw.migrations = perf_value(&text, "cpu-migrations").unwrap_or(f64::NAN);
        raw.daemon_csw = s.daemon_csw;
        let _ = fs::remove_file(&out);
        Ok(raw)
    }

    /// Per call: `(hi - lo) / (HI - LO)`, field by field.
    fn per_call(lo: &Raw, hi: &Raw, n: f64) -> Raw {
        let d = |a: f64, b: f64| (b - a) / n;
        Raw {
            ir: d(lo.ir, hi.ir),
            ir_outside_python: d(lo.ir_outside_python, hi.ir_outside_python),
            syscalls: d(lo.syscalls, hi.syscalls),
            groups: lo
                .groups
                .iter()
                .zip(&hi.groups)
                .map(|(a, b)| d(*a, *b))
                .collect(),
            read_errors: d(lo.read_errors, hi.read_errors),
            csw: d(lo.csw, hi.csw),
            migrations: d(lo.migrations, hi.migrations),
            daemon_csw: d(lo.daemon_csw, hi.daemon_csw),
        }
    }

    /// The `--counts` measurement (sequential calls only), with the daemon on `--daemon-cpus`
    /// or unpinned.
    pub(super) fn counts(&mut self) -> Res<()> {
        let (lo, hi) = self.o.count_calls;
        let span = (hi - lo) as f64;
        let cpus = self.o.daemon_cpus.clone().unwrap_or_else(|| {
            let k = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
            if k > 1 {
                format!("0-{}", k - 1)
            } else {
                "0".into()
            }
        });
        self.pin_daemon(&cpus)?;
        eprintln!("== counts: warm-up");
        for c in CLIENTS {
            let (prog, args) = self.calls_cmd(c, 500, 1);
            self.run(&prog, &args)?;
        }
        let mut empty = Vec::new();
        let mut rows: Vec<Vec<Raw>> = vec![Vec::new(); CLIENTS.len()];
        for rep in 0..self.o.count_reps {
            let e_lo = self.count_once(Client::C, lo, true)?;
            let e_hi = self.count_once(Client::C, hi, true)?;
            let looped = Self::per_call(&e_lo, &e_hi, span);
            eprintln!(
                "   rep {rep}: python empty loop {:.0} instructions/iteration",
                looped.ir
            );
            empty.push(looped.ir);
            for (i, c) in CLIENTS.into_iter().enumerate() {
                let at_lo = self.count_once(c, lo, false)?;
                let at_hi = self.count_once(c, hi, false)?;
                let mut p = Self::per_call(&at_lo, &at_hi, span);
                if c == Client::C {
                    p.ir -= looped.ir;
                }
                eprintln!(
                    "   rep {rep}: {}: {:.0} instructions/call, {:.2} syscalls/call ({:.2} futex), \
                     {:.2} context switches/call, load {}",
                    c.label(),
                    p.ir,
                    p.syscalls,
                    p.groups[0],
                    p.csw,
                    loadavg()
                );
                rows[i].push(p);
            }
        }
        self.pin_daemon(self.o.daemon_cpus.as_deref().unwrap_or("0"))?;

        let floor_ir = median(
            &rows[CLIENTS.len() - 1]
                .iter()
                .map(|r| r.ir)
                .collect::<Vec<_>>(),
        );
        let _ = writeln!(
            self.report,
            "\n### Counts per sequential `get_lib_version` (daemon on CPUs {cpus}; {lo} and {hi} \
             calls per process, the difference ÷ {}; {} repetitions, median (min–max))\n\n\
             | client | instructions/call | ÷ floor | syscalls/call | futex | epoll_wait/poll | \
             read/recv (EAGAIN) | write/send | context switches/call (client / daemon) | \
             migrations/call |\n|---|---|---|---|---|---|---|---|---|---|",
            hi - lo,
            self.o.count_reps
        );
        let mut json = Ordered::default();
        for (i, c) in CLIENTS.into_iter().enumerate() {
            let r = &rows[i];
            let col = |f: &dyn Fn(&Raw) -> f64| r.iter().map(f).collect::<Vec<_>>();
            let ir = col(&|x| x.ir);
            let instr = if c == Client::C {
                format!(
                    "{} (outside python: {})",
                    super::stats::spread(&ir, thousands),
                    super::stats::spread(&col(&|x| x.ir_outside_python), thousands)
                )
            } else {
                super::stats::spread(&ir, thousands)
            };
            let g = |k: usize| f2(median(&col(&|x| x.groups[k])));
            let _ = writeln!(
                self.report,
                "| {} | {instr} | {:.2}× | {} | {} | {} | {} ({}) | {} | {} / {} | {} |",
                c.label(),
                median(&ir) / floor_ir,
                f2(median(&col(&|x| x.syscalls))),
                g(0),
                g(1),
                g(2),
                f2(median(&col(&|x| x.read_errors))),
                g(3),
                f2(median(&col(&|x| x.csw))),
                f2(median(&col(&|x| x.daemon_csw))),
                f2(median(&col(&|x| x.migrations))),
            );
            let nums = |v: Vec<f64>| v.into_iter().map(Num).collect::<Vec<_>>();
            let mut groups = Ordered::default();
            for (k, (name, _)) in SYSCALL_GROUPS.iter().enumerate() {
                groups
                    .0
                    .push(((*name).to_string(), nums(col(&|x| x.groups[k]))));
            }
            groups
                .0
                .push(("read_errors".into(), nums(col(&|x| x.read_errors))));
            json.0.push((
                c.key().to_string(),
                Counted {
                    instructions: nums(ir),
                    instructions_outside_python: if c == Client::C {
                        nums(col(&|x| x.ir_outside_python))
                    } else {
                        Vec::new()
                    },
                    syscalls: nums(col(&|x| x.syscalls)),
                    groups,
                    context_switches: nums(col(&|x| x.csw)),
                    cpu_migrations: nums(col(&|x| x.migrations)),
                    daemon_context_switches: nums(col(&|x| x.daemon_csw)),
                },
            ));
        }
        let _ = writeln!(
            self.report,
            "\nInstructions: user space only, all threads (`valgrind --tool=callgrind`); the C \
             library's row has python's empty loop ({} instructions per iteration) subtracted, \
             and still includes libvirt.py's wrapper method. Syscalls: `strace -c -f`. Context \
             switches and migrations: `perf stat -e context-switches,cpu-migrations` on the \
             client (all threads, voluntary and not); the daemon's from its threads' \
             /proc status. Counts under strace and valgrind are of slowed-down processes: a \
             busy-poll's EAGAIN reads and the wake-ups depend on timing, instructions of the \
             clients without busy-poll do not.",
            f1(median(&empty))
        );
        self.counts = Some(Counts {
            lo,
            hi,
            python_empty_loop: empty.into_iter().map(Num).collect(),
            clients: json,
        });
        Ok(())
    }
}

/// Whether the counting tools are installed (`--counts` refuses to start otherwise).
pub(super) fn tools_missing() -> Vec<&'static str> {
    ["valgrind", "strace", "perf"]
        .into_iter()
        .filter(|t| {
            !std::env::var_os("PATH")
                .is_some_and(|p| std::env::split_paths(&p).any(|d| Path::new(&d).join(t).is_file()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_self_cost_per_object_skips_inclusive_call_costs() {
        let text = "\
events: Ir
ob=(1) /usr/bin/python3.11
fl=(1) x.c
fn=(1) main
16 100
+2 50
cob=(2) /usr/lib/libvirt.so.0
cfi=(2) y.c
cfn=(2) virConnectGetLibVersion
calls=3 10
16 9999
ob=(2)
fl=(2)
fn=(2)
10 7
* 3
ob=(1)
fn=(1)
-1 5
totals: 165
";
        let o = callgrind_objects(text);
        assert_eq!(
            o,
            vec![
                ("/usr/bin/python3.11".to_string(), 155),
                ("/usr/lib/libvirt.so.0".to_string(), 10)
            ]
        );
        assert!(is_python("/usr/bin/python3.11"));
        assert!(is_python("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"));
        assert!(!is_python("/usr/lib/x86_64-linux-gnu/libvirt.so.0.9000.0"));
    }

    #[test]
    fn strace_summary_with_and_without_errors() {
        let text = "\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 40.00    0.004000           2      2000       700 read
 30.00    0.003000           1      2001           futex
------ ----------- ----------- --------- --------- ----------------
100.00    0.007000                  4001       700 total
";
        assert_eq!(
            strace_table(text),
            vec![("read".into(), 2000, 700), ("futex".into(), 2001, 0)]
        );
    }

    #[test]
    fn perf_csv_values() {
        let text = "# started on x\n\n4012,,context-switches,1000,100.00,,\n7,,cpu-migrations,1000,100.00,,\n";
        assert_eq!(perf_value(text, "context-switches"), Some(4012.0));
        assert_eq!(perf_value(text, "cpu-migrations"), Some(7.0));
        assert_eq!(perf_value(text, "cycles"), None);
    }
}
