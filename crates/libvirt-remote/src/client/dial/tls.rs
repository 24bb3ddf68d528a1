//! The TLS transport (`qemu+tls://`, `qemu://host/`): rustls over TCP, libvirt's PKI layout,
//! and the one-byte "accepted" status the daemon sends after the TLS handshake.
//!
//! ```text
//! TCP connect ─▶ TLS handshake (server cert vs CA and URI host; our client cert)
//!   ─▶ read 1 byte (0x01 = accepted; see conn::handshake::tls_accept_status) ─▶ RPC
//! ```
//!
//! PKI files, as libvirt's client looks for them (`virNetTLSContextLocateCredentials`): with
//! `?pkipath=DIR`, `DIR/cacert.pem` (required), `DIR/cacrl.pem` (the CA's revocation list,
//! if there), `DIR/clientcert.pem` and `DIR/clientkey.pem` (both or neither). Without it, a
//! non-root user takes each file from `$HOME/.pki/libvirt/` if it is there, else from the
//! system locations root uses: `/etc/pki/CA/cacert.pem`, `/etc/pki/CA/cacrl.pem`,
//! `/etc/pki/libvirt/clientcert.pem`, `/etc/pki/libvirt/private/clientkey.pem`. A server
//! certificate on the revocation list is refused ([`TlsError::Revoked`]); a list that names
//! another CA's certificates only is no reason to refuse (`GnuTLS`, under libvirt, reads it the
//! same way).
//!
//! Teardown (H1): the [`KillFn`] shuts down a duplicate of the TCP socket's
//! descriptor, so a write stalled under the TLS session fails at once.
//!
//! Busy-polling ([`ConnectOptions::busy_poll`](crate::client::ConnectOptions::busy_poll)) happens
//! below rustls, on the ciphertext: `SpinTcp` reads the socket directly while the driver
//! holds its `SpinGate` open — a reply is due, the connection's adaptive `SpinPolicy`
//! (`client/driver/spin.rs`) says spinning pays, and the budget since the last
//! progress lasts — before it lets the reactor park the task.

use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::{
    self, ClientConfig, RootCertStore,
    client::WebPkiServerVerifier,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::CryptoProvider,
    pki_types::{
        CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime,
        pem::PemObject,
    },
};

use zeroize::Zeroizing;

use super::Stage;
use crate::client::spin::SpinGate;
use crate::client::uri::TlsTarget;
use crate::client::{ConnectError, KillFn};
use crate::conn::handshake::{HandshakeError, tls_accept_status};

/// Why a TLS connection could not be set up (before any RPC).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A PKI file libvirt's layout requires is not there.
    #[error("{what} {} does not exist", path.display())]
    MissingPkiFile {
        /// CA certificate, client certificate or client key.
        what: &'static str,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A PKI file could not be read or holds nothing usable.
    #[error("{what} {}: {reason}", path.display())]
    BadPkiFile {
        /// CA certificate, client certificate or client key.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The server certificate is not signed by our CA.
    #[error("the server certificate of {host} is not signed by a trusted CA ({reason})")]
    UnknownCa {
        /// The host dialled.
        host: String,
        /// rustls's words.
        reason: String,
    },
    /// The server certificate is on the CA's revocation list (`cacrl.pem`).
    #[error("the server certificate of {host} is revoked by its CA ({reason})")]
    Revoked {
        /// The host dialled.
        host: String,
        /// rustls's words.
        reason: String,
    },
    /// The server certificate does not name the host in the URI.
    #[error("the server certificate is not valid for {host} ({reason})")]
    NameMismatch {
        /// The host dialled.
        host: String,
        /// rustls's words (which names the certificate has).
        reason: String,
    },
    /// The server certificate has expired (or is not valid yet).
    #[error("the server certificate of {host} is outside its validity period ({reason})")]
    Expired {
        /// The host dialled.
        host: String,
        /// rustls's words (the dates).
        reason: String,
    },
    /// The TLS handshake failed otherwise (no common version or cipher, bad certificate, …).
    #[error("TLS handshake with {host} failed: {reason}")]
    Handshake {
        /// The host dialled.
        host: String,
        /// rustls's words.
        reason: String,
    },
}

impl TlsError {
    /// The server could not be authenticated (unknown CA, wrong name, expired certificate).
    pub fn is_server_untrusted(&self) -> bool {
        matches!(
            self,
            Self::UnknownCa { .. }
                | Self::Revoked { .. }
                | Self::NameMismatch { .. }
                | Self::Expired { .. }
        )
    }
}

/// Where the PKI files are.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PkiPaths {
    ca: PathBuf,
    /// The CA's revocation list, read if the file exists.
    crl: PathBuf,
    /// Certificate and key, if we have an identity.
    identity: Option<(PathBuf, PathBuf)>,
}

