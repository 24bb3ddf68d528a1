//! The `kvm2` entry's type-specific settings.
//!
//! ```yaml
//! providers:
//!   - name: kvm-a
//!     type: kvm2
//!     images:
//!       debian-13: { url: "https://images.example/debian-13.qcow2", sha256: "…", format: qcow2 }
//!     uri: qemu+ssh://root@kvm-a.example/system?keyfile=/etc/egress/id_ed25519
//!     pool: default                    # the libvirt storage pool (must exist and be active)
//!     domain_type: kvm                 # kvm (default) | qemu (software emulation)
//!     network: { type: bridge, name: br0 }   # user (default) | bridge {name} | network {name}
//!     # user networking may forward host ports into the guest (added after every start):
//!     # network: { type: user, port_forwards: [{ host_port: 18888, guest_port: 8888 }] }
//!     address_sources: [agent, arp]    # tried in order; agent | arp | lease
//!     budgets:                         # seconds; fractions allowed
//!       close_secs: 5                  # polite disconnect of a link before it is killed
//!       transfer_secs: 1200            # one image fetch + upload; the fetch ends 60 s earlier
//!       call_secs: 60                  # one libvirt call; overrun marks the link dead
//!       start_secs: 120                # one domain start (qemu launch); overrun as a call's
//!       shutdown_secs: 30              # graceful shutdown wait before destroy
//!       connect_secs: 15               # dial + handshake of a link
//!       lease_secs: 30                 # cross-process lease: broken after this long unrenewed
//!       lease_wait_secs: 5             # how long a call waits for another's lease ("busy")
//!     agent_socket_dir: /run/egress    # optional: where guest agent sockets go
//!     serial_log_dir: /var/log/egress  # optional: log each guest's serial console to a file
//!     max_parallel_starts: 4           # domain starts in flight per host (≤ max_client_requests - 1)
//!     ssh_config: /etc/egress/ssh_config  # optional: `ssh -F` for qemu+ssh:// (none | path)
//!     max_image_bytes: 17179869184     # largest image fetched (default 16 GiB)
//! ```
//!
//! Every key is optional except `uri` and `pool`; unknown keys are errors (the registry is
//! strict, and these types say `deny_unknown_fields` too). Checks that serde cannot express
//! (a URI that parses, positive budgets, a non-empty source list) run in
//! [`Kvm2Settings::validate`], called when the provider is built, so a bad entry fails at
//! startup rather than at first use.

use std::net::Ipv4Addr;
use std::time::Duration;

use egress_provider::{FieldError, FieldErrors, Problem};
use libvirt_remote::client::uri::{LibvirtUri, Transport};
use libvirt_remote::ssh_socket::SshConfigFile;
use serde::{Deserialize, Deserializer};

