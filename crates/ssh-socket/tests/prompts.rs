//! What a server's keyboard-interactive prompts become before the credential callback sees
//! them. A scripted russh server (labelled as such: OpenSSH's sshd only asks
//! keyboard-interactive questions through PAM, which an unprivileged test sshd cannot use)
//! sends a name, instruction and prompt carrying terminal escape sequences.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::MethodKind;
use russh::server::{self, Auth, Response};
use ssh_socket::{AuthMethod, KnownHostsVerify, Prompt, SshConfig, SshError};
use tokio::net::TcpListener;

/// A scripted server whose only method is keyboard-interactive: one round of hostile
/// prompts, then a refusal.
struct Hostile;

impl server::Handler for Hostile {
    type Error = russh::Error;

    async fn auth_none(&mut self, _user: &str) -> Result<Auth, Self::Error> {
        Ok(Auth::Reject {
            proceed_with_methods: Some((&[MethodKind::KeyboardInteractive][..]).into()),
            partial_success: false,
        })
    }

    async fn auth_keyboard_interactive<'a>(
        &'a mut self,
        _user: &str,
        _submethods: &str,
        response: Option<Response<'a>>,
    ) -> Result<Auth, Self::Error> {
        if response.is_some() {
            return Ok(Auth::reject());
        }
        Ok(Auth::Partial {
            name: Cow::Borrowed("Two-factor\x1b]0;owned\x07"),
            instructions: Cow::Borrowed(
                "Enter the code\r\x1b[2J\x1b[1;1Hfrom your token.\nThen wait.",
            ),
            prompts: Cow::Owned(vec![(
                Cow::Borrowed("Code\x1b[8m\u{9b}31m\u{202e}: "),
                false,
            )]),
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyboard_interactive_prompts_reach_the_callback_without_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let key_path = dir.path().join("host_key");
    let st = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key_path)
        .status()
        .expect("ssh-keygen");
    assert!(st.success());
    let key = russh::keys::load_secret_key(&key_path, None).unwrap();
    let config = Arc::new(server::Config {
        keys: vec![key],
        auth_rejection_time: Duration::ZERO,
        methods: (&[MethodKind::KeyboardInteractive][..]).into(),
        ..server::Config::default()
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let config = Arc::clone(&config);
            tokio::spawn(async move {
                if let Ok(s) = server::run_stream(config, tcp, Hostile).await {
                    let _ = s.await;
                }
            });
        }
    });

    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let mut cfg = SshConfig::new("u", "127.0.0.1");
    cfg.port = port;
    cfg.known_hosts_verify = KnownHostsVerify::Ignore;
    cfg.auth_methods = vec![AuthMethod::KeyboardInteractive];
    cfg.use_agent = false;
    cfg.credentials = Some(Arc::new(move |p: &Prompt| {
        log.lock().unwrap().push(p.clone());
        Some("123456".to_owned())
    }));
    let err = ssh_socket::connect(&cfg)
        .await
        .expect_err("the server refuses");
    assert!(matches!(err, SshError::Auth { .. }), "{err}");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let Prompt::KeyboardInteractive {
        name,
        instruction,
        prompt,
        ..
    } = &asked[0]
    else {
        panic!("{asked:?}")
    };
    for (what, text) in [
        ("name", name),
        ("instruction", instruction),
        ("prompt", prompt),
    ] {
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c)),
            "the server's {what} reached the callback with control characters: {text:?}"
        );
    }
    assert_eq!(name, "Two-factor]0;owned");
    assert_eq!(
        instruction,
        "Enter the code[2J[1;1Hfrom your token.\nThen wait."
    );
    assert_eq!(prompt, "Code[8m31m: ");
}
