//! The floor for calls: a minimal blocking client over a unix socket, on the sans-io core
//! alone (no tokio, no threads, no busy-poll). Sequential: per call one `write` of the call
//! and one blocking `read` of the reply (the kernel wakes this thread straight from the
//! daemon's `write`). With CONCURRENCY > 1 the thread keeps that many calls in flight: it
//! blocks in `read`, and for every reply that read completed sends a new call, all of them
//! in one `write`. `compare` runs it next to `lv bench-calls` and the C library, so that
//! our client CPU per call has a floor to be a ratio of, in both modes.
//!
//! With `tokio` as the last argument the same thread waits in tokio's reactor instead of a
//! blocking `read`: the socket is registered with a current-thread runtime, and each read and
//! write is one `block_on` (epoll, the I/O driver's readiness, one future polled; no task, no
//! hand-off). That is the floor of a client on tokio, and the difference to the blocking floor
//! is what the reactor alone costs per call.
//!
//! ```text
//! floor_calls SOCKET NAME CALLS [CONCURRENCY] [tokio]   # NAME: the URI the daemon opens, e.g. qemu:///session
//! ```
//! Prints `calls/s: N` like `lv bench-calls`. The cap on calls in flight is the library's
//! default (`Config::max_in_flight`, 4), as `lv`'s; `FLOOR_MAX_IN_FLIGHT=N` sets it (0: none).
//! `FLOOR_BATCH=K` (≤ CONCURRENCY) holds new calls back until K replies are in, so that calls
//! reach the daemon K at a time (issue 36 item 6: does the daemon's cost per call depend on
//! how calls arrive?). `FLOOR_SPIN_US=X` burns X µs of CPU per reply after each write (a
//! client as busy as the C library's through python, its calls sent as early as the floor's).
//! `FLOOR_PACE_US=X` writes new calls one per write, at least X µs apart (a client paced like
//! the C library's, spinning in between).

#![allow(clippy::cast_precision_loss)] // call counts far below 2^52.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use libvirt_remote::conn::handshake::{Handshake, HandshakeOptions};
use libvirt_remote::conn::{CallError, Config, Connection, Output};
use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;
use libvirt_remote::proto::{self, Procedure};
use libvirt_remote::wire::xdr::Preencoded;

/// Where the thread waits: in a blocking `read`, or in tokio's reactor.
enum Sock {
    Blocking(UnixStream),
    Tokio(tokio::runtime::Runtime, tokio::net::UnixStream),
}

impl Sock {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use tokio::io::AsyncReadExt as _;
        match self {
            Self::Blocking(s) => s.read(buf),
            Self::Tokio(rt, s) => rt.block_on(s.read(buf)),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        use tokio::io::AsyncWriteExt as _;
        match self {
            Self::Blocking(s) => s.write_all(buf),
            Self::Tokio(rt, s) => rt.block_on(s.write_all(buf)),
        }
    }
}

struct Floor {
    sock: Sock,
    conn: Connection,
    rbuf: BytesMut,
    /// Calls gathered for one `write`.
    wbuf: Vec<u8>,
}

impl Floor {
    /// Writes every packet the core has queued, in one `write` (calls carry no stream body).
    fn flush(&mut self) -> Result<(), String> {
        self.wbuf.clear();
        while let Some(t) = self.conn.poll_transmit() {
            self.wbuf.extend_from_slice(&t.head);
            self.wbuf.extend_from_slice(&t.body);
        }
        if self.wbuf.is_empty() {
            return Ok(());
        }
        self.sock.write_all(&self.wbuf).map_err(|e| e.to_string())
    }

    /// One blocking `read`, fed to the core.
    fn read_some(&mut self) -> Result<(), String> {
        let need = Connection::bytes_needed(&self.rbuf).max(4096);
        let len = self.rbuf.len();
        self.rbuf.resize(len + need, 0);
        let n = self
            .sock
            .read(&mut self.rbuf[len..])
            .map_err(|e| e.to_string())?;
        self.rbuf.truncate(len + n);
        if n == 0 {
            return Err("EOF".into());
        }
        let _ = self.conn.handle_input(&mut self.rbuf, Instant::now());
        self.conn.error().map_or(Ok(()), |e| Err(e.to_string()))
    }

    /// Queues one call; it goes out with the next [`flush`](Self::flush).
    fn start(&mut self, procedure: i32, args: &[u8]) -> Result<u32, CallError> {
        self.conn
            .call_raw(proto::REMOTE_PROGRAM, procedure, &Preencoded(args), None)
    }

