//! libvirt connection URIs: `driver[+transport]://[user@][host][:port]/path[?params]`.
//!
//! Supported: `qemu:///system`, `qemu:///session`, `qemu+unix:///system?socket=PATH`,
//! `test+unix:///default?socket=PATH`, `qemu+tcp://host:port/system`,
//! `qemu+ssh://user@host:port/system?keyfile=PATH&known_hosts=PATH&…` (parsed into an
//! [`SshTarget`] for an SSH transport to dial: libvirt's SSH parameters, see [`SshTarget`];
//! parameters libvirt does not know are passed to the remote daemon in the opened name, as
//! libvirt does), and TLS:
//! `qemu+tls://host[:port]/system?pkipath=DIR&no_verify=1`, `test+tls://…`, and
//! `qemu://host/system` (a host and no `+transport` means TLS, as in libvirt).
//!
//! On every transport: `auth=sasl` or `auth=sasl.MECH` (e.g. `sasl.scram-sha-256`) and
//! `authfile=PATH` (libvirt's auth.conf for SASL credentials). Anything else is a clear
//! error, never silently ignored.

use std::ffi::OsString;
use std::path::PathBuf;

pub use super::default_uri::default_uri;

/// libvirt's system socket.
pub const SYSTEM_SOCKET: &str = "/var/run/libvirt/libvirt-sock";
/// libvirtd's TCP port.
pub const DEFAULT_TCP_PORT: u16 = 16509;
/// libvirtd's TLS port.
pub const DEFAULT_TLS_PORT: u16 = 16514;

/// What to dial.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
// Parsed once per dial: the size of the SSH variant does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Transport {
    /// A local unix socket.
    Unix {
        /// Socket path.
        path: PathBuf,
    },
    /// Plain TCP (libvirtd `listen_tcp`).
    Tcp {
        /// Host name or address.
        host: String,
        /// Port.
        port: u16,
    },
    /// SSH to `host`, then the unix socket `socket` on it.
    Ssh(SshTarget),
    /// TLS over TCP (libvirtd `listen_tls`).
    Tls(TlsTarget),
}

/// The TLS part of a `+tls` (or host-only) URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsTarget {
    /// Host name or address: dialled, and checked against the server certificate.
    pub host: String,
    /// Port (default [`DEFAULT_TLS_PORT`]).
    pub port: u16,
    /// `pkipath=DIR`: `cacert.pem`, `clientcert.pem`, `clientkey.pem` there instead of
    /// libvirt's default locations.
    pub pkipath: Option<PathBuf>,
    /// `no_verify=1`: do not verify the server certificate (logged as a warning).
    pub no_verify: bool,
    /// `tls_ciphers=aes128-gcm,chacha20-poly1305,…`: the AEADs offered first, in this order
    /// (each of [`TLS_CIPHERS`]; the suites not named follow in the default order). Empty:
    /// the default order (docs/decisions.md, "TLS cipher order").
    pub ciphers: Vec<String>,
}

/// The names `tls_ciphers=` accepts.
pub const TLS_CIPHERS: [&str; 3] = ["aes128-gcm", "aes256-gcm", "chacha20-poly1305"];

/// The SSH part of a `+ssh` URI: where to log in and how to reach the daemon there.
///
/// `user`, `host` and `port` are looked up in `~/.ssh/config` as `ssh` would (the URI's win).
/// libvirt's parameters: `keyfile`, `known_hosts`, `known_hosts_verify=normal|auto|ignore`,
/// `sshauth=` (ordered: `privkey,agent,password,keyboard-interactive`), `no_verify=1`,
/// `no_tty=1` (never prompt), `proxy=auto|native|netcat` and our `forward`, `netcat=`,
/// `socket=` (forces netcat, as in libvirt), `mode=legacy|direct|auto`, `name=`; and ours,
/// `proxy_jump=[user@]host[:port][,…]` (bastions, like ssh's `-J`). Any other parameter is
/// passed to the daemon in the opened name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SshTarget {
    /// Remote user (`None`: `User` from `~/.ssh/config`, else the local user name).
    pub user: Option<String>,
    /// Host, as given (an alias `~/.ssh/config` may map to a `HostName`).
    pub host: String,
    /// Port (`None`: `Port` from `~/.ssh/config`, else 22).
    pub port: Option<u16>,
    /// `keyfile=`: private key to authenticate with, tried before `~/.ssh/config`'s.
    pub keyfile: Option<PathBuf>,
    /// `known_hosts=`: known-hosts file (default `~/.ssh/known_hosts`).
    pub known_hosts: Option<PathBuf>,
    /// `known_hosts_verify=`: `normal` (default), `auto` (add unknown hosts' keys) or
    /// `ignore`.
    pub known_hosts_verify: Option<String>,
    /// `sshauth=`: authentication methods, in order.
    pub sshauth: Option<String>,
    /// `no_verify=1`: accept any host key (logged as a warning); `known_hosts_verify=ignore`.
    pub no_verify: bool,
    /// `no_tty=1`: never prompt (no password, keyboard-interactive or unknown-host questions).
    pub no_tty: bool,
    /// How the daemon is reached on the remote host.
    pub proxy: SshProxy,
    /// `netcat=`: the netcat binary on the remote host (`nc`).
    pub netcat: Option<String>,
    /// `socket=`: the daemon's socket on the remote host, when given.
    pub socket: Option<String>,
    /// `mode=`: which daemon's socket a derived path names.
    pub mode: RemoteMode,
    /// `proxy_jump=`: jump hosts, as ssh's `ProxyJump` (overrides `~/.ssh/config`'s).
    pub proxy_jump: Option<String>,
    /// The driver (`qemu`), for modular socket names.
    pub driver: String,
    /// The URI path (`/system`, `/session`).
    pub path: String,
    /// The URI `virt-ssh-helper` opens on the remote host: the opened name plus `mode=` and
    /// `socket=`, as libvirt passes them.
    pub helper_uri: String,
}

