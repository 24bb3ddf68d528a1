//! `qemu+ssh://` through the ssh-socket crate (feature `ssh`): libvirt's URI parameters and
//! `~/.ssh/config` mapped onto one SSH session (and its jump hosts).

use std::sync::Arc;

use ssh_socket::{
    AuthMethod, CloseHandle, Credentials, KnownHostsVerify, RemoteChannel, RemoteCommand,
    SshConfig, SshConfigFile, SshError, SshStream,
};

use crate::client::ConnectError;
use crate::client::uri::{SshProxy, SshTarget};

/// SSH settings that a URI cannot carry.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct SshOptions {
    /// The OpenSSH client configuration to read (`ssh -F`): `~/.ssh/config` by default.
    pub config_file: SshConfigFile,
    /// Answers password, keyboard-interactive and unknown-host prompts (libvirt's auth
    /// callback); none by default, and never used with `no_tty=1`.
    pub credentials: Option<Arc<dyn Credentials>>,
}

impl std::fmt::Debug for SshOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshOptions")
            .field("config_file", &self.config_file)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "<callback>"),
            )
            .finish()
    }
}

fn ssh(e: SshError) -> ConnectError {
    ConnectError::Ssh(Box::new(e))
}

fn invalid(reason: String) -> ConnectError {
    ssh(SshError::Config { reason })
}

/// The session settings for `target`: `~/.ssh/config` for the host, the URI's parameters on
/// top (they win, as ssh's command line does), the channel `proxy=` asks for.
pub(crate) fn config(
    target: &SshTarget,
    opts: &SshOptions,
    read_only: bool,
) -> Result<SshConfig, ConnectError> {
    let file = &opts.config_file;
    let mut cfg =
        SshConfig::from_ssh_config(&target.host, target.user.as_deref(), file).map_err(ssh)?;
    if let Some(p) = target.port {
        cfg.port = p;
    }
    if let Some(spec) = &target.proxy_jump {
        cfg.set_proxy_jump(spec, file).map_err(ssh)?;
    }
    if let Some(k) = &target.keyfile {
        cfg.key_files.insert(0, k.clone());
    }
    if let Some(kh) = &target.known_hosts {
        cfg.known_hosts = vec![kh.clone()];
    }
    if let Some(v) = &target.known_hosts_verify {
        cfg.known_hosts_verify = KnownHostsVerify::parse(v).ok_or_else(|| {
            invalid(format!(
                "known_hosts_verify={v}: expected normal, auto or ignore"
            ))
        })?;
    }
    if target.no_verify {
        cfg.known_hosts_verify = KnownHostsVerify::Ignore;
    }
    if let Some(list) = &target.sshauth {
        cfg.auth_methods = AuthMethod::parse_list(list).map_err(invalid)?;
    }
    let credentials = if target.no_tty {
        None
    } else {
        opts.credentials.clone()
    };
    cfg.credentials.clone_from(&credentials);
    // A jump host keeps what its own `~/.ssh/config` block says; what that leaves unset
    // comes from the URI (its key file and known_hosts), so a bastion works without a file.
    for hop in &mut cfg.proxy_jump {
        if hop.key_files.is_empty() {
            hop.key_files.extend(target.keyfile.iter().cloned());
        }
        if hop.known_hosts.is_empty() {
            hop.known_hosts.extend(target.known_hosts.iter().cloned());
        }
        hop.credentials.clone_from(&credentials);
    }
    cfg.channel = channel(target, read_only).map_err(ssh)?;
    Ok(cfg)
}

