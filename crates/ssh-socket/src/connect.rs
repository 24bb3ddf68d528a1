//! Dial, verify the host, authenticate, open the streamlocal channel, start the tasks.

use std::borrow::Cow;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use russh::client::{self, AuthResult, DisconnectReason, Handle};
use russh::keys::agent::AgentIdentity;
use russh::keys::agent::client::AgentClient;
use russh::keys::{Algorithm, HashAlg, PrivateKey, PrivateKeyWithHashAlg, PublicKey};
use russh::{ChannelOpenFailure, Preferred};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout_at};
use tracing::Instrument;

use crate::known_hosts;
use crate::stream::{Shared, pump};
use crate::{CloseHandle, CloseReason, KeyFileError, SshConfig, SshError, SshStream};

/// Dials `cfg.host:cfg.port` and returns the forwarded socket and a handle that closes it.
///
/// One SSH session per call. Must run inside a tokio runtime (it spawns two small tasks).
/// Everything up to the open channel is bounded by `cfg.connect_timeout`.
pub async fn connect(cfg: &SshConfig) -> Result<(SshStream, CloseHandle), SshError> {
    session(cfg, |deadline| async move {
        let dial = TcpStream::connect((cfg.host.as_str(), cfg.port));
        match timeout_at(deadline, dial).await {
            Err(_) => Err(timed_out(cfg, "tcp connect")),
            Ok(Err(source)) => Err(SshError::Connect {
                addr: cfg.addr(),
                source,
            }),
            Ok(Ok(s)) => Ok(s),
        }
    })
    .await
}

/// Like [`connect`], over a TCP connection the caller already made (custom socket options, a
/// relay). `cfg.host` and `cfg.port` still name the host for `known_hosts`.
pub async fn connect_socket(
    cfg: &SshConfig,
    socket: std::net::TcpStream,
) -> Result<(SshStream, CloseHandle), SshError> {
    session(cfg, |_| async move {
        socket
            .set_nonblocking(true)
            .and_then(|()| TcpStream::from_std(socket))
            .map_err(|source| SshError::Connect {
                addr: cfg.addr(),
                source,
            })
    })
    .await
}

/// One session over the TCP stream `tcp` yields (given the deadline): credentials checked
/// first, everything bounded by `cfg.connect_timeout`, in one `ssh_connect` span.
async fn session<F, Fut>(cfg: &SshConfig, tcp: F) -> Result<(SshStream, CloseHandle), SshError>
where
    F: FnOnce(Instant) -> Fut,
    Fut: Future<Output = Result<TcpStream, SshError>>,
{
    let deadline = Instant::now() + cfg.connect_timeout;
    let span =
        tracing::info_span!("ssh_connect", host = %cfg.host, port = cfg.port, user = %cfg.user);
    async {
        check_credentials(cfg)?;
        let tcp = tcp(deadline).await?;
        establish(cfg, tcp, deadline).await
    }
    .instrument(span)
    .await
}

fn timed_out(cfg: &SshConfig, stage: &'static str) -> SshError {
    SshError::ConnectTimeout {
        addr: cfg.addr(),
        after: cfg.connect_timeout,
        stage,
    }
}

fn check_credentials(cfg: &SshConfig) -> Result<(), SshError> {
    if cfg.key_files.is_empty() && cfg.agent_path().is_none() {
        return Err(SshError::Config {
            reason: "no credentials: no key files given and no ssh-agent (SSH_AUTH_SOCK unset \
                     or use_agent off)"
                .into(),
        });
    }
    Ok(())
}

/// Shuts the socket down if connecting fails or is cancelled, so russh's task never lingers.
struct SetupGuard(Option<Arc<Shared>>);

impl Drop for SetupGuard {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            s.finish(CloseReason::Local);
        }
    }
}

