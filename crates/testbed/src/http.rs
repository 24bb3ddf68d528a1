//! A loopback HTTP/1.1 server for tests: named byte bodies with per-path failure knobs.
//!
//! ```text
//!  test ──GET /path──▶ 127.0.0.1:<free port> ──▶ Route { body, behavior, content_length }
//!                                                  Normal        whole body, then close
//!                                                  StallAfter(n) headers + n bytes, then silence
//!                                                                (socket stays open until the
//!                                                                client goes or the server drops)
//!                                                  DieAfter(n)   headers + n bytes, then close
//! ```
//!
//! Every response says `Connection: close`, so a client never pools a connection to it and
//! tests that count tasks or sockets see each request end. Hits are counted per path (also
//! for unknown paths, which answer 404). A route may redirect ([`Route::redirect`]) or
//! announce a `Content-Length` other than its body's ([`Route::announce`]).
//! [`HttpServer::start_tls`] serves HTTPS with a certificate of [`crate::pki`]. Dropping the
//! server stops the listener and every connection task. Needs a tokio runtime (it spawns
//! tasks).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::{
    self,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
};

/// What a path does after the headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    /// Send the whole body, then close.
    Normal,
    /// Send the headers and this many body bytes, then stop sending but keep the socket
    /// open (a stalled mirror).
    StallAfter(usize),
    /// Send the headers and this many body bytes, then close the connection (a mirror that
    /// died mid-body).
    DieAfter(usize),
}

/// One served path.
#[derive(Debug, Clone)]
pub struct Route {
    /// The body.
    pub body: Arc<Vec<u8>>,
    /// What happens after the headers.
    pub behavior: Behavior,
    /// Whether the response carries `Content-Length` (the full body's length).
    pub content_length: bool,
    /// The status code (200 unless set).
    pub status: u16,
    /// A `Location` header (with a 302 status: [`Route::redirect`]).
    pub location: Option<String>,
    /// A `Content-Length` to announce instead of the body's length.
    pub announce: Option<u64>,
}

impl Route {
    /// A normal 200 response with `Content-Length`.
    pub fn new(body: impl Into<Vec<u8>>) -> Self {
        Self {
            body: Arc::new(body.into()),
            behavior: Behavior::Normal,
            content_length: true,
            status: 200,
            location: None,
            announce: None,
        }
    }

    /// A `302 Found` to `location`, with an empty body.
    pub fn redirect(location: impl Into<String>) -> Self {
        Self {
            location: Some(location.into()),
            ..Self::new(Vec::new()).status(302)
        }
    }

    /// Announce `len` in `Content-Length`, whatever the body's length (a lying mirror).
    #[must_use]
    pub fn announce(mut self, len: u64) -> Self {
        self.announce = Some(len);
        self.content_length = true;
        self
    }

    /// Sets the behaviour.
    #[must_use]
    pub fn behavior(mut self, b: Behavior) -> Self {
        self.behavior = b;
        self
    }

    /// Stall after `n` body bytes.
    #[must_use]
    pub fn stall_after(self, n: usize) -> Self {
        self.behavior(Behavior::StallAfter(n))
    }

    /// Close after `n` body bytes.
    #[must_use]
    pub fn die_after(self, n: usize) -> Self {
        self.behavior(Behavior::DieAfter(n))
    }

    /// Whether to send `Content-Length`.
    #[must_use]
    pub fn content_length(mut self, on: bool) -> Self {
        self.content_length = on;
        self
    }

    /// The status code.
    #[must_use]
    pub fn status(mut self, code: u16) -> Self {
        self.status = code;
        self
    }
}

#[derive(Default)]
struct State {
    routes: HashMap<String, Route>,
    hits: HashMap<String, u64>,
}

/// The server. Dropping it stops everything it started.
pub struct HttpServer {
    addr: SocketAddr,
    scheme: &'static str,
    state: Arc<Mutex<State>>,
    stop: watch::Sender<bool>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// Binds 127.0.0.1 on a free port and starts serving (no routes yet).
    pub async fn start() -> io::Result<Self> {
        Self::listen(None).await
    }