/// What runs (or is forwarded) on the remote host, as libvirt's `proxy=` says.
fn channel(target: &SshTarget, read_only: bool) -> Result<RemoteChannel, SshError> {
    let sockets = target.sockets(read_only);
    let netcat = target.netcat.as_deref();
    let uri = target.helper_uri.as_str();
    let first = || {
        sockets.first().cloned().ok_or_else(|| SshError::Config {
            reason: format!(
                "the remote socket of {} cannot be derived; give socket=",
                target.path
            ),
        })
    };
    Ok(match target.proxy {
        SshProxy::Forward => RemoteChannel::Forward {
            sockets: if sockets.is_empty() {
                vec![first()?]
            } else {
                sockets.clone()
            },
        },
        SshProxy::Netcat => RemoteChannel::exec(RemoteCommand::netcat(netcat, &first()?)?),
        SshProxy::Native => RemoteChannel::exec(RemoteCommand::virt_ssh_helper(uri, read_only)?),
        // Without a derivable socket (a session URI) only the helper can work.
        SshProxy::Auto => match sockets.first() {
            Some(s) => {
                RemoteChannel::exec(RemoteCommand::helper_or_netcat(uri, read_only, netcat, s)?)
            }
            None => RemoteChannel::exec(RemoteCommand::virt_ssh_helper(uri, read_only)?),
        },
    })
}

/// Dials `target`: the stream and its kill switch.
pub(crate) async fn dial(
    target: &SshTarget,
    opts: &SshOptions,
    read_only: bool,
) -> Result<(SshStream, CloseHandle), ConnectError> {
    let cfg = config(target, opts, read_only)?;
    ssh_socket::connect(&cfg).await.map_err(ssh)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::uri::{LibvirtUri, Transport};

    fn cfg(uri: &str) -> SshConfig {
        let Transport::Ssh(t) = LibvirtUri::parse(uri).unwrap().transport else {
            panic!()
        };
        let opts = SshOptions {
            config_file: SshConfigFile::None,
            credentials: Some(Arc::new(|_: &ssh_socket::Prompt| None)),
        };
        config(&t, &opts, false).unwrap()
    }

    #[test]
    fn uri_parameters_map_onto_the_session() {
        let c = cfg(
            "qemu+ssh://u@h:2/system?keyfile=/k&known_hosts=/kh&known_hosts_verify=auto&sshauth=agent,privkey&proxy_jump=j@b:3",
        );
        assert_eq!((c.user.as_str(), c.host.as_str(), c.port), ("u", "h", 2));
        assert_eq!(c.key_files, vec![std::path::PathBuf::from("/k")]);
        assert_eq!(c.known_hosts_verify, KnownHostsVerify::Auto);
        assert_eq!(
            c.auth_methods,
            vec![AuthMethod::Agent, AuthMethod::PrivateKey]
        );
        assert!(c.credentials.is_some());
        assert_eq!(c.proxy_jump.len(), 1);
        let j = &c.proxy_jump[0];
        assert_eq!((j.user.as_str(), j.host.as_str(), j.port), ("j", "b", 3));
        assert_eq!(j.known_hosts, vec![std::path::PathBuf::from("/kh")]);
        let RemoteChannel::Exec { command } = &c.channel else {
            panic!("{:?}", c.channel)
        };
        assert!(command.summary().contains("virt-ssh-helper qemu:///system"));
        assert!(
            command
                .summary()
                .contains("nc -U /var/run/libvirt/libvirt-sock")
        );

        let c = cfg("qemu+ssh://u@h/system?no_verify=1&no_tty=1&proxy=forward");
        assert_eq!(c.known_hosts_verify, KnownHostsVerify::Ignore);
        assert!(c.credentials.is_none(), "no_tty: no prompts");
        assert_eq!(
            c.channel,
            RemoteChannel::Forward {
                sockets: vec![
                    "/var/run/libvirt/virtqemud-sock".into(),
                    "/var/run/libvirt/libvirt-sock".into()
                ]
            }
        );
        let c = cfg("qemu+ssh://u@h/session");
        let RemoteChannel::Exec { command } = &c.channel else {
            panic!()
        };
        assert_eq!(command.summary(), "virt-ssh-helper qemu:///session");
    }
}
