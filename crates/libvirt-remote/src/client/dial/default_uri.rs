//! The URI to use when none is given, found as libvirt's client finds it
//! (`$LIBVIRT_DEFAULT_URI`, libvirt.conf's `uri_default`, then the default for the user).

use std::path::PathBuf;

/// The URI to use when none is given, as libvirt picks it: `$LIBVIRT_DEFAULT_URI`, then
/// `uri_default` in libvirt.conf (`/etc/libvirt/libvirt.conf` for root,
/// `$XDG_CONFIG_HOME/libvirt/libvirt.conf`, else `~/.config/libvirt/libvirt.conf`, for
/// anyone else), then `qemu:///system` for root and `qemu:///session` otherwise. Empty
/// values count as unset; an unreadable libvirt.conf counts as absent.
pub fn default_uri() -> String {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let root = is_root();
    resolve_default_uri(
        var("LIBVIRT_DEFAULT_URI"),
        libvirt_conf_path(root, var("XDG_CONFIG_HOME"), var("HOME"))
            .and_then(|p| std::fs::read_to_string(p).ok())
            .as_deref(),
        root,
    )
}

/// The effective user is root (the owner of `/proc/self`, read from the filesystem: no libc call).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Where libvirt's client reads libvirt.conf.
fn libvirt_conf_path(root: bool, config: Option<String>, home: Option<String>) -> Option<PathBuf> {
    if root {
        return Some(PathBuf::from("/etc/libvirt/libvirt.conf"));
    }
    let dir = config
        .map(PathBuf::from)
        .or_else(|| home.map(|h| PathBuf::from(h).join(".config")))?;
    Some(dir.join("libvirt/libvirt.conf"))
}

/// [`default_uri`]'s rule over given inputs.
fn resolve_default_uri(env: Option<String>, conf: Option<&str>, root: bool) -> String {
    env.or_else(|| conf.and_then(conf_uri_default))
        .unwrap_or_else(|| {
            if root {
                "qemu:///system".into()
            } else {
                "qemu:///session".into()
            }
        })
}

/// `uri_default = "…"` from libvirt.conf's text (its other settings, comments and blank
/// lines ignored; the last assignment wins, as in libvirt's config parser).
fn conf_uri_default(text: &str) -> Option<String> {
    let mut found = None;
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("uri_default") else {
            continue;
        };
        let Some(value) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim();
        let quoted = value
            .strip_prefix('"')
            .and_then(|v| v.split_once('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.split_once('\'')));
        if let Some((v, _)) = quoted.filter(|(v, _)| !v.is_empty()) {
            found = Some(v.to_string());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_uri_follows_libvirt() {
        let conf = "# comment\nuri_aliases = [ \"x=qemu:///system\" ]\n  uri_default = \"qemu+ssh://h/system\"  # pick\n";
        assert_eq!(
            conf_uri_default(conf).as_deref(),
            Some("qemu+ssh://h/system")
        );
        assert_eq!(
            conf_uri_default("uri_default='test:///x'\nuri_default = \"a:///b\""),
            Some("a:///b".into())
        );
        assert_eq!(conf_uri_default("#uri_default = \"qemu:///x\"\n"), None);
        assert_eq!(
            conf_uri_default("uri_default_x = \"q\"\nuri_default = \"\""),
            None
        );
        let env = "test+unix:///default?socket=/s";
        assert_eq!(
            resolve_default_uri(Some(env.into()), Some(conf), false),
            env
        );
        assert_eq!(
            resolve_default_uri(None, Some(conf), false),
            "qemu+ssh://h/system"
        );
        assert_eq!(resolve_default_uri(None, None, false), "qemu:///session");
        assert_eq!(
            resolve_default_uri(None, Some("# none"), true),
            "qemu:///system"
        );
        assert_eq!(
            libvirt_conf_path(false, Some("/c".into()), Some("/h".into())),
            Some("/c/libvirt/libvirt.conf".into())
        );
        assert_eq!(
            libvirt_conf_path(false, None, Some("/h".into())),
            Some("/h/.config/libvirt/libvirt.conf".into())
        );
        assert_eq!(libvirt_conf_path(false, None, None), None);
        assert_eq!(
            libvirt_conf_path(true, None, None),
            Some("/etc/libvirt/libvirt.conf".into())
        );
    }
}