/// A parsed URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibvirtUri {
    /// The URI as given.
    pub original: String,
    /// The hypervisor driver (`qemu`, `test`, …).
    pub driver: String,
    /// How to reach the daemon.
    pub transport: Transport,
    /// The URI the daemon should open (`qemu:///system`): the transport part removed.
    pub remote_name: String,
    /// `auth=sasl.MECH`: the only SASL mechanism to use.
    pub sasl_mechanism: Option<String>,
    /// `authfile=PATH`: libvirt's auth.conf to read SASL credentials from.
    pub authfile: Option<PathBuf>,
}

/// A URI we cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UriError {
    /// Not a URI at all.
    #[error("invalid libvirt URI {uri:?}: {reason}")]
    Invalid {
        /// The URI.
        uri: String,
        /// Why.
        reason: String,
    },
    /// A transport we do not implement (libssh, libssh2, ext, …).
    #[error("unsupported transport {transport:?} in {uri:?} (supported: unix, tcp, ssh, tls)")]
    UnsupportedTransport {
        /// The URI.
        uri: String,
        /// The transport.
        transport: String,
    },
    /// A query parameter we do not understand for this transport.
    #[error("unsupported parameter {param:?} in {uri:?}")]
    UnsupportedParam {
        /// The URI.
        uri: String,
        /// The parameter.
        param: String,
    },
    /// Something needed is missing (e.g. no `XDG_RUNTIME_DIR`, `XDG_CACHE_HOME` or `HOME` for a
    /// session socket, or `socket=` for the test driver).
    #[error("{0}")]
    Missing(String),
    /// The scheme names no libvirt driver (`http://`, `file://`, …): not a libvirt URI.
    #[error(
        "{uri:?} is not a libvirt URI: {scheme:?} is not a libvirt driver \
         (e.g. qemu:///system, qemu+ssh://host/system, test+unix:///default?socket=PATH)"
    )]
    NotLibvirt {
        /// The URI.
        uri: String,
        /// Its scheme.
        scheme: String,
    },
}

/// libvirt's driver names: what may stand before `+transport` in a URI (hypervisor drivers,
/// the modular daemons' own drivers, and `remote`).
pub const DRIVERS: &[&str] = &[
    "qemu",
    "test",
    "lxc",
    "xen",
    "libxl",
    "vbox",
    "vmwareplayer",
    "vmwarews",
    "vmwarefusion",
    "esx",
    "gsx",
    "vpx",
    "openvz",
    "bhyve",
    "ch",
    "vz",
    "parallels",
    "hyperv",
    "network",
    "nodedev",
    "storage",
    "secret",
    "interface",
    "nwfilter",
    "remote",
];

/// libvirt's integer URI flags (`no_verify`, `no_tty`, …; `EXTRACT_URI_ARG_BOOL` in its
/// remote driver): an `int` in base 10 (`virStrToLong_i`: leading blanks and a sign allowed,
/// nothing after the digits), `0` false, anything else true. Any other text is an error, so
/// no spelling (`false`, `no`, empty) silently means "on".
fn libvirt_flag(key: &str, value: &str) -> Result<bool, String> {
    value
        .trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c'])
        .parse::<i32>()
        .map(|n| n != 0)
        .map_err(|_| format!("{key}={value}: expected an integer (0 or 1)"))
}

/// `uri` without its userinfo, for messages: errors never show a user name or password.
fn without_userinfo(uri: &str) -> String {
    let Some(i) = uri.find("://") else {
        return uri.to_owned();
    };
    let (scheme, rest) = uri.split_at(i + 3);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}{}", &rest[at + 1..]),
        None => uri.to_owned(),
    }
}