/// The settings of one `kvm2` entry (everything besides the common keys).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Kvm2Settings {
    /// The libvirt URI of the host: `qemu:///system`, `qemu+unix:///session?socket=…`,
    /// `qemu+tcp://host/system`, `qemu+ssh://user@host/system?keyfile=…`, or TLS:
    /// `qemu+tls://host/system?pkipath=…` (also `qemu://host/system`).
    pub uri: String,
    /// The storage pool holding base images, overlays and seeds. It must exist and be active.
    pub pool: String,
    /// `kvm` (default) or `qemu`.
    #[serde(default)]
    pub domain_type: DomainType,
    /// How guests are networked. Default: `user`.
    #[serde(default)]
    pub network: NetworkConfig,
    /// Where `get` looks for a guest's address, in order. Default: `[agent, arp]`.
    #[serde(default = "default_sources")]
    pub address_sources: Vec<AddressSource>,
    /// Time budgets.
    #[serde(default)]
    pub budgets: Budgets,
    /// Where the guest agent's unix socket goes on the host. Default: libvirt's own
    /// per-domain directory. Set it to a short directory (writable by the daemon) when
    /// libvirt's paths are too deep for a unix socket (108 bytes), as with session daemons
    /// under a long `$XDG_CONFIG_HOME`; the socket is `<dir>/<16 hex of the domain name's
    /// sha256>.agent`.
    #[serde(default)]
    pub agent_socket_dir: Option<String>,
    /// Where each guest's serial console is written on the host, as
    /// `<dir>/<domain name>.serial.log` (truncated at every start). Default: none (a pty
    /// console). The directory must exist and be writable by the daemon (by the qemu user of
    /// a system daemon); the provider never reads or removes these files. Nothing of the
    /// user-data is written there by the provider, but a guest may print what it likes.
    #[serde(default)]
    pub serial_log_dir: Option<String>,
    /// How many domain starts this provider keeps in flight on the host at once; more wait
    /// their turn (not counted in the start budget). libvirtd serves at most
    /// `max_client_requests` (default 5) calls of one connection at a time, so with a start
    /// occupying each of them every other call of the link would queue behind qemu start-ups
    /// and outlive its budget. Default 4; raise it with the daemon's `max_client_requests`.
    /// The link keeps at most this many calls in flight (at least 4, one under the daemon's
    /// default: libvirt-remote's `Config::max_in_flight`), the rest wait in the client: with
    /// every turn taken by a start, the link's other calls wait for a start to end.
    /// A create takes its turn once its base image is ensured and before its uid lease, and
    /// keeps it to its end, so this also bounds the creates past their base image per host
    /// (a create queueing for a turn holds no lease).
    #[serde(default = "default_parallel_starts")]
    pub max_parallel_starts: usize,
    /// The OpenSSH client configuration a `qemu+ssh://` URI reads (`ssh -F`): an absolute
    /// path (the file must exist when a link is dialled), or `none` for no file at all.
    /// Default: the process user's `~/.ssh/config` (under `$HOME`), when it exists. The URI's
    /// parameters win over the file's settings, as ssh's command line does.
    #[serde(default)]
    pub ssh_config: Option<String>,
    /// The largest image this entry fetches, in bytes. A mirror announcing more is refused
    /// before anything is created on the host; one sending more (without a length, or past
    /// the length it announced) is stopped as soon as the body passes it. Default
    /// [`DEFAULT_MAX_IMAGE_BYTES`] (16 GiB).
    #[serde(default = "default_max_image_bytes")]
    pub max_image_bytes: u64,
}

/// [`Kvm2Settings::max_image_bytes`]'s default: 16 GiB, well above a proxy guest's image
/// (hundreds of MiB), far below what a runaway mirror could put into a host's pool.
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = 16 << 30;

fn default_parallel_starts() -> usize {
    4
}

fn default_max_image_bytes() -> u64 {
    DEFAULT_MAX_IMAGE_BYTES
}