async fn establish(
    cfg: &SshConfig,
    tcp: TcpStream,
    deadline: Instant,
) -> Result<(SshStream, CloseHandle), SshError> {
    let addr = cfg.addr();
    let io = |source| SshError::Connect {
        addr: addr.clone(),
        source,
    };
    tcp.set_nodelay(true).map_err(io)?;
    // Our own descriptor of the socket: the one thing that can stop russh's session task.
    let dup = socket2::SockRef::from(&tcp).try_clone().map_err(io)?;
    let shared = Arc::new(Shared::new(dup));
    let mut guard = SetupGuard(Some(Arc::clone(&shared)));

    let known_hosts = if cfg.no_verify {
        None
    } else {
        Some(known_hosts_path(cfg)?)
    };
    let config = russh_config(cfg, known_hosts.as_deref())?;
    let handler = ClientHandler {
        host: cfg.host.clone(),
        port: cfg.port,
        known_hosts,
        shared: Arc::clone(&shared),
    };

    let mut handle = match timeout_at(deadline, client::connect_stream(config, tcp, handler)).await
    {
        Err(_) => return Err(timed_out(cfg, "handshake")),
        Ok(Err(HandlerError::HostKey(e))) => return Err(*e),
        Ok(Err(HandlerError::Russh(e))) => {
            return Err(SshError::Handshake {
                stage: "handshake",
                message: e.to_string(),
            });
        }
        Ok(Ok(h)) => h,
    };

    match timeout_at(deadline, authenticate(&mut handle, cfg)).await {
        Err(_) => return Err(timed_out(cfg, "authentication")),
        Ok(r) => r?,
    }
    tracing::debug!("authenticated");

    let channel = match timeout_at(
        deadline,
        handle.channel_open_direct_streamlocal(cfg.socket_path.as_str()),
    )
    .await
    {
        Err(_) => return Err(timed_out(cfg, "channel open")),
        Ok(Err(russh::Error::ChannelOpenFailure(f))) => {
            return Err(SshError::ChannelOpen {
                socket_path: cfg.socket_path.clone(),
                reason: describe_open_failure(&f),
            });
        }
        Ok(Err(e)) => {
            return Err(SshError::Handshake {
                stage: "channel open",
                message: e.to_string(),
            });
        }
        Ok(Ok(c)) => c,
    };
    tracing::debug!(socket = %cfg.socket_path, "channel open");

    let (read_half, write_half) = channel.split();
    let writer = Box::new(write_half.make_writer());
    // Messages are at most `maximum_packet_size` (32 KiB) each.
    let slots = (cfg.read_buffer / 32_768).max(1);
    let (tx, rx) = mpsc::channel(slots);
    let span = tracing::Span::current();
    tokio::spawn(pump(read_half, tx, Arc::clone(&shared)).instrument(span.clone()));
    tokio::spawn(watch(handle, Arc::clone(&shared)).instrument(span));

    guard.0 = None;
    let stream = SshStream::new(Arc::clone(&shared), rx, writer);
    Ok((stream, CloseHandle { shared }))
}

/// Owns the russh handle (keeping the session up) and records why the session ended.
async fn watch(handle: Handle<ClientHandler>, shared: Arc<Shared>) {
    let reason = match handle.await {
        Ok(()) => CloseReason::Disconnected {
            description: "session ended".into(),
        },
        Err(HandlerError::Russh(e)) => CloseReason::from_russh(&e),
        Err(HandlerError::HostKey(e)) => CloseReason::Protocol {
            message: e.to_string(),
        },
    };
    // No-op when the handler or a local close already recorded a reason.
    shared.finish(reason);
    shared.set_terminated();
    tracing::debug!(reason = ?shared.reason(), "ssh session task ended");
}

fn describe_open_failure(f: &ChannelOpenFailure) -> String {
    match f {
        ChannelOpenFailure::ConnectFailed => {
            "connect failed (no such socket, not a socket, or permission denied)".into()
        }
        ChannelOpenFailure::AdministrativelyProhibited => {
            "administratively prohibited (AllowStreamLocalForwarding / DisableForwarding?)".into()
        }
        other => format!("{other:?}"),
    }
}

fn known_hosts_path(cfg: &SshConfig) -> Result<PathBuf, SshError> {
    if let Some(p) = &cfg.known_hosts {
        return Ok(p.clone());
    }
    match std::env::var_os("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".ssh").join("known_hosts")),
        None => Err(SshError::KnownHosts {
            path: PathBuf::from("~/.ssh/known_hosts"),
            reason: "HOME is not set; give known_hosts explicitly".into(),
        }),
    }
}

