//! Dial, verify each host, authenticate, hop through jump hosts, open the channel, start the
//! tasks.

use std::borrow::Cow;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use russh::client::{self, AuthResult, DisconnectReason, Handle, KeyboardInteractiveAuthResponse};
use russh::keys::agent::AgentIdentity;
use russh::keys::agent::client::AgentClient;
use russh::keys::{Algorithm, HashAlg, PrivateKey, PrivateKeyWithHashAlg, PublicKey};
use russh::{ChannelMsg, ChannelOpenFailure, Preferred};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout_at};
use tracing::Instrument;
use zeroize::Zeroizing;

use crate::config::{AuthMethod, Credentials, KnownHostsVerify, Prompt, RemoteChannel};
use crate::known_hosts;
use crate::stream::{Killer, RemoteExit, RusshSink, Shared, pump};
use crate::{CloseHandle, CloseReason, KeyFileError, SshConfig, SshError, SshStream};

/// Dials the first hop (`cfg.proxy_jump[0]`, else `cfg.host:cfg.port`) and returns the
/// channel [`SshConfig::channel`] names on `cfg.host`, and a handle that closes it all.
///
/// One SSH session per hop, each tunnelled through the one before it (`direct-tcpip`). Must
/// run inside a tokio runtime (it spawns two small tasks per hop). Everything up to the open
/// channel is bounded by `cfg.connect_timeout`.
pub async fn connect(cfg: &SshConfig) -> Result<(SshStream, CloseHandle), SshError> {
    let first = cfg.proxy_jump.first().unwrap_or(cfg);
    dial(cfg, |deadline| async move {
        let dial = TcpStream::connect((first.host.as_str(), first.port));
        match timeout_at(deadline, dial).await {
            Err(_) => Err(timed_out(first, cfg, "tcp connect")),
            Ok(Err(error)) => Err(SshError::Connect {
                addr: first.addr(),
                error,
            }),
            Ok(Ok(s)) => Ok(s),
        }
    })
    .await
}

/// Like [`connect`], over a TCP connection to the first hop the caller already made (custom
/// socket options, a relay). The hosts' names still come from `cfg` (for `known_hosts`).
pub async fn connect_socket(
    cfg: &SshConfig,
    socket: std::net::TcpStream,
) -> Result<(SshStream, CloseHandle), SshError> {
    let first = cfg.proxy_jump.first().unwrap_or(cfg);
    dial(cfg, |_| async move {
        socket
            .set_nonblocking(true)
            .and_then(|()| TcpStream::from_std(socket))
            .map_err(|error| SshError::Connect {
                addr: first.addr(),
                error,
            })
    })
    .await
}

/// A byte stream a session can run over: the TCP socket, or a channel of the hop before.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The session chain: credentials checked first, everything bounded by
/// `cfg.connect_timeout`, in one `ssh_connect` span.
async fn dial<F, Fut>(cfg: &SshConfig, tcp: F) -> Result<(SshStream, CloseHandle), SshError>
where
    F: FnOnce(Instant) -> Fut,
    Fut: Future<Output = Result<TcpStream, SshError>>,
{
    let deadline = Instant::now() + cfg.connect_timeout;
    let span = tracing::info_span!(
        "ssh_connect",
        host = %cfg.host,
        port = cfg.port,
        user = %cfg.user,
        jumps = cfg.proxy_jump.len()
    );
    async {
        let hops: Vec<&SshConfig> = cfg.proxy_jump.iter().chain([cfg]).collect();
        let last = hops.len() - 1;
        // As the hop's own error for the target, wrapped in `Jump` for a jump host.
        let on = |i: usize, e: SshError| {
            if i == last {
                e
            } else {
                SshError::Jump {
                    host: hops[i].login(),
                    error: Box::new(e),
                }
            }
        };
        for (i, hop) in hops.iter().enumerate() {
            check_credentials(hop).map_err(|e| on(i, e))?;
        }
        let tcp = tcp(deadline).await.map_err(|e| on(0, e))?;
        let io = |error| SshError::Connect {
            addr: hops[0].addr(),
            error,
        };
        tcp.set_nodelay(true).map_err(|e| on(0, io(e)))?;
        // Our own descriptor of the socket: the one thing that can stop russh's session task.
        let dup = socket2::SockRef::from(&tcp)
            .try_clone()
            .map_err(|e| on(0, io(e)))?;
        let mut guard = SetupGuard(None);
        let mut transport: Box<dyn Io> = Box::new(tcp);
        let mut killer = Killer::Tcp(dup);
        // The packet size of the channel the next session runs over.
        let mut over = None;
        for (i, hop) in hops.iter().enumerate() {
            let shared = Arc::new(Shared::new(killer));
            // Finishing the innermost session so far ends every one before it.
            guard.0 = Some(Arc::clone(&shared));
            let handle = login(hop, cfg, transport, &shared, deadline)
                .await
                .map_err(|e| on(i, e))?;
            if i == last {
                let (stream, close) = open_channel(cfg, handle, shared, over, deadline).await?;
                guard.0 = None;
                return Ok((stream, close));
            }
            let next = hops[i + 1];
            let channel = open_direct_tcpip(hop, cfg, &handle, next, deadline)
                .await
                .map_err(|e| on(i, e))?;
            let tunnel = start(
                channel,
                handle,
                Arc::clone(&shared),
                cfg.read_buffer,
                over,
                None,
                Vec::new(),
            )
            .await;
            over = Some(tunnel.packet_size());
            transport = Box::new(tunnel);
            killer = Killer::Outer(shared);
        }
        unreachable!("the last hop returns")
    }
    .instrument(span)
    .await
}

