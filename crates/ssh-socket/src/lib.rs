//! SSH transport for libvirt: a russh session reaching libvirtd on the remote host the way
//! libvirt's own client does, exposed as one byte stream.
//!
//! Scope: dial TCP (nodelay), verify each host key strictly against OpenSSH `known_hosts`
//! (`known_hosts_verify` `normal|auto|ignore`), authenticate in `sshauth` order (key files,
//! the ssh-agent, password and keyboard-interactive through a [`Credentials`] callback), hop
//! through jump hosts (`ProxyJump`: one session per hop over a `direct-tcpip` channel of the
//! one before), open one channel to the daemon ([`RemoteChannel`]: an exec channel running
//! `virt-ssh-helper` or `nc -U` with values quoted so nothing can be injected
//! ([`RemoteCommand`]), or `direct-streamlocal@openssh.com` forwarding), read
//! `~/.ssh/config` ([`SshConfig::from_ssh_config`]), and tear all of it down in bounded time.
//!
//! Non-scope: libvirt framing (the `libvirt-remote` crate reads and writes the stream), URI
//! parsing (libvirt-remote maps `qemu+ssh://` parameters onto [`SshConfig`]), host
//! certificates, `ProxyCommand` (the kill switch needs a socket we own), `Match` blocks.
//!
//! ```text
//!            SshStream (AsyncRead + AsyncWrite)                  CloseHandle::close()
//!   read ◀── bounded buffer ◀── pump task ◀──┐                       │ shutdown(2) on a dup
//!   write ──▶ russh ChannelTx (window) ──────┤                       ▼ of the TCP socket
//!                     russh session task(s) ◀──▶ TCP ──▶ [bastion ──▶] sshd ──▶ helper / nc
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
//! Through jump hosts the same holds hop by hop: ending a session ends the one it runs over,
//! down to the first hop, whose end is the `shutdown(2)` of the one TCP socket — every
//! session tunnelled through it ends with it.
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
mod remote;
mod ssh_config;
mod stream;

pub use config::{
    AuthMethod, Credentials, DEFAULT_AUTH_METHODS, DEFAULT_KEY_FILES, DEFAULT_KNOWN_HOSTS,
    GLOBAL_KNOWN_HOSTS, KnownHostsVerify, Prompt, RemoteChannel, STDERR_LIMIT, SYSTEM_SOCKET,
    SshConfig, local_user,
};
pub use connect::{connect, connect_socket};
pub use error::{CloseReason, KeyFileError, SshError};
pub use remote::{DEFAULT_NETCAT, RemoteCommand, VIRT_SSH_HELPER};
pub use ssh_config::SshConfigFile;
pub use stream::{CloseHandle, SshStream};
/// The wiping string type of [`SshConfig::passphrase`] (from the `zeroize` crate).
pub use zeroize::Zeroizing;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
