//! Strict OpenSSH `known_hosts` checking.
//!
//! Our own reader rather than `russh::keys::check_known_hosts_path`, which splits on single
//! spaces, miscounts line numbers after comments, fails the whole check on one unparsable key
//! and ignores `@revoked`. Supported: comma-separated patterns with `*`/`?` wildcards and `!`
//! negation, `[host]:port` for non-22 ports, hashed `|1|salt|hash` entries, `@revoked`.
//! `@cert-authority` lines are skipped (we do not accept host certificates).

use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use hmac::{Hmac, KeyInit, Mac};
use russh::keys::{HashAlg, PublicKey};

use crate::SshError;

/// One parsed, host-matching line.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub line: usize,
    pub revoked: bool,
    pub key: PublicKey,
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

/// The key lines for `host:port` in `path`. A missing file knows no host.
pub(crate) fn entries_for(path: &Path, host: &str, port: u16) -> Result<Vec<Entry>, SshError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(SshError::KnownHosts {
                path: path.to_owned(),
                reason: e.to_string(),
            });
        }
    };
    let name = host_key_name(host, port);
    Ok(parse(&text, &name))
}

fn parse(text: &str, name: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_ascii_whitespace();
        let mut first = fields.next().unwrap_or_default();
        let mut revoked = false;
        if let Some(marker) = first.strip_prefix('@') {
            match marker {
                "revoked" => revoked = true,
                // Host certificates are not accepted, so CA lines never vouch for a host.
                _ => continue,
            }
            first = fields.next().unwrap_or_default();
        }
        let (Some(key_type), Some(blob)) = (fields.next(), fields.next()) else {
            continue;
        };
        if !patterns_match(first, name) {
            continue;
        }
        match russh::keys::parse_public_key_base64(blob) {
            Ok(key) if key.algorithm().as_str() == key_type => {
                out.push(Entry {
                    line: i + 1,
                    revoked,
                    key,
                });
            }
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

/// The verdict on a server key.
pub(crate) fn verify(path: &Path, host: &str, port: u16, key: &PublicKey) -> Result<(), SshError> {
    let entries = entries_for(path, host, port)?;
    let name = host_key_name(host, port);
    let key_type = key.algorithm().as_str().to_owned();
    let fingerprint = key.fingerprint(HashAlg::Sha256).to_string();
    let known_hosts = PathBuf::from(path);
    if let Some(e) = entries
        .iter()
        .find(|e| e.revoked && e.key.key_data() == key.key_data())
    {
        return Err(SshError::HostKeyRevoked {
            host: name,
            key_type,
            fingerprint,
            known_hosts,
            line: e.line,
        });
    }
    let usable = entries.iter().filter(|e| !e.revoked);
    if usable.clone().any(|e| e.key.key_data() == key.key_data()) {
        return Ok(());
    }
    if let Some(e) = usable
        .clone()
        .find(|e| e.key.algorithm() == key.algorithm())
    {
        return Err(SshError::HostKeyChanged {
            host: name,
            key_type,
            fingerprint,
            known_hosts,
            line: e.line,
        });
    }
    let mut known_types: Vec<String> = usable
        .map(|e| e.key.algorithm().as_str().to_owned())
        .collect();
    known_types.dedup();
    Err(SshError::HostKeyUnknown {
        host: name,
        key_type,
        fingerprint,
        known_hosts,
        known_types,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIALUx09tPCqiWz4PtTL1zJuf9XW3HD6IeWUJo9+5AkTB";

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
        assert_eq!(got[0].line, 4);
        assert_eq!(parse(&text, "foo")[0].line, 3);
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
        assert_eq!(got.len(), 1);
        assert!(got[0].revoked);
        assert_eq!(got[0].line, 2);
    }

    #[test]
    fn learn_appends_and_verify_accepts_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/known_hosts");
        let key = russh::keys::parse_public_key_base64(ED).unwrap();
        assert!(matches!(
            verify(&path, "h", 2222, &key),
            Err(SshError::HostKeyUnknown { .. })
        ));
        learn(&path, "h", 2222, &key).unwrap();
        verify(&path, "h", 2222, &key).unwrap();
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