fn timed_out(hop: &SshConfig, cfg: &SshConfig, stage: &'static str) -> SshError {
    SshError::ConnectTimeout {
        addr: hop.addr(),
        after: cfg.connect_timeout,
        stage,
    }
}

fn check_credentials(cfg: &SshConfig) -> Result<(), SshError> {
    let (keys, _) = cfg.key_file_list();
    if keys.is_empty() && cfg.agent_path().is_none() && !cfg.can_prompt() {
        return Err(SshError::Config {
            reason: format!(
                "no credentials for {}: no key file given or found (~/.ssh/id_ed25519, \
                 id_ecdsa, id_rsa), no ssh-agent (SSH_AUTH_SOCK unset or agent off), and no \
                 credential callback for password or keyboard-interactive",
                cfg.login()
            ),
        });
    }
    Ok(())
}

/// Shuts the sockets down if connecting fails or is cancelled, so no russh task lingers.
struct SetupGuard(Option<Arc<Shared>>);

impl Drop for SetupGuard {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            s.finish(CloseReason::Local);
        }
    }
}

/// Handshake (host key checked) and authentication of one hop over `transport`.
async fn login(
    hop: &SshConfig,
    session: &SshConfig,
    transport: Box<dyn Io>,
    shared: &Arc<Shared>,
    deadline: Instant,
) -> Result<Handle<ClientHandler>, SshError> {
    let known_hosts = match hop.known_hosts_verify {
        KnownHostsVerify::Ignore => None,
        _ => Some(hop.known_hosts_files()?),
    };
    let config = russh_config(hop, session, known_hosts.as_deref())?;
    let handler = ClientHandler {
        host: hop.host.clone(),
        port: hop.port,
        known_hosts,
        verify: hop.known_hosts_verify,
        credentials: hop.credentials.clone(),
        shared: Arc::clone(shared),
    };
    let mut handle =
        match timeout_at(deadline, client::connect_stream(config, transport, handler)).await {
            Err(_) => return Err(timed_out(hop, session, "handshake")),
            Ok(Err(HandlerError::HostKey(e))) => return Err(*e),
            Ok(Err(HandlerError::Russh(e))) => {
                return Err(SshError::Handshake {
                    stage: "handshake",
                    message: e.to_string(),
                });
            }
            Ok(Ok(h)) => h,
        };
    match timeout_at(deadline, authenticate(&mut handle, hop)).await {
        Err(_) => return Err(timed_out(hop, session, "authentication")),
        Ok(r) => r?,
    }
    tracing::debug!(host = %hop.host, port = hop.port, "authenticated");
    Ok(handle)
}

/// A `direct-tcpip` channel from `hop` to the next hop's sshd.
async fn open_direct_tcpip(
    hop: &SshConfig,
    session: &SshConfig,
    handle: &Handle<ClientHandler>,
    next: &SshConfig,
    deadline: Instant,
) -> Result<russh::Channel<client::Msg>, SshError> {
    let open =
        handle.channel_open_direct_tcpip(next.host.as_str(), u32::from(next.port), "127.0.0.1", 0);
    match timeout_at(deadline, open).await {
        Err(_) => Err(timed_out(hop, session, "channel open")),
        Ok(Err(russh::Error::ChannelOpenFailure(f))) => Err(SshError::ChannelOpen {
            target: next.addr(),
            reason: describe_open_failure(&f, "AllowTcpForwarding"),
        }),
        Ok(Err(e)) => Err(SshError::Handshake {
            stage: "channel open",
            message: e.to_string(),
        }),
        Ok(Ok(c)) => Ok(c),
    }
}