    /// One call, start to reply, blocking: the call's result, or what broke the socket.
    fn call(&mut self, procedure: i32, args: &[u8]) -> Result<Result<Bytes, CallError>, String> {
        let serial = match self.start(procedure, args) {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        self.flush()?;
        loop {
            while let Some(o) = self.conn.poll_output() {
                if let Output::CallDone { serial: s, result } = o
                    && s == serial
                {
                    return Ok(result);
                }
            }
            self.read_some()?;
        }
    }

    /// `calls` calls of `get_lib_version` with `conc` of them in flight.
    fn run_concurrent(&mut self, calls: u64, conc: u64) -> Result<(), String> {
        let proc = ConnectGetLibVersion::NUMBER;
        let mut issued = 0;
        while issued < calls.min(conc) {
            self.start(proc, &[]).map_err(|e| e.to_string())?;
            issued += 1;
        }
        self.flush()?;
        let mut done = 0;
        let mut owed = 0;
        let batch: u64 = env_u64("FLOOR_BATCH", 1).clamp(1, conc);
        let pace = std::time::Duration::from_micros(env_u64("FLOOR_PACE_US", 0));
        let mut last_write = Instant::now();
        let spin = std::time::Duration::from_micros(env_u64("FLOOR_SPIN_US", 0));
        while done < calls {
            self.read_some()?;
            let mut replies = 0;
            while let Some(o) = self.conn.poll_output() {
                if let Output::CallDone { result, .. } = o {
                    result.map_err(|e| e.to_string())?;
                    replies += 1;
                }
            }
            done += replies;
            owed += replies;
            // FLOOR_BATCH=k: new calls go out only k at a time (an experiment: how the
            // daemon's cost per call depends on calls arriving together).
            if owed < batch && issued > done {
                continue;
            }
            let more = owed.min(calls - issued);
            owed = 0;
            for _ in 0..more {
                // FLOOR_PACE_US=X: one call per write, X µs apart at least (spinning), as
                // the C library's threads space theirs.
                while last_write.elapsed() < pace {
                    std::hint::spin_loop();
                }
                self.start(proc, &[]).map_err(|e| e.to_string())?;
                if pace > std::time::Duration::ZERO {
                    self.flush()?;
                    last_write = Instant::now();
                }
            }
            issued += more;
            // A reply also frees a slot of the cap on calls in flight
            // (`Config::max_in_flight`): a held call is then queued even when no new
            // call was started, so flush whatever the core has queued.
            self.flush()?;
            // FLOOR_SPIN_US=X: burn X µs of CPU per reply after the write (an experiment:
            // a client as slow as the C library's, its calls sent as early as the floor's).
            if spin > std::time::Duration::ZERO {
                let until = Instant::now() + spin * u32::try_from(replies).unwrap_or(1);
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            }
        }
        Ok(())
    }
}

fn run(socket: &str, name: &str, calls: u64, conc: u64, on_tokio: bool) -> Result<f64, String> {
    let std_sock = UnixStream::connect(socket).map_err(|e| format!("{socket}: {e}"))?;
    let sock = if on_tokio {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .map_err(|e| e.to_string())?;
        std_sock.set_nonblocking(true).map_err(|e| e.to_string())?;
        let s = {
            let _enter = rt.enter();
            tokio::net::UnixStream::from_std(std_sock).map_err(|e| e.to_string())?
        };
        Sock::Tokio(rt, s)
    } else {
        Sock::Blocking(std_sock)
    };
    let config = Config {
        keepalive: None,
        max_in_flight: max_in_flight()?,
        ..Config::default()
    };
    let mut f = Floor {
        sock,
        conn: Connection::new(config, Instant::now()),
        rbuf: BytesMut::with_capacity(64 << 10),
        wbuf: Vec::with_capacity(4096),
    };
    let mut hs = Handshake::new(HandshakeOptions {
        name: Some(name.into()),
        ..HandshakeOptions::default()
    });
    while let Some(c) = hs.next_call() {
        let r = f.call(c.procedure, &c.args)?;
        hs.handle_reply(r).map_err(|e| e.to_string())?;
    }
    let t = Instant::now();
    if conc > 1 {
        f.run_concurrent(calls, conc)?;
    } else {
        for _ in 0..calls {
            f.call(ConnectGetLibVersion::NUMBER, &[])?
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(calls as f64 / t.elapsed().as_secs_f64())
}

/// An experiment knob: the number in environment variable `name`, or `default`.
fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The cap on calls in flight: `FLOOR_MAX_IN_FLIGHT` (0: none), else the library's default,
/// so that the floor puts on the wire what `lv bench-calls` does.
fn max_in_flight() -> Result<Option<std::num::NonZeroUsize>, String> {
    match std::env::var("FLOOR_MAX_IN_FLIGHT") {
        Err(_) => Ok(Config::default().max_in_flight),
        Ok(v) => v
            .parse::<usize>()
            .map(std::num::NonZeroUsize::new)
            .map_err(|e| format!("FLOOR_MAX_IN_FLIGHT={v}: {e}")),
    }
}

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().collect();
    let on_tokio = a.len() == 6 && a[5] == "tokio";
    let conc = a.get(4).map_or(Ok(1), |c| c.parse::<u64>());
    let (Some(socket), Some(name), Some(Ok(calls)), Ok(conc @ 1..), true) = (
        a.get(1),
        a.get(2),
        a.get(3).map(|n| n.parse::<u64>()),
        conc,
        a.len() <= 5 || on_tokio,
    ) else {
        eprintln!("usage: floor_calls SOCKET NAME CALLS [CONCURRENCY] [tokio]   (CONCURRENCY ≥ 1)");
        return ExitCode::from(2);
    };
    match run(socket, name, calls, conc, on_tokio) {
        Ok(rate) => {
            println!("calls/s: {rate:.0}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
