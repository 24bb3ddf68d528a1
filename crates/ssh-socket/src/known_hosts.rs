//! Strict OpenSSH `known_hosts` checking, over every file ssh reads.
//!
//! Our own reader rather than `russh::keys::check_known_hosts_path`, which splits on single
//! spaces, miscounts line numbers after comments, fails the whole check on one unparsable key,
//! reads one file and ignores `@revoked`. Supported: comma-separated patterns with `*`/`?`
//! wildcards and `!` negation, `[host]:port` for non-22 ports, hashed `|1|salt|hash` entries,
//! `@revoked`, and `@cert-authority` lines, which make a host *known* (we do not accept host
//! certificates, so a plain key such a host presents is refused, never learned).
//!
//! The files are the user's (`UserKnownHostsFile`, new keys are added to the first) and the
//! system's (`GlobalKnownHostsFile`, never written), read in that order, as OpenSSH does.

use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use hmac::{Hmac, KeyInit, Mac};
use russh::keys::{HashAlg, PublicKey};

use crate::SshError;

/// What a `known_hosts` line says about its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    /// A host key.
    Key,
    /// `@revoked`: this key is never accepted.
    Revoked,
    /// `@cert-authority`: a CA that signs the host's certificates.
    CertAuthority,
}

/// One parsed, host-matching line.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub file: PathBuf,
    pub line: usize,
    pub marker: Marker,
    pub key: PublicKey,
}

impl Entry {
    /// `ssh-rsa`, or `@cert-authority ssh-ed25519`, for messages.
    fn describe(&self) -> String {
        let key_type = self.key.algorithm();
        match self.marker {
            Marker::CertAuthority => format!("@cert-authority {}", key_type.as_str()),
            _ => key_type.as_str().to_owned(),
        }
    }
}

/// The name `known_hosts` records a host under: `host`, or `[host]:port` when the port is not 22.
pub(crate) fn host_key_name(host: &str, port: u16) -> String {
    let host = host.to_ascii_lowercase();
    if port == 22 {
        host
    } else {
        format!("[{host}]:{port}")
    }
}

/// The lines for `host:port` in `files`, in file order. A missing file knows no host; one
/// that exists but cannot be read is an error (unreadable is not "unknown").
pub(crate) fn entries_for(
    files: &[PathBuf],
    host: &str,
    port: u16,
) -> Result<Vec<Entry>, SshError> {
    let name = host_key_name(host, port);
    let mut out = Vec::new();
    for path in files {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(SshError::KnownHosts {
                    path: path.clone(),
                    reason: e.to_string(),
                });
            }
        };
        out.extend(
            parse(&text, &name)
                .into_iter()
                .map(|(line, marker, key)| Entry {
                    file: path.clone(),
                    line,
                    marker,
                    key,
                }),
        );
    }
    Ok(out)
}

fn parse(text: &str, name: &str) -> Vec<(usize, Marker, PublicKey)> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_ascii_whitespace();
        let mut first = fields.next().unwrap_or_default();
        let mut marker = Marker::Key;
        if let Some(m) = first.strip_prefix('@') {
            marker = match m {
                "revoked" => Marker::Revoked,
                "cert-authority" => Marker::CertAuthority,
                // An unknown marker: OpenSSH skips the line.
                _ => continue,
            };
            first = fields.next().unwrap_or_default();
        }
        let (Some(key_type), Some(blob)) = (fields.next(), fields.next()) else {
            continue;
        };
        if !patterns_match(first, name) {
            continue;
        }
        match russh::keys::parse_public_key_base64(blob) {
            Ok(key) if key.algorithm().as_str() == key_type => out.push((i + 1, marker, key)),
            // A malformed or unsupported line is skipped, as OpenSSH does.
            Ok(_) | Err(_) => {
                tracing::debug!(line = i + 1, key_type, "skipping unusable known_hosts line");
            }
        }
    }
    out
}

/// OpenSSH `match_hostname`: a negated match excludes the line outright.
fn patterns_match(list: &str, name: &str) -> bool {
    if let Some(hashed) = list.strip_prefix("|1|") {
        return hashed_match(hashed, name);
    }
    let mut positive = false;
    for pat in list.split(',') {
        let pat = pat.to_ascii_lowercase();
        if let Some(neg) = pat.strip_prefix('!') {
            if wildcard(neg.as_bytes(), name.as_bytes()) {
                return false;
            }
        } else if wildcard(pat.as_bytes(), name.as_bytes()) {
            positive = true;
        }
    }
    positive
}