/// Opens `cfg.channel` on the target's session and starts its stream.
async fn open_channel(
    cfg: &SshConfig,
    handle: Handle<ClientHandler>,
    shared: Arc<Shared>,
    over: Option<usize>,
    deadline: Instant,
) -> Result<(SshStream, CloseHandle), SshError> {
    let proto = |stage, e: russh::Error| SshError::Handshake {
        stage,
        message: e.to_string(),
    };
    let (channel, exec, early) = match &cfg.channel {
        RemoteChannel::Forward { sockets } => {
            let mut last = None;
            let mut opened = None;
            for socket in sockets {
                let open = handle.channel_open_direct_streamlocal(socket.as_str());
                match timeout_at(deadline, open).await {
                    Err(_) => return Err(timed_out(cfg, cfg, "channel open")),
                    Ok(Err(russh::Error::ChannelOpenFailure(f))) => {
                        last = Some(SshError::ChannelOpen {
                            target: socket.clone(),
                            reason: describe_open_failure(&f, "AllowStreamLocalForwarding"),
                        });
                        // A missing socket: try the next name (modular, then monolithic).
                        if f != ChannelOpenFailure::ConnectFailed {
                            break;
                        }
                    }
                    Ok(Err(e)) => return Err(proto("channel open", e)),
                    Ok(Ok(c)) => {
                        tracing::debug!(socket = %socket, "channel open");
                        opened = Some(c);
                        break;
                    }
                }
            }
            match opened {
                Some(c) => (c, None, Vec::new()),
                None => {
                    return Err(last.unwrap_or_else(|| SshError::Config {
                        reason: "no remote socket to forward".into(),
                    }));
                }
            }
        }
        RemoteChannel::Exec { command } => {
            let (channel, early) = timeout_at(deadline, exec(&handle, command))
                .await
                .map_err(|_| timed_out(cfg, cfg, "exec"))??;
            tracing::debug!(command = %command.summary(), "exec channel open");
            (
                channel,
                Some(RemoteExit::new(command.summary().to_owned())),
                early,
            )
        }
    };
    let stream = start(
        channel,
        handle,
        Arc::clone(&shared),
        cfg.read_buffer,
        over,
        exec,
        early,
    )
    .await;
    Ok((stream, CloseHandle { shared }))
}

/// A session channel running `command`; what arrived before the server's answer to the exec
/// request is returned for the pump to replay.
async fn exec(
    handle: &Handle<ClientHandler>,
    command: &crate::RemoteCommand,
) -> Result<(russh::Channel<client::Msg>, Vec<ChannelMsg>), SshError> {
    let proto = |e: russh::Error| SshError::Handshake {
        stage: "exec",
        message: e.to_string(),
    };
    let mut channel = handle.channel_open_session().await.map_err(|e| match e {
        russh::Error::ChannelOpenFailure(f) => SshError::ChannelOpen {
            target: command.summary().to_owned(),
            reason: describe_open_failure(&f, "session channels"),
        },
        e => proto(e),
    })?;
    channel
        .exec(true, command.line().as_bytes())
        .await
        .map_err(proto)?;
    let mut early = Vec::new();
    loop {
        match channel.wait().await {
            Some(ChannelMsg::Success) => return Ok((channel, early)),
            Some(ChannelMsg::Failure) => {
                return Err(SshError::ChannelOpen {
                    target: command.summary().to_owned(),
                    reason: "the server refused to run the command".into(),
                });
            }
            // The command already ended: the pump reports how.
            Some(m @ ChannelMsg::Close) => {
                early.push(m);
                return Ok((channel, early));
            }
            Some(m) => early.push(m),
            None => {
                return Err(SshError::Handshake {
                    stage: "exec",
                    message: "the session ended before the server answered".into(),
                });
            }
        }
    }
}

/// OpenSSH's maximum packet size on the channels we open (`CHAN_SES_PACKET_DEFAULT`,
/// `CHAN_TCP_PACKET_DEFAULT`).
const OPENSSH_PACKET: usize = 32 * 1024;

/// Room for one SSH packet's framing around its data: length, padding length, message type,
/// channel, data length (14 bytes), padding (≤ 4 + a cipher block) and a MAC (≤ 64 bytes).
const PACKET_FRAMING: usize = 128;

