//! The libraries' warnings reach the user: `lv` and `proxyctl` print them on stderr, and
//! `-q` quiets them as virsh's does. The warning used here needs no daemon: an `ssh_config`
//! block that sets `ProxyCommand`, which the SSH transport does not apply (the dial then
//! fails on a closed port).

use std::path::Path;
use std::process::Command;

/// An `ssh_config` whose host `kvm` sets `ProxyCommand` and points at a closed port.
fn ssh_config(dir: &Path) -> std::path::PathBuf {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let path = dir.join("ssh_config");
    std::fs::write(
        &path,
        format!(
            "Host kvm\n  HostName 127.0.0.1\n  Port {port}\n  User ops\n  \
             ProxyCommand ssh -W %h:%p bastion\n  IdentityFile {}\n",
            dir.join("id").display()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("id"), "not a key").unwrap();
    path
}

/// Runs `bin` with `args`, then with `-q` first: the first run must fail with the warning
/// about the ignored `ProxyCommand` on stderr, the quiet one fail without it but with its error.
fn warns_unless_quiet(bin: &str, args: &[&std::ffi::OsStr]) {
    let run = |quiet: bool| {
        let mut c = Command::new(bin);
        if quiet {
            c.arg("-q");
        }
        let out = c.args(args).env_remove("LIBVIRT_DEBUG").output().unwrap();
        assert!(!out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run(false);
    assert!(
        err.contains("ProxyCommand") && err.contains("WARN"),
        "no warning about the ignored ProxyCommand on stderr: {err:?}"
    );
    let err = run(true);
    assert!(!err.contains("ProxyCommand"), "-q still warns: {err:?}");
    assert!(
        err.contains("error"),
        "the error itself still shows: {err:?}"
    );
}

#[test]
fn lv_prints_library_warnings_on_stderr_and_q_quiets_them() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = ssh_config(tmp.path());
    let args = [
        "-F".as_ref(),
        cfg.as_os_str(),
        "-c".as_ref(),
        "qemu+ssh://kvm/system".as_ref(),
        "version".as_ref(),
    ];
    warns_unless_quiet(env!("CARGO_BIN_EXE_lv"), &args);
}

#[test]
fn proxyctl_prints_library_warnings_on_stderr_and_q_quiets_them() {
    let tmp = tempfile::tempdir().unwrap();
    let ssh = ssh_config(tmp.path());
    let config = tmp.path().join("providers.yaml");
    std::fs::write(
        &config,
        format!(
            "providers:\n  - name: lab\n    type: kvm2\n    allow_unverified_images: true\n    \
             images:\n      k: {{ url: \"http://127.0.0.1:9/k.raw\", format: raw }}\n    \
             uri: qemu+ssh://kvm/system\n    pool: default\n    ssh_config: {}\n    \
             budgets: {{ connect_secs: 5 }}\n",
            ssh.display()
        ),
    )
    .unwrap();
    let args = [
        "--config".as_ref(),
        config.as_os_str(),
        "images".as_ref(),
        "ensure".as_ref(),
        "k".as_ref(),
    ];
    warns_unless_quiet(env!("CARGO_BIN_EXE_proxyctl"), &args);
}