impl Kvm2Settings {
    /// Settings with defaults for everything but the URI and the pool.
    pub fn new(uri: impl Into<String>, pool: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            pool: pool.into(),
            domain_type: DomainType::default(),
            network: NetworkConfig::default(),
            address_sources: default_sources(),
            budgets: Budgets::default(),
            agent_socket_dir: None,
            serial_log_dir: None,
            max_parallel_starts: default_parallel_starts(),
            ssh_config: None,
            max_image_bytes: DEFAULT_MAX_IMAGE_BYTES,
        }
    }

    /// [`ssh_config`](Self::ssh_config) as the client's setting.
    pub fn ssh_config_file(&self) -> SshConfigFile {
        match self.ssh_config.as_deref() {
            None => SshConfigFile::User,
            Some("none") => SshConfigFile::None,
            Some(p) => SshConfigFile::Path(p.into()),
        }
    }

    /// Checks what deserialization cannot; `path` is the entry's path (`providers[1]`).
    pub fn validate(&self, path: &str) -> Result<(), FieldErrors> {
        let mut errors = FieldErrors::new();
        let at = |field: &str| format!("{path}.{field}");
        match LibvirtUri::parse(&self.uri) {
            Err(e) => errors.push(FieldError::new(
                at("uri"),
                Problem::invalid_because(format!("{:?} is not a usable libvirt URI", self.uri), e),
            )),
            Ok(u) => {
                if !matches!(
                    u.transport,
                    Transport::Unix { .. }
                        | Transport::Tcp { .. }
                        | Transport::Ssh(_)
                        | Transport::Tls(_)
                ) {
                    errors.push(FieldError::invalid(at("uri"), "unsupported transport"));
                }
            }
        }
        match self.ssh_config.as_deref() {
            Some(f) if f.trim().is_empty() => {
                errors.push(FieldError::new(at("ssh_config"), Problem::Empty));
            }
            Some(f) if f != "none" && !std::path::Path::new(f).is_absolute() => {
                errors.push(FieldError::invalid(
                    at("ssh_config"),
                    "must be an absolute path, or `none`",
                ));
            }
            _ => {}
        }
        if self.pool.trim().is_empty() {
            errors.push(FieldError::new(at("pool"), Problem::Empty));
        }
        match &self.network {
            NetworkConfig::Bridge { name } | NetworkConfig::Network { name }
                if name.trim().is_empty() =>
            {
                errors.push(FieldError::new(at("network.name"), Problem::Empty));
            }
            NetworkConfig::User { port_forwards } => {
                for (i, f) in port_forwards.iter().enumerate() {
                    let at_f =
                        |field: &str| format!("{}[{i}].{field}", at("network.port_forwards"));
                    if f.host_port == 0 {
                        errors.push(FieldError::invalid(
                            at_f("host_port"),
                            "must be 1..65535 (0 would bind a port nobody can know)",
                        ));
                    }
                    if f.guest_port == 0 {
                        errors.push(FieldError::invalid(at_f("guest_port"), "must be 1..65535"));
                    }
                    if !f.host_addr.is_loopback() && !f.allow_non_loopback {
                        errors.push(FieldError::invalid(
                            at_f("host_addr"),
                            format!(
                                "{} is not a loopback address: the forward would expose the guest's \
                                 service (an open proxy) beyond this host; set \
                                 allow_non_loopback: true to do so deliberately",
                                f.host_addr
                            ),
                        ));
                    }
                    if port_forwards[..i]
                        .iter()
                        .any(|g| g.host_addr == f.host_addr && g.host_port == f.host_port)
                    {
                        errors.push(FieldError::invalid(
                            at_f("host_port"),
                            format!("{}:{} is forwarded twice", f.host_addr, f.host_port),
                        ));
                    }
                }
            }
            NetworkConfig::Bridge { .. } | NetworkConfig::Network { .. } => {}
        }
        if let Some(dir) = &self.agent_socket_dir
            && (!dir.starts_with('/') || dir.len() > 70)
        {
            errors.push(FieldError::invalid(
                    at("agent_socket_dir"),
                    "must be an absolute path of at most 70 bytes (a unix socket path is limited to 108)",
                ));
        }
        if let Some(dir) = &self.serial_log_dir
            && !dir.starts_with('/')
        {
            errors.push(FieldError::invalid(
                at("serial_log_dir"),
                "must be an absolute path",
            ));
        }
        if self.address_sources.is_empty() {
            errors.push(FieldError::new(at("address_sources"), Problem::Empty));
        }
        for (i, s) in self.address_sources.iter().enumerate() {
            if self.address_sources[..i].contains(s) {
                errors.push(FieldError::invalid(
                    format!("{}[{i}]", at("address_sources")),
                    format!("{} is listed twice", s.as_str()),
                ));
            }
        }
        if self.max_image_bytes == 0 {
            errors.push(FieldError::invalid(
                at("max_image_bytes"),
                "must be at least 1",
            ));
        }
        if self.max_parallel_starts == 0 {
            errors.push(FieldError::invalid(
                at("max_parallel_starts"),
                "must be at least 1",
            ));
        }
        let b = &self.budgets;
        for (name, d) in [
            ("close_secs", b.close),
            ("transfer_secs", b.transfer),
            ("call_secs", b.call),
            ("start_secs", b.start),
            ("connect_secs", b.connect),
            ("lease_secs", b.lease),
        ] {
            if d.is_zero() {
                errors.push(FieldError::invalid(
                    at(&format!("budgets.{name}")),
                    "must be more than 0",
                ));
            }
        }
        errors.into_result(())
    }
}

