//! The clients, the state of one run, and running one client process.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::Res;
use super::counts::Counts;
use super::json::{Calls, Slow, Target, Transfers};
use super::measure::{box_jiffies, busy_pct, children_cpu, children_csw, proc_cpu, proc_csw};
use super::opts::Opts;

/// The volume every transfer reads and writes.
pub(super) const VOL: &str = "cmpvol";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Client {
    Ours,
    /// `lv --busy-poll-us 0`: ours without busy-polling.
    OursNoSpin,
    /// `lv --no-caller-write`: every call written by the driver task (before issue 17's
    /// caller-side write).
    OursDriverWrite,
    /// `lv --worker-threads 2`: lv's tasks on two runtime workers (lv's default before issue
    /// 17's one worker; what an embedding program on a multi-thread runtime has).
    OursTwoWorkers,
    /// `floor_calls`: a minimal blocking client on our sans-io core (calls only).
    Floor,
    /// `floor_calls … tokio`: the same thread waiting in tokio's reactor instead of a
    /// blocking `read` (calls only): the floor of a client on tokio.
    FloorTokio,
    Virsh,
    /// python3-libvirt without an event loop: the library reads the socket only inside calls.
    C,
    /// python3-libvirt with libvirt's default event loop running in a thread (like virsh).
    CEv,
}

/// The program behind a [`Client`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Program {
    Lv,
    Virsh,
    /// `/usr/bin/python3` with python3-libvirt (the C library).
    Python,
}

impl Client {
    pub fn label(self) -> &'static str {
        match self {
            Client::Ours => "ours (lv)",
            Client::OursNoSpin => "ours, busy-poll off",
            Client::OursDriverWrite => "ours, caller-side write off",
            Client::OursTwoWorkers => "ours, 2 runtime workers",
            Client::Floor => "floor (blocking client)",
            Client::FloorTokio => "floor on tokio's reactor",
            Client::Virsh => "virsh",
            Client::C => "C library (python)",
            Client::CEv => "C library (python, event loop thread)",
        }
    }

    /// The program that runs this client's transfers and fixed-cost runs (`calls_cmd`
    /// tells the calls' variants apart).
    pub fn program(self) -> Program {
        match self {
            Client::Ours
            | Client::OursNoSpin
            | Client::OursDriverWrite
            | Client::OursTwoWorkers
            | Client::Floor
            | Client::FloorTokio => Program::Lv,
            Client::Virsh => Program::Virsh,
            Client::C | Client::CEv => Program::Python,
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Client::Ours => "ours",
            Client::OursNoSpin => "ours_nospin",
            Client::OursDriverWrite => "ours_driver_write",
            Client::OursTwoWorkers => "ours_two_workers",
            Client::Floor => "floor",
            Client::FloorTokio => "floor_tokio",
            Client::Virsh => "virsh",
            Client::C => "c",
            Client::CEv => "c_ev",
        }
    }
}

/// One client process's run.
#[derive(Debug, Clone, Default)]
pub(super) struct Sample {
    pub wall: f64,
    pub cpu: f64,
    pub rss_kib: u64,
    pub stdout: String,
    /// libvirtd's user+sys seconds over the run.
    pub daemon_cpu: f64,
    /// Both CPUs of the box: percent busy over the run (anything, not only us).
    pub busy: f64,
    /// Context switches of the client process (all its threads).
    pub csw: f64,
    /// Context switches of libvirtd's threads over the run.
    pub daemon_csw: f64,
}

impl Sample {
    /// `key: value` from the client's stdout.
    pub fn field(&self, key: &str) -> Res<f64> {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
            .ok_or_else(|| format!("no `{key}` in output: {:?}", self.stdout))
    }
}

/// The run: what it measures with, and what it found (the markdown report, the JSON
/// sections, the targets).
pub(super) struct Bench {
    pub o: Opts,
    pub lv: PathBuf,
    pub virsh: PathBuf,
    pub uri: String,
    pub pool: String,
    pub pool_dir: PathBuf,
    pub daemon_pid: u32,
    /// The daemon's unix socket (for `floor_calls`).
    pub socket: PathBuf,
    pub tick: f64,
    pub work: PathBuf,
    pub src: PathBuf,
    pub report: String,
    pub calls: Option<Calls>,
    pub transfers: Option<Transfers>,
    pub slow_sink: Option<Vec<Slow>>,
    pub counts: Option<Counts>,
    pub targets: Vec<Target>,
}

impl Bench {
    /// Records a target and whether it was met.
    pub fn target(&mut self, target: impl Into<String>, measured: String, met: bool) {
        self.targets.push(Target {
            target: target.into(),
            measured,
            met: Some(met),
        });
    }

    /// Run `prog args` to completion: wall, user+sys CPU, peak RSS.
    pub fn run(&self, prog: &Path, args: &[OsString]) -> Res<Sample> {
        self.run_wrapped(&[], prog, args)
    }

