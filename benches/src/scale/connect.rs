//! Connect latency: process start → connect → `version` → exit, `lv` against virsh, over
//! the daemon's unix socket, TLS (the testbed's certificates) and an SSH exec channel to a
//! loopback sshd (`nc -U` on the far side for both; OpenSSH's `ssh` for virsh, reading the same
//! config file as lv).

use std::fmt::Write as _;

use testbed::libvirtd::Libvirtd;
use testbed::sshd::{Sshd, SshdOptions};

use super::run::{Cmd, ms, ratio, rounds, row, spread, vs_ms, walls};
use super::{Res, Scale};

/// The three ways to reach the daemon, for `lv` and for virsh.
pub(crate) struct Endpoints {
    /// Kept alive (and killed on drop) with the endpoints.
    _sshd: Sshd,
    pub unix: String,
    pub tls: String,
    /// `-F FILE` for `lv`.
    pub ssh_config: String,
    pub ssh_ours: String,
    pub ssh_virsh: String,
}

/// An sshd in front of `d` (its sessions get the daemon's runtime dir) and the URIs; files go
/// to `dir`.
pub(crate) fn endpoints(d: &Libvirtd, dir: &std::path::Path) -> Res<Endpoints> {
    let run = d
        .socket_path()
        .parent()
        .and_then(|p| p.parent())
        .ok_or("socket path")?;
    let sshd = Sshd::start(&SshdOptions {
        set_env: vec![("XDG_RUNTIME_DIR".into(), run.display().to_string())],
        ..SshdOptions::default()
    })
    .map_err(|e| format!("sshd: {e}"))?;
    let cfg = dir.join("ssh_config");
    std::fs::write(&cfg, sshd.ssh_config_block("target", sshd.port(), dir, &[]))
        .map_err(|e| e.to_string())?;
    // virsh runs `ssh` itself: a wrapper gives it the same config file.
    let wrapper = dir.join("ssh");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec ssh -F {} \"$@\"\n", cfg.display()),
    )
    .map_err(|e| e.to_string())?;
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .map_err(|e| e.to_string())?;
    let socket = d.socket_path().display().to_string();
    Ok(Endpoints {
        _sshd: sshd,
        unix: d.uri(),
        tls: d.tls_uri(),
        ssh_config: cfg.display().to_string(),
        ssh_ours: format!("qemu+ssh://target/session?socket={socket}"),
        ssh_virsh: format!(
            "qemu+ssh://target/session?no_tty=1&command={}&socket={socket}&netcat=nc",
            wrapper.display()
        ),
    })
}

pub(crate) fn latency(s: &mut Scale, d: &Libvirtd) -> Res<()> {
    s.section("Connect latency: process start → connect → `version` → exit");
    let e = endpoints(d, s.work.path())?;
    let lv = s.lv.clone();
    let virsh = std::path::Path::new("/usr/bin/virsh");
    let cases = [
        (
            "unix",
            Cmd::new("lv version (unix)", &lv, &["-c", &e.unix, "version"]),
            Cmd::new("virsh version (unix)", virsh, &["-c", &e.unix, "version"]),
            0.25,
        ),
        (
            "TLS",
            Cmd::new("lv version (TLS)", &lv, &["-c", &e.tls, "version"]),
            Cmd::new("virsh version (TLS)", virsh, &["-c", &e.tls, "version"]),
            0.3,
        ),
        (
            "SSH exec channel (nc)",
            Cmd::new(
                "lv version (SSH)",
                &lv,
                &["-F", &e.ssh_config, "-c", &e.ssh_ours, "version"],
            ),
            Cmd::new(
                "virsh version (SSH)",
                virsh,
                &["-c", &e.ssh_virsh, "version"],
            ),
            0.3,
        ),
    ];
    s.report.push_str(
        "| transport | `lv version` ms | `virsh version` ms | lv ÷ virsh | lv CPU ms | virsh CPU ms |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut json = serde_json::Map::new();
    for (name, ours, theirs, limit) in cases {
        ours.run(None)?;
        theirs.run(None)?;
        let (a, b) = rounds(s.o.connect_rounds, &ours, &theirs, None, |_, _| Ok(()))?;
        let (r, rs) = ratio(&walls(&a), &walls(&b));
        let cpu = |v: &[super::run::Run]| v.iter().map(|r| r.cpu).collect::<Vec<_>>();
        row(
            &mut s.report,
            &[
                name.to_string(),
                spread(&walls(&a), ms),
                spread(&walls(&b), ms),
                format!("**{rs}**"),
                spread(&cpu(&a), ms),
                spread(&cpu(&b), ms),
            ],
        );
        s.target(
            &format!("connect latency over {name} ≤ {limit}× virsh"),
            vs_ms(&rs, &a, &b),
            Some(r <= limit),
        );
        json.insert(
            name.into(),
            serde_json::json!({"lv_wall_s": walls(&a), "virsh_wall_s": walls(&b),
                "lv_cpu_s": cpu(&a), "virsh_cpu_s": cpu(&b), "ratio": r}),
        );
    }
    let _ = writeln!(
        s.report,
        "\n{} alternating rounds per transport after one warm-up pair.",
        s.o.connect_rounds
    );
    s.json.insert("connect".into(), json.into());
    drop(e);
    Ok(())
}
