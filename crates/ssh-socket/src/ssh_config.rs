//! `~/.ssh/config`: what `ssh ALIAS` would use for a host, read with the `ssh2-config` crate.
//!
//! Read: `Host` patterns (`*`, `?`, `!` negation; first value wins, as in OpenSSH),
//! `Include`, `HostName` (with `%h`), `User`, `Port`, `IdentityFile` (with `~`, `%d`, `%u`,
//! `%r`, `%h`, `%p`, `%%`), `IdentitiesOnly`, `UserKnownHostsFile`, `StrictHostKeyChecking`,
//! `ProxyJump`, `ServerAliveInterval`, `ServerAliveCountMax`, `ConnectTimeout`. Everything
//! else is ignored (docs/decisions.md lists what is not supported, e.g. `Match`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use ssh2_config::{ParseRule, SshConfig as Parsed};

use crate::config::KnownHostsVerify;
use crate::{SshConfig, SshError, local_user};

/// Which OpenSSH client configuration file to read (`ssh -F`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SshConfigFile {
    /// `~/.ssh/config`, when it exists (the default).
    #[default]
    User,
    /// None at all (`ssh -F none`).
    None,
    /// This file, which must exist.
    Path(PathBuf),
}

impl SshConfigFile {
    /// The file to read, if any; `None` when the default file does not exist.
    fn path(&self) -> Option<PathBuf> {
        match self {
            Self::User => std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".ssh/config"))
                .filter(|p| p.is_file()),
            Self::None => None,
            Self::Path(p) => Some(p.clone()),
        }
    }
}

impl SshConfig {
    /// The settings `ssh [user@]alias` would use, from `file`: host name, user (`user`, else
    /// `User`, else [`local_user`]), port, identity files, agent use (`IdentitiesOnly`),
    /// `known_hosts` and its checking, keepalives, connect timeout, and the jump hosts of
    /// `ProxyJump` (each looked up in the same file; their own `ProxyJump` is not followed).
    /// Everything else keeps [`SshConfig::new`]'s defaults. Callers override what their
    /// own settings name (libvirt's URI parameters win over the file, as ssh's command line
    /// does).
    pub fn from_ssh_config(
        alias: &str,
        user: Option<&str>,
        file: &SshConfigFile,
    ) -> Result<Self, SshError> {
        let parsed = load(file)?;
        let mut cfg = resolve(parsed.as_ref(), alias, user)?;
        if let Some(p) = &parsed {
            let jumps = p.config.query(alias).proxy_jump.unwrap_or_default();
            cfg.set_proxy_jump_list(&jumps, parsed.as_ref())?;
        }
        Ok(cfg)
    }

    /// Sets [`proxy_jump`](Self::proxy_jump) from an OpenSSH `ProxyJump` value
    /// (`[user@]host[:port][,…]`, `ssh://[user@]host[:port]`, or `none`), each jump host
    /// looked up in `file` like a destination.
    pub fn set_proxy_jump(&mut self, spec: &str, file: &SshConfigFile) -> Result<(), SshError> {
        let parsed = load(file)?;
        let list: Vec<String> = spec.split(',').map(|s| s.trim().to_owned()).collect();
        self.set_proxy_jump_list(&list, parsed.as_ref())
    }

    fn set_proxy_jump_list(
        &mut self,
        list: &[String],
        parsed: Option<&Loaded>,
    ) -> Result<(), SshError> {
        self.proxy_jump.clear();
        if list.iter().any(|s| s.eq_ignore_ascii_case("none")) {
            return Ok(());
        }
        for spec in list.iter().filter(|s| !s.is_empty()) {
            let (user, host, port) = parse_jump(spec)?;
            let mut hop = resolve(parsed, &host, user.as_deref())?;
            if let Some(p) = port {
                hop.port = p;
            }
            self.proxy_jump.push(hop);
        }
        Ok(())
    }
}