/// The domain `type`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum DomainType {
    /// Hardware virtualisation (needs `/dev/kvm` on the host).
    #[default]
    Kvm,
    /// Software emulation (TCG): slow, but works without `/dev/kvm`.
    Qemu,
}

impl DomainType {
    /// `kvm` or `qemu`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kvm => "kvm",
            Self::Qemu => "qemu",
        }
    }
}

/// How a guest's network interface is attached.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
#[non_exhaustive]
pub enum NetworkConfig {
    /// QEMU user networking (slirp): no host setup; all guest traffic stays inside the qemu
    /// process (the guest is `10.0.2.15`, the host's loopback is `10.0.2.2` to it). The guest
    /// is reachable from the host only through `port_forwards`.
    User {
        /// Host ports forwarded into the guest, added through the QEMU monitor
        /// (`hostfwd_add`) after every start; see [`PortForward`].
        #[serde(default)]
        port_forwards: Vec<PortForward>,
    },
    /// A host bridge, e.g. `br0`.
    Bridge {
        /// The bridge device.
        name: String,
    },
    /// A libvirt network, e.g. `default`.
    Network {
        /// The network's name.
        name: String,
    },
}

impl Default for NetworkConfig {
    fn default() -> Self {
        Self::User {
            port_forwards: Vec::new(),
        }
    }
}

impl NetworkConfig {
    /// User networking without port forwards.
    pub fn user() -> Self {
        Self::default()
    }

    /// The port forwards (empty for bridge and network attachments).
    pub fn port_forwards(&self) -> &[PortForward] {
        match self {
            Self::User { port_forwards } => port_forwards,
            Self::Bridge { .. } | Self::Network { .. } => &[],
        }
    }
}

/// One TCP port forwarded from the libvirt host into a user-networked guest:
/// `host_addr:host_port` on the host (where qemu runs: the libvirt host, not the operator's
/// machine) → `guest_port` on the guest's user-network address (`10.0.2.15`).
///
/// ```yaml
/// network: { type: user, port_forwards: [{ host_addr: 127.0.0.1, host_port: 18888, guest_port: 8888 }] }
/// ```
///
/// A forward binds one host port, so it suits one instance per entry (demos, tests, a single
/// proxy per host): a second instance of the entry cannot bind the same port, and its
/// `create` fails `Transient` until the port is free.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PortForward {
    /// The host address to listen on. Default `127.0.0.1`. Must be a loopback address unless
    /// `allow_non_loopback` is set: a forward to a proxy is an open proxy for whoever can
    /// reach that address.
    #[serde(default = "loopback")]
    pub host_addr: Ipv4Addr,
    /// The host port (1–65535).
    pub host_port: u16,
    /// The guest port (1–65535).
    pub guest_port: u16,
    /// Permit a non-loopback `host_addr`. Default false.
    #[serde(default)]
    pub allow_non_loopback: bool,
}

impl PortForward {
    /// `127.0.0.1:host_port` → `guest_port`.
    pub fn loopback(host_port: u16, guest_port: u16) -> Self {
        Self {
            host_addr: Ipv4Addr::LOCALHOST,
            host_port,
            guest_port,
            allow_non_loopback: false,
        }
    }

    /// The rule in qemu's `hostfwd` syntax: `tcp:ADDR:HOSTPORT-:GUESTPORT`.
    pub fn hostfwd_rule(&self) -> String {
        format!(
            "tcp:{}:{}-:{}",
            self.host_addr, self.host_port, self.guest_port
        )
    }
}

fn loopback() -> Ipv4Addr {
    Ipv4Addr::LOCALHOST
}

/// A place to learn a guest's address from (`virDomainInterfaceAddresses` sources).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum AddressSource {
    /// The QEMU guest agent inside the VM.
    Agent,
    /// The host's ARP table.
    Arp,
    /// DHCP leases of a libvirt-managed network.
    Lease,
}

