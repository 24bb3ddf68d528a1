//! The address rule (H3), as a pure function over what each source answered.
//!
//! An unreadable address must not look like a missing one. During a normal boot exactly one
//! source fails (the agent is not up yet) while another answers, empty. So:
//!
//! | what the sources said | answer |
//! | --- | --- |
//! | any source returned a usable address | `Running` at the first one (sources in order) |
//! | the domain vanished (`NO_DOMAIN`) during the read | `NotFound` |
//! | the link died during the read | `Transient` |
//! | at least one answered empty, the others failed | `Provisioning` (no address yet) |
//! | every source failed | `Transient`, explicitly |
//!
//! "Explicitly" matters: the failures carry libvirt codes such as `ARGUMENT_UNSUPPORTED`
//! ("guest agent is not configured") that the code table would call `Permanent`, latching a
//! running proxy as failed. The provider wraps them as `Transient` instead of classifying.

use std::fmt;
use std::net::IpAddr;

use libvirt_remote::proto::names::IpAddrType;
use libvirt_remote::proto::procs::domain::DomainInterface;

use crate::classify::LvError;
use crate::config::AddressSource;

/// What one source answered.
#[derive(Debug, Clone)]
pub enum SourceResult {
    /// A usable address.
    Found(IpAddr),
    /// The source answered, with no usable address.
    Empty,
    /// The source failed.
    Failed(LvError),
}

/// The rule's verdict.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// Running at this address.
    Address(IpAddr),
    /// Running, no address yet: `Provisioning`.
    NoAddressYet,
    /// The domain disappeared during the read: `NotFound`.
    Vanished(LvError),
    /// Nothing could be read (every source failed, or the link died): `Transient`.
    Unreadable(AddressError),
}

/// Every failure of an unreadable address, by source.
#[derive(Debug, Clone)]
pub struct AddressError {
    /// Source and its error, in the order tried.
    pub failures: Vec<(AddressSource, LvError)>,
}

impl fmt::Display for AddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (s, e)) in self.failures.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}: {e}", s.as_str())?;
        }
        Ok(())
    }
}

impl std::error::Error for AddressError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.failures
            .first()
            .map(|(_, e)| e as &(dyn std::error::Error + 'static))
    }
}

/// Applies the rule to the sources tried so far (in order).
pub fn decide(results: &[(AddressSource, SourceResult)]) -> Verdict {
    if let Some(ip) = results.iter().find_map(|(_, r)| match r {
        SourceResult::Found(ip) => Some(*ip),
        _ => None,
    }) {
        return Verdict::Address(ip);
    }
    let failures: Vec<(AddressSource, LvError)> = results
        .iter()
        .filter_map(|(s, r)| match r {
            SourceResult::Failed(e) => Some((*s, e.clone())),
            _ => None,
        })
        .collect();
    if let Some((_, e)) = failures.iter().find(|(_, e)| e.is_no_domain()) {
        return Verdict::Vanished(e.clone());
    }
    let dead = failures.iter().any(|(_, e)| e.is_dead_link());
    if dead || (!results.is_empty() && failures.len() == results.len()) {
        return Verdict::Unreadable(AddressError { failures });
    }
    Verdict::NoAddressYet
}

/// Whether a source's answer ends the search early: an address, a dead link or a vanished
/// domain (asking the next source cannot change the verdict).
pub fn is_final(r: &SourceResult) -> bool {
    match r {
        SourceResult::Found(_) => true,
        SourceResult::Failed(e) => e.is_dead_link() || e.is_no_domain(),
        SourceResult::Empty => false,
    }
}

