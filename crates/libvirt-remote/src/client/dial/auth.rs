//! SASL credentials from libvirt's `auth.conf`, found the way libvirt finds it:
//! `$LIBVIRT_AUTH_FILE`, then the URI's `authfile=`, then `$XDG_CONFIG_HOME/libvirt/auth.conf`
//! (`~/.config/…`), then `/etc/libvirt/auth.conf`.
//!
//! ```text
//! [credentials-prod]
//! authname=alice
//! password=secret
//!
//! [auth-libvirt-host.example]     # service "libvirt", the URI's host ("localhost" for unix)
//! credentials=prod
//! [auth-libvirt-default]          # any other host
//! credentials=prod
//! ```
//!
//! The file is read only when a daemon asks for SASL. Passwords never reach a log or an error,
//! and the file's text is wiped once read (`zeroize`): the parser borrows from it, and the one
//! password taken out lives in the wiping [`Credentials`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use crate::conn::sasl::{CredentialCallback, Credentials};

/// The auth.conf libvirt would read for a URI with `authfile` (none if no candidate exists).
/// `$LIBVIRT_AUTH_FILE` wins even when it names a missing file (or `/dev/null`): that is how
/// a user says "no credentials".
pub fn auth_file(authfile: Option<&Path>) -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = var("LIBVIRT_AUTH_FILE") {
        return Some(p);
    }
    if let Some(p) = authfile {
        return Some(p.to_path_buf());
    }
    let user = var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|h| h.join(".config")));
    user.map(|d| d.join("libvirt/auth.conf"))
        .into_iter()
        .chain([PathBuf::from("/etc/libvirt/auth.conf")])
        .find(|p| p.exists())
}

/// `[group]` → key → value, as `GLib`'s key files read them (`#`/`;` comments, trimmed keys).
/// Everything borrows from `text`: no value (no password) is copied.
fn parse(text: &str) -> HashMap<&str, HashMap<&str, &str>> {
    let mut groups: HashMap<&str, HashMap<&str, &str>> = HashMap::new();
    let mut current: Option<&str> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name);
            groups.entry(name).or_default();
        } else if let (Some(g), Some((k, v))) = (current, line.split_once('=')) {
            groups
                .entry(g)
                .or_default()
                .insert(k.trim(), v.trim_start());
        }
    }
    groups
}

/// The credentials auth.conf `text` holds for `host` (service `libvirt`).
pub fn lookup(text: &str, host: &str) -> Option<Credentials> {
    let groups = parse(text);
    let auth = groups
        .get(format!("auth-libvirt-{host}").as_str())
        .or_else(|| groups.get("auth-libvirt-default"))?;
    let creds = groups.get(format!("credentials-{}", auth.get("credentials")?).as_str())?;
    Some(Credentials::new(
        *creds.get("authname")?,
        *creds.get("password")?,
    ))
}

/// Credentials for `host`: auth.conf first (see [`auth_file`]), then `fallback` (the
/// embedding program's callback). The file is read when the callback runs, not before.
pub(crate) fn credential_chain(
    host: String,
    authfile: Option<PathBuf>,
    fallback: Option<CredentialCallback>,
) -> CredentialCallback {
    CredentialCallback::new(move |req| {
        if let Some(path) = auth_file(authfile.as_deref()) {
            match std::fs::read_to_string(&path).map(Zeroizing::new) {
                Ok(text) => {
                    if let Some(c) = lookup(&text, &host) {
                        tracing::debug!(path = %path.display(), host, authname = c.authname(), "SASL credentials from auth.conf");
                        return Some(c);
                    }
                }
                Err(e) => {
                    tracing::debug!(path = %path.display(), error = %e, "auth.conf unreadable");
                }
            }
        }
        fallback.as_ref().and_then(|cb| (cb.0)(req))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "\
# comment
[credentials-t]
authname = alice
password=secret123

[credentials-other]
authname=bob
password=hunter2
[auth-libvirt-127.0.0.1]
credentials=t
[auth-libvirt-default]
credentials=other
";

    #[test]
    fn host_section_then_default() {
        let c = lookup(CONF, "127.0.0.1").unwrap();
        assert_eq!(c, Credentials::new("alice", "secret123"));
        assert_eq!(lookup(CONF, "elsewhere").unwrap().authname(), "bob");
        assert!(lookup("[auth-libvirt-h]\ncredentials=missing\n", "h").is_none());
        assert!(lookup("", "h").is_none());
    }

    /// The password read from auth.conf is wiped with the credentials: no copy of it (the
    /// file's text, a parsed value) is left in the process's memory once they are dropped.
    #[test]
    fn auth_conf_passwords_leave_no_copy_in_memory() {
        if std::env::var_os("LIBVIRT_AUTH_FILE").is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.conf");
        let password = Zeroizing::new(format!(
            "pw-{:x}-{:?}",
            std::process::id(),
            std::time::Instant::now()
        ));
        let needle = testbed::memory::Needle::new(password.as_bytes());
        {
            let conf = Zeroizing::new(format!(
                "[credentials-t]\nauthname=alice\npassword={}\n[auth-libvirt-h]\ncredentials=t\n",
                password.as_str()
            ));
            std::fs::write(&path, conf.as_bytes()).unwrap();
        }
        drop(password);
        assert!(!needle.is_in_memory(), "the test's own copies are wiped");
        let cb = credential_chain("h".into(), Some(path), None);
        let req = crate::conn::sasl::CredentialRequest {
            mechanism: "SCRAM-SHA-256",
        };
        let c = (cb.0)(&req).unwrap();
        assert_eq!(c.authname(), "alice");
        drop(c);
        drop(cb);
        assert!(
            !needle.is_in_memory(),
            "auth.conf's password is still in memory after its credentials were dropped"
        );
    }

    #[test]
    fn the_callback_is_the_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("auth.conf");
        std::fs::write(&p, CONF).unwrap();
        let cb = credential_chain(
            "127.0.0.1".into(),
            Some(p.clone()),
            Some(CredentialCallback::fixed(Credentials::new("cb", "x"))),
        );
        let req = crate::conn::sasl::CredentialRequest {
            mechanism: "SCRAM-SHA-256",
        };
        // $LIBVIRT_AUTH_FILE would override `authfile`; the tests never set it.
        if std::env::var_os("LIBVIRT_AUTH_FILE").is_none() {
            assert_eq!((cb.0)(&req).unwrap().authname(), "alice");
            let cb = credential_chain(
                "127.0.0.1".into(),
                Some(dir.path().join("missing.conf")),
                Some(CredentialCallback::fixed(Credentials::new("cb", "x"))),
            );
            assert_eq!((cb.0)(&req).unwrap().authname(), "cb");
        }
    }
}