impl AddressSource {
    /// `agent`, `arp` or `lease`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Arp => "arp",
            Self::Lease => "lease",
        }
    }

    /// The `virDomainInterfaceAddressesSource` value.
    pub fn wire(self) -> libvirt_remote::proto::procs::domain::InterfaceAddressesSource {
        use libvirt_remote::proto::procs::domain::InterfaceAddressesSource as s;
        match self {
            Self::Agent => s::AGENT,
            Self::Arp => s::ARP,
            Self::Lease => s::LEASE,
        }
    }
}

fn default_sources() -> Vec<AddressSource> {
    vec![AddressSource::Agent, AddressSource::Arp]
}

/// Time budgets. Written in seconds (`close_secs: 5`, fractions allowed); held as durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct Budgets {
    /// Polite disconnect (`CONNECT_CLOSE`) of a link before it is killed. Default 5 s.
    #[serde(rename = "close_secs", deserialize_with = "secs")]
    pub close: Duration,
    /// One image fetch + upload. The HTTP fetch gets its own deadline one minute inside this
    /// (see [`fetch_deadline`](Self::fetch_deadline)) so a stalled mirror ends through the
    /// reader, cleanly. Overrun kills the dedicated upload connection. Default 20 min.
    #[serde(rename = "transfer_secs", deserialize_with = "secs")]
    pub transfer: Duration,
    /// One libvirt call on the shared link (also small seed and marker transfers). Overrun
    /// marks the link dead; the next operation reconnects. Default 60 s.
    #[serde(rename = "call_secs", deserialize_with = "secs")]
    pub call: Duration,
    /// One domain start (`DomainCreateWithFlags`): the daemon launches qemu and waits for
    /// its monitor, which on a busy host takes longer than any other call. Overrun marks the
    /// link dead like a call overrun. Default 120 s.
    #[serde(rename = "start_secs", deserialize_with = "secs")]
    pub start: Duration,
    /// How long `delete` waits for a graceful shutdown before it destroys. Default 30 s;
    /// 0 destroys at once.
    #[serde(rename = "shutdown_secs", deserialize_with = "secs")]
    pub shutdown: Duration,
    /// Dial + handshake of a link. Default 15 s.
    #[serde(rename = "connect_secs", deserialize_with = "secs")]
    pub connect: Duration,
    /// A cross-process lease (see [`crate::fence`]) is renewed every third of this while
    /// held, and another controller breaks it only after it has seen it unchanged for this
    /// long. Default 30 s.
    #[serde(rename = "lease_secs", deserialize_with = "secs")]
    pub lease: Duration,
    /// How long a call waits for a lease another controller holds before it answers
    /// "busy, retry" (`Transient`). Default 5 s.
    #[serde(rename = "lease_wait_secs", deserialize_with = "secs")]
    pub lease_wait: Duration,
}

impl Default for Budgets {
    fn default() -> Self {
        Self {
            close: Duration::from_secs(5),
            transfer: Duration::from_secs(1200),
            call: Duration::from_secs(60),
            start: Duration::from_secs(120),
            shutdown: Duration::from_secs(30),
            connect: Duration::from_secs(15),
            lease: Duration::from_secs(30),
            lease_wait: Duration::from_secs(5),
        }
    }
}

impl Budgets {
    /// The HTTP fetch's own deadline: one minute inside the transfer budget, or half of it
    /// when the budget is under two minutes (tests, tiny images).
    pub fn fetch_deadline(&self) -> Duration {
        let margin = Duration::from_secs(60);
        let half = self.transfer / 2;
        self.transfer.saturating_sub(margin).max(half)
    }
}