const CA: &str = "CA certificate";
const CRL: &str = "CA revocation list";
const CERT: &str = "client certificate";
const KEY: &str = "client key";

fn missing(what: &'static str, path: &Path) -> TlsError {
    TlsError::MissingPkiFile {
        what,
        path: path.to_path_buf(),
    }
}

/// Both or neither of certificate and key.
fn identity(cert: PathBuf, key: PathBuf) -> Result<Option<(PathBuf, PathBuf)>, TlsError> {
    match (cert.exists(), key.exists()) {
        (true, true) => Ok(Some((cert, key))),
        (false, false) => Ok(None),
        (true, false) => Err(missing(KEY, &key)),
        (false, true) => Err(missing(CERT, &cert)),
    }
}

fn locate(pkipath: Option<&Path>, home: Option<&Path>, root: bool) -> Result<PkiPaths, TlsError> {
    if let Some(dir) = pkipath {
        let ca = dir.join("cacert.pem");
        if !ca.exists() {
            return Err(missing(CA, &ca));
        }
        return Ok(PkiPaths {
            ca,
            crl: dir.join("cacrl.pem"),
            identity: identity(dir.join("clientcert.pem"), dir.join("clientkey.pem"))?,
        });
    }
    let sys_ca = PathBuf::from("/etc/pki/CA/cacert.pem");
    let sys_crl = PathBuf::from("/etc/pki/CA/cacrl.pem");
    let sys_cert = PathBuf::from("/etc/pki/libvirt/clientcert.pem");
    let sys_key = PathBuf::from("/etc/pki/libvirt/private/clientkey.pem");
    let user = home.filter(|_| !root).map(|h| h.join(".pki/libvirt"));
    let ca = match &user {
        Some(u) if u.join("cacert.pem").exists() => u.join("cacert.pem"),
        _ => sys_ca,
    };
    if !ca.exists() {
        return Err(missing(CA, &ca));
    }
    // Each file falls back on its own, as in libvirt.
    let crl = match &user {
        Some(u) if u.join("cacrl.pem").exists() => u.join("cacrl.pem"),
        _ => sys_crl,
    };
    let user_identity = match &user {
        Some(u) => identity(u.join("clientcert.pem"), u.join("clientkey.pem"))?,
        None => None,
    };
    let identity = match user_identity {
        Some(i) => Some(i),
        None => identity(sys_cert, sys_key)?,
    };
    Ok(PkiPaths { ca, crl, identity })
}

/// The revocation list at `path`, if the file exists (libvirt skips a missing one); one that
/// exists but does not read or parse is an error.
fn crls(path: &Path) -> Result<Vec<CertificateRevocationListDer<'static>>, TlsError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let pem = read_pem(CRL, path)?;
    let crls = CertificateRevocationListDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(CRL, path, e))?;
    if crls.is_empty() {
        return Err(bad(CRL, path, "no PEM revocation list in it"));
    }
    Ok(crls)
}

/// A PEM file's bytes, wiped when dropped (the client key's among them).
fn read_pem(what: &'static str, path: &Path) -> Result<Zeroizing<Vec<u8>>, TlsError> {
    std::fs::read(path).map(Zeroizing::new).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            missing(what, path)
        } else {
            TlsError::BadPkiFile {
                what,
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        }
    })
}