/// A parsed file: the parser's result and the path, for messages.
struct Loaded {
    config: Parsed,
    path: PathBuf,
}

fn load(file: &SshConfigFile) -> Result<Option<Loaded>, SshError> {
    let Some(path) = file.path() else {
        return Ok(None);
    };
    let err = |reason: String| SshError::Config {
        reason: format!("ssh config {}: {reason}", path.display()),
    };
    let text = std::fs::read_to_string(&path).map_err(|e| err(e.to_string()))?;
    let text = without_match_blocks(&text, &path);
    let mut home = Parsed::default();
    if let Some(h) = std::env::var_os("HOME") {
        home = home.home_dir(PathBuf::from(h));
    }
    let config = home
        .parse(
            &mut text.as_bytes(),
            ParseRule::ALLOW_UNKNOWN_FIELDS | ParseRule::ALLOW_UNSUPPORTED_FIELDS,
        )
        .map_err(|e| err(e.to_string()))?;
    // A `Match` in an `Include`d file reaches the parser, which would apply the lines after
    // it to the block before it: refuse rather than connect with the wrong settings.
    for h in config.get_hosts() {
        if h.params
            .ignored_fields
            .keys()
            .any(|k| k.eq_ignore_ascii_case("match"))
        {
            return Err(err(
                "a `Match` block in an included file is not supported".into()
            ));
        }
    }
    Ok(Some(Loaded { config, path }))
}

