//! The commands an exec channel runs on the remote host to reach libvirtd, quoted so that no
//! value can inject anything.
//!
//! sshd hands an exec request's command line to the remote user's login shell (`$SHELL -c
//! LINE`). libvirt's client builds `sh -c '…'` with its values pasted in and escaped twice.
//! We keep every value out of the script instead: the script is a constant, and the values
//! (netcat binary, socket path, URI) are its positional parameters, each quoted once as a
//! single-quoted word for the login shell:
//!
//! ```text
//! sh -c 'if "$1" -q 2>&1 | grep … ; then ARG=-q0; else ARG=; fi; exec "$1" $ARG -U -- "$2"' sh 'nc' '/var/run/libvirt/libvirt-sock'
//! ```
//!
//! Inside the script a value only ever appears as `"$N"`, which the shell never splits,
//! globs or evaluates, and the socket path comes after `--`, so a path that starts with `-`
//! is never read as an option by nc.
//!
//! The one rule left is the outer quoting, for the remote user's **login shell, which must
//! be a POSIX shell** (sh, bash, dash, zsh, ksh), as libvirt's own client assumes. A `'`
//! becomes `'"'"'` (close, a double-quoted quote, reopen), so the line holds no backslash:
//! fish, which reads backslash-quote and backslash-backslash inside single quotes as escapes,
//! then reads the line as a POSIX shell does. A value holding a backslash is refused for the
//! same reason, and a NUL byte, which cannot cross `exec`.

use std::fmt;

use crate::SshError;

/// The netcat binary libvirt runs by default.
pub const DEFAULT_NETCAT: &str = "nc";

/// libvirt's helper, installed with the daemon (Debian: package `libvirt-daemon`).
pub const VIRT_SSH_HELPER: &str = "virt-ssh-helper";

/// `nc -U -- SOCKET`, with libvirt's probe: an `nc` that knows `-q` (netcat-openbsd) gets `-q0`,
/// so it exits when its stdin ends instead of lingering. `$1` = netcat, `$2` = socket.
const NETCAT_SCRIPT: &str = "if \"$1\" -q 2>&1 | grep \"requires an argument\" >/dev/null 2>&1; \
     then ARG=-q0; else ARG=; fi; exec \"$1\" $ARG -U -- \"$2\"";

/// `virt-ssh-helper [-r] URI`. `$@` = its arguments.
const HELPER_SCRIPT: &str = "exec virt-ssh-helper \"$@\"";

/// libvirt's `proxy=auto`: the helper if the remote has it, else netcat. `$1` = netcat,
/// `$2` = socket, `$3` = URI, `$4` = `-r` or empty.
const AUTO_SCRIPT: &str = "if command -v virt-ssh-helper >/dev/null 2>&1; \
     then exec virt-ssh-helper ${4:+\"$4\"} \"$3\"; fi; \
     if \"$1\" -q 2>&1 | grep \"requires an argument\" >/dev/null 2>&1; \
     then ARG=-q0; else ARG=; fi; exec \"$1\" $ARG -U -- \"$2\"";

/// A command line for an exec channel, quoted for the remote login shell.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteCommand {
    line: String,
    summary: String,
}

impl fmt::Debug for RemoteCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteCommand")
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

impl RemoteCommand {
    /// `virt-ssh-helper URI` (libvirt's `proxy=native`): the helper opens `uri` on the remote
    /// host, finding the daemon's socket there (modular or monolithic, system or session).
    /// `read_only` adds `-r`.
    pub fn virt_ssh_helper(uri: &str, read_only: bool) -> Result<Self, SshError> {
        let mut args = Vec::new();
        if read_only {
            args.push("-r");
        }
        args.push(uri);
        Self::script(
            HELPER_SCRIPT,
            &args,
            format!("{VIRT_SSH_HELPER} {}", args.join(" ")),
        )
    }

    /// `nc -U SOCKET` (libvirt's `proxy=netcat`); `netcat` names the binary (`nc`).
    pub fn netcat(netcat: Option<&str>, socket: &str) -> Result<Self, SshError> {
        let nc = netcat.unwrap_or(DEFAULT_NETCAT);
        Self::script(NETCAT_SCRIPT, &[nc, socket], format!("{nc} -U {socket}"))
    }

    /// libvirt's `proxy=auto`: `virt-ssh-helper URI` where the remote host has it, else
    /// `nc -U SOCKET`. One round trip: the choice is made by the remote shell.
    pub fn helper_or_netcat(
        uri: &str,
        read_only: bool,
        netcat: Option<&str>,
        socket: &str,
    ) -> Result<Self, SshError> {
        let nc = netcat.unwrap_or(DEFAULT_NETCAT);
        let ro = if read_only { "-r" } else { "" };
        Self::script(
            AUTO_SCRIPT,
            &[nc, socket, uri, ro],
            format!("{VIRT_SSH_HELPER} {uri}, else {nc} -U {socket}"),
        )
    }

    /// A command line taken as is. The caller is responsible for its quoting.
    pub fn raw(line: impl Into<String>) -> Self {
        let line = line.into();
        Self {
            summary: line.clone(),
            line,
        }
    }