/// The channel as an [`SshStream`]: starts its reader pump and the session's watcher.
///
/// `over`: the packet size of the channel this session runs over (through a jump host). Our
/// packets are then made small enough that one of them, framed and encrypted, fits in one
/// packet of that channel: at the peer's full size, every packet of ours became a full
/// packet and a ~50-byte one on the jump host's channel, each a read, a decryption and a
/// write to the target's socket on the jump host.
async fn start(
    channel: russh::Channel<client::Msg>,
    handle: Handle<ClientHandler>,
    shared: Arc<Shared>,
    read_buffer: usize,
    over: Option<usize>,
    exec: Option<RemoteExit>,
    early: Vec<ChannelMsg>,
) -> SshStream {
    // Nothing has been sent yet, so this is the peer's maximum packet size, unless its
    // initial window is smaller: OpenSSH opens session (exec) channels with window 0 and
    // grants it after the command starts. Then take OpenSSH's 32 KiB (a smaller peer limit
    // only costs a packet cut in two).
    let packet = packet_size(channel.writable_packet_size().await, over);
    let (read_half, write_half) = channel.split();
    let writer = Box::new(RusshSink::new(write_half));
    // Messages are at most `maximum_packet_size` (32 KiB) each.
    let slots = (read_buffer / 32_768).max(1);
    let (tx, rx) = mpsc::channel(slots);
    let span = tracing::Span::current();
    tokio::spawn(pump(read_half, tx, Arc::clone(&shared), exec, early).instrument(span.clone()));
    tokio::spawn(watch(handle, Arc::clone(&shared)).instrument(span));
    SshStream::new(shared, rx, writer, packet)
}

/// The size our packets are made to, from russh's `min(max packet, window)` when the channel
/// opens and the packet size of the channel the session runs over (see [`start`]).
fn packet_size(writable: usize, over: Option<usize>) -> usize {
    let packet = if writable >= OPENSSH_PACKET {
        writable
    } else {
        OPENSSH_PACKET
    };
    match over {
        Some(outer) => packet.min(outer.saturating_sub(PACKET_FRAMING).max(1)),
        None => packet,
    }
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

fn describe_open_failure(f: &ChannelOpenFailure, setting: &str) -> String {
    match f {
        ChannelOpenFailure::ConnectFailed => {
            "connect failed (no such socket or host, not a socket, or permission denied)".into()
        }
        ChannelOpenFailure::AdministrativelyProhibited => {
            format!("administratively prohibited ({setting} / DisableForwarding?)")
        }
        other => format!("{other:?}"),
    }
}

/// russh's settings for one hop: the hop's host key order, the session's timeouts.
fn russh_config(
    hop: &SshConfig,
    session: &SshConfig,
    known_hosts: Option<&[PathBuf]>,
) -> Result<Arc<client::Config>, SshError> {
    let mut ciphers = Vec::with_capacity(session.ciphers.len());
    for name in &session.ciphers {
        let c = russh::cipher::Name::try_from(name.as_str()).map_err(|()| SshError::Config {
            reason: format!("unknown cipher {name:?}"),
        })?;
        ciphers.push(c);
    }
    let key = match known_hosts {
        Some(files) => host_key_order(files, hop)?,
        None => host_key_algorithms(),
    };
    let preferred = Preferred {
        cipher: Cow::Owned(ciphers),
        key: Cow::Owned(key),
        ..Preferred::default()
    };
    Ok(Arc::new(client::Config {
        keepalive_interval: session.keepalive_interval,
        keepalive_max: session.keepalive_max,
        inactivity_timeout: session.inactivity_timeout,
        nodelay: true,
        preferred,
        ..client::Config::default()
    }))
}

/// Host key algorithms with those `known_hosts` records for this host first, as OpenSSH does,
/// so a host known by its RSA key is not reported unknown because it also has an ed25519 key.
fn host_key_order(files: &[PathBuf], cfg: &SshConfig) -> Result<Vec<Algorithm>, SshError> {
    let known: Vec<Algorithm> = known_hosts::entries_for(files, &cfg.host, cfg.port)?
        .into_iter()
        .filter(|e| e.marker == known_hosts::Marker::Key)
        .map(|e| e.key.algorithm())
        .collect();
    let mut order = host_key_algorithms();
    order.sort_by_key(|a| {
        !known.iter().any(|k| match (k, a) {
            (Algorithm::Rsa { .. }, Algorithm::Rsa { .. }) => true,
            _ => k == a,
        })
    });
    Ok(order)
}

/// russh's host key algorithms, without RSA in a build without the `rsa` feature: an RSA host
/// key it cannot verify is then "no common algorithm" in the key exchange, not a failure later.
fn host_key_algorithms() -> Vec<Algorithm> {
    let mut algorithms = Preferred::default().key.into_owned();
    if !cfg!(feature = "rsa") {
        algorithms.retain(|a| !matches!(a, Algorithm::Rsa { .. }));
    }
    algorithms
}

/// Why an RSA key file is not used in a build without the `rsa` feature.
const NO_RSA: &str = "an RSA key, and this build has no RSA support (ssh-socket's `rsa` \
                      feature is off); RSA keys held by ssh-agent still work";

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
    /// The files to read, the user's first (new keys go to the first); `None` when
    /// verification is off.
    known_hosts: Option<Vec<PathBuf>>,
    verify: KnownHostsVerify,
    credentials: Option<Arc<dyn Credentials>>,
    shared: Arc<Shared>,
}

