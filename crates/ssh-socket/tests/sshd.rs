//! Against a real OpenSSH sshd: data through the forwarded socket, host keys, authentication,
//! channel open errors.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{
    config, echoes, fill, from_ssh_config, known_hosts_file, listen, refused_leaving,
    spawn_checking_sink, spawn_echo, spawn_source, ssh_error, sshd, stranger_public_key,
};
use ssh_socket::{CloseReason, KeyFileError, KnownHostsVerify, SshError};
use testbed::sshd::{KeyType, SshdOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const BIG: u64 = 256 << 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_round_trip_through_the_forwarded_socket() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (l, path) = listen(&sshd, "echo.sock");
    spawn_echo(l);
    let (mut s, close) = match ssh_socket::connect(&config(&sshd, &path)).await {
        Ok(x) => x,
        Err(e) => panic!("connect: {e}\n{}", sshd.log()),
    };
    for i in 0..50u32 {
        let msg = format!("call {i}: {}", "x".repeat(i as usize * 100));
        s.write_all(msg.as_bytes()).await.unwrap();
        let mut back = vec![0u8; msg.len()];
        s.read_exact(&mut back).await.unwrap();
        assert_eq!(back, msg.as_bytes());
    }
    assert!(!close.is_closed());
    close.close();
    assert_eq!(close.closed().await, CloseReason::Local);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_256_mib_byte_exact() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (l, path) = listen(&sshd, "sink.sock");
    spawn_checking_sink(l);
    let (mut s, _close) = ssh_socket::connect(&config(&sshd, &path))
        .await
        .expect("connect");
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0;
    while off < BIG {
        fill(&mut buf, off);
        s.write_all(&buf).await.unwrap();
        off += buf.len() as u64;
    }
    s.shutdown().await.unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.unwrap();
    assert_eq!(answer, format!("ok {BIG}\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn download_256_mib_byte_exact() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (l, path) = listen(&sshd, "source.sock");
    spawn_source(l, BIG);
    let (mut s, _close) = ssh_socket::connect(&config(&sshd, &path))
        .await
        .expect("connect");
    let mut buf = vec![0u8; 1 << 20];
    let mut want = vec![0u8; 1 << 20];
    let mut off = 0u64;
    loop {
        let n = s.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        fill(&mut want[..n], off);
        assert!(buf[..n] == want[..n], "mismatch in the {n} bytes at {off}");
        off += n as u64;
    }
    assert_eq!(off, BIG);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_host_key_is_refused_before_authentication() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (_l, path) = listen(&sshd, "x.sock");
    // known_hosts records some other ed25519 key for this host:port.
    let other = sshd.dir().join("other_known_hosts");
    std::fs::write(
        &other,
        format!(
            "# a comment line\n[127.0.0.1]:{} ssh-ed25519 \
             AAAAC3NzaC1lZDI1NTE5AAAAIALUx09tPCqiWz4PtTL1zJuf9XW3HD6IeWUJo9+5AkTB\n",
            sshd.port()
        ),
    )
    .unwrap();
    let mut cfg = config(&sshd, &path);
    cfg.known_hosts = vec![other.clone()];
    let err = ssh_socket::connect(&cfg)
        .await
        .expect_err("must refuse a changed key");
    match &err {
        SshError::HostKeyChanged {
            host,
            key_type,
            line,
            known_hosts,
            ..
        } => {
            assert_eq!(host, &format!("[127.0.0.1]:{}", sshd.port()));
            assert_eq!(key_type, "ssh-ed25519");
            assert_eq!(*line, 2);
            assert_eq!(known_hosts, &other);
        }
        e => panic!("expected HostKeyChanged, got {e:?}"),
    }
    assert!(err.to_string().contains("HOST KEY CHANGED"), "{err}");
    // The server never saw an authentication request.
    let log = sshd.log();
    assert!(
        !log.contains("userauth-request"),
        "authentication was attempted:\n{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_host_is_refused_and_named() {
    for kind in [
        KeyType::Ed25519,
        KeyType::Ecdsa,
        #[cfg(feature = "rsa")]
        KeyType::Rsa,
    ] {
        let opts = SshdOptions {
            host_key: kind,
            ..SshdOptions::default()
        };
        let Some(sshd) = sshd(&opts) else { return };
        let (_l, path) = listen(&sshd, "x.sock");
        let mut cfg = config(&sshd, &path);
        cfg.known_hosts = vec![sshd.dir().join("missing_known_hosts")];
        let err = ssh_socket::connect(&cfg)
            .await
            .expect_err("must refuse an unknown host");
        match &err {
            SshError::HostKeyUnknown {
                host,
                key_type,
                fingerprint,
                ..
            } => {
                assert_eq!(host, &format!("[127.0.0.1]:{}", sshd.port()));
                assert_eq!(key_type, kind.ssh_name());
                assert!(fingerprint.starts_with("SHA256:"), "{fingerprint}");
            }
            e => panic!("expected HostKeyUnknown, got {e:?}"),
        }
        assert!(!sshd.log().contains("userauth-request"));

        // The same host with its key recorded connects (RSA included: rsa-sha2-* signatures).
        let (l, path) = listen(&sshd, "echo.sock");
        spawn_echo(l);
        let (mut s, _c) = ssh_socket::connect(&config(&sshd, &path))
            .await
            .unwrap_or_else(|e| panic!("{kind:?} host key: {e}"));
        s.write_all(b"ping").await.unwrap();
        let mut b = [0u8; 4];
        s.read_exact(&mut b).await.unwrap();
        assert_eq!(&b, b"ping");
    }
}

/// Without the `rsa` feature an RSA-only host has no host key algorithm in common with us: the
/// key exchange says so (we cannot verify its signature), before any authentication.
#[cfg(not(feature = "rsa"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_rsa_an_rsa_only_host_has_no_common_host_key_algorithm() {
    let opts = SshdOptions {
        host_key: KeyType::Rsa,
        ..SshdOptions::default()
    };
    let Some(sshd) = sshd(&opts) else { return };
    let (_l, path) = listen(&sshd, "x.sock");
    let err = ssh_socket::connect(&config(&sshd, &path))
        .await
        .expect_err("an RSA host key cannot be verified without the rsa feature");
    assert!(
        matches!(err, SshError::Handshake { .. }) && err.to_string().contains("No common Key"),
        "{err}"
    );
    assert!(!sshd.log().contains("userauth-request"));
}

/// An RSA user key (`id_rsa`, what many virsh users have) signs with rsa-sha2-512/256 under the
/// `rsa` feature (on by default); without it the key file is refused with the reason rather
/// than offered and failed after the server accepted it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rsa_user_key_authenticates_unless_the_rsa_feature_is_off() {
    let opts = SshdOptions {
        client_key: KeyType::Rsa,
        ..SshdOptions::default()
    };
    let Some(sshd) = sshd(&opts) else { return };
    let (l, path) = listen(&sshd, "echo.sock");
    spawn_echo(l);
    let cfg = config(&sshd, &path);
    if cfg!(feature = "rsa") {
        let (mut s, _c) = ssh_socket::connect(&cfg).await.expect("an RSA user key");
        s.write_all(b"rsa").await.unwrap();
        let mut b = [0u8; 3];
        s.read_exact(&mut b).await.unwrap();
        assert_eq!(&b, b"rsa");
        assert!(sshd.log().contains("method publickey"), "{}", sshd.log());
    } else {
        match ssh_socket::connect(&cfg).await.expect_err("no RSA support") {
            SshError::KeyFile {
                reason: KeyFileError::Invalid(why),
                ..
            } => assert!(why.contains("`rsa` feature"), "{why}"),
            e => panic!("expected KeyFile, got {e:?}"),
        }
        assert!(!sshd.log().contains("method publickey"), "{}", sshd.log());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_verify_accepts_an_unknown_host() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (l, path) = listen(&sshd, "echo.sock");
    spawn_echo(l);
    let mut cfg = config(&sshd, &path);
    cfg.known_hosts = vec![sshd.dir().join("missing_known_hosts")];
    cfg.known_hosts_verify = KnownHostsVerify::Ignore;
    let (mut s, _c) = ssh_socket::connect(&cfg).await.expect("no_verify connects");
    s.write_all(b"hi").await.unwrap();
    let mut b = [0u8; 2];
    s.read_exact(&mut b).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_client_key_is_an_auth_error() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (_l, path) = listen(&sshd, "x.sock");
    let stranger = sshd.dir().join("stranger");
    let st = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&stranger)
        .status()
        .unwrap();
    assert!(st.success());
    let mut cfg = config(&sshd, &path);
    cfg.key_files = vec![stranger.clone()];
    match ssh_socket::connect(&cfg)
        .await
        .expect_err("unauthorised key")
    {
        SshError::Auth {
            user,
            tried,
            remaining,
        } => {
            assert_eq!(user, sshd.user().name);
            assert_eq!(tried.len(), 1);
            assert!(tried[0].contains(&*stranger.to_string_lossy()), "{tried:?}");
            assert!(tried[0].contains("ssh-ed25519 SHA256:"), "{tried:?}");
            assert_eq!(remaining, vec!["publickey".to_owned()]);
        }
        e => panic!("expected Auth, got {e:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encrypted_key_needs_its_passphrase() {
    let opts = SshdOptions {
        client_passphrase: Some("correct horse".into()),
        ..SshdOptions::default()
    };
    let Some(sshd) = sshd(&opts) else { return };
    let (l, path) = listen(&sshd, "echo.sock");
    spawn_echo(l);
    let mut cfg = config(&sshd, &path);
    match ssh_socket::connect(&cfg).await.expect_err("no passphrase") {
        SshError::KeyFile {
            path,
            reason: KeyFileError::EncryptedKeyNoPassphrase,
        } => {
            assert_eq!(path, sshd.client_key());
        }
        e => panic!("expected EncryptedKeyNoPassphrase, got {e:?}"),
    }
    cfg.passphrase = Some(ssh_socket::Zeroizing::new("wrong".into()));
    match ssh_socket::connect(&cfg)
        .await
        .expect_err("wrong passphrase")
    {
        SshError::KeyFile {
            reason: KeyFileError::BadPassphrase(_),
            ..
        } => {}
        e => panic!("expected BadPassphrase, got {e:?}"),
    }
    cfg.passphrase = Some(ssh_socket::Zeroizing::new("correct horse".into()));
    let (mut s, _c) = ssh_socket::connect(&cfg).await.expect("right passphrase");
    s.write_all(b"ok").await.unwrap();
    let mut b = [0u8; 2];
    s.read_exact(&mut b).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_remote_socket_is_a_channel_open_error() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let path = sshd.dir().join("nobody-listens-here.sock");
    match ssh_socket::connect(&config(&sshd, &path))
        .await
        .expect_err("no socket")
    {
        SshError::ChannelOpen {
            target: socket_path,
            reason,
        } => {
            assert_eq!(socket_path, path.to_string_lossy());
            assert!(reason.contains("connect failed"), "{reason}");
        }
        e => panic!("expected ChannelOpen, got {e:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_close_ends_reads_cleanly_then_the_session() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (l, path) = listen(&sshd, "source.sock");
    spawn_source(l, 1000);
    let (mut s, close) = ssh_socket::connect(&config(&sshd, &path))
        .await
        .expect("connect");
    let mut all = Vec::new();
    s.read_to_end(&mut all).await.unwrap();
    assert_eq!(all.len(), 1000);
    // sshd closes the channel once both directions are done (it half-closes like a socket).
    s.shutdown().await.unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(5), close.closed())
        .await
        .unwrap();
    assert_eq!(reason, CloseReason::ChannelClosed);
    let e = s.write_all(b"late").await.unwrap_err();
    assert_eq!(
        ssh_error(&e).close_reason(),
        Some(&CloseReason::ChannelClosed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_tears_the_session_down() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (l, path) = listen(&sshd, "echo.sock");
    spawn_echo(l);
    let (s, close) = ssh_socket::connect(&config(&sshd, &path))
        .await
        .expect("connect");
    drop(s);
    assert_eq!(close.closed_reason(), Some(CloseReason::Dropped));
    tokio::time::timeout(Duration::from_secs(1), close.terminated())
        .await
        .expect("russh session task still running 1 s after drop");
    close.close(); // idempotent, reason unchanged
    assert_eq!(close.closed_reason(), Some(CloseReason::Dropped));
}

/// A reader that falls behind must not stall the session: while 6 MiB sit unread for us
/// (more than russh's own 100-message channel queue, whose fullness parks the whole session),
/// our upload still completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_does_not_freeze_the_session() {
    const DOWN: u64 = 6 << 20;
    const UP: u64 = 4 << 20;
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (listener, path) = listen(&sshd, "both.sock");
    // Sends DOWN bytes while counting what arrives; answers with the count at EOF.
    tokio::spawn(async move {
        let (conn, _) = listener.accept().await.unwrap();
        let (mut rd, mut wr) = conn.into_split();
        let source = tokio::spawn(async move {
            let mut buf = vec![0u8; 1 << 16];
            let mut off = 0;
            while off < DOWN {
                fill(&mut buf, off);
                wr.write_all(&buf).await.unwrap();
                off += buf.len() as u64;
            }
            wr
        });
        let mut got = 0u64;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match rd.read(&mut buf).await.unwrap() {
                0 => break,
                k => got += k as u64,
            }
        }
        let mut wr = source.await.unwrap();
        wr.write_all(format!("got {got}\n").as_bytes())
            .await
            .unwrap();
    });
    let cfg = config(&sshd, &path);
    let (mut s, _c) = ssh_socket::connect(&cfg).await.expect("connect");
    // Give the server time to push its data at us, then upload without reading anything.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let upload = async {
        let chunk = vec![7u8; 1 << 16];
        for _ in 0..UP / chunk.len() as u64 {
            s.write_all(&chunk).await.unwrap();
        }
        s.shutdown().await.unwrap();
    };
    tokio::time::timeout(Duration::from_secs(20), upload)
        .await
        .expect("upload stalled while incoming data sat unread");
    let mut all = Vec::new();
    s.read_to_end(&mut all).await.unwrap();
    let (data, tail) = all.split_at(DOWN as usize);
    let mut want = vec![0u8; DOWN as usize];
    fill(&mut want, 0);
    assert!(data == want.as_slice(), "download corrupted");
    assert_eq!(std::str::from_utf8(tail).unwrap(), format!("got {UP}\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authenticates_with_the_ssh_agent() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (l, path) = listen(&sshd, "echo.sock");
    spawn_echo(l);
    let agent_sock = sshd.dir().join("agent.sock");
    let mut agent = std::process::Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&agent_sock)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("ssh-agent");
    // Until it accepts: the socket file exists from the agent's bind(), before its listen()
    // (a connect in between is refused, and ssh-add fails), and a loaded box may hold the
    // agent there for a while.
    let since = std::time::Instant::now();
    while std::os::unix::net::UnixStream::connect(&agent_sock).is_err() {
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "ssh-agent not accepting on {} after 30 s",
            agent_sock.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let added = std::process::Command::new("ssh-add")
        .arg(sshd.client_key())
        .env("SSH_AUTH_SOCK", &agent_sock)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("ssh-add");
    assert!(added.success());

    let mut cfg = config(&sshd, &path);
    cfg.key_files.clear();
    cfg.use_agent = true;
    cfg.agent_socket = Some(agent_sock.clone());
    let res = ssh_socket::connect(&cfg).await;
    let _ = agent.kill();
    let _ = agent.wait();
    let (mut s, _c) = res.expect("agent auth");
    s.write_all(b"agent").await.unwrap();
    let mut b = [0u8; 5];
    s.read_exact(&mut b).await.unwrap();

    // The agent is gone now and it was the only credential: an Agent error naming the socket.
    match ssh_socket::connect(&cfg).await.expect_err("agent gone") {
        SshError::Agent { reason } => {
            assert!(reason.contains(&*agent_sock.to_string_lossy()), "{reason}");
        }
        e => panic!("expected Agent, got {e:?}"),
    }
}

/// A host `known_hosts` records by an RSA key presents its ed25519 key: under
/// `known_hosts_verify=auto` (OpenSSH's `accept-new`) that is refused like a changed key, as
/// libvirt's libssh transport does (`SSH_SERVER_FOUND_OTHER`), and the file is left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_pinned_by_another_key_type_is_refused_under_auto_and_not_appended() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (_l, path) = listen(&sshd, "x.sock");
    let rsa = stranger_public_key(sshd.dir(), KeyType::Rsa);
    let text = format!("[127.0.0.1]:{} {rsa}\n", sshd.port());
    let kh = known_hosts_file(&sshd, "rsa_known_hosts", &text);
    let mut cfg = config(&sshd, &path);
    cfg.known_hosts = vec![kh.clone()];
    cfg.known_hosts_verify = KnownHostsVerify::Auto;
    let what = "a host pinned by its ssh-rsa key was accepted with an ssh-ed25519 key";
    let err = refused_leaving(&cfg, &kh, &text, what).await;
    assert!(err.is_host_key(), "{err}");
    assert!(err.to_string().contains("ssh-rsa"), "{err}");
    assert!(!sshd.log().contains("userauth-request"));

    // Under `normal` the question says which key types are already known for the host; a
    // declined answer refuses the host and leaves the file alone.
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    cfg.known_hosts_verify = KnownHostsVerify::Normal;
    cfg.credentials = Some(Arc::new(move |p: &ssh_socket::Prompt| {
        log.lock().unwrap().push(format!("{p:?}"));
        Some("no".to_owned())
    }));
    let err = refused_leaving(&cfg, &kh, &text, "declined, yet connected").await;
    assert!(err.is_host_key(), "{err}");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains("AcceptHostKey") && asked[0].contains("ssh-rsa"),
        "the question does not say an ssh-rsa key is known: {asked:?}"
    );
}

/// OpenSSH reads every `UserKnownHostsFile` listed and the system-wide file
/// (`GlobalKnownHostsFile`, default `/etc/ssh/ssh_known_hosts`): a host recorded in the
/// second user file, or only in the system's, is known; another key in the system's file is a
/// changed key, refused under `accept-new` without touching the user's file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_known_hosts_file_ssh_reads_is_read() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (l, path) = listen(&sshd, "echo.sock");
    spawn_echo(l);
    let empty = known_hosts_file(&sshd, "first_known_hosts", "# nothing here\n");
    let user_files = format!(
        "UserKnownHostsFile {} {}",
        empty.display(),
        sshd.known_hosts().display()
    );
    let strict = "StrictHostKeyChecking yes".to_owned();
    let cfg = from_ssh_config(&sshd, "kvm", &[user_files, strict.clone()], &path);
    echoes(&cfg, "the host is in the second UserKnownHostsFile").await;

    let user_file = sshd.dir().join("user_known_hosts");
    let user = format!("UserKnownHostsFile {}", user_file.display());
    let global = format!("GlobalKnownHostsFile {}", sshd.known_hosts().display());
    let cfg = from_ssh_config(&sshd, "kvm2", &[user.clone(), global, strict], &path);
    echoes(&cfg, "the host is in the global known_hosts").await;

    let other = stranger_public_key(sshd.dir(), KeyType::Ed25519);
    let text = format!("[127.0.0.1]:{} {other}\n", sshd.port());
    let global_file = known_hosts_file(&sshd, "global_known_hosts", &text);
    let global = format!("GlobalKnownHostsFile {}", global_file.display());
    let accept_new = "StrictHostKeyChecking accept-new".to_owned();
    let cfg = from_ssh_config(&sshd, "kvm3", &[user, global, accept_new], &path);
    let what = "a key other than the global file's was accepted";
    match refused_leaving(&cfg, &global_file, &text, what).await {
        SshError::HostKeyChanged { known_hosts, .. } => assert_eq!(known_hosts, global_file),
        e => panic!("expected HostKeyChanged, got {e}"),
    }
    assert!(!user_file.exists(), "the user's known_hosts was written");
}

/// A host vouched for by a `@cert-authority` line is known: a plain key it presents is
/// refused (host certificates are not accepted), never learned as a new host's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_under_a_cert_authority_is_not_unknown() {
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (_l, path) = listen(&sshd, "x.sock");
    let ca = stranger_public_key(sshd.dir(), KeyType::Ed25519);
    let text = format!("@cert-authority [127.0.0.1]:* {ca}\n");
    let kh = known_hosts_file(&sshd, "ca_known_hosts", &text);
    let mut cfg = config(&sshd, &path);
    cfg.known_hosts = vec![kh.clone()];
    cfg.known_hosts_verify = KnownHostsVerify::Auto;
    let what = "a host under a @cert-authority line was learned as unknown";
    let err = refused_leaving(&cfg, &kh, &text, what).await;
    assert!(err.is_host_key(), "{err}");
    assert!(err.to_string().contains("cert-authority"), "{err}");
}

/// OpenSSH ignores a private key file of ours that group or others may read ("UNPROTECTED
/// PRIVATE KEY FILE"); a configured one is an error naming the mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_key_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(sshd) = sshd(&SshdOptions::default()) else {
        return;
    };
    let (l, path) = listen(&sshd, "echo.sock");
    spawn_echo(l);
    let loose = sshd.dir().join("loose_key");
    std::fs::copy(sshd.client_key(), &loose).unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o640)).unwrap();
    let mut cfg = config(&sshd, &path);
    cfg.key_files = vec![loose.clone()];
    match ssh_socket::connect(&cfg).await {
        Ok(_) => panic!("a 0640 private key was used"),
        Err(SshError::KeyFile { path, reason }) => {
            assert_eq!(path, loose);
            assert!(reason.to_string().contains("0640"), "{reason}");
        }
        Err(e) => panic!("expected KeyFile, got {e}"),
    }
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o600)).unwrap();
    ssh_socket::connect(&cfg).await.expect("0600 is fine");
}