/// `Match` blocks are not supported: each becomes a block that matches no host, so its lines
/// apply nowhere (a warning says so) instead of to the `Host` block before it.
fn without_match_blocks(text: &str, path: &Path) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.lines().enumerate() {
        let keyword = line
            .trim_start()
            .split(|c: char| c.is_whitespace() || c == '=')
            .next()
            .unwrap_or_default();
        if keyword.eq_ignore_ascii_case("match") {
            tracing::warn!(
                file = %path.display(),
                line = i + 1,
                "ssh config: `Match` blocks are not supported; this block is ignored"
            );
            out.push_str("Host !*\n");
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `[user@]host[:port]` or `ssh://[user@]host[:port]`.
fn parse_jump(spec: &str) -> Result<(Option<String>, String, Option<u16>), SshError> {
    let bad = |why: &str| SshError::Config {
        reason: format!("ProxyJump {spec:?}: {why}"),
    };
    let rest = spec.strip_prefix("ssh://").unwrap_or(spec);
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (user, hostport) = match rest.rsplit_once('@') {
        Some((u, h)) if !u.is_empty() => (Some(u.to_owned()), h),
        Some(_) => return Err(bad("empty user name")),
        None => (None, rest),
    };
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(bad("junk after ']'")),
        };
        (h, port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let port = port
        .map(|p| p.parse::<u16>().map_err(|_| bad("bad port")))
        .transpose()?;
    Ok((user, host.to_owned(), port))
}

/// The settings for `alias` from the file (if any).
fn resolve(
    parsed: Option<&Loaded>,
    alias: &str,
    user: Option<&str>,
) -> Result<SshConfig, SshError> {
    let Some(loaded) = parsed else {
        let user = match user {
            Some(u) => u.to_owned(),
            None => local_user()?,
        };
        return Ok(SshConfig::new(user, alias));
    };
    let p = loaded.config.query(alias);
    let user = match user.map(str::to_owned).or_else(|| p.user.clone()) {
        Some(u) => u,
        None => local_user()?,
    };
    let port = p.port.unwrap_or(22);
    let host = match &p.host_name {
        Some(h) => expand(h, &Tokens::host_only(alias)),
        None => alias.to_owned(),
    };
    let mut cfg = SshConfig::new(user.clone(), host.clone());
    cfg.port = port;
    let tokens = Tokens {
        alias,
        host: &host,
        port,
        remote_user: &user,
    };
    if let Some(files) = &p.identity_file {
        cfg.key_files = files
            .iter()
            .map(|f| PathBuf::from(expand(&f.to_string_lossy(), &tokens)))
            .collect();
    }
    let all_values = |name: &str| -> Option<&Vec<String>> {
        p.unsupported_fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    };
    let unsupported = |name: &str| -> Option<String> { all_values(name)?.first().cloned() };
    warn_not_applied(&p, alias, &loaded.path);
    let bad = |what: &str, value: &str| SshError::Config {
        reason: format!(
            "ssh config {}: {what} {value:?} is not understood",
            loaded.path.display()
        ),
    };
    if let Some(v) = unsupported("IdentitiesOnly") {
        cfg.use_agent = !yes_no(&v).ok_or_else(|| bad("IdentitiesOnly", &v))?;
    }
    // Every file listed is read, as ssh does; `none` reads and writes nothing.
    let files = |values: &Vec<String>| -> Vec<PathBuf> {
        values
            .iter()
            .map(|v| {
                if v.eq_ignore_ascii_case("none") {
                    PathBuf::from("/dev/null")
                } else {
                    PathBuf::from(expand(&tilde(v), &tokens))
                }
            })
            .collect()
    };
    if let Some(v) = all_values("UserKnownHostsFile") {
        cfg.known_hosts = files(v);
    }
    if let Some(v) = all_values("GlobalKnownHostsFile") {
        cfg.global_known_hosts = files(v);
    }
    if let Some(v) = unsupported("StrictHostKeyChecking") {
        cfg.known_hosts_verify = match v.to_ascii_lowercase().as_str() {
            "yes" | "ask" => KnownHostsVerify::Normal,
            // `no`/`off` would also connect past a changed key in OpenSSH; we never do.
            "accept-new" | "no" | "off" => KnownHostsVerify::Auto,
            _ => return Err(bad("StrictHostKeyChecking", &v)),
        };
    }
    // `ServerAliveInterval 0` (OpenSSH: off) keeps our default: a session without keepalives
    // would not notice a silent host while idle.
    if let Some(i) = p.server_alive_interval.filter(|i| !i.is_zero()) {
        cfg.keepalive_interval = Some(i);
    }
    if let Some(v) = unsupported("ServerAliveCountMax") {
        cfg.keepalive_max = v.parse().map_err(|_| bad("ServerAliveCountMax", &v))?;
    }
    if let Some(t) = p.connect_timeout.filter(|t| !t.is_zero()) {
        cfg.connect_timeout = t.max(Duration::from_secs(1));
    }
    Ok(cfg)
}

/// Options that change whom ssh talks to, how it trusts the host or how it authenticates,
/// which this crate does not apply: a `Host` block that sets one gets a warning, so nobody
/// believes a setting is in force that is not (`ProxyCommand`: the kill switch needs a socket
/// we own; `HostKeyAlias`: keys are looked up under the real name; …).
const NOT_APPLIED: &[&str] = &[
    "AddressFamily",
    "BindAddress",
    "BindInterface",
    "CanonicalizeHostname",
    "CertificateFile",
    "CheckHostIP",
    "Ciphers",
    "ControlMaster",
    "ControlPath",
    "HostKeyAlgorithms",
    "HostKeyAlias",
    "HostbasedAuthentication",
    "IdentityAgent",
    "KexAlgorithms",
    "KnownHostsCommand",
    "LocalCommand",
    "MACs",
    "PKCS11Provider",
    "PreferredAuthentications",
    "ProxyCommand",
    "ProxyUseFdpass",
    "PubkeyAcceptedAlgorithms",
    "PubkeyAcceptedKeyTypes",
    "RemoteCommand",
    "RevokedHostKeys",
    "SecurityKeyProvider",
    "UpdateHostKeys",
    "VerifyHostKeyDNS",
];

/// Warns about each option of [`NOT_APPLIED`] that the blocks matching `alias` set.
fn warn_not_applied(p: &ssh2_config::HostParams, alias: &str, file: &Path) {
    let mut set: Vec<&str> = Vec::new();
    // Typed by the parser (present or not by their value), …
    let typed = [
        ("BindAddress", p.bind_address.is_some()),
        ("BindInterface", p.bind_interface.is_some()),
        ("CertificateFile", p.certificate_file.is_some()),
        ("Ciphers", !p.ciphers.is_default()),
        ("HostKeyAlgorithms", !p.host_key_algorithms.is_default()),
        ("KexAlgorithms", !p.kex_algorithms.is_default()),
        ("MACs", !p.mac.is_default()),
        (
            "PubkeyAcceptedAlgorithms",
            !p.pubkey_accepted_algorithms.is_default(),
        ),
    ];
    set.extend(typed.iter().filter(|(_, on)| *on).map(|(n, _)| *n));
    // … or kept as text (the parser's unsupported and unknown fields).
    for name in NOT_APPLIED {
        let present = p
            .unsupported_fields
            .keys()
            .chain(p.ignored_fields.keys())
            .any(|k| k.eq_ignore_ascii_case(name));
        if present && !set.contains(name) {
            set.push(name);
        }
    }
    for option in set {
        tracing::warn!(
            host = alias,
            file = %file.display(),
            option,
            "ssh config: {option} is set for this host but not supported here; it is ignored"
        );
    }
}

fn yes_no(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "yes" | "true" => Some(true),
        "no" | "false" => Some(false),
        _ => None,
    }
}

fn tilde(v: &str) -> String {
    match (v.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest).display().to_string(),
        _ => v.to_owned(),
    }
}

