//! Running one client process (wall, CPU, output; peak RSS in a run of its own), and rounds
//! of two clients with the order alternating.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::Res;
use crate::compare::measure::{children_cpu, loadavg, proc_cpu};
use crate::compare::stats::{median, min_max};

/// One client process.
#[derive(Debug, Clone, Default)]
pub(crate) struct Run {
    /// Seconds from spawn to reaped.
    pub wall: f64,
    /// user+sys seconds of the process (and its children).
    pub cpu: f64,
    /// The daemon's user+sys seconds over the run (`NaN` when not asked).
    pub daemon_cpu: f64,
    pub stdout: Vec<u8>,
}

impl Run {
    /// `key: value` from the output.
    pub fn field(&self, key: &str) -> Res<f64> {
        String::from_utf8_lossy(&self.stdout)
            .lines()
            .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
            .ok_or_else(|| format!("no `{key}` in {:?}", String::from_utf8_lossy(&self.stdout)))
    }
}

/// A client command: program and arguments, run with `LC_ALL=C` and no
/// `LIBVIRT_DEFAULT_URI`.
#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    pub label: String,
    pub argv: Vec<String>,
}

impl Cmd {
    pub fn new(label: &str, prog: &Path, args: &[&str]) -> Self {
        Self {
            label: label.to_string(),
            argv: std::iter::once(prog.display().to_string())
                .chain(args.iter().map(|a| (*a).to_string()))
                .collect(),
        }
    }

    fn command(&self, wrap: &[&str]) -> Command {
        let mut all: Vec<&str> = wrap.to_vec();
        all.extend(self.argv.iter().map(String::as_str));
        let mut c = Command::new(all[0]);
        c.args(&all[1..])
            .env("LC_ALL", "C")
            .env_remove("LIBVIRT_DEFAULT_URI")
            .stdin(Stdio::null());
        c
    }

    /// Run to completion; `daemon`: (pid, ticks per second) whose CPU to read around it.
    pub fn run(&self, daemon: Option<(u32, f64)>) -> Res<Run> {
        let mut c = self.command(&[]);
        let d0 = daemon.map_or(f64::NAN, |(p, t)| proc_cpu(p, t));
        let cpu0 = children_cpu();
        let t = Instant::now();
        let out = c.output().map_err(|e| format!("{}: {e}", self.label))?;
        let wall = t.elapsed().as_secs_f64();
        let cpu = children_cpu() - cpu0;
        let daemon_cpu = daemon.map_or(f64::NAN, |(p, t)| proc_cpu(p, t)) - d0;
        if !out.status.success() {
            return Err(format!(
                "{} ({}) failed ({}): {}",
                self.label,
                self.argv.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Run {
            wall,
            cpu,
            daemon_cpu,
            stdout: out.stdout,
        })
    }

    /// Peak RSS of one more run, KiB (`/usr/bin/time %M`, i.e. `wait4`'s `ru_maxrss`); a run
    /// of its own so that the timed runs carry no wrapper.
    pub fn peak_rss(&self, work: &Path) -> Res<u64> {
        let f = work.join("time.out");
        let f_s = f.display().to_string();
        let out = self
            .command(&["/usr/bin/time", "-f", "%M", "-o", &f_s])
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("{}: {e}", self.label))?;
        if !out.status.success() {
            return Err(format!("{} under /usr/bin/time failed", self.label));
        }
        std::fs::read_to_string(&f)
            .ok()
            .and_then(|t| t.lines().last()?.trim().parse().ok())
            .ok_or_else(|| format!("no RSS for {}", self.label))
    }
}

/// Rounds of `a` and `b`, `a` first in even rounds; `check` sees each pair.
pub(crate) fn rounds(
    n: usize,
    a: &Cmd,
    b: &Cmd,
    daemon: Option<(u32, f64)>,
    mut check: impl FnMut(&Run, &Run) -> Res<()>,
) -> Res<(Vec<Run>, Vec<Run>)> {
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for i in 0..n {
        let (x, y) = if i % 2 == 0 {
            let x = a.run(daemon)?;
            (x, b.run(daemon)?)
        } else {
            let y = b.run(daemon)?;
            (a.run(daemon)?, y)
        };
        check(&x, &y)?;
        eprintln!(
            "   round {i}: {} {:.1} ms, {} {:.1} ms (load {})",
            a.label,
            x.wall * 1e3,
            b.label,
            y.wall * 1e3,
            loadavg()
        );
        ra.push(x);
        rb.push(y);
    }
    Ok((ra, rb))
}

/// `median (min–max)` of `v` with `fmt`.
pub(crate) fn spread(v: &[f64], fmt: impl Fn(f64) -> String) -> String {
    crate::compare::stats::spread(v, fmt)
}

/// Per-round ratios a ÷ b: "median× (min–max)".
pub(crate) fn ratio(a: &[f64], b: &[f64]) -> (f64, String) {
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    let m = median(&r);
    let (lo, hi) = min_max(&r);
    (m, format!("{m:.2}× ({lo:.2}–{hi:.2})"))
}

/// `RATIO: A vs B ms`, the medians of two clients' wall times, for a target's line.
pub(crate) fn vs_ms(ratio: &str, a: &[Run], b: &[Run]) -> String {
    format!(
        "{ratio}: {} vs {} ms",
        ms(median(&walls(a))),
        ms(median(&walls(b)))
    )
}

/// Milliseconds with one decimal.
pub(crate) fn ms(x: f64) -> String {
    format!("{:.1}", x * 1e3)
}

/// The walls of some runs.
pub(crate) fn walls(v: &[Run]) -> Vec<f64> {
    v.iter().map(|r| r.wall).collect()
}

/// A markdown row.
pub(crate) fn row(out: &mut String, cells: &[String]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

/// The `p`-quantile (0..=1) of `v`, nearest rank; `NaN` when empty.
pub(crate) fn quantile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_and_quantiles() {
        let (m, s) = ratio(&[1.0, 2.0, 3.0], &[2.0, 2.0, 2.0]);
        assert!((m - 1.0).abs() < 1e-12);
        assert_eq!(s, "1.00× (0.50–1.50)");
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert!((quantile(&mut v, 0.5) - 50.0).abs() < 1e-12);
        assert!((quantile(&mut v, 0.99) - 99.0).abs() < 1e-12);
        assert!(quantile(&mut [], 0.5).is_nan());
    }
}
