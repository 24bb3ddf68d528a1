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
    c.known_hosts = vec![sshd.known_hosts().to_owned()];
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

/// A fresh public key of `kind` as `type base64` (no comment): a key no server here holds.
pub fn stranger_public_key(dir: &Path, kind: testbed::sshd::KeyType) -> String {
    let name = format!("stranger-{}", kind.ssh_name());
    let path = dir.join(&name);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(path.with_extension("pub"));
    let args: &[&str] = match kind.ssh_name() {
        "ssh-rsa" => &["-t", "rsa", "-b", "2048"],
        "ecdsa-sha2-nistp256" => &["-t", "ecdsa", "-b", "256"],
        _ => &["-t", "ed25519"],
    };
    let st = std::process::Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-C", "x"])
        .args(args)
        .arg("-f")
        .arg(&path)
        .status()
        .expect("ssh-keygen");
    assert!(st.success());
    let text = std::fs::read_to_string(dir.join(format!("{name}.pub"))).unwrap();
    text.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// An `ssh_config` naming `sshd` as `alias`, with its client key, strict checking as given,
/// and `extra` lines (`UserKnownHostsFile …`, `GlobalKnownHostsFile …`).
pub fn ssh_config_file(sshd: &Sshd, alias: &str, extra: &[String]) -> ssh_socket::SshConfigFile {
    let path = sshd.dir().join(format!("ssh_config_{alias}"));
    let mut text = format!(
        "Host {alias}\n  HostName 127.0.0.1\n  Port {}\n  User {}\n  IdentityFile {}\n  \
         IdentitiesOnly yes\n",
        sshd.port(),
        sshd.user().name,
        sshd.client_key().display()
    );
    for l in extra {
        text.push_str("  ");
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    ssh_socket::SshConfigFile::Path(path)
}

/// The config `ssh_config_file` gives alias `alias` (with `extra` lines), forwarding to
/// `socket`.
pub fn from_ssh_config(sshd: &Sshd, alias: &str, extra: &[String], socket: &Path) -> SshConfig {
    let file = ssh_config_file(sshd, alias, extra);
    let mut cfg = SshConfig::from_ssh_config(alias, None, &file).unwrap();
    cfg.channel = ssh_socket::RemoteChannel::forward(socket.to_string_lossy());
    cfg
}

/// Connects with `cfg` (the far end an echo server) and checks a round trip.
pub async fn echoes(cfg: &SshConfig, what: &str) {
    let (mut s, _c) = ssh_socket::connect(cfg)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    s.write_all(b"ok").await.unwrap();
    let mut b = [0u8; 2];
    s.read_exact(&mut b).await.unwrap();
    assert_eq!(&b, b"ok");
}

/// Writes `sshd.dir()/name` holding `text` (a `known_hosts`); returns its path.
pub fn known_hosts_file(sshd: &Sshd, name: &str, text: &str) -> PathBuf {
    let path = sshd.dir().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Connecting with `cfg` must fail, and `known_hosts` still hold exactly `text`; `what` says
/// what was wrongly accepted otherwise. Returns the error.
pub async fn refused_leaving(
    cfg: &SshConfig,
    known_hosts: &Path,
    text: &str,
    what: &str,
) -> SshError {
    let Err(err) = ssh_socket::connect(cfg).await else {
        panic!(
            "{what}; known_hosts now:\n{}",
            std::fs::read_to_string(known_hosts).unwrap()
        )
    };
    assert_eq!(
        std::fs::read_to_string(known_hosts).unwrap(),
        text,
        "known_hosts changed"
    );
    err
}
