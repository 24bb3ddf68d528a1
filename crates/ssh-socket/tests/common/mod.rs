//! Shared setup for the tests against a real OpenSSH sshd.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use ssh_socket::{SshConfig, SshError};
use testbed::sshd::{Sshd, SshdOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

/// Starts sshd, or returns `None` (skip) when it cannot start and `TESTBED_REQUIRED` is unset
/// ([`Sshd::start_or_skip`]).
pub fn sshd(opts: &SshdOptions) -> Option<Sshd> {
    Sshd::start_or_skip(opts)
}

/// A config for `sshd`, authenticating with its client key, forwarding to `socket`.
pub fn config(sshd: &Sshd, socket: &Path) -> SshConfig {
    let mut c = SshConfig::new(sshd.user().name.clone(), "127.0.0.1");
    c.port = sshd.port();
    c.key_files = vec![sshd.client_key().to_owned()];
    c.use_agent = false;
    c.known_hosts = Some(sshd.known_hosts().to_owned());
    c.channel = ssh_socket::RemoteChannel::forward(socket.to_string_lossy());
    c.connect_timeout = Duration::from_secs(10);
    c
}

/// A unix socket in sshd's dir that sshd's user may connect to.
pub fn listen(sshd: &Sshd, name: &str) -> (UnixListener, PathBuf) {
    let path = sshd.dir().join(name);
    let l = UnixListener::bind(&path).expect("bind unix socket");
    sshd.user()
        .own(&path)
        .expect("chown socket to the sshd user");
    (l, path)
}

/// Deterministic test data: `fill(buf, offset)` writes the bytes at `offset..offset+len`.
pub fn fill(buf: &mut [u8], offset: u64) {
    for (i, b) in buf.iter_mut().enumerate() {
        let x = (offset + i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        *b = (x >> 29) as u8;
    }
}

/// Echo server: writes back everything it reads, for every connection.
pub fn spawn_echo(l: UnixListener) {
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = s.into_split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
}

/// Sink server: checks every byte against [`fill`], and at EOF answers `ok <n>\n` or
/// `mismatch at <offset>\n`.
pub fn spawn_checking_sink(l: UnixListener) {
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 1 << 16];
                let mut want = vec![0u8; 1 << 16];
                let mut off = 0u64;
                let mut bad = None;
                loop {
                    let n = match s.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if bad.is_none() {
                        fill(&mut want[..n], off);
                        if let Some(i) = (0..n).find(|&i| buf[i] != want[i]) {
                            bad = Some(off + i as u64);
                        }
                    }
                    off += n as u64;
                }
                let msg = match bad {
                    None => format!("ok {off}\n"),
                    Some(at) => format!("mismatch at {at}\n"),
                };
                let _ = s.write_all(msg.as_bytes()).await;
            });
        }
    });
}

/// Source server: sends `len` bytes of [`fill`] data, then closes.
pub fn spawn_source(l: UnixListener, len: u64) {
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 1 << 16];
                let mut off = 0u64;
                while off < len {
                    let n = buf.len().min((len - off) as usize);
                    fill(&mut buf[..n], off);
                    if s.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                    off += n as u64;
                }
            });
        }
    });
}

/// The typed error inside an `io::Error` from the stream.
pub fn ssh_error(e: &std::io::Error) -> &SshError {
    e.get_ref()
        .and_then(|i| i.downcast_ref::<SshError>())
        .unwrap_or_else(|| panic!("io::Error without an SshError inside: {e:?}"))
}