fn secs<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let v = f64::deserialize(d)?;
    Duration::try_from_secs_f64(v).map_err(|e| serde::de::Error::custom(format!("{v}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Goes through the real loader and the registry's strict settings path.
    fn parse(settings: &str) -> Result<Kvm2Settings, FieldErrors> {
        let mut entry: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(settings).unwrap();
        entry.insert("name".into(), "e".into());
        entry.insert("type".into(), "kvm2".into());
        entry.insert(
            "images".into(),
            serde_json::json!({"x": {"url": "http://127.0.0.1/x", "sha256": "0".repeat(64), "format": "raw"}}),
        );
        let doc = serde_json::json!({ "providers": [entry] });
        let cfg = egress_provider::ProvidersConfig::from_value(&doc).unwrap();
        cfg.providers[0].settings::<Kvm2Settings>()
    }

    #[test]
    fn defaults() {
        let s = parse(r#"{"uri":"qemu:///system","pool":"default"}"#).unwrap();
        assert_eq!(s.domain_type, DomainType::Kvm);
        assert_eq!(s.network, NetworkConfig::user());
        assert!(s.network.port_forwards().is_empty());
        assert_eq!(
            s.address_sources,
            vec![AddressSource::Agent, AddressSource::Arp]
        );
        assert_eq!(s.budgets, Budgets::default());
        assert_eq!(s.budgets.fetch_deadline(), Duration::from_secs(1140));
        assert_eq!(s.max_image_bytes, 16 << 30);
        assert!(s.validate("providers[0]").is_ok());
    }

    #[test]
    fn every_key() {
        let s = parse(
            r#"{"uri":"qemu+ssh://root@h/system?keyfile=/k","pool":"p","domain_type":"qemu",
                "network":{"type":"bridge","name":"br0"},"address_sources":["lease","agent"],
                "budgets":{"close_secs":1,"transfer_secs":4,"call_secs":2.5,"shutdown_secs":0,"connect_secs":3}}"#,
        )
        .unwrap();
        assert_eq!(s.domain_type, DomainType::Qemu);
        assert_eq!(s.network, NetworkConfig::Bridge { name: "br0".into() });
        assert_eq!(s.budgets.call, Duration::from_millis(2500));
        assert_eq!(s.budgets.fetch_deadline(), Duration::from_secs(2));
        assert!(s.validate("providers[0]").is_ok());
    }

    #[test]
    fn ssh_config_file() {
        let file = |v: &str| {
            let s = parse(&format!(
                r#"{{"uri":"qemu+ssh://h/system","pool":"p","ssh_config":{v}}}"#
            ))
            .unwrap();
            (
                s.validate("providers[0]").map_err(|e| e.to_string()),
                s.ssh_config_file(),
            )
        };
        let default = parse(r#"{"uri":"qemu+ssh://h/system","pool":"p"}"#).unwrap();
        assert_eq!(default.ssh_config_file(), SshConfigFile::User);
        assert_eq!(file(r#""none""#), (Ok(()), SshConfigFile::None));
        assert_eq!(
            file(r#""/etc/egress/ssh_config""#),
            (Ok(()), SshConfigFile::Path("/etc/egress/ssh_config".into()))
        );
        let (relative, _) = file(r#""ssh_config""#);
        assert!(
            relative
                .as_ref()
                .is_err_and(|e| e.contains("providers[0].ssh_config") && e.contains("absolute")),
            "{relative:?}"
        );
        let (empty, _) = file(r#"" ""#);
        assert!(empty.is_err_and(|e| e.contains("providers[0].ssh_config")));
    }

    #[test]
    fn tls_hosts() {
        for uri in [
            "qemu+tls://kvm-a.example/system?pkipath=/etc/egress/pki",
            "qemu://kvm-a.example/system?auth=sasl.scram-sha-256&authfile=/etc/egress/auth.conf",
        ] {
            let s = parse(&format!(r#"{{"uri":"{uri}","pool":"default"}}"#)).unwrap();
            assert!(s.validate("providers[0]").is_ok(), "{uri}");
        }
    }

    #[test]
    fn user_network_with_port_forwards() {
        let s = parse(
            r#"{"uri":"qemu:///system","pool":"p","serial_log_dir":"/var/log/e",
                "network":{"type":"user","port_forwards":[
                    {"host_port":18888,"guest_port":8888},
                    {"host_addr":"127.0.0.2","host_port":18889,"guest_port":22}]}}"#,
        )
        .unwrap();
        assert_eq!(
            s.network.port_forwards(),
            [
                PortForward::loopback(18888, 8888),
                PortForward {
                    host_addr: Ipv4Addr::new(127, 0, 0, 2),
                    ..PortForward::loopback(18889, 22)
                }
            ]
        );
        assert_eq!(
            s.network.port_forwards()[0].hostfwd_rule(),
            "tcp:127.0.0.1:18888-:8888"
        );
        assert_eq!(s.serial_log_dir.as_deref(), Some("/var/log/e"));
        assert!(s.validate("providers[0]").is_ok());
        // `{type: user}` alone still parses (no forwards).
        let s = parse(r#"{"uri":"qemu:///system","pool":"p","network":{"type":"user"}}"#).unwrap();
        assert_eq!(s.network, NetworkConfig::user());
        // Forwards only exist for user networking.
        let e = parse(
            r#"{"uri":"qemu:///system","pool":"p","network":{"type":"bridge","name":"br0","port_forwards":[]}}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("port_forwards"), "{e}");
        let e = parse(
            r#"{"uri":"qemu:///system","pool":"p","network":{"type":"user","port_forwards":[{"host_port":1,"guest_port":2,"proto":"udp"}]}}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("proto"), "{e}");
    }

    #[test]
    fn port_forwards_are_checked() {
        let mut s = Kvm2Settings::new("qemu:///system", "p");
        s.network = NetworkConfig::User {
            port_forwards: vec![
                PortForward::loopback(0, 8888),
                PortForward {
                    host_addr: Ipv4Addr::UNSPECIFIED,
                    ..PortForward::loopback(18888, 0)
                },
                PortForward::loopback(18889, 8888),
                PortForward::loopback(18889, 8889),
                PortForward {
                    host_addr: Ipv4Addr::new(192, 0, 2, 1),
                    allow_non_loopback: true,
                    ..PortForward::loopback(18890, 8888)
                },
            ],
        };
        s.serial_log_dir = Some("relative".into());
        let e = s.validate("p[0]").unwrap_err();
        for p in [
            "p[0].network.port_forwards[0].host_port",
            "p[0].network.port_forwards[1].guest_port",
            "p[0].network.port_forwards[1].host_addr",
            "p[0].network.port_forwards[3].host_port",
            "p[0].serial_log_dir",
        ] {
            assert!(e.at(p).is_some(), "missing {p} in {e}");
        }
        assert!(
            e.at("p[0].network.port_forwards[4].host_addr").is_none(),
            "{e}"
        );
        assert!(e.to_string().contains("open proxy"), "{e}");
    }

    #[test]
    fn unknown_and_bad_values_are_errors() {
        let e = parse(r#"{"uri":"qemu:///system","pool":"p","prot":1}"#).unwrap_err();
        assert!(e.to_string().contains("prot"), "{e}");
        let e = parse(r#"{"uri":"qemu:///system","pool":"p","budgets":{"call":1}}"#).unwrap_err();
        assert!(e.to_string().contains("call"), "{e}");
        let e =
            parse(r#"{"uri":"qemu:///system","pool":"p","address_sources":["dns"]}"#).unwrap_err();
        assert!(e.to_string().contains("dns"), "{e}");
        let e = parse(r#"{"uri":"qemu:///system","pool":"p","network":{"type":"bridge"}}"#)
            .unwrap_err();
        assert!(e.to_string().contains("name"), "{e}");

        let mut s = Kvm2Settings::new("qemu+libssh2://h/system", " ");
        s.address_sources = vec![AddressSource::Arp, AddressSource::Arp];
        s.budgets.call = Duration::ZERO;
        let e = s.validate("providers[3]").unwrap_err();
        for p in [
            "providers[3].uri",
            "providers[3].pool",
            "providers[3].address_sources[1]",
            "providers[3].budgets.call_secs",
        ] {
            assert!(e.at(p).is_some(), "missing {p} in {e}");
        }
    }
}
