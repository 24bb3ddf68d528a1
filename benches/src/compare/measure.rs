//! What the harness reads off the box: CPU time of processes, how busy the box is, RSS,
//! host facts, and UTC times for the report.

use std::fs;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use nix::sys::resource::{UsageWho, getrusage};

/// user+sys seconds of all waited-for descendants of this process.
pub(crate) fn children_cpu() -> f64 {
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage(RUSAGE_CHILDREN)");
    let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    s(u.user_time()) + s(u.system_time())
}

/// Context switches (voluntary + involuntary) of all waited-for descendants of this process.
pub(crate) fn children_csw() -> f64 {
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage(RUSAGE_CHILDREN)");
    (u.voluntary_context_switches() + u.involuntary_context_switches()) as f64
}

/// Context switches (voluntary + involuntary) of a live process's live threads.
pub(crate) fn proc_csw(pid: u32) -> f64 {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return f64::NAN;
    };
    let mut n = 0.0;
    for t in tasks.flatten() {
        let s = fs::read_to_string(t.path().join("status")).unwrap_or_default();
        for l in s.lines() {
            if let Some(v) = l
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                n += v.trim().parse::<f64>().unwrap_or(0.0);
            }
        }
    }
    n
}

/// user+sys seconds of a live process (all its threads, dead ones included).
pub(crate) fn proc_cpu(pid: u32, tick: f64) -> f64 {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return f64::NAN;
    };
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return f64::NAN;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the command name: state is field 3, utime 14, stime 15.
    let get = |i: usize| {
        f.get(i - 3)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (get(14) + get(15)) / tick
}

/// (busy, total) jiffies of the whole box, from the first line of /proc/stat.
pub(crate) fn box_jiffies() -> (u64, u64) {
    let s = fs::read_to_string("/proc/stat").unwrap_or_default();
    let v: Vec<u64> = s
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

/// Percent of the box busy between two [`box_jiffies`] readings.
pub(crate) fn busy_pct(a: (u64, u64), b: (u64, u64)) -> f64 {
    let total = b.1.saturating_sub(a.1);
    if total == 0 {
        return f64::NAN;
    }
    100.0 * b.0.saturating_sub(a.0) as f64 / total as f64
}

/// The 1, 5 and 15 minute load averages (the one reading, shared with the tests).
pub(crate) use testbed::loadavg;

/// `VmRSS` and `VmHWM` of a live process, KiB.
pub(crate) fn rss_kib(pid: u32) -> Option<(u64, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// A command's trimmed stdout, empty if it cannot run.
pub(crate) fn cmd_line(prog: &str, args: &[&str]) -> String {
    Command::new(prog)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// `git describe --always --dirty` of the tree this binary was built from.
pub(crate) fn tree() -> String {
    cmd_line(
        "git",
        &[
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "describe",
            "--always",
            "--dirty",
        ],
    )
}

/// The CPU's model name from /proc/cpuinfo.
pub(crate) fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_default()
}

/// Now, as [`fmt_utc`] writes it.
pub(crate) fn utc_now() -> String {
    fmt_utc(SystemTime::now())
}

/// `2026-09-17 15:15:00 UTC` (humantime's RFC 3339, written for people).
pub(crate) fn fmt_utc(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t.max(UNIX_EPOCH))
        .to_string()
        .replacen('T', " ", 1)
        .replace('Z', " UTC")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn utc_as_the_report_writes_it() {
        let t = UNIX_EPOCH + Duration::from_secs(1_789_658_100);
        assert_eq!(fmt_utc(t), "2026-09-17 15:15:00 UTC");
        assert_eq!(fmt_utc(UNIX_EPOCH), "1970-01-01 00:00:00 UTC");
    }
}