fn hashed_match(rest: &str, name: &str) -> bool {
    let Some((salt, hash)) = rest.split_once('|') else {
        return false;
    };
    let (Ok(salt), Ok(hash)) = (
        BASE64.decode(salt.as_bytes()),
        BASE64.decode(hash.as_bytes()),
    ) else {
        return false;
    };
    let Ok(mac) = <Hmac<sha1::Sha1> as KeyInit>::new_from_slice(&salt) else {
        return false;
    };
    mac.chain_update(name.as_bytes())
        .verify_slice(&hash)
        .is_ok()
}

/// `*` matches any run, `?` one character.
fn wildcard(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pat.len() && (pat[p] == b'?' || pat[p] == s[i]) {
            p += 1;
            i += 1;
        } else if p < pat.len() && pat[p] == b'*' {
            star = Some((p, i));
            p += 1;
        } else if let Some((sp, si)) = star {
            p = sp + 1;
            i = si + 1;
            star = Some((sp, si + 1));
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|&c| c == b'*')
}

/// Records `key` for `host:port` at the end of `path` (`known_hosts_verify=auto`, or an
/// accepted prompt), creating the file (0600) and its directory (0700) if needed. Only ever
/// appends: a changed key is refused before this, never replaced.
pub(crate) fn learn(path: &Path, host: &str, port: u16, key: &PublicKey) -> Result<(), SshError> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    let err = |e: std::io::Error| SshError::KnownHosts {
        path: path.to_owned(),
        reason: format!("cannot add the host key: {e}"),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(err)?;
    }
    let encoded = key.to_openssh().map_err(|e| SshError::KnownHosts {
        path: path.to_owned(),
        reason: format!("cannot encode the host key: {e}"),
    })?;
    // `type base64` without the comment.
    let key_text: Vec<&str> = encoded.split_ascii_whitespace().take(2).collect();
    let line = format!("{} {}\n", host_key_name(host, port), key_text.join(" "));
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(err)?;
    // A file whose last line lacks its newline would glue our entry onto it.
    let needs_newline = std::fs::read(path).is_ok_and(|t| t.last().is_some_and(|&b| b != b'\n'));
    let line = if needs_newline {
        format!("\n{line}")
    } else {
        line
    };
    // One write with O_APPEND: concurrent learners do not interleave within a line.
    f.write_all(line.as_bytes()).map_err(err)
}