/// Asks the embedding program, on a blocking thread. The answer (a password, a one-time
/// code) is wiped when dropped; what is handed to russh is moved, not copied.
async fn ask(credentials: &Arc<dyn Credentials>, prompt: Prompt) -> Option<Zeroizing<String>> {
    let c = Arc::clone(credentials);
    tokio::task::spawn_blocking(move || c.answer(&prompt).map(Zeroizing::new))
        .await
        .ok()
        .flatten()
}

impl ClientHandler {
    /// A host whose key is not recorded (`HostKeyUnknown`, or known only by other key types:
    /// `HostKeyOtherType`), under `Normal` or `Auto`: learn it into `path` when `Auto` allows
    /// it (an unknown host only) or a person answers yes under `Normal` (the question names
    /// the types already known).
    async fn unknown_host(&self, path: &Path, key: &PublicKey, err: &SshError) -> bool {
        let (host, key_type, fingerprint, known_types) = match err {
            SshError::HostKeyUnknown {
                host,
                key_type,
                fingerprint,
                ..
            } => (host, key_type, fingerprint, Vec::new()),
            SshError::HostKeyOtherType {
                host,
                key_type,
                fingerprint,
                known_types,
                ..
            } => (host, key_type, fingerprint, known_types.to_vec()),
            _ => return false,
        };
        let accept = match (self.verify, &self.credentials) {
            // `accept-new` adds hosts it has never seen, never a second key for a known one.
            (KnownHostsVerify::Auto, _) => known_types.is_empty(),
            (KnownHostsVerify::Normal, Some(c)) => {
                let prompt = Prompt::AcceptHostKey {
                    host: host.clone(),
                    key_type: key_type.clone(),
                    fingerprint: fingerprint.clone(),
                    known_types,
                };
                ask(c, prompt)
                    .await
                    .is_some_and(|a| matches!(a.trim().to_ascii_lowercase().as_str(), "yes" | "y"))
            }
            _ => false,
        };
        if !accept {
            return false;
        }
        match known_hosts::learn(path, &self.host, self.port, key) {
            Ok(()) => {
                tracing::warn!(
                    host = %self.host,
                    port = self.port,
                    key_type = key.algorithm().as_str(),
                    fingerprint = %key.fingerprint(HashAlg::Sha256),
                    known_hosts = %path.display(),
                    "new host key added to known_hosts"
                );
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot record the new host key");
                false
            }
        }
    }
}

impl client::Handler for ClientHandler {
    type Error = HandlerError;

    async fn check_server_key(
        &mut self,
        server_public_key: &russh::keys::PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let key = server_public_key.public_key();
        let Some(files) = &self.known_hosts else {
            tracing::warn!(
                host = %self.host,
                key_type = key.algorithm().as_str(),
                fingerprint = %key.fingerprint(HashAlg::Sha256),
                "host key NOT verified (no_verify / known_hosts_verify=ignore)"
            );
            return Ok(true);
        };
        match known_hosts::verify(files, &self.host, self.port, &key) {
            Ok(()) => Ok(true),
            Err(e @ (SshError::HostKeyUnknown { .. } | SshError::HostKeyOtherType { .. })) => {
                if self.unknown_host(&files[0], &key, &e).await {
                    return Ok(true);
                }
                tracing::warn!(error = %e, "host key rejected");
                Err(HandlerError::HostKey(Box::new(e)))
            }
            Err(e) => {
                tracing::warn!(error = %e, "host key rejected");
                Err(HandlerError::HostKey(Box::new(e)))
            }
        }
    }

