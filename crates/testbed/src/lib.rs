//! Real daemons for tests, started by the tests themselves and torn down on drop.
//!
//! Scope: a private session-mode `libvirtd` ([`libvirtd`]; optionally listening for TLS and
//! TCP on 127.0.0.1, with certificates from [`pki`] and SASL users), an OpenSSH `sshd` on 127.0.0.1
//! ([`sshd`]), a freezable TCP relay ([`relay`]), a privileged, root-only libvirtd with only the LXC
//! driver in a mount namespace of its own ([`lxcd`]), the unprivileged user they run as
//! ([`user`]), a loopback HTTP server ([`http`]), the egress test guest's image and
//! user-data ([`guest`]) and deterministic test bytes ([`data`]). Non-scope: anything system-wide. Every daemon lives in its own temp dir, listens
//! on loopback or a unix socket in that dir, and dies with its guard.
//!
//! ```text
//!  test ──unix──▶ libvirtd (session, runs as TestUser, HOME/XDG_* in a temp dir)
//!  test ──tcp 127.0.0.1──▶ [relay] ──▶ sshd (runs as TestUser) ──streamlocal──▶ libvirt-sock
//! ```
//!
//! When `TESTBED_REQUIRED=1` (set by `scripts/test`, hence in CI) a daemon that cannot start is
//! a test failure with the reason, never a silent skip.

pub mod data;
pub mod guest;
pub mod http;
pub mod libvirtd;
pub mod lxcd;
pub mod memory;
pub mod pki;
pub mod relay;
pub mod sshd;
pub mod user;

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` has them (empty when unreadable):
/// what the benchmarks and the timing-sensitive tests print beside their figures.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether daemon-backed tests must fail (rather than skip) when a daemon cannot start.
pub fn required() -> bool {
    std::env::var("TESTBED_REQUIRED").is_ok_and(|v| v == "1")
}
