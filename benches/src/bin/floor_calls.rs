//! The floor for sequential calls: a minimal blocking client over a unix socket, on the
//! sans-io core alone (no tokio, no threads, no busy-poll). Per call: one `write` of the
//! call, one blocking `read` of the reply (the kernel wakes this thread straight from the
//! daemon's `write`). `compare` runs it next to `lv bench-calls` and the C library, so that
//! our client CPU per call has a floor to be a ratio of.
//!
//! ```text
//! floor_calls SOCKET NAME CALLS     # NAME: the URI the daemon opens, e.g. qemu:///session
//! ```
//! Prints `calls/s: N` like `lv bench-calls`.

#![allow(clippy::cast_precision_loss)] // call counts far below 2^52.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use libvirt_rpc::conn::handshake::{Handshake, HandshakeOptions};
use libvirt_rpc::conn::{CallError, Config, Connection, Output};
use libvirt_rpc::proto::procs::connect::ConnectGetLibVersion;
use libvirt_rpc::proto::{self, Procedure};
use libvirt_rpc::wire::xdr::Preencoded;

struct Floor {
    sock: UnixStream,
    conn: Connection,
    rbuf: BytesMut,
}

impl Floor {
    /// One call, start to reply, blocking: the call's result, or what broke the socket.
    fn call(&mut self, procedure: i32, args: &[u8]) -> Result<Result<Bytes, CallError>, String> {
        let serial =
            match self
                .conn
                .call_raw(proto::REMOTE_PROGRAM, procedure, &Preencoded(args), None)
            {
                Ok(s) => s,
                Err(e) => return Ok(Err(e)),
            };
        while let Some(t) = self.conn.poll_transmit() {
            self.sock.write_all(&t.head).map_err(|e| e.to_string())?;
            self.sock.write_all(&t.body).map_err(|e| e.to_string())?;
        }
        loop {
            while let Some(o) = self.conn.poll_output() {
                if let Output::CallDone { serial: s, result } = o
                    && s == serial
                {
                    return Ok(result);
                }
            }
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
            if let Some(e) = self.conn.error() {
                return Err(e.to_string());
            }
        }
    }
}

fn run(socket: &str, name: &str, calls: u64) -> Result<f64, String> {
    let sock = UnixStream::connect(socket).map_err(|e| format!("{socket}: {e}"))?;
    let config = Config {
        keepalive: None,
        ..Config::default()
    };
    let mut f = Floor {
        sock,
        conn: Connection::new(config, Instant::now()),
        rbuf: BytesMut::with_capacity(64 << 10),
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
    for _ in 0..calls {
        f.call(ConnectGetLibVersion::NUMBER, &[])?
            .map_err(|e| e.to_string())?;
    }
    Ok(calls as f64 / t.elapsed().as_secs_f64())
}

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().collect();
    let (Some(socket), Some(name), Some(Ok(calls))) =
        (a.get(1), a.get(2), a.get(3).map(|n| n.parse::<u64>()))
    else {
        eprintln!("usage: floor_calls SOCKET NAME CALLS");
        return ExitCode::from(2);
    };
    match run(socket, name, calls) {
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