    fn script(script: &str, args: &[&str], summary: String) -> Result<Self, SshError> {
        let mut line = format!("sh -c {} sh", quote(script)?);
        for a in args {
            line.push(' ');
            line.push_str(&quote(a)?);
        }
        Ok(Self { line, summary })
    }

    /// The line sent in the exec request.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// What it runs, for messages (values unquoted).
    pub fn summary(&self) -> &str {
        &self.summary
    }
}

/// One word for a POSIX login shell: `'…'`, with each `'` as `'"'"'`; never a backslash.
fn quote(s: &str) -> Result<String, SshError> {
    let refuse = |what: &str| {
        Err(SshError::Config {
            reason: format!("a remote command argument cannot contain {what}: {s:?}"),
        })
    };
    if s.contains('\0') {
        return refuse("a NUL byte");
    }
    if s.contains('\\') {
        return refuse("a backslash (login shells do not all read it alike)");
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\"'\"'");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// What `sh -c LINE` (a login shell) passes to the script: the positional parameters.
    fn argv_seen(line: &str, replace_exec: &str) -> Vec<String> {
        // Replace the script's `exec` targets with printf, one argument per line, so the test
        // sees what netcat or the helper would get.
        let line = line.replace(replace_exec, "exec printf \"%s\\n\"");
        let out = Command::new("sh").arg("-c").arg(&line).output().unwrap();
        assert!(out.status.success(), "{line}: {out:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    }

    #[test]
    fn hostile_values_stay_one_literal_argument() {
        let dir = tempfile::tempdir().unwrap();
        let canary = dir.path().join("pwned");
        let evil = format!(
            "/tmp/a b; touch {c} #$(touch {c})`touch {c}`'\" $HOME *",
            c = canary.display()
        );
        let cmd = RemoteCommand::netcat(None, &evil).unwrap();
        // `exec "$1" $ARG -U -- "$2"`: show what nc would receive.
        let seen = argv_seen(cmd.line(), "exec \"$1\"");
        assert!(!canary.exists(), "the value was evaluated");
        assert_eq!(seen.last().map(String::as_str), Some(evil.as_str()));
        assert_eq!(seen[seen.len() - 3..seen.len() - 1], ["-U", "--"]);
    }

    #[test]
    fn helper_gets_the_uri_and_read_only_flag() {
        let uri = "qemu:///system?mode=direct&x='1' $(id)";
        let cmd = RemoteCommand::virt_ssh_helper(uri, true).unwrap();
        let seen = argv_seen(cmd.line(), "exec virt-ssh-helper");
        assert_eq!(seen, vec!["-r".to_owned(), uri.to_owned()]);
        assert!(
            cmd.summary()
                .starts_with("virt-ssh-helper -r qemu:///system")
        );
    }

    #[test]
    fn auto_runs_the_helper_when_present() {
        // With `command -v virt-ssh-helper` true (it is installed on the test machines, but
        // the test must not depend on it): force both branches.
        let cmd = RemoteCommand::helper_or_netcat("qemu:///session", false, None, "/s").unwrap();
        let helper = cmd
            .line()
            .replace("command -v virt-ssh-helper >/dev/null 2>&1", "true");
        let seen = argv_seen(&helper, "exec virt-ssh-helper");
        assert_eq!(seen, vec!["qemu:///session".to_owned()]);
        let netcat = cmd
            .line()
            .replace("command -v virt-ssh-helper >/dev/null 2>&1", "false");
        let seen = argv_seen(&netcat, "exec \"$1\"");
        assert_eq!(seen.last().map(String::as_str), Some("/s"));
    }

    /// A socket path that starts with `-` reaches nc after `--`, never as an option.
    #[test]
    fn a_socket_named_like_an_option_comes_after_double_dash() {
        for cmd in [
            RemoteCommand::netcat(None, "-oProxyCommand=x").unwrap(),
            RemoteCommand::helper_or_netcat("qemu:///system", false, None, "-oProxyCommand=x")
                .unwrap(),
        ] {
            let line = cmd
                .line()
                .replace("command -v virt-ssh-helper >/dev/null 2>&1", "false");
            let seen = argv_seen(&line, "exec \"$1\"");
            assert_eq!(
                seen[seen.len() - 3..],
                ["-U", "--", "-oProxyCommand=x"],
                "nc's arguments: {seen:?}"
            );
        }
    }

    /// fish (and other login shells that are not POSIX) read a backslash inside single
    /// quotes as an escape: no line we send carries one, and a value with one is refused.
    #[test]
    fn lines_carry_no_backslash_and_a_value_with_one_is_refused() {
        let cmd = RemoteCommand::netcat(None, "/run/it's here").unwrap();
        assert!(
            !cmd.line().contains('\\'),
            "a login shell that is not POSIX would read this differently: {}",
            cmd.line()
        );
        let seen = argv_seen(cmd.line(), "exec \"$1\"");
        assert_eq!(seen.last().map(String::as_str), Some("/run/it's here"));
        assert!(RemoteCommand::netcat(None, "/run/a\\b").is_err());
        assert!(RemoteCommand::virt_ssh_helper("qemu:///system?x=\\", false).is_err());
    }

    #[test]
    fn nul_is_refused() {
        assert!(RemoteCommand::netcat(None, "a\0b").is_err());
        assert!(RemoteCommand::netcat(Some("n\0c"), "/s").is_err());
    }
}