impl LibvirtUri {
    /// Parse `uri`. A password in it (`user:password@`) is refused; errors show the URI
    /// without its userinfo.
    pub fn parse(uri: &str) -> Result<Self, UriError> {
        let given = uri;
        let shown = without_userinfo(given);
        let uri = shown.as_str();
        let invalid = |reason: &str| UriError::Invalid {
            uri: uri.into(),
            reason: reason.into(),
        };
        let u = url::Url::parse(given).map_err(|e| invalid(&e.to_string()))?;
        if u.password().is_some() {
            return Err(invalid(
                "a password in the URI is not accepted: give SASL credentials in auth.conf \
                 (?authfile=) or through the credential callback, SSH ones through keys, the \
                 agent or the callback",
            ));
        }
        let (driver, transport) = match u.scheme().split_once('+') {
            Some((d, t)) => (d.to_string(), Some(t.to_string())),
            None => (u.scheme().to_string(), None),
        };
        if driver.is_empty() {
            return Err(invalid("no driver"));
        }
        if !DRIVERS.contains(&driver.as_str()) {
            return Err(UriError::NotLibvirt {
                uri: uri.into(),
                scheme: u.scheme().into(),
            });
        }
        let path = u.path().to_string();
        let mut remote_name = format!("{driver}://{path}");
        let mut socket: Option<PathBuf> = None;
        let mut no_verify = false;
        let mut pkipath = None;
        let mut ciphers = Vec::new();
        let mut sasl_mechanism = None;
        let mut authfile = None;
        let host = u.host_str().filter(|h| !h.is_empty()).map(str::to_string);
        let is_ssh = transport.as_deref() == Some("ssh");
        // A host and no transport means TLS, as in libvirt.
        let is_tls = transport.as_deref() == Some("tls") || (transport.is_none() && host.is_some());
        let unsupported = |param: &str| UriError::UnsupportedParam {
            uri: uri.into(),
            param: param.into(),
        };
        let mut ssh = SshParams::default();
        for (k, v) in u.query_pairs() {
            // libvirt compares parameter names case-insensitively (STRCASEEQ).
            let key = k.to_ascii_lowercase();
            if is_ssh && !matches!(key.as_str(), "auth" | "authfile") {
                ssh.take(uri, &k, &v)?;
                continue;
            }
            match key.as_str() {
                "socket" if !is_tls => socket = Some(PathBuf::from(v.as_ref())),
                "no_verify" if is_tls => {
                    no_verify = libvirt_flag(&k, &v).map_err(|r| invalid(&r))?;
                }
                "pkipath" if is_tls => pkipath = Some(PathBuf::from(v.as_ref())),
                "tls_ciphers" if is_tls => {
                    for c in v.split(',').filter(|c| !c.is_empty()) {
                        let c = c.to_ascii_lowercase();
                        if !TLS_CIPHERS.contains(&c.as_str()) {
                            return Err(UriError::Invalid {
                                uri: uri.into(),
                                reason: format!(
                                    "tls_ciphers: unknown cipher {c:?} (known: {})",
                                    TLS_CIPHERS.join(", ")
                                ),
                            });
                        }
                        ciphers.push(c);
                    }
                }
                "authfile" => authfile = Some(PathBuf::from(v.as_ref())),
                "auth" => match v.split_once('.') {
                    _ if v.eq_ignore_ascii_case("sasl") => {}
                    Some((kind, mech)) if kind.eq_ignore_ascii_case("sasl") && !mech.is_empty() => {
                        sasl_mechanism = Some(mech.to_ascii_uppercase());
                    }
                    _ => return Err(unsupported(&format!("auth={v}"))),
                },
                _ => return Err(unsupported(&k)),
            }
        }
        let transport = match transport.as_deref() {
            _ if is_tls => Transport::Tls(TlsTarget {
                host: host.ok_or_else(|| invalid("tls needs a host"))?,
                port: u.port().unwrap_or(DEFAULT_TLS_PORT),
                pkipath,
                no_verify,
                ciphers,
            }),
            None | Some("unix") => {
                let path = match socket {
                    Some(p) => p,
                    // libvirt runs the test driver in-process; through a daemon it needs the
                    // daemon's socket (the system socket would be a guess, and a wrong one).
                    None if driver == "test" => {
                        return Err(UriError::Missing(format!(
                            "{uri}: the test driver runs inside a daemon here (libvirt's client \
                             library runs it in-process): add ?socket=PATH naming that daemon's \
                             socket, e.g. test+unix://{path}?socket=$XDG_RUNTIME_DIR/libvirt/libvirt-sock"
                        )));
                    }
                    None => default_socket(&path)?,
                };
                Transport::Unix { path }
            }
            Some("tcp") => {
                if socket.is_some() {
                    return Err(UriError::UnsupportedParam {
                        uri: uri.into(),
                        param: "socket".into(),
                    });
                }
                let host = host.ok_or_else(|| invalid("tcp needs a host"))?;
                Transport::Tcp {
                    host,
                    port: u.port().unwrap_or(DEFAULT_TCP_PORT),
                }
            }
            Some("ssh") => {
                let host = host.ok_or_else(|| invalid("ssh needs a host"))?;
                let user = (!u.username().is_empty()).then(|| u.username().to_string());
                let (target, name) = ssh.finish(uri, user, host, u.port(), &driver, &path)?;
                remote_name = name;
                Transport::Ssh(target)
            }
            Some(t) => {
                return Err(UriError::UnsupportedTransport {
                    uri: uri.into(),
                    transport: t.into(),
                });
            }
        };
        Ok(Self {
            original: given.into(),
            driver,
            transport,
            remote_name,
            sasl_mechanism,
            authfile,
        })
    }
}