fn bad(what: &'static str, path: &Path, reason: impl std::fmt::Display) -> TlsError {
    TlsError::BadPkiFile {
        what,
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

fn certs(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read_pem(what, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(what, path, e))?;
    if certs.is_empty() {
        return Err(bad(what, path, "no PEM certificate in it"));
    }
    Ok(certs)
}

/// ring's provider, its cipher suites reordered so that those of `order` (names of
/// [`TLS_CIPHERS`](super::uri::TLS_CIPHERS)) come first, in that order; the rest keep
/// rustls's order after them. `GnuTLS` (libvirtd) picks the client's first acceptable suite
/// unless its priority string says `%SERVER_PRECEDENCE`, so this decides the daemon's cipher.
fn provider(order: &[String]) -> Arc<CryptoProvider> {
    let mut p = rustls::crypto::ring::default_provider();
    let rank = |s: &rustls::SupportedCipherSuite| {
        let name = format!("{:?}", s.suite());
        order
            .iter()
            .position(|c| name.contains(&suite_key(c)))
            .unwrap_or(order.len())
    };
    p.cipher_suites.sort_by_key(rank);
    Arc::new(p)
}

/// `aes128-gcm` → `AES_128_GCM`, as in rustls's suite names.
fn suite_key(c: &str) -> String {
    match c {
        "aes128-gcm" => "AES_128_GCM".into(),
        "aes256-gcm" => "AES_256_GCM".into(),
        _ => c.to_ascii_uppercase().replace('-', "_"),
    }
}

/// Accepts any server certificate (`no_verify=1`) but still checks the handshake signatures.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn client_config(t: &TlsTarget, paths: &PkiPaths) -> Result<ClientConfig, TlsError> {
    let provider = provider(&t.ciphers);
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Handshake {
            host: t.host.clone(),
            reason: e.to_string(),
        })?;
    let mut roots = RootCertStore::empty();
    for c in certs(CA, &paths.ca)? {
        roots.add(c).map_err(|e| bad(CA, &paths.ca, e))?;
    }
    let builder = if t.no_verify {
        tracing::warn!(
            host = %t.host,
            "no_verify=1: the server certificate is NOT verified; anyone on the path can impersonate the daemon"
        );
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
    } else {
        let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .with_crls(crls(&paths.crl)?)
            .allow_unknown_revocation_status()
            .build()
            .map_err(|e| bad(CRL, &paths.crl, e))?;
        builder.with_webpki_verifier(verifier)
    };
    match &paths.identity {
        None => Ok(builder.with_no_client_auth()),
        Some((cert, key)) => {
            let chain = certs(CERT, cert)?;
            let pem = read_pem(KEY, key)?;
            let key_der = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| bad(KEY, key, e))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| bad(KEY, key, e))
        }
    }
}

/// The typed form of a failed TLS handshake or status-byte read.
fn classify(host: &str, e: &io::Error) -> Option<ConnectError> {
    use rustls::{AlertDescription as A, CertificateError as C, Error as R};
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<R>())?;
    let reason = inner.to_string();
    let host = host.to_string();
    Some(match inner {
        R::InvalidCertificate(c) => ConnectError::Tls(match c {
            C::UnknownIssuer | C::BadSignature | C::InvalidPurpose => {
                TlsError::UnknownCa { host, reason }
            }
            C::Revoked => TlsError::Revoked { host, reason },
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                TlsError::NameMismatch { host, reason }
            }
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => TlsError::Expired { host, reason },
            _ => TlsError::Handshake { host, reason },
        }),
        R::AlertReceived(
            A::BadCertificate
            | A::CertificateRequired
            | A::UnknownCA
            | A::AccessDenied
            | A::CertificateUnknown
            | A::UnsupportedCertificate
            | A::CertificateExpired
            | A::CertificateRevoked,
        ) => ConnectError::Handshake(HandshakeError::TlsRefused {
            detail: format!("TLS alert from the daemon: {reason}"),
        }),
        _ => ConnectError::Tls(TlsError::Handshake { host, reason }),
    })
}

