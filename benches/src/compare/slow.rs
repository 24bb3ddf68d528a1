//! Download into a FIFO drained at `--slow-rate-mb`: the client's RSS while it runs.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::stat::Mode;

use super::Res;
use super::bench::{Bench, Client};
use super::json::{Num, Slow};
use super::measure::rss_kib;
use super::stats::{MB, f1, thousands};

/// Slow-sink runs stop early (and say so) if a client grows beyond this.
const RSS_CAP_KIB: u64 = 4 << 20;

struct SlowResult {
    /// (seconds since the FIFO opened, `VmRSS` KiB, `VmHWM` KiB)
    series: Vec<(f64, u64, u64)>,
    read: u64,
    capped: bool,
    /// Set when the client exited before it was killed.
    ended: Option<String>,
}

impl Bench {
    /// Download into a FIFO drained at `slow_rate`; RSS of the client while it runs.
    fn slow_once(&self, c: Client) -> Res<SlowResult> {
        let fifo = self.work.join("slow.fifo");
        let _ = fs::remove_file(&fifo);
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).map_err(|e| e.to_string())?;
        let (prog, args) = self.transfer_cmd(c, "vol-download", &fifo);
        let mut cmd = if let Some(cpu) = &self.o.client_cpu {
            let mut c = Command::new("taskset");
            c.args(["-c", cpu]).arg(&prog);
            c
        } else {
            Command::new(&prog)
        };
        let mut child = cmd
            .args(&args)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                File::create(self.work.join("slow.stderr"))
                    .map_or_else(|_| Stdio::null(), Stdio::from),
            )
            .spawn()
            .map_err(|e| format!("spawning {}: {e}", prog.display()))?;
        let pid = child.id();
        let opened = Arc::new(AtomicBool::new(false));
        let read = Arc::new(AtomicU64::new(0));
        let reader = {
            let (fifo, opened, read, rate) = (
                fifo.clone(),
                opened.clone(),
                read.clone(),
                self.o.slow_rate(),
            );
            thread::spawn(move || -> io::Result<()> {
                let mut f = File::open(&fifo)?; // blocks until the client opens it
                opened.store(true, Ordering::SeqCst);
                let t0 = Instant::now();
                let mut buf = vec![0u8; 64 << 10];
                let mut total = 0u64;
                loop {
                    let n = f.read(&mut buf)?;
                    if n == 0 {
                        return Ok(());
                    }
                    total += n as u64;
                    read.store(total, Ordering::SeqCst);
                    let due = Duration::from_secs_f64(total as f64 / rate);
                    if let Some(d) = due.checked_sub(t0.elapsed()) {
                        thread::sleep(d);
                    }
                }
            })
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !opened.load(Ordering::SeqCst) && Instant::now() < deadline {
            if child.try_wait().map_err(|e| e.to_string())?.is_some() {
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
        let started = opened.load(Ordering::SeqCst);
        let mut series = Vec::new();
        let mut capped = false;
        if started {
            let t0 = Instant::now();
            // Every half second; the report shows ~1 s, the middle and the end.
            let steps = (self.o.slow_secs * 2.0).ceil() as usize;
            let marks: Vec<f64> = (1..=steps)
                .map(|k| (k as f64 * 0.5).min(self.o.slow_secs))
                .collect();
            let mut next = 0;
            while next < marks.len() {
                thread::sleep(Duration::from_millis(20));
                let el = t0.elapsed().as_secs_f64();
                let Some((rss, hwm)) = rss_kib(pid) else {
                    break;
                };
                if rss > RSS_CAP_KIB {
                    capped = true;
                    series.push((el, rss, hwm));
                    break;
                }
                if el >= marks[next] {
                    series.push((el, rss, hwm));
                    next += 1;
                }
            }
        }
        let alive = child.try_wait().map_err(|e| e.to_string())?.is_none();
        let _ = child.kill();
        let status = child.wait().map_err(|e| e.to_string())?;
        // Unblock a reader still waiting in open() (the client never opened the FIFO).
        if !opened.load(Ordering::SeqCst) {
            let _ = OpenOptions::new()
                .write(true)
                .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
                .open(&fifo);
        }
        let _ = reader.join();
        let _ = fs::remove_file(&fifo);
        let stderr = fs::read_to_string(self.work.join("slow.stderr")).unwrap_or_default();
        if !started || series.is_empty() {
            return Err(format!(
                "slow-sink download by {} did not run (client exit: {status}): {}",
                c.label(),
                stderr.trim()
            ));
        }
        // A client may end before the deadline (small volume, or a fast sink); its samples
        // up to then still count.
        let ended = (!alive).then(|| format!("ended by itself ({status}): {}", stderr.trim()));
        Ok(SlowResult {
            series,
            read: read.load(Ordering::SeqCst),
            capped,
            ended,
        })
    }

    pub(super) fn slow(&mut self) -> Res<()> {
        let cases = [
            (Client::Ours, "ours (lv)"),
            (Client::Virsh, "virsh (event loop thread)"),
            (Client::CEv, "C library (python, event loop thread)"),
            (Client::C, "C library (python, no event loop)"),
        ];
        let _ = writeln!(
            self.report,
            "\n### Download into a slow sink: FIFO read at {} MB/s, RSS of the client process\n\n\
             | client | RSS at ~1 s MiB | RSS at ~{:.1} s | RSS at ~{:.0} s | peak (VmHWM) MiB | \
             MB read by the sink |\n|---|---|---|---|---|---|",
            thousands(self.o.slow_rate() / MB),
            self.o.slow_secs / 2.0,
            self.o.slow_secs
        );
        let mut sinks = Vec::new();
        for (c, label) in cases {
            eprintln!("== slow sink: {label}");
            let r = self.slow_once(c)?;
            let col = |k: usize| {
                let want = [1.0, self.o.slow_secs / 2.0, self.o.slow_secs][k];
                let near = r
                    .series
                    .iter()
                    .min_by(|a, b| (a.0 - want).abs().total_cmp(&(b.0 - want).abs()));
                near.map_or("—".into(), |&(t, rss, _)| {
                    format!("{} ({t:.1} s)", f1(rss as f64 / 1024.0))
                })
            };
            let hwm = r.series.iter().map(|s| s.2).max().unwrap_or(0) as f64 / 1024.0;
            eprintln!(
                "   {label}: {:?} (s, VmRSS KiB, VmHWM KiB), sink read {:.0} MB{}",
                r.series,
                r.read as f64 / MB,
                if r.capped { ", CAPPED" } else { "" }
            );
            if let Some(e) = &r.ended {
                eprintln!("   {label}: {e}");
            }
            let _ = writeln!(
                self.report,
                "| {label} | {} | {} | {} | {}{} | {} |",
                col(0),
                col(1),
                col(2),
                f1(hwm),
                match (r.capped, &r.ended) {
                    (true, _) => " (stopped at the 4 GiB cap)",
                    (false, Some(_)) => " (client ended early)",
                    (false, None) => "",
                },
                thousands(r.read as f64 / MB)
            );
            sinks.push(Slow {
                client: label.to_string(),
                samples: r
                    .series
                    .iter()
                    .map(|&(t, rss, hwm)| (Num(t), rss, hwm))
                    .collect(),
                sink_bytes: r.read,
                capped: r.capped,
            });
            if c == Client::Ours {
                let mid = self.o.slow_secs / 2.0;
                let first_half = r
                    .series
                    .iter()
                    .min_by(|a, b| (a.0 - mid).abs().total_cmp(&(b.0 - mid).abs()))
                    .map_or(0, |s| s.1);
                let last = r.series.last().map_or(0, |s| s.1);
                let grew = (last as f64 - first_half as f64) / 1024.0;
                let ok = hwm <= 32.0;
                self.target(
                    "download RSS bounded with a slow sink",
                    format!(
                        "peak {hwm:.1} MiB over {:.0} s, RSS {grew:+.1} MiB over the second half \
                         (bound: peak ≤ 32 MiB)",
                        self.o.slow_secs
                    ),
                    ok,
                );
            }
        }
        let _ = writeln!(
            self.report,
            "\nEach client downloads the volume into a FIFO; a reader thread of the harness \
             drains it at {} MB/s. Samples are `/proc/PID/status` VmRSS at the given seconds \
             after the client opened the FIFO; then the client is killed.",
            thousands(self.o.slow_rate() / MB)
        );
        self.slow_sink = Some(sinks);
        Ok(())
    }
}