fn russh_config(
    cfg: &SshConfig,
    known_hosts: Option<&Path>,
) -> Result<Arc<client::Config>, SshError> {
    let mut ciphers = Vec::with_capacity(cfg.ciphers.len());
    for name in &cfg.ciphers {
        let c = russh::cipher::Name::try_from(name.as_str()).map_err(|()| SshError::Config {
            reason: format!("unknown cipher {name:?}"),
        })?;
        ciphers.push(c);
    }
    let mut preferred = Preferred {
        cipher: Cow::Owned(ciphers),
        ..Preferred::default()
    };
    if let Some(path) = known_hosts {
        preferred.key = Cow::Owned(host_key_order(path, cfg)?);
    }
    Ok(Arc::new(client::Config {
        keepalive_interval: cfg.keepalive_interval,
        keepalive_max: cfg.keepalive_max,
        inactivity_timeout: cfg.inactivity_timeout,
        nodelay: true,
        preferred,
        ..client::Config::default()
    }))
}

/// Host key algorithms with those `known_hosts` records for this host first, as OpenSSH does,
/// so a host known by its RSA key is not reported unknown because it also has an ed25519 key.
fn host_key_order(path: &Path, cfg: &SshConfig) -> Result<Vec<Algorithm>, SshError> {
    let known: Vec<Algorithm> = known_hosts::entries_for(path, &cfg.host, cfg.port)?
        .into_iter()
        .filter(|e| !e.revoked)
        .map(|e| e.key.algorithm())
        .collect();
    let mut order: Vec<Algorithm> = Preferred::default().key.into_owned();
    order.sort_by_key(|a| {
        !known.iter().any(|k| match (k, a) {
            (Algorithm::Rsa { .. }, Algorithm::Rsa { .. }) => true,
            _ => k == a,
        })
    });
    Ok(order)
}

#[derive(Debug)]
enum HandlerError {
    Russh(russh::Error),
    HostKey(Box<SshError>),
}

impl From<russh::Error> for HandlerError {
    fn from(e: russh::Error) -> Self {
        Self::Russh(e)
    }
}

struct ClientHandler {
    host: String,
    port: u16,
    /// `None` when verification is off.
    known_hosts: Option<PathBuf>,
    shared: Arc<Shared>,
}

impl client::Handler for ClientHandler {
    type Error = HandlerError;

    async fn check_server_key(
        &mut self,
        server_public_key: &russh::keys::PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let key = server_public_key.public_key();
        let Some(path) = &self.known_hosts else {
            tracing::warn!(
                host = %self.host,
                key_type = key.algorithm().as_str(),
                fingerprint = %key.fingerprint(HashAlg::Sha256),
                "host key NOT verified (no_verify is set)"
            );
            return Ok(true);
        };
        match known_hosts::verify(path, &self.host, self.port, &key) {
            Ok(()) => Ok(true),
            Err(e) => {
                tracing::warn!(error = %e, "host key rejected");
                Err(HandlerError::HostKey(Box::new(e)))
            }
        }
    }

    async fn disconnected(
        &mut self,
        reason: DisconnectReason<Self::Error>,
    ) -> Result<(), Self::Error> {
        match reason {
            DisconnectReason::ReceivedDisconnect(info) => {
                self.shared.finish(CloseReason::Disconnected {
                    description: info.message,
                });
                Ok(())
            }
            DisconnectReason::Error(e) => {
                if let HandlerError::Russh(r) = &e {
                    self.shared.finish(CloseReason::from_russh(r));
                }
                Err(e)
            }
        }
    }
}