/// The verdict on a server key, from every file in `files` (user files first).
///
/// Revoked anywhere: refused. Recorded: accepted. Another key of its type recorded: changed.
/// Keys of other types only, or a `@cert-authority` line for the host: the host is known by
/// other keys ([`SshError::HostKeyOtherType`], as libvirt's libssh transport reads
/// `SSH_SERVER_FOUND_OTHER`). Nothing at all: unknown.
pub(crate) fn verify(
    files: &[PathBuf],
    host: &str,
    port: u16,
    key: &PublicKey,
) -> Result<(), SshError> {
    let entries = entries_for(files, host, port)?;
    let name = host_key_name(host, port);
    let key_type = key.algorithm().as_str().to_owned();
    let fingerprint = key.fingerprint(HashAlg::Sha256).to_string();
    if let Some(e) = entries
        .iter()
        .find(|e| e.marker == Marker::Revoked && e.key.key_data() == key.key_data())
    {
        return Err(SshError::HostKeyRevoked {
            host: name,
            key_type,
            fingerprint,
            known_hosts: e.file.clone(),
            line: e.line,
        });
    }
    let keys = || entries.iter().filter(|e| e.marker == Marker::Key);
    if keys().any(|e| e.key.key_data() == key.key_data()) {
        return Ok(());
    }
    if let Some(e) = keys().find(|e| e.key.algorithm() == key.algorithm()) {
        return Err(SshError::HostKeyChanged {
            host: name,
            key_type,
            fingerprint,
            known_hosts: e.file.clone(),
            line: e.line,
        });
    }
    let others: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.marker != Marker::Revoked)
        .collect();
    if let Some(first) = others.first() {
        let mut known_types: Vec<String> = Vec::new();
        for e in &others {
            let d = e.describe();
            if !known_types.contains(&d) {
                known_types.push(d);
            }
        }
        return Err(SshError::HostKeyOtherType {
            host: name,
            key_type,
            fingerprint,
            known_hosts: first.file.clone(),
            line: first.line,
            known_types: known_types.into(),
        });
    }
    Err(SshError::HostKeyUnknown {
        host: name,
        key_type,
        fingerprint,
        known_hosts: files.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIALUx09tPCqiWz4PtTL1zJuf9XW3HD6IeWUJo9+5AkTB";
    const EC: &str = "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBIUnytqU+Ho0HYxh71rZ9zzuJ4WGYoYQfDr8T5dRKdHzPYVQ65NvM/v1/2TEPz6FsoulbUP8StHSzEI2zsNNnUo=";

    #[test]
    fn wildcards_and_negation() {
        assert!(wildcard(b"*.example.com", b"a.example.com"));
        assert!(wildcard(b"h?st", b"host"));
        assert!(!wildcard(b"h?st", b"hoost"));
        assert!(wildcard(b"*", b""));
        assert!(patterns_match(
            "*.example.com,!bad.example.com",
            "ok.example.com"
        ));
        assert!(!patterns_match(
            "*.example.com,!bad.example.com",
            "bad.example.com"
        ));
        assert!(patterns_match("Other,[127.0.0.1]:2222", "[127.0.0.1]:2222"));
        assert!(!patterns_match("127.0.0.1", "[127.0.0.1]:2222"));
    }

    #[test]
    fn line_numbers_count_comments_and_tabs_separate_fields() {
        let text = format!("# comment\n\nfoo\tssh-ed25519\t{ED}\n[h]:2200  ssh-ed25519 {ED} c\n");
        let got = parse(&text, "[h]:2200");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 4);
        assert_eq!(parse(&text, "foo")[0].0, 3);
    }

    #[test]
    fn hashed_entry_matches() {
        // `ssh-keygen -H` output for "[127.0.0.1]:2222".
        let entry = "|1|uofPvrAv/SonwifiPW2yFK9VGPg=|Osi4H1EPQj8S+Lur1fJmySIfkqs=";
        assert!(patterns_match(entry, "[127.0.0.1]:2222"));
        assert!(!patterns_match(entry, "[127.0.0.1]:2223"));
        let text = format!("{entry} ssh-ed25519 {ED}\n");
        assert_eq!(parse(&text, "[127.0.0.1]:2222").len(), 1);
    }

    #[test]
    fn markers() {
        let text = format!("@cert-authority * ssh-ed25519 {ED}\n@revoked * ssh-ed25519 {ED}\n");
        let got = parse(&text, "x");
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0, got[0].1), (1, Marker::CertAuthority));
        assert_eq!((got[1].0, got[1].1), (2, Marker::Revoked));
        assert!(parse(&format!("@unknown * ssh-ed25519 {ED}\n"), "x").is_empty());
    }

    /// Another type recorded (in any file), or a CA vouching for the host: "known by other
    /// keys", not unknown; revoked in the system file: revoked.
    #[test]
    fn other_types_and_authorities_make_a_host_known() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("known_hosts");
        let global = dir.path().join("ssh_known_hosts");
        let files = [user.clone(), global.clone()];
        let key = russh::keys::parse_public_key_base64(ED).unwrap();
        std::fs::write(&global, format!("h ecdsa-sha2-nistp256 {EC}\n")).unwrap();
        match verify(&files, "h", 22, &key) {
            Err(SshError::HostKeyOtherType {
                known_types,
                known_hosts,
                line,
                ..
            }) => {
                assert_eq!(*known_types, ["ecdsa-sha2-nistp256".to_owned()]);
                assert_eq!((known_hosts, line), (global.clone(), 1));
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(&user, format!("@cert-authority *.lab ssh-ed25519 {ED}\n")).unwrap();
        match verify(&files, "h.lab", 22, &key) {
            Err(SshError::HostKeyOtherType { known_types, .. }) => {
                assert_eq!(*known_types, ["@cert-authority ssh-ed25519".to_owned()]);
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(
            &global,
            format!("@revoked * ssh-ed25519 {ED}\nh ssh-ed25519 {ED}\n"),
        )
        .unwrap();
        assert!(matches!(
            verify(&files, "h", 22, &key),
            Err(SshError::HostKeyRevoked { line: 1, .. })
        ));
        std::fs::write(&global, format!("h ssh-ed25519 {ED}\n")).unwrap();
        verify(&files, "h", 22, &key).unwrap();
        match verify(&files, "other", 22, &key) {
            Err(SshError::HostKeyUnknown { known_hosts, .. }) => assert_eq!(known_hosts, files),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn learn_appends_and_verify_accepts_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/known_hosts");
        let files = [path.clone()];
        let key = russh::keys::parse_public_key_base64(ED).unwrap();
        assert!(matches!(
            verify(&files, "h", 2222, &key),
            Err(SshError::HostKeyUnknown { .. })
        ));
        learn(&path, "h", 2222, &key).unwrap();
        verify(&files, "h", 2222, &key).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("[h]:2222 ssh-ed25519 {ED}\n"));
        std::fs::write(&path, format!("other ssh-ed25519 {ED}")).unwrap();
        learn(&path, "h", 22, &key).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("other ssh-ed25519 {ED}\nh ssh-ed25519 {ED}\n")
        );
    }
}
