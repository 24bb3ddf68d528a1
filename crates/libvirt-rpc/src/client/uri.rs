//! libvirt connection URIs: `driver[+transport]://[user@][host][:port]/path[?params]`.
//!
//! Supported: `qemu:///system`, `qemu:///session`, `qemu+unix:///system?socket=PATH`,
//! `test+unix:///default?socket=PATH`, `qemu+tcp://host:port/system`,
//! `qemu+ssh://user@host:port/system?keyfile=PATH&known_hosts=PATH&no_verify=1&socket=PATH`
//! (parsed into an [`SshTarget`] for an SSH transport to dial), and TLS:
//! `qemu+tls://host[:port]/system?pkipath=DIR&no_verify=1`, `test+tls://…`, and
//! `qemu://host/system` (a host and no `+transport` means TLS, as in libvirt).
//!
//! On every transport: `auth=sasl` or `auth=sasl.MECH` (e.g. `sasl.scram-sha-256`) and
//! `authfile=PATH` (libvirt's auth.conf for SASL credentials). Anything else is a clear
//! error, never silently ignored.

use std::ffi::OsString;
use std::path::PathBuf;

/// libvirt's system socket.
pub const SYSTEM_SOCKET: &str = "/var/run/libvirt/libvirt-sock";
/// libvirtd's TCP port.
pub const DEFAULT_TCP_PORT: u16 = 16509;
/// libvirtd's TLS port.
pub const DEFAULT_TLS_PORT: u16 = 16514;

/// What to dial.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
}

/// The SSH part of a `+ssh` URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    /// Remote user (`None`: the local user name).
    pub user: Option<String>,
    /// Host.
    pub host: String,
    /// Port (default 22).
    pub port: u16,
    /// `keyfile=`: private key to authenticate with.
    pub keyfile: Option<PathBuf>,
    /// `known_hosts=`: known-hosts file (default `~/.ssh/known_hosts`).
    pub known_hosts: Option<PathBuf>,
    /// `no_verify=1`: skip host-key verification (logged as a warning).
    pub no_verify: bool,
    /// Remote libvirt socket (`socket=`; default: the system socket).
    pub socket: PathBuf,
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
    /// session socket).
    #[error("{0}")]
    Missing(String),
}

impl LibvirtUri {
    /// Parse `uri`.
    pub fn parse(uri: &str) -> Result<Self, UriError> {
        let invalid = |reason: &str| UriError::Invalid {
            uri: uri.into(),
            reason: reason.into(),
        };
        let u = url::Url::parse(uri).map_err(|e| invalid(&e.to_string()))?;
        let (driver, transport) = match u.scheme().split_once('+') {
            Some((d, t)) => (d.to_string(), Some(t.to_string())),
            None => (u.scheme().to_string(), None),
        };
        if driver.is_empty() {
            return Err(invalid("no driver"));
        }
        let path = u.path().to_string();
        let remote_name = format!("{driver}://{path}");
        let mut socket: Option<PathBuf> = None;
        let mut keyfile = None;
        let mut known_hosts = None;
        let mut no_verify = false;
        let mut pkipath = None;
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
        for (k, v) in u.query_pairs() {
            match k.as_ref() {
                "socket" if !is_tls => socket = Some(PathBuf::from(v.as_ref())),
                "keyfile" if is_ssh => keyfile = Some(PathBuf::from(v.as_ref())),
                "known_hosts" if is_ssh => known_hosts = Some(PathBuf::from(v.as_ref())),
                "no_verify" if is_ssh || is_tls => no_verify = v != "0",
                "pkipath" if is_tls => pkipath = Some(PathBuf::from(v.as_ref())),
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
            }),
            None | Some("unix") => {
                let path = match socket {
                    Some(p) => p,
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
                let socket = match socket {
                    Some(s) => s,
                    None if path == "/system" => PathBuf::from(SYSTEM_SOCKET),
                    None => {
                        return Err(UriError::Missing(format!(
                            "{uri}: a remote session socket cannot be guessed; add ?socket=PATH"
                        )));
                    }
                };
                let user = (!u.username().is_empty()).then(|| u.username().to_string());
                Transport::Ssh(SshTarget {
                    user,
                    host,
                    port: u.port().unwrap_or(22),
                    keyfile,
                    known_hosts,
                    no_verify,
                    socket,
                })
            }
            Some(t) => {
                return Err(UriError::UnsupportedTransport {
                    uri: uri.into(),
                    transport: t.into(),
                });
            }
        };
        Ok(Self {
            original: uri.into(),
            driver,
            transport,
            remote_name,
            sasl_mechanism,
            authfile,
        })
    }
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
        assert_eq!((t.host.as_str(), t.port), ("h.example", 2222));
        assert_eq!(t.keyfile, Some("/k".into()));
        assert!(t.no_verify);
        assert_eq!(t.socket, PathBuf::from(SYSTEM_SOCKET));
        assert_eq!(u.remote_name, "qemu:///system");
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
        assert!(matches!(
            LibvirtUri::parse("qemu+ssh://h/session"),
            Err(UriError::Missing(_))
        ));
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
