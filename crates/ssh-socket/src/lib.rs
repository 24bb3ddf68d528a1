//! SSH transport for libvirt: a russh session forwarding a remote unix socket
//! (`direct-streamlocal@openssh.com`, what `qemu+ssh://` needs), exposed as one byte stream.
//!
//! Scope: dial TCP (nodelay), verify the host key strictly against OpenSSH `known_hosts`,
//! authenticate with key files and/or the ssh-agent, open one channel to the remote socket,
//! and tear all of it down in bounded time. One SSH session per stream.
//!
//! Non-scope: libvirt framing (the `libvirt-rpc` crate reads and writes the stream), URI
//! parsing (callers fill [`SshConfig`]), `~/.ssh/config`, host certificates, password or
//! keyboard-interactive auth, learning new host keys, proxies (see [`connect_socket`]).
//!
//! ```text
//!            SshStream (AsyncRead + AsyncWrite)                  CloseHandle::close()
//!   read ◀── bounded buffer ◀── pump task ◀──┐                       │ shutdown(2) on a dup
//!   write ──▶ russh ChannelTx (window) ──────┤                       ▼ of the TCP socket
//!                                      russh session task ◀──▶ TCP ──▶ sshd ──▶ libvirt-sock
//!   closed() ◀── watcher task (owns the russh Handle, records why the session ended)
//! ```
//!
//! # Teardown
//!
//! russh runs a session as one task that writes to the socket inline. While such a write is
//! stalled (a vanished host, a full kernel send buffer) nothing else in the session runs: a
//! queued channel close or `Handle::disconnect` waits behind it, and `disconnect` itself blocks
//! once the shared queue fills. So [`CloseHandle::close`] goes around russh: it calls
//! `shutdown(SHUT_RDWR)` on our own descriptor of the TCP socket, the stalled write fails with
//! `EPIPE` and the session task ends. russh also never wakes a writer parked on SSH window
//! credit when the session dies, so [`SshStream`] races every read and write against its own
//! session-ended signal: every pending and later call fails at once with
//! [`SshError::Closed`]. A silent host is detected by keepalives when idle and by
//! `inactivity_timeout` during a stalled upload.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo() -> Result<(), ssh_socket::SshError> {
//! use tokio::io::AsyncWriteExt;
//! let mut cfg = ssh_socket::SshConfig::new("root", "kvm1.example");
//! cfg.key_files.push("/etc/egress/id_ed25519".into());
//! let (mut stream, close) = ssh_socket::connect(&cfg).await?;
//! stream.write_all(b"...libvirt program...").await.map_err(|e| {
//!     // The typed error rides inside the io::Error.
//!     println!("{:?}", e.get_ref().and_then(|e| e.downcast_ref::<ssh_socket::SshError>()));
//!     ssh_socket::SshError::Config { reason: e.to_string() }
//! })?;
//! close.close(); // from any task, at any time; never blocks
//! # Ok(()) }
//! ```

mod config;
mod connect;
mod error;
mod known_hosts;
mod stream;

pub use config::{SYSTEM_SOCKET, SshConfig, local_user};
pub use connect::{connect, connect_socket};
pub use error::{CloseReason, KeyFileError, SshError};
pub use stream::{CloseHandle, SshStream};