async fn authenticate(handle: &mut Handle<ClientHandler>, cfg: &SshConfig) -> Result<(), SshError> {
    let mut tried = Vec::new();
    let mut remaining = Vec::new();
    let proto = |e: russh::Error| SshError::Handshake {
        stage: "authentication",
        message: e.to_string(),
    };

    for path in &cfg.key_files {
        let key = load_key(path, cfg.passphrase.as_deref())?;
        let hash = rsa_hash(handle, key.algorithm()).await.map_err(proto)?;
        let desc = format!(
            "publickey {} ({})",
            path.display(),
            describe(key.public_key())
        );
        let r = handle
            .authenticate_publickey(&cfg.user, PrivateKeyWithHashAlg::new(Arc::new(key), hash))
            .await
            .map_err(proto)?;
        tracing::debug!(key = %desc, accepted = r.success(), "offered key");
        match r {
            AuthResult::Success => return Ok(()),
            AuthResult::Failure {
                remaining_methods, ..
            } => {
                remaining = remaining_methods.iter().map(String::from).collect();
                tried.push(desc);
            }
        }
    }

    let mut agent_error = None;
    if let Some(agent) = cfg.agent_path() {
        match agent_auth(handle, &agent, cfg, &mut tried, &mut remaining).await {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(reason) => agent_error = Some(reason),
        }
    }
    if let Some(reason) = agent_error {
        if tried.is_empty() {
            return Err(SshError::Agent { reason });
        }
        tried.push(format!("ssh-agent (failed: {reason})"));
    }
    Err(SshError::Auth {
        user: cfg.user.clone(),
        tried,
        remaining,
    })
}

/// Offers each agent key; `Ok(true)` once one is accepted, `Err` if the agent is unusable.
async fn agent_auth(
    handle: &mut Handle<ClientHandler>,
    socket: &Path,
    cfg: &SshConfig,
    tried: &mut Vec<String>,
    remaining: &mut Vec<String>,
) -> Result<bool, String> {
    let mut agent = AgentClient::connect_uds(socket)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?;
    let identities = agent
        .request_identities()
        .await
        .map_err(|e| e.to_string())?;
    for id in identities {
        let AgentIdentity::PublicKey { key, .. } = id else {
            continue;
        };
        let hash = rsa_hash(handle, key.algorithm())
            .await
            .map_err(|e| e.to_string())?;
        let desc = format!("ssh-agent key ({})", describe(&key));
        let r = handle
            .authenticate_publickey_with(&cfg.user, key, hash, &mut agent)
            .await
            .map_err(|e| format!("{e:?}"))?;
        match r {
            AuthResult::Success => return Ok(true),
            AuthResult::Failure {
                remaining_methods, ..
            } => {
                *remaining = remaining_methods.iter().map(String::from).collect();
                tried.push(desc);
            }
        }
    }
    Ok(false)
}

async fn rsa_hash(
    handle: &Handle<ClientHandler>,
    alg: Algorithm,
) -> Result<Option<HashAlg>, russh::Error> {
    if matches!(alg, Algorithm::Rsa { .. }) {
        Ok(handle.best_supported_rsa_hash().await?.flatten())
    } else {
        Ok(None)
    }
}

fn describe(key: &PublicKey) -> String {
    format!(
        "{} {}",
        key.algorithm().as_str(),
        key.fingerprint(HashAlg::Sha256)
    )
}

fn load_key(path: &Path, passphrase: Option<&str>) -> Result<PrivateKey, SshError> {
    let err = |reason| SshError::KeyFile {
        path: path.to_owned(),
        reason,
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| err(KeyFileError::Unreadable(e.to_string())))?;
    match russh::keys::decode_secret_key(&text, passphrase) {
        Ok(k) => Ok(k),
        Err(russh::keys::Error::KeyIsEncrypted) => Err(err(KeyFileError::EncryptedKeyNoPassphrase)),
        Err(e) if passphrase.is_some() && key_is_encrypted(&text) => {
            Err(err(KeyFileError::BadPassphrase(e.to_string())))
        }
        Err(e) => Err(err(KeyFileError::Invalid(e.to_string()))),
    }
}

/// Whether an OpenSSH or PEM private key file is encrypted, without decrypting it.
fn key_is_encrypted(text: &str) -> bool {
    if text.contains("ENCRYPTED") || text.contains("Proc-Type: 4,ENCRYPTED") {
        return true;
    }
    PrivateKey::from_openssh(text).is_ok_and(|k| k.is_encrypted())
}
