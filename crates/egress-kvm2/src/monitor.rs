//! The QEMU monitor through libvirt, for one job: the port forwards of user networking.
//!
//! libvirt 9.0 (Debian 12) cannot express a host port forward in the domain XML: its parser
//! rejects `<backend type='passt'/>` (the only backend with `<portForward>`), and
//! `<qemu:override>` cannot reach the `-netdev user` backend. The two routes that work
//! (measured in `docs/guest-image.md`) are `<qemu:commandline>` with a hand-made NIC and an
//! explicit PCI slot, or the monitor command `hostfwd_add` after start. The provider takes
//! the monitor route: the domain XML stays plain (an ordinary `<interface type='user'>`),
//! the forward is checked and added at run time, and a failure to bind is an error of the
//! operation that started the domain rather than a domain that refuses to start.
//!
//! The call is `virDomainQemuMonitorCommand`: procedure 1 of libvirt's separate QEMU program,
//! declared in libvirt-remote's procedure table ([`QemuDomainMonitorCommand`]) so it goes
//! through [`Link::call`] like every other call (call budget, dead-link handling); flag
//! [`HMP`] makes the command plain monitor text.
//!
//! HMP reports failure only as text: an empty reply to `hostfwd_add` is success, anything
//! else (`Could not set up host forwarding rule 'tcp:…'`) is a failure. libvirt names the
//! backend of a domain's first interface `hostnet0` ([`NETDEV`]) and marks a domain that
//! got a monitor command `tainted: custom-monitor` (a log line, nothing more).
//!
//! [`ensure_port_forwards`] is idempotent: it reads `info usernet` first and adds only what
//! is missing, so the create of an existing running domain (a retry, a restart) completes
//! the forwards without failing on the ones already there.

use std::net::Ipv4Addr;

use egress_provider::ProviderError;
use libvirt_remote::proto::procs::qemu::{
    QemuDomainMonitorCommand, QemuDomainMonitorCommandArgs, QemuMonitorCommandFlags,
};
use libvirt_remote::proto::types::NonnullDomain;
use tracing::Instrument;

use crate::classify::{LvError, provider_error};
use crate::config::PortForward;
use crate::link::Link;

/// `VIR_DOMAIN_QEMU_MONITOR_COMMAND_HMP`: the command is a human monitor command.
pub const HMP: QemuMonitorCommandFlags = QemuMonitorCommandFlags::HMP;

/// The id libvirt gives the backend (`-netdev`) of a domain's first interface.
pub const NETDEV: &str = "hostnet0";

/// One HMP command; the reply text.
pub async fn hmp(link: &Link, dom: &NonnullDomain, cmd: &str) -> Result<String, LvError> {
    let ret = link
        .call::<QemuDomainMonitorCommand>(&QemuDomainMonitorCommandArgs {
            dom: dom.clone(),
            cmd: cmd.into(),
            flags: QemuMonitorCommandFlags::HMP,
        })
        .await?;
    Ok(ret.result.to_string_lossy().into_owned())
}

/// A TCP host forward as `info usernet` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostForward {
    /// The host address (`0.0.0.0` when qemu prints `*`).
    pub host_addr: Ipv4Addr,
    /// The host port.
    pub host_port: u16,
    /// The guest address.
    pub guest_addr: Ipv4Addr,
    /// The guest port.
    pub guest_port: u16,
}

/// The TCP host forwards of `netdev` in the text of `info usernet`; `None` when the text has
/// no section for `netdev` (no such user-network backend).
///
/// QEMU 7.2 prints one section per user-network backend:
///
/// ```text
/// Hub -1 (hostnet0):
///   Protocol[State]    FD  Source Address  Port   Dest. Address  Port RecvQ SendQ
///   TCP[HOST_FORWARD]  13       127.0.0.1 18888       10.0.2.15  8888     0     0
/// ```
pub fn parse_usernet(text: &str, netdev: &str) -> Option<Vec<HostForward>> {
    let header = format!("({netdev}):");
    let mut in_section = false;
    let mut found = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if !line.starts_with(' ') && t.ends_with("):") {
            in_section = t.ends_with(&header);
            found |= in_section;
            continue;
        }
        if !in_section || !t.starts_with("TCP[HOST_FORWARD]") {
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        let addr = |s: &str| {
            if s == "*" {
                Some(Ipv4Addr::UNSPECIFIED)
            } else {
                s.parse().ok()
            }
        };
        if let [_, _fd, src, sport, dst, dport, ..] = f.as_slice()
            && let (Some(host_addr), Ok(host_port), Some(guest_addr), Ok(guest_port)) =
                (addr(src), sport.parse(), addr(dst), dport.parse())
        {
            out.push(HostForward {
                host_addr,
                host_port,
                guest_addr,
                guest_port,
            });
        }
    }
    found.then_some(out)
}

