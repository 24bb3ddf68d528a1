//! The libraries' warnings reach the user: `lv` and `proxyctl` print them on stderr, and
//! `-q` quiets them as virsh's does. The warning used here needs no daemon: an `ssh_config`
//! block that sets `ProxyCommand`, which the SSH transport does not apply (the dial then
//! fails on a closed port).

use std::path::Path;
use std::process::{Command, Output};

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

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn lv_prints_library_warnings_on_stderr_and_q_quiets_them() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = ssh_config(tmp.path());
    let lv = |quiet: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lv"));
        if quiet {
            c.arg("-q");
        }
        c.arg("-F")
            .arg(&cfg)
            .args(["-c", "qemu+ssh://kvm/system", "version"])
            .env_remove("LIBVIRT_DEBUG")
            .output()
            .unwrap()
    };
    let out = lv(false);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("ProxyCommand") && err.contains("WARN"),
        "no warning about the ignored ProxyCommand on stderr: {err:?}"
    );
    let out = lv(true);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(!err.contains("ProxyCommand"), "-q still warns: {err:?}");
    assert!(
        err.contains("error"),
        "the error itself still shows: {err:?}"
    );
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
    let proxyctl = |quiet: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_proxyctl"));
        if quiet {
            c.arg("-q");
        }
        c.arg("--config")
            .arg(&config)
            .args(["images", "ensure", "k"])
            .env_remove("LIBVIRT_DEBUG")
            .output()
            .unwrap()
    };
    let out = proxyctl(false);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("ProxyCommand") && err.contains("WARN"),
        "no warning about the ignored ProxyCommand on stderr: {err:?}"
    );
    let err = stderr(&proxyctl(true));
    assert!(!err.contains("ProxyCommand"), "-q still warns: {err:?}");
}