/// The first usable address: a non-loopback, non-link-local IPv4, else such an IPv6.
pub fn pick(ifaces: &[DomainInterface]) -> Option<IpAddr> {
    let all: Vec<IpAddr> = ifaces
        .iter()
        .flat_map(|i| i.addrs.iter())
        .filter_map(|a| {
            let ip: IpAddr = a.addr.to_str().ok()?.parse().ok()?;
            let kind_ok = match ip {
                IpAddr::V4(_) => a.kind == IpAddrType::IPV4,
                IpAddr::V6(_) => a.kind == IpAddrType::IPV6,
            };
            kind_ok.then_some(ip)
        })
        .filter(|ip| match ip {
            IpAddr::V4(v4) => !v4.is_loopback() && !v4.is_link_local() && !v4.is_unspecified(),
            IpAddr::V6(v6) => {
                !v6.is_loopback() && !v6.is_unspecified() && (v6.segments()[0] & 0xffc0) != 0xfe80
            }
        })
        .collect();
    all.iter()
        .find(|ip| ip.is_ipv4())
        .or_else(|| all.first())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use AddressSource::{Agent, Arp, Lease};
    use libvirt_remote::conn::{CallError, ConnectionError};
    use libvirt_remote::proto::procs::domain::DomainIpAddr;
    use libvirt_remote::proto::{ErrorCode, ErrorDomain, RemoteError};

    fn remote(code: ErrorCode) -> SourceResult {
        SourceResult::Failed(LvError::Call(CallError::from(RemoteError::new(
            code,
            ErrorDomain::QEMU,
            "x",
        ))))
    }

    fn dead() -> SourceResult {
        SourceResult::Failed(LvError::Call(CallError::Connection(
            ConnectionError::PeerClosed,
        )))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn agent_fails_and_other_empty_is_provisioning() {
        let v = decide(&[
            (Agent, remote(ErrorCode::ARGUMENT_UNSUPPORTED)),
            (Arp, SourceResult::Empty),
        ]);
        assert!(matches!(v, Verdict::NoAddressYet), "{v:?}");
        let v = decide(&[
            (Agent, remote(ErrorCode::AGENT_UNRESPONSIVE)),
            (Lease, SourceResult::Empty),
        ]);
        assert!(matches!(v, Verdict::NoAddressYet), "{v:?}");
    }

    #[test]
    fn every_source_failing_is_unreadable_whatever_the_codes() {
        let v = decide(&[
            (Agent, remote(ErrorCode::ARGUMENT_UNSUPPORTED)),
            (Arp, remote(ErrorCode::INTERNAL_ERROR)),
        ]);
        let Verdict::Unreadable(e) = v else {
            panic!("verdict {v:?}, want Unreadable (Transient): every source failed")
        };
        assert_eq!(e.failures.len(), 2);
        assert!(e.to_string().starts_with("agent: "), "{e}");
    }

    #[test]
    fn a_dead_link_is_unreadable_even_with_an_empty_answer() {
        let v = decide(&[(Lease, SourceResult::Empty), (Agent, dead())]);
        assert!(
            matches!(v, Verdict::Unreadable(_)),
            "verdict {v:?}, want Unreadable (Transient): the link died during the read"
        );
        assert!(is_final(&dead()));
    }

    #[test]
    fn vanished_domain_is_not_found() {
        let v = decide(&[(Agent, remote(ErrorCode::NO_DOMAIN))]);
        assert!(matches!(v, Verdict::Vanished(_)), "{v:?}");
    }

    #[test]
    fn an_address_wins() {
        let v = decide(&[
            (Agent, remote(ErrorCode::AGENT_UNRESPONSIVE)),
            (Arp, SourceResult::Found(ip("10.0.0.5"))),
        ]);
        assert!(
            matches!(v, Verdict::Address(a) if a == ip("10.0.0.5")),
            "{v:?}"
        );
    }

    #[test]
    fn pick_prefers_routable_ipv4() {
        let iface = |addrs: Vec<(i32, &str)>| DomainInterface {
            name: "eth0".into(),
            hwaddr: None,
            addrs: addrs
                .into_iter()
                .map(|(kind, a)| DomainIpAddr {
                    kind: IpAddrType(kind),
                    addr: a.into(),
                    prefix: 24,
                })
                .collect(),
        };
        let lo = iface(vec![(0, "127.0.0.1"), (1, "::1")]);
        let eth = iface(vec![(1, "fe80::1"), (1, "2001:db8::5"), (0, "192.0.2.7")]);
        assert_eq!(pick(std::slice::from_ref(&lo)), None);
        assert_eq!(pick(&[lo.clone(), eth]), Some(ip("192.0.2.7")));
        let v6 = iface(vec![(1, "fe80::1"), (1, "2001:db8::5")]);
        assert_eq!(pick(&[lo, v6]), Some(ip("2001:db8::5")));
        assert_eq!(pick(&[iface(vec![(0, "169.254.1.1")])]), None);
    }
}