    async fn window_adjusted(
        &mut self,
        _channel: russh::ChannelId,
        _new_size: u32,
        _session: &mut client::Session,
    ) -> Result<(), Self::Error> {
        // The session's one channel is ours.
        self.shared.window_opened();
        Ok(())
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

/// What authentication has learned so far, for the final error.
#[derive(Default)]
struct Attempts {
    tried: Vec<String>,
    /// Methods the server said can continue (`None` before its first answer).
    remaining: Option<Vec<String>>,
    agent_error: Option<String>,
}

impl Attempts {
    /// The server's answer to offering `what`: `true` when it accepted, else recorded.
    fn answered(&mut self, what: String, r: AuthResult) -> bool {
        match r {
            AuthResult::Success => true,
            AuthResult::Failure {
                remaining_methods, ..
            } => {
                self.failed(what, &remaining_methods);
                false
            }
        }
    }

    fn failed(&mut self, what: String, remaining: &russh::MethodSet) {
        self.tried.push(what);
        self.remaining = Some(
            remaining
                .iter()
                .map(|m| <&str>::from(m).to_owned())
                .collect(),
        );
    }

    /// Whether the server may still accept `method` (unknown before its first answer).
    fn allows(&self, method: &str) -> bool {
        self.remaining
            .as_ref()
            .is_none_or(|r| r.iter().any(|m| m == method))
    }
}

async fn authenticate(handle: &mut Handle<ClientHandler>, cfg: &SshConfig) -> Result<(), SshError> {
    let proto = |e: russh::Error| SshError::Handshake {
        stage: "authentication",
        message: e.to_string(),
    };
    let mut a = Attempts::default();
    // "none" first, as OpenSSH does: learns which methods the server accepts.
    match handle.authenticate_none(&cfg.user).await.map_err(proto)? {
        AuthResult::Success => return Ok(()),
        AuthResult::Failure {
            remaining_methods, ..
        } => {
            a.remaining = Some(
                remaining_methods
                    .iter()
                    .map(|m| <&str>::from(m).to_owned())
                    .collect(),
            );
        }
    }
    for method in &cfg.auth_methods {
        let done = match method {
            AuthMethod::PrivateKey if a.allows("publickey") => {
                key_file_auth(handle, cfg, &mut a).await?
            }
            AuthMethod::Agent if a.allows("publickey") => match cfg.agent_path() {
                Some(agent) => match agent_auth(handle, &agent, cfg, &mut a).await {
                    Ok(done) => done,
                    Err(reason) => {
                        a.agent_error = Some(reason);
                        false
                    }
                },
                None => false,
            },
            AuthMethod::Password if a.allows("password") => match &cfg.credentials {
                Some(c) => password_auth(handle, cfg, c, &mut a).await?,
                None => false,
            },
            AuthMethod::KeyboardInteractive if a.allows("keyboard-interactive") => {
                match &cfg.credentials {
                    Some(c) => kbd_auth(handle, cfg, c, &mut a).await?,
                    None => false,
                }
            }
            _ => false,
        };
        if done {
            return Ok(());
        }
    }
    if let Some(reason) = a.agent_error.take() {
        if a.tried.is_empty() {
            return Err(SshError::Agent { reason });
        }
        a.tried.push(format!("ssh-agent (failed: {reason})"));
    }
    Err(SshError::Auth {
        user: cfg.user.clone(),
        tried: a.tried,
        remaining: a.remaining.unwrap_or_default(),
    })
}

async fn key_file_auth(
    handle: &mut Handle<ClientHandler>,
    cfg: &SshConfig,
    a: &mut Attempts,
) -> Result<bool, SshError> {
    let proto = |e: russh::Error| SshError::Handshake {
        stage: "authentication",
        message: e.to_string(),
    };
    let (files, configured) = cfg.key_file_list();
    for path in &files {
        let key = match load_key(path, cfg.passphrase.as_deref().map(String::as_str)) {
            Ok(k) => k,
            Err(e) if configured => return Err(e),
            // A default key we cannot use (encrypted, odd format, too open) is skipped, as
            // ssh does.
            Err(e) => {
                if let SshError::KeyFile {
                    reason: reason @ KeyFileError::TooOpen { .. },
                    ..
                } = &e
                {
                    tracing::warn!(key = %path.display(), "{reason}");
                }
                a.tried.push(format!("{} (skipped: {e})", path.display()));
                continue;
            }
        };
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
        if a.answered(desc, r) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Offers each agent key; `Ok(true)` once one is accepted, `Err` if the agent is unusable.
async fn agent_auth(
    handle: &mut Handle<ClientHandler>,
    socket: &Path,
    cfg: &SshConfig,
    a: &mut Attempts,
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
        if a.answered(desc, r) {
            return Ok(true);
        }
    }
    Ok(false)
}

async fn password_auth(
    handle: &mut Handle<ClientHandler>,
    cfg: &SshConfig,
    credentials: &Arc<dyn Credentials>,
    a: &mut Attempts,
) -> Result<bool, SshError> {
    let prompt = Prompt::Password {
        user: cfg.user.clone(),
        host: cfg.addr(),
    };
    let Some(mut password) = ask(credentials, prompt).await else {
        a.tried
            .push("password (declined by the credential callback)".into());
        return Ok(false);
    };
    let r = handle
        .authenticate_password(&cfg.user, std::mem::take(&mut *password))
        .await
        .map_err(|e| SshError::Handshake {
            stage: "authentication",
            message: e.to_string(),
        })?;
    Ok(a.answered("password".into(), r))
}

/// Bound on keyboard-interactive rounds (a server could ask forever).
const KBD_ROUNDS: usize = 8;

async fn kbd_auth(
    handle: &mut Handle<ClientHandler>,
    cfg: &SshConfig,
    credentials: &Arc<dyn Credentials>,
    a: &mut Attempts,
) -> Result<bool, SshError> {
    let proto = |e: russh::Error| SshError::Handshake {
        stage: "authentication",
        message: e.to_string(),
    };
    let mut r = handle
        .authenticate_keyboard_interactive_start(&cfg.user, None)
        .await
        .map_err(proto)?;
    for _ in 0..KBD_ROUNDS {
        match r {
            KeyboardInteractiveAuthResponse::Success => return Ok(true),
            KeyboardInteractiveAuthResponse::Failure {
                remaining_methods, ..
            } => {
                a.failed("keyboard-interactive".into(), &remaining_methods);
                return Ok(false);
            }
            KeyboardInteractiveAuthResponse::InfoRequest {
                name,
                instructions,
                prompts,
            } => {
                let mut answers = Vec::with_capacity(prompts.len());
                for p in prompts {
                    let prompt = Prompt::KeyboardInteractive {
                        user: cfg.user.clone(),
                        host: cfg.addr(),
                        name: printable(&name, false),
                        instruction: printable(&instructions, true),
                        prompt: printable(&p.prompt, false),
                        echo: p.echo,
                    };
                    let Some(mut answer) = ask(credentials, prompt).await else {
                        a.tried.push(
                            "keyboard-interactive (declined by the credential callback)".into(),
                        );
                        return Ok(false);
                    };
                    answers.push(std::mem::take(&mut *answer));
                }
                r = handle
                    .authenticate_keyboard_interactive_respond(answers)
                    .await
                    .map_err(proto)?;
            }
        }
    }
    a.tried.push(format!(
        "keyboard-interactive (gave up after {KBD_ROUNDS} rounds)"
    ));
    Ok(false)
}

/// A server's text for a keyboard-interactive question without control characters: no
/// terminal escape sequence, carriage return or bidirectional override reaches a callback that
/// prints it (OpenSSH sanitises these strings too). Newlines are kept in instructions only.
fn printable(text: &str, keep_newlines: bool) -> String {
    text.chars()
        .filter(|&c| (keep_newlines && c == '\n') || !(c.is_control() || is_bidi_control(c)))
        .collect()
}

/// The Unicode formatting characters that reorder text (Trojan Source).
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
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
    let text = read_private_key(path).map_err(err)?;
    // OpenSSH's own format through ssh-key, which decodes the base64 as it reads it: russh's
    // `decode_secret_key` first gathers it into a String of its own that nothing wipes. Other
    // formats (PEM RSA/PKCS#8) go through russh.
    if text
        .trim_start()
        .starts_with("-----BEGIN OPENSSH PRIVATE KEY-----")
    {
        let key = PrivateKey::from_openssh(text.as_bytes())
            .map_err(|e| err(KeyFileError::Invalid(e.to_string())))?;
        if !cfg!(feature = "rsa") && key.algorithm().is_rsa() {
            return Err(err(KeyFileError::Invalid(NO_RSA.into())));
        }
        return match (key.is_encrypted(), passphrase) {
            (false, _) => Ok(key),
            (true, None) => Err(err(KeyFileError::EncryptedKeyNoPassphrase)),
            (true, Some(p)) => key
                .decrypt(p)
                .map_err(|e| err(KeyFileError::BadPassphrase(e.to_string()))),
        };
    }
    match russh::keys::decode_secret_key(&text, passphrase) {
        Ok(k) => Ok(k),
        Err(russh::keys::Error::KeyIsEncrypted) => Err(err(KeyFileError::EncryptedKeyNoPassphrase)),
        Err(russh::keys::Error::UnsupportedKeyType {
            key_type_string, ..
        }) if key_type_string == "RSA" => Err(err(KeyFileError::Invalid(NO_RSA.into()))),
        Err(e) if passphrase.is_some() && key_is_encrypted(&text) => {
            Err(err(KeyFileError::BadPassphrase(e.to_string())))
        }
        Err(e) => Err(err(KeyFileError::Invalid(e.to_string()))),
    }
}

/// The text of a private key file, refused as OpenSSH refuses it ("UNPROTECTED PRIVATE KEY
/// FILE", `sshkey_perm_ok`) when it is ours and group or others may access it. A key owned by
/// another user is not judged by its mode, as in OpenSSH.
fn read_private_key(path: &Path) -> Result<Zeroizing<String>, KeyFileError> {
    use std::io::Read as _;
    use std::os::unix::fs::MetadataExt as _;
    let unreadable = |e: std::io::Error| KeyFileError::Unreadable(e.to_string());
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let meta = file.metadata().map_err(unreadable)?;
    if meta.uid() == nix::unistd::getuid().as_raw() && meta.mode() & 0o077 != 0 {
        return Err(KeyFileError::TooOpen {
            mode: meta.mode() & 0o777,
        });
    }
    let mut text = Zeroizing::new(String::new());
    file.read_to_string(&mut text).map_err(unreadable)?;
    Ok(text)
}

/// Whether an OpenSSH or PEM private key file is encrypted, without decrypting it.
fn key_is_encrypted(text: &str) -> bool {
    if text.contains("ENCRYPTED") || text.contains("Proc-Type: 4,ENCRYPTED") {
        return true;
    }
    PrivateKey::from_openssh(text).is_ok_and(|k| k.is_encrypted())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key made by ssh-keygen (a child process: no copy of it in this one), encrypted with
    /// `passphrase` if given; and a needle for one base64 line of its file.
    fn keygen(
        dir: &Path,
        name: &str,
        passphrase: Option<&str>,
    ) -> (PathBuf, testbed::memory::Needle) {
        let path = dir.join(name);
        let st = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", passphrase.unwrap_or(""), "-f"])
            .arg(&path)
            .status()
            .expect("ssh-keygen");
        assert!(st.success());
        let text = Zeroizing::new(std::fs::read(&path).unwrap());
        let line = text.split(|b| *b == b'\n').nth(2).unwrap();
        (path.clone(), testbed::memory::Needle::new(line))
    }

    /// The key file's text and its passphrase are wiped once the key is loaded and dropped.
    #[test]
    fn key_files_and_passphrases_leave_no_copy_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (plain, plain_text) = keygen(dir.path(), "plain", None);
        assert!(!plain_text.is_in_memory(), "the test's own copy is wiped");
        drop(load_key(&plain, None).unwrap());
        assert!(
            !plain_text.is_in_memory(),
            "the private key file's text is still in memory after the key was dropped"
        );

        let passphrase = Zeroizing::new(format!(
            "pass-{:x}-{:?}",
            std::process::id(),
            std::time::Instant::now()
        ));
        let secret = testbed::memory::Needle::new(passphrase.as_bytes());
        let (locked, locked_text) = keygen(dir.path(), "locked", Some(passphrase.as_str()));
        let mut cfg = SshConfig::new("u", "h");
        cfg.passphrase = Some(passphrase);
        drop(load_key(&locked, cfg.passphrase.as_deref().map(String::as_str)).unwrap());
        drop(cfg);
        assert!(!locked_text.is_in_memory(), "the encrypted key file's text");
        assert!(
            !secret.is_in_memory(),
            "the passphrase is still in memory after the configuration was dropped"
        );
    }

    /// An SSH packet on the wire around `data` bytes of `CHANNEL_DATA`, at its largest: length
    /// (4), padding length (1), type + channel + data length (9), padding (4 + up to a 16-byte
    /// block), MAC (hmac-sha2-512: 64; the AEAD tags are 16).
    fn wire(data: usize) -> usize {
        4 + 1 + 9 + data + 4 + 15 + 64
    }

    #[test]
    fn through_a_jump_host_one_packet_of_ours_fits_in_one_of_the_tunnel() {
        for outer in [32_768, 65_536, 1_000] {
            let inner = packet_size(32_768, Some(outer));
            assert!(
                wire(inner) <= outer,
                "a {inner}-byte packet is {} bytes on the wire, over a {outer}-byte tunnel packet",
                wire(inner)
            );
        }
        assert_eq!(
            packet_size(32_768, None),
            32_768,
            "no tunnel: the peer's size"
        );
        assert_eq!(
            packet_size(0, None),
            OPENSSH_PACKET,
            "window 0 at open: OpenSSH's size"
        );
        assert_eq!(packet_size(65_536, Some(32_768)), 32_768 - PACKET_FRAMING);
    }
}