/// Bytes per read of the TCP socket under rustls. rustls asks its transport for at most
/// 4 KiB at a time (`DeframerVecBuffer::prepare_read`), which made a 512 MiB download 131,072
/// `read(2)`s; `SpinTcp` reads this much and serves rustls from memory (a 4 KiB copy costs far
/// less than a syscall). Allocated on the first read.
const TCP_READ: usize = 128 << 10;

/// A TCP stream that, while the driver holds `gate` open, answers an empty socket by reading
/// it again (`read(2)` on the descriptor, then a self-wake) instead of parking in epoll: a
/// reply then does not have to wake a halted CPU (decisions.md, "Busy-poll the socket").
/// With the gate shut (no reply due, spinning does not pay now, or the budget is spent) it is
/// a plain tokio `TcpStream`. Either way it reads [`TCP_READ`] bytes at a time into its own
/// buffer and hands them to rustls from there.
pub(crate) struct SpinTcp {
    tcp: TcpStream,
    gate: Arc<SpinGate>,
    /// A read since the last bytes found the socket empty and spun.
    spun: bool,
    /// Ciphertext read from the socket and not yet taken by rustls: `buf[pos..end]`.
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
}

impl SpinTcp {
    fn new(tcp: TcpStream, gate: Arc<SpinGate>) -> Self {
        Self {
            tcp,
            gate,
            spun: false,
            buf: Box::default(),
            pos: 0,
            end: 0,
        }
    }