/// Makes sure every forward in `forwards` is active on the running domain `dom`: reads
/// `info usernet`, adds the missing ones with `hostfwd_add`, replaces one whose host port
/// leads to another guest port. Returns how many were added.
///
/// Errors: a failed monitor call is classified by the one table (a dead link or a domain
/// that stopped meanwhile is `Transient`; a connection without the right to send monitor
/// commands is `Permanent`). No `hostnet0` user backend is `Permanent` (the domain is not
/// user-networked the way this provider defines it). A refused `hostfwd_add` is
/// `Transient`: HMP does not say why, and the usual cause, the host port still held by
/// another qemu (an instance of the same entry being replaced or deleted), goes away by
/// itself; a retried `create` completes the forwards of the running domain. The message
/// names the address so a port that stays taken is easy to find.
pub async fn ensure_port_forwards(
    link: &Link,
    dom: &NonnullDomain,
    forwards: &[PortForward],
) -> Result<usize, ProviderError> {
    if forwards.is_empty() {
        return Ok(0);
    }
    let span =
        tracing::info_span!("kvm2.port_forwards", domain = %dom.name, count = forwards.len());
    async {
        let name = &dom.name;
        let text = hmp(link, dom, "info usernet")
            .await
            .map_err(|e| provider_error(format!("read the port forwards of domain {name}"), e))?;
        let Some(active) = parse_usernet(&text, NETDEV) else {
            return Err(ProviderError::permanent(format!(
                "domain {name} has no user-network backend {NETDEV:?}, so its port forwards \
                 cannot be added (qemu's `info usernet`: {:?}); it was not defined by this \
                 provider with network type user",
                text.trim()
            )));
        };
        let mut added = 0;
        for f in forwards {
            let here = active
                .iter()
                .find(|a| a.host_addr == f.host_addr && a.host_port == f.host_port);
            match here {
                Some(a) if a.guest_port == f.guest_port => continue,
                Some(a) => {
                    // The configuration changed since this domain got its forward.
                    let cmd = format!(
                        "hostfwd_remove {NETDEV} tcp:{}:{}",
                        f.host_addr, f.host_port
                    );
                    let reply = hmp(link, dom, &cmd).await.map_err(|e| {
                        provider_error(format!("remove an old port forward of domain {name}"), e)
                    })?;
                    tracing::info!(
                        host = %format_args!("{}:{}", f.host_addr, f.host_port),
                        old_guest_port = a.guest_port,
                        reply = reply.trim(),
                        "replacing a port forward that leads to another guest port"
                    );
                }
                None => {}
            }
            let rule = f.hostfwd_rule();
            let reply = hmp(link, dom, &format!("hostfwd_add {NETDEV} {rule}"))
                .await
                .map_err(|e| {
                    provider_error(format!("add port forward {rule} to domain {name}"), e)
                })?;
            if !reply.trim().is_empty() {
                return Err(ProviderError::transient(format!(
                    "cannot forward host {}:{} to port {} of domain {name}: qemu said {:?}; \
                     the host port is probably in use (another instance of this entry, or \
                     another process) or not bindable by the daemon's user; a retried create \
                     adds it once the port is free",
                    f.host_addr,
                    f.host_port,
                    f.guest_port,
                    reply.trim()
                )));
            }
            tracing::info!(rule = %rule, "port forward added");
            added += 1;
        }
        Ok(added)
    }
    .instrument(span)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "Hub -1 (hostnet0):\n  Protocol[State]    FD  Source Address  Port   Dest. Address  Port RecvQ SendQ\n  TCP[HOST_FORWARD]  13       127.0.0.1 18888       10.0.2.15  8888     0     0\n  TCP[ESTABLISHED]   21       10.0.2.15 45678        10.0.2.2  8080     0     0\n  TCP[HOST_FORWARD]  14               * 18889       10.0.2.15    22     0     0\n  UDP[236 sec]       15       10.0.2.15 68        10.0.2.2    67     0     0\nHub -1 (hostnet1):\n  Protocol[State]    FD  Source Address  Port   Dest. Address  Port RecvQ SendQ\n  TCP[HOST_FORWARD]  16       127.0.0.1 19999       10.0.2.15  8888     0     0\n";

    #[test]
    fn usernet_sections_and_forwards() {
        let f = parse_usernet(SAMPLE, "hostnet0").unwrap();
        assert_eq!(
            f,
            [
                HostForward {
                    host_addr: Ipv4Addr::LOCALHOST,
                    host_port: 18888,
                    guest_addr: Ipv4Addr::new(10, 0, 2, 15),
                    guest_port: 8888
                },
                HostForward {
                    host_addr: Ipv4Addr::UNSPECIFIED,
                    host_port: 18889,
                    guest_addr: Ipv4Addr::new(10, 0, 2, 15),
                    guest_port: 22
                },
            ]
        );
        assert_eq!(parse_usernet(SAMPLE, "hostnet1").unwrap().len(), 1);
        assert_eq!(parse_usernet(SAMPLE, "hostnet2"), None);
        assert_eq!(parse_usernet("", "hostnet0"), None);
        // Older qemu said "VLAN"; a section with no forwards is an empty list, not None.
        let old = "VLAN 0 (hostnet0):\n  Protocol[State]    FD  Source Address  Port   Dest. Address  Port RecvQ SendQ\n";
        assert_eq!(parse_usernet(old, "hostnet0"), Some(vec![]));
    }

    #[test]
    fn monitor_args_encode_as_libvirt_does() {
        let a = QemuDomainMonitorCommandArgs {
            dom: NonnullDomain {
                name: "d".into(),
                uuid: libvirt_remote::proto::types::Uuid([0; 16]),
                id: 3,
            },
            cmd: "info usernet".into(),
            flags: HMP,
        };
        let b = libvirt_remote::wire::xdr::to_bytes(&a).unwrap();
        // name "d" (4 + 4), uuid (16), id (4), cmd "info usernet" (4 + 12), flags (4).
        assert_eq!(b.len(), 8 + 16 + 4 + 16 + 4);
        assert_eq!(&b[b.len() - 4..], &[0, 0, 0, 1]);
    }
}