/// The values `%` tokens stand for (`ssh_config(5)`, TOKENS).
struct Tokens<'a> {
    alias: &'a str,
    host: &'a str,
    port: u16,
    remote_user: &'a str,
}

impl<'a> Tokens<'a> {
    /// For `HostName`, where only `%h` (the alias) and `%%` are defined.
    fn host_only(alias: &'a str) -> Self {
        Self {
            alias,
            host: alias,
            port: 22,
            remote_user: "",
        }
    }
}

fn expand(s: &str, t: &Tokens<'_>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') | None => out.push('%'),
            Some('h') => out.push_str(t.host),
            Some('n') => out.push_str(t.alias),
            Some('p') => out.push_str(&t.port.to_string()),
            Some('r') => out.push_str(t.remote_user),
            Some('u') => out.push_str(&local_user().unwrap_or_default()),
            Some('d') => out.push_str(&std::env::var("HOME").unwrap_or_default()),
            // Unknown tokens stay as written.
            Some(other) => {
                out.push('%');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, SshConfigFile) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config");
        std::fs::write(&p, text).unwrap();
        (d, SshConfigFile::Path(p))
    }

    #[test]
    fn host_blocks_first_value_wins_and_jumps_resolve() {
        let (_d, f) = file(
            "# global\n\
             ServerAliveInterval 7\n\
             Host kvm-*\n  HostName %h.lab\n  User ops\n  Port 2222\n  IdentityFile /k/%r@%h\n  \
               IdentitiesOnly yes\n  ProxyJump jump@bastion:2200,[::1]:22\n  StrictHostKeyChecking accept-new\n\
             Match host foo\n  User matched\n\
             Host bastion\n  HostName 127.0.0.1\n  UserKnownHostsFile /kh/bastion\n  IdentityFile /k/bastion\n\
             Host *\n  User fallback\n  ServerAliveCountMax 5\n",
        );
        let c = SshConfig::from_ssh_config("kvm-a", None, &f).unwrap();
        assert_eq!(
            (c.user.as_str(), c.host.as_str(), c.port),
            ("ops", "kvm-a.lab", 2222)
        );
        assert_eq!(c.key_files, vec![PathBuf::from("/k/ops@kvm-a.lab")]);
        assert!(!c.use_agent);
        assert_eq!(c.known_hosts_verify, KnownHostsVerify::Auto);
        assert_eq!(c.keepalive_interval, Some(Duration::from_secs(7)));
        assert_eq!(c.keepalive_max, 5);
        assert_eq!(c.proxy_jump.len(), 2);
        let j = &c.proxy_jump[0];
        assert_eq!(
            (j.user.as_str(), j.host.as_str(), j.port),
            ("jump", "127.0.0.1", 2200)
        );
        assert_eq!(j.known_hosts, vec![PathBuf::from("/kh/bastion")]);
        assert_eq!(j.key_files, vec![PathBuf::from("/k/bastion")]);
        assert_eq!(
            (c.proxy_jump[1].host.as_str(), c.proxy_jump[1].port),
            ("::1", 22)
        );
        // The explicit user wins; the Match block applies nowhere.
        let c = SshConfig::from_ssh_config("foo", Some("me"), &f).unwrap();
        assert_eq!(c.user, "me");
        let c = SshConfig::from_ssh_config("foo", None, &f).unwrap();
        assert_eq!(c.user, "fallback");
        assert!(c.proxy_jump.is_empty());
    }

    #[test]
    fn no_file_means_defaults() {
        let c = SshConfig::from_ssh_config("h", Some("u"), &SshConfigFile::None).unwrap();
        assert_eq!((c.user.as_str(), c.host.as_str(), c.port), ("u", "h", 22));
        let e = SshConfig::from_ssh_config(
            "h",
            Some("u"),
            &SshConfigFile::Path("/nonexistent/config".into()),
        )
        .unwrap_err();
        assert!(e.to_string().contains("/nonexistent/config"), "{e}");
    }

    /// Everything logged at WARN while `f` runs.
    fn warnings<T>(f: impl FnOnce() -> T) -> (T, String) {
        #[derive(Clone, Default)]
        struct Buf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Buf::default();
        let out = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .with_writer(move || out.clone())
            .finish();
        let r = tracing::subscriber::with_default(subscriber, f);
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        (r, text)
    }

    #[test]
    fn options_of_the_chosen_block_that_are_not_applied_are_warned_about() {
        let (_d, f) = file(
            "Host kvm\n  HostName 10.0.0.1\n  ProxyCommand ssh -W %h:%p gw\n  HostKeyAlias kvm-real\n  \
               KnownHostsCommand /bin/true\n  CertificateFile ~/.ssh/c.pub\n\
             Host other\n  LocalCommand touch /tmp/x\n",
        );
        let (c, logs) = warnings(|| SshConfig::from_ssh_config("kvm", Some("u"), &f));
        c.unwrap();
        for option in [
            "ProxyCommand",
            "HostKeyAlias",
            "KnownHostsCommand",
            "CertificateFile",
        ] {
            assert!(
                logs.contains(option),
                "no warning about {option} (set for the host, not applied): {logs:?}"
            );
        }
        assert!(
            !logs.contains("LocalCommand"),
            "another host's option: {logs}"
        );
        let (c, logs) = warnings(|| SshConfig::from_ssh_config("other-host", Some("u"), &f));
        c.unwrap();
        assert!(logs.is_empty(), "{logs}");
    }

    #[test]
    fn jump_specs() {
        assert_eq!(
            parse_jump("ssh://u@h:2").unwrap(),
            (Some("u".into()), "h".into(), Some(2))
        );
        assert_eq!(parse_jump("h").unwrap(), (None, "h".into(), None));
        assert!(parse_jump("u@h:x").is_err());
        assert!(parse_jump("@h").is_err());
        let mut c = SshConfig::new("u", "t");
        c.set_proxy_jump("a:1,b", &SshConfigFile::None).unwrap();
        assert_eq!(c.proxy_jump.len(), 2);
        c.set_proxy_jump("none", &SshConfigFile::None).unwrap();
        assert!(c.proxy_jump.is_empty());
    }
}