/// How an SSH connection reaches the daemon on the remote host (libvirt's `proxy=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SshProxy {
    /// `auto`: `virt-ssh-helper URI` where the remote has it, else `nc -U SOCKET` (libvirt's
    /// default for `/system`).
    Auto,
    /// `native`: `virt-ssh-helper URI` only (libvirt's default for `/session`, whose socket
    /// path only the remote side knows).
    Native,
    /// `netcat`: `nc -U SOCKET` only (implied by `socket=` or `netcat=`, as in libvirt).
    Netcat,
    /// `forward` (ours): sshd connects to the socket itself (`direct-streamlocal`); nothing
    /// runs on the remote host, but sshd must allow forwarding.
    Forward,
}

/// Which daemon a derived socket path names (libvirt's `mode=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum RemoteMode {
    /// `auto` (default): libvirt uses the monolithic name remotely (the helper probes on the
    /// remote side); `proxy=forward` tries the modular socket first, then the monolithic.
    #[default]
    Auto,
    /// `legacy`: libvirtd's `libvirt-sock`.
    Legacy,
    /// `direct`: the driver's modular daemon, `virt<driver>d-sock` (e.g. `virtqemud-sock`).
    Direct,
}

/// Where system daemons put their sockets (libvirt uses `$LOCALSTATEDIR/run` for remote
/// hosts, which may lack `/run`).
const REMOTE_RUN_DIR: &str = "/var/run/libvirt";

impl SshTarget {
    /// The daemon's socket candidates on the remote host, in the order to try them: the
    /// given `socket=`, else the path `mode` derives for `/system` (`-ro` variants when
    /// `read_only`). Empty for other paths (`/session`): only the remote side knows them.
    pub fn sockets(&self, read_only: bool) -> Vec<String> {
        if let Some(s) = &self.socket {
            return vec![s.clone()];
        }
        if self.path == "/session" || self.path.is_empty() {
            return Vec::new();
        }
        let suffix = if read_only { "sock-ro" } else { "sock" };
        let legacy = format!("{REMOTE_RUN_DIR}/libvirt-{suffix}");
        let direct = format!("{REMOTE_RUN_DIR}/virt{}d-{suffix}", self.driver);
        match self.mode {
            RemoteMode::Direct => vec![direct],
            RemoteMode::Auto if self.proxy == SshProxy::Forward => vec![direct, legacy],
            RemoteMode::Legacy | RemoteMode::Auto => vec![legacy],
        }
    }
}

/// The SSH parameters of a URI as they are read; [`SshParams::finish`] makes the target.
#[derive(Default)]
struct SshParams {
    keyfile: Option<PathBuf>,
    known_hosts: Option<PathBuf>,
    known_hosts_verify: Option<String>,
    sshauth: Option<String>,
    no_verify: bool,
    no_tty: bool,
    proxy: Option<SshProxy>,
    netcat: Option<String>,
    socket: Option<String>,
    mode: Option<RemoteMode>,
    name: Option<String>,
    proxy_jump: Option<String>,
    /// Parameters for the daemon, in order; `mode`/`socket` go to the helper's URI only.
    passthrough: Vec<(String, String, bool)>,
}