    /// Binds 127.0.0.1 on a free port and serves HTTPS with the server certificate and key
    /// of `server_dir` (a [`crate::pki::Pki::server_dir`]: `servercert.pem`,
    /// `serverkey.pem`; the certificate names `127.0.0.1`).
    pub async fn start_tls(server_dir: &std::path::Path) -> io::Result<Self> {
        let bad = |e: &dyn std::fmt::Display| io::Error::other(e.to_string());
        let certs = CertificateDer::pem_file_iter(server_dir.join("servercert.pem"))
            .map_err(|e| bad(&e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(&e))?;
        let key =
            PrivateKeyDer::from_pem_file(server_dir.join("serverkey.pem")).map_err(|e| bad(&e))?;
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(&e))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad(&e))?;
        Self::listen(Some(TlsAcceptor::from(Arc::new(config)))).await
    }

    async fn listen(tls: Option<TlsAcceptor>) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State::default()));
        let (stop, stop_rx) = watch::channel(false);
        let scheme = if tls.is_some() { "https" } else { "http" };
        tokio::spawn(accept_loop(listener, tls, state.clone(), stop_rx));
        Ok(Self {
            addr,
            scheme,
            state,
            stop,
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port><path>` (`https://` for [`start_tls`](Self::start_tls);
    /// `path` starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme, self.addr)
    }

    /// Serves `body` at `path` normally.
    pub fn serve(&self, path: &str, body: impl Into<Vec<u8>>) {
        self.route(path, Route::new(body));
    }

    /// Serves `route` at `path` (replacing what was there).
    pub fn route(&self, path: &str, route: Route) {
        self.lock().routes.insert(path.to_owned(), route);
    }

    /// Requests seen for `path` so far.
    pub fn hits(&self, path: &str) -> u64 {
        self.lock().hits.get(path).copied().unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    state: Arc<Mutex<State>>,
    stop: watch::Receiver<bool>,
) {
    let mut stopped = stop.clone();
    loop {
        tokio::select! {
            r = listener.accept() => {
                let Ok((sock, _)) = r else { continue };
                tokio::spawn(connection(sock, tls.clone(), state.clone(), stop.clone()));
            }
            _ = stopped.wait_for(|s| *s) => return,
        }
    }
}

async fn connection(
    sock: TcpStream,
    tls: Option<TlsAcceptor>,
    state: Arc<Mutex<State>>,
    mut stop: watch::Receiver<bool>,
) {
    let serve = async {
        match tls {
            // A failed TLS handshake (a client that does not trust us) ends the connection.
            Some(tls) => match tls.accept(sock).await {
                Ok(s) => serve_one(s, &state).await,
                Err(e) => Err(e),
            },
            None => serve_one(sock, &state).await,
        }
    };
    tokio::select! {
        _ = serve => {}
        _ = stop.wait_for(|s| *s) => {}
    }
}

async fn serve_one<S: AsyncRead + AsyncWrite + Unpin>(
    mut sock: S,
    state: &Mutex<State>,
) -> io::Result<()> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = sock.read(&mut buf).await?;
        if n == 0 || head.len() > 16 << 10 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or("/").to_owned();
    let route = {
        let mut st = state.lock().unwrap_or_else(PoisonError::into_inner);
        *st.hits.entry(path.clone()).or_default() += 1;
        st.routes.get(&path).cloned()
    };
    let Some(route) = route else {
        sock.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await?;
        return Ok(());
    };
    let mut resp = format!(
        "HTTP/1.1 {} {}\r\nConnection: close\r\nContent-Type: application/octet-stream\r\n",
        route.status,
        reason(route.status)
    );
    if route.content_length {
        let len = route.announce.unwrap_or(route.body.len() as u64);
        let _ = write!(resp, "Content-Length: {len}\r\n");
    }
    if let Some(to) = &route.location {
        let _ = write!(resp, "Location: {to}\r\n");
    }
    resp.push_str("\r\n");
    sock.write_all(resp.as_bytes()).await?;
    if method == "HEAD" {
        return Ok(());
    }
    let body = &route.body[..];
    match route.behavior {
        Behavior::Normal => {
            sock.write_all(body).await?;
            sock.shutdown().await?;
        }
        Behavior::DieAfter(n) => {
            sock.write_all(&body[..n.min(body.len())]).await?;
            sock.flush().await?;
            // Dropping the socket closes it: the client sees the body end early.
        }
        Behavior::StallAfter(n) => {
            sock.write_all(&body[..n.min(body.len())]).await?;
            sock.flush().await?;
            // Silence, socket open, until the client goes away (read sees EOF or an error).
            loop {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
    }
    Ok(())
}

/// A response read by [`get_via_proxy`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxiedResponse {
    /// The status code.
    pub status: u16,
    /// The status line and headers, as received.
    pub head: String,
    /// The body bytes as received (not de-chunked).
    pub body: Vec<u8>,
}

/// `GET url` through the HTTP forward proxy at `proxy` (absolute-form request line,
/// `Connection: close`), reading the whole response within `timeout`.
///
/// # Errors
/// Connect or I/O errors, a timeout (`TimedOut`), or a reply that is not HTTP
/// (`InvalidData`, with what arrived).
pub async fn get_via_proxy(
    proxy: SocketAddr,
    url: &str,
    timeout: std::time::Duration,
) -> io::Result<ProxiedResponse> {
    let host = url
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not an http URL: {url}"),
            )
        })?
        .to_owned();
    let work = async {
        let mut c = TcpStream::connect(proxy).await?;
        c.write_all(
            format!("GET {url} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: testbed\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
        let mut out = Vec::new();
        c.read_to_end(&mut out).await?;
        Ok::<_, io::Error>(out)
    };
    let raw = tokio::time::timeout(timeout, work).await.map_err(|_| {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("GET {url} via proxy {proxy}: no complete answer within {timeout:?}"),
        )
    })??;
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "GET {url} via proxy {proxy}: not an HTTP response: {:?}",
                String::from_utf8_lossy(&raw[..raw.len().min(200)])
            ),
        )
    };
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(bad)?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head
        .strip_prefix("HTTP/1.")
        .and_then(|r| r.get(2..5))
        .and_then(|c| c.parse().ok())
        .ok_or_else(bad)?;
    Ok(ProxiedResponse {
        status,
        head,
        body: raw[split + 4..].to_vec(),
    })
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        302 => "Found",
        404 => "Not Found",
        403 => "Forbidden",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn get(s: &HttpServer, path: &str) -> Vec<u8> {
        let mut c = TcpStream::connect(s.addr()).await.unwrap();
        c.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_millis(500), c.read_to_end(&mut out)).await;
        out
    }

    #[tokio::test]
    async fn behaviors() {
        let s = HttpServer::start().await.unwrap();
        s.serve("/ok", b"hello".to_vec());
        s.route("/die", Route::new(b"0123456789".to_vec()).die_after(3));
        s.route("/stall", Route::new(b"0123456789".to_vec()).stall_after(4));
        s.route("/nolen", Route::new(b"abc".to_vec()).content_length(false));
        let ok = String::from_utf8(get(&s, "/ok").await).unwrap();
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(
            ok.contains("Content-Length: 5\r\n") && ok.ends_with("\r\n\r\nhello"),
            "{ok}"
        );
        let die = String::from_utf8(get(&s, "/die").await).unwrap();
        assert!(
            die.contains("Content-Length: 10\r\n") && die.ends_with("\r\n\r\n012"),
            "{die}"
        );
        // The stalled response never completes: the read times out with 4 body bytes.
        let stall = String::from_utf8(get(&s, "/stall").await).unwrap();
        assert!(stall.ends_with("\r\n\r\n0123"), "{stall}");
        let nolen = String::from_utf8(get(&s, "/nolen").await).unwrap();
        assert!(
            !nolen.contains("Content-Length") && nolen.ends_with("abc"),
            "{nolen}"
        );
        assert!(get(&s, "/missing").await.starts_with(b"HTTP/1.1 404"));
        s.route("/moved", Route::redirect("http://127.0.0.1:1/there"));
        let moved = String::from_utf8(get(&s, "/moved").await).unwrap();
        assert!(
            moved.starts_with("HTTP/1.1 302 Found\r\n")
                && moved.contains("Location: http://127.0.0.1:1/there\r\n"),
            "{moved}"
        );
        s.route("/liar", Route::new(b"abc".to_vec()).announce(1 << 40));
        let liar = String::from_utf8(get(&s, "/liar").await).unwrap();
        assert!(liar.contains("Content-Length: 1099511627776\r\n"), "{liar}");
        assert_eq!(s.hits("/ok"), 1);
        assert_eq!(s.hits("/missing"), 1);
        assert!(s.url("/ok").starts_with("http://127.0.0.1:"));
    }

    /// The server itself understands an absolute-form request line as a path, so it can
    /// stand in for a proxy here.
    #[tokio::test]
    async fn get_via_a_proxy() {
        let s = HttpServer::start().await.unwrap();
        let url = format!("http://10.0.2.2:{}/t", s.addr().port());
        s.serve(&url, b"token".to_vec());
        let r = get_via_proxy(s.addr(), &url, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(r.body, b"token");
        assert!(r.head.contains("Content-Length: 5"), "{r:?}");
        let r = get_via_proxy(s.addr(), "http://x/none", Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(r.status, 404);
        assert!(
            get_via_proxy(s.addr(), "ftp://x", Duration::from_secs(1))
                .await
                .is_err()
        );
    }
}