    /// Refill the (empty) buffer from the socket.
    fn fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.buf.is_empty() {
            self.buf = vec![0; TCP_READ].into_boxed_slice();
        }
        self.pos = 0;
        self.end = 0;
        if self.gate.is_open() {
            return match rustix::io::read(self.tcp.as_fd(), &mut self.buf[..]) {
                Ok(n) => {
                    self.end = n;
                    if std::mem::take(&mut self.spun) {
                        self.gate.hit();
                    }
                    Poll::Ready(Ok(()))
                }
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {
                    self.spun = true;
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
                Err(e) => Poll::Ready(Err(e.into())),
            };
        }
        self.spun = false;
        let mut rb = ReadBuf::new(&mut self.buf);
        ready!(Pin::new(&mut self.tcp).poll_read(cx, &mut rb))?;
        self.end = rb.filled().len();
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for SpinTcp {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = &mut *self;
        if me.pos == me.end {
            ready!(me.fill(cx))?;
        }
        // Empty after a fill: EOF, passed on as an empty read.
        let n = buf.remaining().min(me.end - me.pos);
        buf.put_slice(&me.buf[me.pos..me.pos + n]);
        me.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for SpinTcp {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

/// The TLS stream the driver writes to: **one write, one libvirt packet part**, so no TLS
/// record ever carries bytes of two packets.
///
/// rustls turns one vectored write into one run of records, straddling slice boundaries;
/// the driver batches several packets into one vectored write. libvirtd (`GnuTLS`) reads a
/// record only as far as the message it is receiving; after a message it handles inline (a
/// keepalive PONG) it waits for the *socket* to turn readable again, so a call that shared
/// the PONG's record sat in `GnuTLS`'s buffer until our next keepalive ping: uploads by `lv`
/// stalled 3.8–5 s in 3 of 8 runs (strace: the call written, then nothing until the 50-byte
/// PING record). virsh writes one record run per message; so do we now.
pub(crate) struct RecordPerWrite(TlsStream<SpinTcp>);

impl AsyncRead for RecordPerWrite {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for RecordPerWrite {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, data)
    }

    /// Not vectored: the driver then hands over one slice (a packet's head or its body) at
    /// a time.
    fn is_write_vectored(&self) -> bool {
        false
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// Dial `t`, run the TLS handshake and read the status byte. Returns the stream, the kill
/// switch for its TCP socket and the gate of its busy-poll ([`SpinTcp`], shut until the
/// driver opens it).
pub(crate) async fn dial(
    t: &TlsTarget,
    stage: &Stage,
) -> Result<(RecordPerWrite, KillFn, Arc<SpinGate>), ConnectError> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let root = rustix::process::geteuid().is_root();
    let paths = locate(t.pkipath.as_deref(), home.as_deref(), root)?;
    tracing::debug!(ca = %paths.ca.display(), client_cert = paths.identity.is_some(), "TLS PKI");
    let config = client_config(t, &paths)?;
    let name = ServerName::try_from(t.host.clone()).map_err(|e| {
        ConnectError::Tls(TlsError::Handshake {
            host: t.host.clone(),
            reason: format!("not a DNS name or IP address: {e}"),
        })
    })?;

    let target = format!("{}:{}", t.host, t.port);
    let tcp = TcpStream::connect((t.host.as_str(), t.port))
        .await
        .map_err(|error| ConnectError::Dial {
            target: target.clone(),
            error,
        })?;
    let _ = tcp.set_nodelay(true);
    stage.set(Stage::TLS);
    let dup = socket2::SockRef::from(&tcp)
        .try_clone()
        .map_err(|error| ConnectError::Dial {
            target: target.clone(),
            error,
        })?;
    // Killing the TCP socket under the TLS session is what bounds teardown (H1).
    let kill: KillFn = Arc::new(move || {
        let _ = dup.shutdown(std::net::Shutdown::Both);
    });
    let fail = |e: io::Error| {
        kill();
        classify(&t.host, &e).unwrap_or(ConnectError::Dial {
            target: target.clone(),
            error: e,
        })
    };
    let gate = Arc::new(SpinGate::default());
    let tcp = SpinTcp::new(tcp, gate.clone());
    let mut tls = TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(fail)?;
    let mut byte = [0u8; 1];
    let status = match tls.read(&mut byte).await {
        Ok(0) => None,
        Ok(_) => Some(byte[0]),
        Err(e) => {
            if let Some(typed) = classify(&t.host, &e) {
                kill();
                return Err(typed);
            }
            if matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset | io::ErrorKind::UnexpectedEof
            ) {
                None
            } else {
                return Err(fail(e));
            }
        }
    };
    if let Err(e) = tls_accept_status(status) {
        kill();
        return Err(e.into());
    }
    Ok((RecordPerWrite(tls), kill, gate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pki_paths_follow_libvirt() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        let e = locate(Some(p), None, false).unwrap_err();
        assert!(
            matches!(&e, TlsError::MissingPkiFile { path, .. } if *path == p.join("cacert.pem")),
            "{e}"
        );
        assert!(e.to_string().contains("cacert.pem"), "{e}");
        std::fs::write(p.join("cacert.pem"), "x").unwrap();
        assert_eq!(locate(Some(p), None, false).unwrap().identity, None);
        std::fs::write(p.join("clientkey.pem"), "x").unwrap();
        let e = locate(Some(p), None, false).unwrap_err();
        assert!(e.to_string().contains("clientcert.pem"), "{e}");
        std::fs::write(p.join("clientcert.pem"), "x").unwrap();
        assert!(locate(Some(p), None, false).unwrap().identity.is_some());
        // The revocation list beside the CA, whether it exists or not (read if it does).
        assert_eq!(
            locate(Some(p), None, false).unwrap().crl,
            p.join("cacrl.pem")
        );

        // The user dir, file by file.
        let home = tempfile::tempdir().unwrap();
        let u = home.path().join(".pki/libvirt");
        std::fs::create_dir_all(&u).unwrap();
        std::fs::write(u.join("cacert.pem"), "x").unwrap();
        let got = locate(None, Some(home.path()), false);
        if !Path::new("/etc/pki/libvirt/clientcert.pem").exists() {
            let got = got.unwrap();
            assert_eq!(got.ca, u.join("cacert.pem"));
            assert_eq!(got.identity, None);
            assert_eq!(got.crl, Path::new("/etc/pki/CA/cacrl.pem"));
            std::fs::write(u.join("cacrl.pem"), "x").unwrap();
            let got = locate(None, Some(home.path()), false).unwrap();
            assert_eq!(got.crl, u.join("cacrl.pem"));
            // root never reads the user dir.
            if Path::new("/etc/pki/CA/cacert.pem").exists() {
                let got = locate(None, Some(home.path()), true).unwrap();
                assert_eq!(got.crl, Path::new("/etc/pki/CA/cacrl.pem"));
            }
        }
        if !Path::new("/etc/pki/CA/cacert.pem").exists() {
            let e = locate(None, Some(home.path()), true).unwrap_err();
            assert!(e.to_string().contains("/etc/pki/CA/cacert.pem"), "{e}");
        }
    }

    /// The client key's PEM is wiped once the TLS configuration is built and dropped: no copy
    /// of its text is left in the process's memory.
    #[test]
    fn the_client_key_pem_leaves_no_copy_in_memory() {
        // Made by openssl in a child process: no copy of the key's text in this one.
        let dir = tempfile::tempdir().unwrap();
        let pkipath = dir.path().to_path_buf();
        let made = std::process::Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
            ])
            .args(["-nodes", "-days", "2", "-subj", "/CN=test", "-keyout"])
            .arg(pkipath.join("clientkey.pem"))
            .arg("-out")
            .arg(pkipath.join("clientcert.pem"))
            .output()
            .expect("openssl");
        assert!(made.status.success(), "{made:?}");
        std::fs::copy(pkipath.join("clientcert.pem"), pkipath.join("cacert.pem")).unwrap();
        let needle = {
            let pem = Zeroizing::new(std::fs::read(pkipath.join("clientkey.pem")).unwrap());
            // A base64 line of the key: only a copy of the file's text holds it.
            let line = pem.split(|b| *b == b'\n').nth(1).unwrap();
            testbed::memory::Needle::new(line)
        };
        assert!(!needle.is_in_memory(), "the test's own copy is wiped");
        let t = TlsTarget {
            host: "127.0.0.1".into(),
            port: 1,
            pkipath: Some(pkipath.clone()),
            no_verify: false,
            ciphers: Vec::new(),
        };
        let paths = locate(Some(&pkipath), None, false).unwrap();
        let config = client_config(&t, &paths).unwrap();
        drop(config);
        assert!(
            !needle.is_in_memory(),
            "the client key's PEM is still in memory after the TLS configuration was dropped"
        );
    }

    #[test]
    fn named_ciphers_are_offered_first() {
        let names = |order: &[&str]| {
            let order: Vec<String> = order.iter().map(|s| (*s).to_string()).collect();
            provider(&order)
                .cipher_suites
                .iter()
                .map(|s| format!("{:?}", s.suite()))
                .filter(|n| n.starts_with("TLS13_"))
                .collect::<Vec<_>>()
        };
        let default = names(&[]);
        assert_eq!(
            default[0], "TLS13_AES_256_GCM_SHA384",
            "rustls's order: {default:?}"
        );
        let v = names(&["aes128-gcm"]);
        assert_eq!(v[0], "TLS13_AES_128_GCM_SHA256", "{v:?}");
        assert_eq!(v.len(), default.len());
        let v = names(&["chacha20-poly1305", "aes128-gcm"]);
        assert_eq!(v[0], "TLS13_CHACHA20_POLY1305_SHA256", "{v:?}");
        assert_eq!(v[1], "TLS13_AES_128_GCM_SHA256", "{v:?}");
    }

    #[test]
    fn unreadable_pki_files_are_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("cacert.pem"), "not pem").unwrap();
        let t = TlsTarget {
            host: "127.0.0.1".into(),
            port: 1,
            pkipath: Some(d.path().into()),
            no_verify: false,
            ciphers: Vec::new(),
        };
        let paths = locate(t.pkipath.as_deref(), None, false).unwrap();
        let e = client_config(&t, &paths).unwrap_err();
        assert!(matches!(e, TlsError::BadPkiFile { .. }), "{e}");
        assert!(e.to_string().contains("cacert.pem"), "{e}");
    }
}