impl SshParams {
    /// Takes one `key=value`: libvirt's SSH parameters are ours, the TLS/SASL/`ssh` binary
    /// ones are refused, everything else goes to the daemon.
    fn take(&mut self, uri: &str, key: &str, value: &str) -> Result<(), UriError> {
        let bad = |why: String| UriError::Invalid {
            uri: uri.into(),
            reason: why,
        };
        let flag = |v: &str| libvirt_flag(key, v).map_err(bad);
        let v = value.to_owned();
        match key.to_ascii_lowercase().as_str() {
            "keyfile" => self.keyfile = Some(PathBuf::from(v)),
            "known_hosts" => self.known_hosts = Some(PathBuf::from(v)),
            "known_hosts_verify" => {
                check_ssh_value(key, value).map_err(bad)?;
                self.known_hosts_verify = Some(v);
            }
            "sshauth" => {
                check_ssh_value(key, value).map_err(bad)?;
                self.sshauth = Some(v);
            }
            "no_verify" => self.no_verify = flag(value)?,
            "no_tty" => self.no_tty = flag(value)?,
            "proxy" => {
                self.proxy = Some(match value {
                    "auto" => SshProxy::Auto,
                    "native" => SshProxy::Native,
                    "netcat" => SshProxy::Netcat,
                    "forward" => SshProxy::Forward,
                    _ => {
                        return Err(bad(format!(
                            "proxy={value}: expected auto, native, netcat or forward"
                        )));
                    }
                });
            }
            "netcat" => self.netcat = Some(v),
            "socket" => {
                self.socket = Some(v.clone());
                self.passthrough.push((key.to_owned(), v, true));
            }
            "mode" => {
                self.mode = Some(match value {
                    "auto" => RemoteMode::Auto,
                    "legacy" => RemoteMode::Legacy,
                    "direct" => RemoteMode::Direct,
                    _ => {
                        return Err(bad(format!(
                            "mode={value}: expected auto, legacy or direct"
                        )));
                    }
                });
                self.passthrough.push((key.to_owned(), v, true));
            }
            "name" => self.name = Some(v),
            "proxy_jump" => self.proxy_jump = Some(v),
            // Read by libvirt for other transports or its `ssh` binary: refused rather than
            // silently dropped. (`auth`, `authfile`: SASL, read for every transport.)
            "command" | "pkipath" | "tls_priority" | "no_sanity" => {
                return Err(UriError::UnsupportedParam {
                    uri: uri.into(),
                    param: key.to_owned(),
                });
            }
            _ => self.passthrough.push((key.to_owned(), v, false)),
        }
        Ok(())
    }

    /// The target and the name the daemon opens.
    fn finish(
        self,
        uri: &str,
        user: Option<String>,
        host: String,
        port: Option<u16>,
        driver: &str,
        path: &str,
    ) -> Result<(SshTarget, String), UriError> {
        let bad = |why: &str| UriError::Invalid {
            uri: uri.into(),
            reason: why.into(),
        };
        let query = |with_helper_only: bool| {
            let mut q = url::form_urlencoded::Serializer::new(String::new());
            let mut any = false;
            for (k, v, helper_only) in &self.passthrough {
                if with_helper_only || !helper_only {
                    q.append_pair(k, v);
                    any = true;
                }
            }
            // libvirt unescapes `%XX` only (xmlURIUnescapeString): a space must not be `+`.
            // A literal `+` is `%2B` by now, so every `+` left is a space.
            if any {
                format!("?{}", q.finish().replace('+', "%20"))
            } else {
                String::new()
            }
        };
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| format!("{driver}://{path}{}", query(false)));
        let helper_uri = format!("{driver}://{path}{}", query(true));
        // libvirt: an explicit socket or netcat binary means netcat; a session URI (whose
        // socket path only the remote side knows) means the helper; otherwise try both.
        let proxy = match self.proxy {
            Some(SshProxy::Native) if self.netcat.is_some() => {
                return Err(bad("netcat= cannot be used with proxy=native"));
            }
            Some(p) => p,
            None if self.socket.is_some() || self.netcat.is_some() => SshProxy::Netcat,
            None if path == "/session" || driver == "test" => SshProxy::Native,
            None => SshProxy::Auto,
        };
        let target = SshTarget {
            user,
            host,
            port,
            keyfile: self.keyfile,
            known_hosts: self.known_hosts,
            known_hosts_verify: self.known_hosts_verify,
            sshauth: self.sshauth,
            no_verify: self.no_verify,
            no_tty: self.no_tty,
            proxy,
            netcat: self.netcat,
            socket: self.socket,
            mode: self.mode.unwrap_or_default(),
            proxy_jump: self.proxy_jump,
            driver: driver.to_owned(),
            path: path.to_owned(),
            helper_uri,
        };
        if matches!(proxy, SshProxy::Netcat | SshProxy::Forward) && target.sockets(false).is_empty()
        {
            return Err(UriError::Missing(format!(
                "{uri}: the remote socket of {path} cannot be derived here; add ?socket=PATH                  or let virt-ssh-helper find it (proxy=native)"
            )));
        }
        Ok((target, name))
    }
}

/// Values whose vocabulary the SSH transport owns, checked by it when it is built in.
#[cfg(feature = "ssh")]
fn check_ssh_value(key: &str, value: &str) -> Result<(), String> {
    match key {
        "known_hosts_verify" => ssh_socket::KnownHostsVerify::parse(value)
            .map(|_| ())
            .ok_or_else(|| format!("known_hosts_verify={value}: expected normal, auto or ignore")),
        _ => ssh_socket::AuthMethod::parse_list(value)
            .map(|_| ())
            .map_err(|e| format!("sshauth={value}: {e}")),
    }
}