    /// [`run`](Self::run) under `wrapper` (a tool and its arguments, e.g. `strace -c -f`).
    pub fn run_wrapped(&self, wrapper: &[OsString], prog: &Path, args: &[OsString]) -> Res<Sample> {
        let tf = self.work.join("time.out");
        let mut cmd = Command::new("/usr/bin/time");
        cmd.arg("-f").arg("%M").arg("-o").arg(&tf);
        if let Some(cpu) = &self.o.client_cpu {
            cmd.args(["taskset", "-c", cpu]);
        }
        cmd.args(wrapper)
            .arg(prog)
            .args(args)
            .env("LC_ALL", "C")
            .env_remove("LIBVIRT_DEFAULT_URI")
            .stdin(Stdio::null());
        let d0 = proc_cpu(self.daemon_pid, self.tick);
        let dcsw0 = proc_csw(self.daemon_pid);
        let b0 = box_jiffies();
        let cpu0 = children_cpu();
        let csw0 = children_csw();
        let t0 = Instant::now();
        let out = cmd
            .output()
            .map_err(|e| format!("running {}: {e}", prog.display()))?;
        let wall = t0.elapsed().as_secs_f64();
        let cpu = children_cpu() - cpu0;
        let csw = children_csw() - csw0;
        let daemon_csw = proc_csw(self.daemon_pid) - dcsw0;
        let busy = busy_pct(b0, box_jiffies());
        let daemon_cpu = proc_cpu(self.daemon_pid, self.tick) - d0;
        if !out.status.success() {
            return Err(format!(
                "`{} {}` failed ({}): {}",
                prog.display(),
                args.iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let rss_kib = fs::read_to_string(&tf)
            .ok()
            .and_then(|t| t.lines().last()?.trim().parse().ok())
            .unwrap_or(0);
        Ok(Sample {
            wall,
            cpu,
            rss_kib,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            daemon_cpu,
            busy,
            csw,
            daemon_csw,
        })
    }

    fn py(&self, script: &str) -> OsString {
        self.o.helpers.join(script).into_os_string()
    }

    fn args<I, S>(items: I) -> Vec<OsString>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        items
            .into_iter()
            .map(|s| s.as_ref().to_os_string())
            .collect()
    }

    /// `n` calls with `conc` in flight.
    pub fn calls_cmd(&self, c: Client, n: usize, conc: usize) -> (PathBuf, Vec<OsString>) {
        match c {
            Client::Ours => (
                self.lv.clone(),
                Self::args([
                    "-c",
                    &self.uri,
                    "bench-calls",
                    "--calls",
                    &n.to_string(),
                    "--concurrency",
                    &conc.to_string(),
                ]),
            ),
            Client::OursNoSpin | Client::OursDriverWrite | Client::OursTwoWorkers => (
                self.lv.clone(),
                Self::args([
                    "-c",
                    &self.uri,
                    match c {
                        Client::OursNoSpin => "--busy-poll-us=0",
                        Client::OursDriverWrite => "--no-caller-write",
                        _ => "--worker-threads=2",
                    },
                    "bench-calls",
                    "--calls",
                    &n.to_string(),
                    "--concurrency",
                    &conc.to_string(),
                ]),
            ),
            Client::Floor | Client::FloorTokio => (
                self.lv.with_file_name("floor_calls"),
                Self::args([self.socket.as_os_str(), OsStr::new("qemu:///session")])
                    .into_iter()
                    .chain([n.to_string().into(), conc.to_string().into()])
                    .chain((c == Client::FloorTokio).then(|| "tokio".into()))
                    .collect(),
            ),
            _ => (self.o.python.clone(), {
                let mut a = vec![self.py("calls.py")];
                a.extend(Self::args([&self.uri, &n.to_string(), &conc.to_string()]));
                a
            }),
        }
    }

    /// `op` (`vol-upload`, `vol-download`) of the volume from or to `file`.
    pub fn transfer_cmd(&self, c: Client, op: &str, file: &Path) -> (PathBuf, Vec<OsString>) {
        let f = file.as_os_str();
        match c.program() {
            Program::Lv => (self.lv.clone(), {
                let mut a = Self::args(["-c", &self.uri, op, "--pool", &self.pool, VOL]);
                a.push(f.into());
                a
            }),
            Program::Virsh => (self.virsh.clone(), {
                let mut a = Self::args(["-t", "-c", &self.uri, op, "--pool", &self.pool, VOL]);
                a.push(f.into());
                a
            }),
            Program::Python => (self.o.python.clone(), {
                let mut a = vec![self.py("transfer.py")];
                a.extend(Self::args([
                    op.trim_start_matches("vol-"),
                    &self.uri,
                    &self.pool,
                    VOL,
                ]));
                a.push(f.into());
                if c == Client::CEv {
                    a.push("--event-loop".into());
                }
                a
            }),
        }
    }

    /// Start + connect + lookups, no transfer.
    pub fn fixed_cmd(&self, c: Client) -> (PathBuf, Vec<OsString>) {
        match c.program() {
            Program::Lv => (
                self.lv.clone(),
                Self::args(["-c", &self.uri, "vol-list", "--pool", &self.pool]),
            ),
            Program::Virsh => (
                self.virsh.clone(),
                Self::args(["-c", &self.uri, "vol-info", "--pool", &self.pool, VOL]),
            ),
            Program::Python => (self.o.python.clone(), {
                let mut a = vec![self.py("transfer.py")];
                a.extend(Self::args(["noop", &self.uri, &self.pool, VOL]));
                if c == Client::CEv {
                    a.push("--event-loop".into());
                }
                a
            }),
        }
    }
}