/// Without the SSH transport nothing can dial the URI; `Client::connect` says so.
#[cfg(not(feature = "ssh"))]
#[allow(clippy::unnecessary_wraps)]
fn check_ssh_value(_: &str, _: &str) -> Result<(), String> {
    Ok(())
}

/// The local socket for `qemu:///system` / `qemu:///session` style paths.
fn default_socket(path: &str) -> Result<PathBuf, UriError> {
    if path == "/session" {
        let var = std::env::var_os;
        return session_socket(var("XDG_RUNTIME_DIR"), var("XDG_CACHE_HOME"), var("HOME"))
            .ok_or_else(|| {
                UriError::Missing(
                    "neither XDG_RUNTIME_DIR, XDG_CACHE_HOME nor HOME is set: cannot find the \
                     session socket; use ?socket=PATH"
                        .into(),
                )
            });
    }
    Ok(PathBuf::from(SYSTEM_SOCKET))
}

/// Where a session daemon listens, as libvirt computes it (glib's user runtime directory):
/// `$XDG_RUNTIME_DIR`, else the user cache directory (`$XDG_CACHE_HOME`, else
/// `$HOME/.cache`), then `libvirt/libvirt-sock`. Empty variables count as unset.
fn session_socket(
    runtime: Option<OsString>,
    cache: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    let dir = set(runtime)
        .or_else(|| set(cache))
        .or_else(|| set(home).map(|h| h.join(".cache")))?;
    Some(dir.join("libvirt/libvirt-sock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_forms() {
        let u = LibvirtUri::parse("qemu:///system").unwrap();
        assert_eq!(
            u.transport,
            Transport::Unix {
                path: SYSTEM_SOCKET.into()
            }
        );
        assert_eq!(u.remote_name, "qemu:///system");

        let u = LibvirtUri::parse("test+unix:///default?socket=/tmp/x/libvirt-sock").unwrap();
        assert_eq!(
            u.transport,
            Transport::Unix {
                path: "/tmp/x/libvirt-sock".into()
            }
        );
        assert_eq!(u.remote_name, "test:///default");

        let u = LibvirtUri::parse("qemu+tcp://10.0.0.1/system").unwrap();
        assert_eq!(
            u.transport,
            Transport::Tcp {
                host: "10.0.0.1".into(),
                port: 16509
            }
        );

        let u = LibvirtUri::parse(
            "qemu+ssh://ops@h.example:2222/system?keyfile=/k&known_hosts=/kh&no_verify=1",
        )
        .unwrap();
        let Transport::Ssh(t) = u.transport else {
            panic!()
        };
        assert_eq!(t.user.as_deref(), Some("ops"));
        assert_eq!((t.host.as_str(), t.port), ("h.example", Some(2222)));
        assert_eq!(t.keyfile, Some("/k".into()));
        assert!(t.no_verify);
        assert_eq!(t.proxy, SshProxy::Auto);
        assert_eq!(t.sockets(false), vec![SYSTEM_SOCKET.to_owned()]);
        assert_eq!(u.remote_name, "qemu:///system");
    }

    fn ssh(uri: &str) -> (SshTarget, String) {
        let u = LibvirtUri::parse(uri).unwrap();
        let Transport::Ssh(t) = u.transport else {
            panic!("{uri}")
        };
        (t, u.remote_name)
    }

    #[test]
    fn ssh_proxy_follows_libvirt() {
        // An explicit socket forces netcat; a session URI the helper; else both.
        assert_eq!(
            ssh("qemu+ssh://h/system?socket=/s").0.proxy,
            SshProxy::Netcat
        );
        assert_eq!(
            ssh("qemu+ssh://h/system?netcat=/bin/nc").0.proxy,
            SshProxy::Netcat
        );
        assert_eq!(ssh("qemu+ssh://h/session").0.proxy, SshProxy::Native);
        assert_eq!(ssh("qemu+ssh://h/system").0.proxy, SshProxy::Auto);
        let (t, _) = ssh("qemu+ssh://h/system?proxy=forward&mode=auto");
        assert_eq!(
            t.sockets(true),
            vec![
                "/var/run/libvirt/virtqemud-sock-ro".to_owned(),
                "/var/run/libvirt/libvirt-sock-ro".to_owned()
            ]
        );
        let (t, _) = ssh("qemu+ssh://h/system?proxy=netcat&mode=direct");
        assert_eq!(
            t.sockets(false),
            vec!["/var/run/libvirt/virtqemud-sock".to_owned()]
        );
        assert!(matches!(
            LibvirtUri::parse("qemu+ssh://h/session?proxy=netcat"),
            Err(UriError::Missing(_))
        ));
        assert!(LibvirtUri::parse("qemu+ssh://h/system?proxy=native&netcat=nc").is_err());
        assert!(LibvirtUri::parse("qemu+ssh://h/system?proxy=bogus").is_err());
        assert!(LibvirtUri::parse("qemu+ssh://h/system?mode=bogus").is_err());
        assert!(LibvirtUri::parse("qemu+ssh://h/system?no_tty=yes").is_err());
    }

    #[test]
    fn unknown_ssh_params_reach_the_daemon() {
        let (t, name) = ssh("qemu+ssh://h/system?foo=a%20b&mode=direct&keyfile=/k&bar=1");
        assert_eq!(name, "qemu:///system?foo=a%20b&bar=1");
        assert_eq!(t.helper_uri, "qemu:///system?foo=a%20b&mode=direct&bar=1");
        let (_, name) = ssh("qemu+ssh://h/system?name=qemu:///embed");
        assert_eq!(name, "qemu:///embed");
        for refused in ["command=ssh", "pkipath=/p", "tls_priority=x"] {
            assert!(
                matches!(
                    LibvirtUri::parse(&format!("qemu+ssh://h/system?{refused}")),
                    Err(UriError::UnsupportedParam { .. })
                ),
                "{refused}"
            );
        }
    }

    #[test]
    fn session_uses_xdg_runtime_dir_or_explicit_socket() {
        let u = LibvirtUri::parse("qemu+unix:///session?socket=/run/s").unwrap();
        assert_eq!(
            u.transport,
            Transport::Unix {
                path: "/run/s".into()
            }
        );
        // Over SSH the session socket is found by virt-ssh-helper on the remote side.
        assert_eq!(
            ssh("qemu+ssh://h/session").0.sockets(false),
            Vec::<String>::new()
        );
    }

    #[test]
    fn session_socket_falls_back_like_libvirt() {
        let s = |r: &str, c: &str, h: &str| {
            let v = |x: &str| (!x.is_empty()).then(|| OsString::from(x));
            session_socket(v(r), v(c), v(h))
        };
        assert_eq!(
            s("/run/user/7", "/c", "/h"),
            Some("/run/user/7/libvirt/libvirt-sock".into())
        );
        assert_eq!(s("", "/c", "/h"), Some("/c/libvirt/libvirt-sock".into()));
        assert_eq!(
            s("", "", "/h"),
            Some("/h/.cache/libvirt/libvirt-sock".into())
        );
        assert_eq!(s("", "", ""), None);
        assert_eq!(
            session_socket(Some(OsString::new()), None, Some("/h".into())),
            Some("/h/.cache/libvirt/libvirt-sock".into())
        );
    }

    #[test]
    fn tls_forms() {
        let u = LibvirtUri::parse("qemu+tls://h.example/system").unwrap();
        assert_eq!(
            u.transport,
            Transport::Tls(TlsTarget {
                host: "h.example".into(),
                port: DEFAULT_TLS_PORT,
                pkipath: None,
                no_verify: false,
                ciphers: Vec::new(),
            })
        );
        assert_eq!(u.remote_name, "qemu:///system");
        // No transport but a host: TLS, as in libvirt.
        let u = LibvirtUri::parse("qemu://10.1.2.3:16600/system?pkipath=/p&no_verify=1").unwrap();
        let Transport::Tls(t) = u.transport else {
            panic!()
        };
        assert_eq!((t.host.as_str(), t.port), ("10.1.2.3", 16600));
        assert_eq!(t.pkipath, Some("/p".into()));
        assert!(t.no_verify);
        let u = LibvirtUri::parse("qemu+tls://h/system?tls_ciphers=AES128-GCM,chacha20-poly1305")
            .unwrap();
        let Transport::Tls(t) = u.transport else {
            panic!()
        };
        assert_eq!(t.ciphers, ["aes128-gcm", "chacha20-poly1305"]);
        let e = LibvirtUri::parse("qemu+tls://h/system?tls_ciphers=rc4").unwrap_err();
        assert!(e.to_string().contains("unknown cipher"), "{e}");
        let u = LibvirtUri::parse(
            "test+tls://127.0.0.1/default?auth=sasl.scram-sha-256&authfile=/a.conf",
        )
        .unwrap();
        assert_eq!(u.remote_name, "test:///default");
        assert_eq!(u.sasl_mechanism.as_deref(), Some("SCRAM-SHA-256"));
        assert_eq!(u.authfile, Some("/a.conf".into()));
        let u = LibvirtUri::parse("qemu+tcp://h/system?auth=sasl").unwrap();
        assert_eq!(u.sasl_mechanism, None);
        for bad in [
            "qemu+tls://h/system?socket=/s",
            "qemu+tls://h/system?keyfile=/k",
            "qemu+tls://h/system?auth=polkit",
            "qemu+unix:///system?pkipath=/p",
        ] {
            assert!(
                matches!(
                    LibvirtUri::parse(bad),
                    Err(UriError::UnsupportedParam { .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            LibvirtUri::parse("qemu+tls:///system"),
            Err(UriError::Invalid { .. })
        ));
    }

    /// libvirt reads `no_verify` as an integer (`EXTRACT_URI_ARG_BOOL`: `virStrToLong_i`,
    /// the name case-insensitive): 0 verifies, any other integer does not, anything else is
    /// an invalid URI. A spelling must never switch verification off.
    #[test]
    fn tls_no_verify_is_an_integer_as_in_libvirt() {
        let no_verify = |v: &str| match LibvirtUri::parse(&format!("qemu+tls://h/system?{v}")) {
            Ok(LibvirtUri {
                transport: Transport::Tls(t),
                ..
            }) => Ok(t.no_verify),
            Ok(u) => panic!("{u:?}"),
            Err(e) => Err(e),
        };
        for (v, want) in [
            ("no_verify=0", false),
            ("no_verify=1", true),
            ("no_verify=2", true),
            ("no_verify=-1", true),
            ("no_verify=+0", false),
            ("no_verify=%200", false),
            ("NO_VERIFY=1", true),
        ] {
            assert_eq!(no_verify(v).map_err(|e| e.to_string()), Ok(want), "{v}");
        }
        for v in [
            "no_verify=false",
            "no_verify=no",
            "no_verify=off",
            "no_verify=",
            "no_verify=true",
            "no_verify=0x1",
            "no_verify=1%20",
            "no_verify=99999999999",
        ] {
            match no_verify(v) {
                Err(UriError::Invalid { reason, .. }) => {
                    assert!(reason.contains("no_verify"), "{v}: {reason}");
                }
                other => panic!("{v}: {other:?} (want an invalid URI)"),
            }
        }
        // The SSH parameters are read by the same rule.
        assert!(LibvirtUri::parse("qemu+ssh://h/system?no_verify=false").is_err());
        assert!(LibvirtUri::parse("qemu+ssh://h/system?no_tty=off").is_err());
    }

    /// A password in the URI is refused (libvirt's client has no use for one; credentials
    /// come from auth.conf or the callback), and no error ever shows the URI's userinfo.
    #[test]
    fn passwords_are_refused_and_userinfo_never_shown() {
        for uri in [
            "qemu+ssh://ops:hunter2@h/system",
            "qemu+tls://ops:hunter2@h/system",
            "qemu+tcp://:hunter2@h/system",
        ] {
            let e = LibvirtUri::parse(uri).expect_err("a password in the URI");
            let shown = format!("{e} {e:?}");
            assert!(!shown.contains("hunter2"), "{uri}: {shown}");
            assert!(shown.contains("password"), "{uri}: {shown}");
        }
        for uri in [
            "qemu+ssh://ops:hunter2@h:99999/system",
            "qemu+ssh://ops:hunter2@h/system?frobnicate=1&no_verify=x",
            "qemu+tls://ops@h/system?no_verify=x",
            "qemu+libssh2://ops:hunter2@h/system",
        ] {
            let e = LibvirtUri::parse(uri).expect_err("invalid");
            let shown = format!("{e} {e:?}");
            assert!(
                !shown.contains("hunter2") && !shown.contains("ops"),
                "{uri}: {shown}"
            );
        }
    }

    #[test]
    fn non_libvirt_schemes_are_refused_as_such() {
        for bad in [
            "http://host/",
            "https://h:8443/x",
            "file:///tmp/x",
            "ssh://h/system",
        ] {
            let e = LibvirtUri::parse(bad).unwrap_err();
            assert!(matches!(e, UriError::NotLibvirt { .. }), "{bad}: {e:?}");
            assert!(e.to_string().contains("not a libvirt URI"), "{e}");
            assert!(!e.to_string().contains("transport"), "{e}");
        }
        for good in [
            "qemu:///system",
            "lxc:///system",
            "network:///system",
            "qemu+tls://h/system",
        ] {
            assert!(LibvirtUri::parse(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn test_driver_without_socket_says_what_to_add() {
        for uri in ["test:///default", "test+unix:///default"] {
            let e = LibvirtUri::parse(uri).unwrap_err();
            assert!(matches!(e, UriError::Missing(_)), "{uri}: {e:?}");
            assert!(e.to_string().contains("?socket=PATH"), "{e}");
        }
        assert!(LibvirtUri::parse("test+unix:///default?socket=/s").is_ok());
        assert!(LibvirtUri::parse("test+tls://h/default").is_ok());
    }

    #[test]
    fn unknown_things_are_errors() {
        assert!(matches!(
            LibvirtUri::parse("qemu+libssh2://h/system"),
            Err(UriError::UnsupportedTransport { .. })
        ));
        assert!(matches!(
            LibvirtUri::parse("qemu:///system?frobnicate=1"),
            Err(UriError::UnsupportedParam { .. })
        ));
        assert!(matches!(
            LibvirtUri::parse("qemu+unix:///system?keyfile=/k"),
            Err(UriError::UnsupportedParam { .. })
        ));
        assert!(matches!(
            LibvirtUri::parse("not a uri"),
            Err(UriError::Invalid { .. })
        ));
    }
}
