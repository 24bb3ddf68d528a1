//! The `NoCloud` seed: a small FAT image labelled `CIDATA`, built in memory.
//!
//! cloud-init's `NoCloud` datasource looks for a filesystem labelled `cidata` (blkid matches
//! case-insensitively; FAT stores labels upper-case, so the label on disk is `CIDATA`) with
//! two files:
//!
//! * `meta-data`: `instance-id: <uid>`, `local-hostname: <domain name>`, and the SSH keys
//!   under `public-keys:` when the spec has any;
//! * `user-data`: the spec's bytes, verbatim.
//!
//! The image is attached to the domain as a second, read-only virtio disk (`vdb`). It is
//! never written to a temp file: [`build`] returns the bytes, which are uploaded as the
//! volume `seed-<entry>-<uid>.img`. Nothing here logs the user-data or the keys.

use std::io::{self, Cursor, Write};

/// Smallest seed image (FAT12 fits comfortably).
pub const MIN_SIZE: usize = 1 << 20;
/// Largest user-data accepted (the seed is uploaded in one small transfer).
pub const MAX_USER_DATA: usize = 16 << 20;

/// What goes into a seed.
#[derive(Clone, Copy)]
pub struct SeedInput<'a> {
    /// `instance-id`.
    pub instance_id: &'a str,
    /// `local-hostname`.
    pub hostname: &'a str,
    /// `user-data`, verbatim.
    pub user_data: &'a [u8],
    /// `public-keys`.
    pub ssh_keys: &'a [String],
}

impl std::fmt::Debug for SeedInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedInput")
            .field("instance_id", &self.instance_id)
            .field("hostname", &self.hostname)
            .field(
                "user_data",
                &format_args!("<{} bytes>", self.user_data.len()),
            )
            .field("ssh_keys", &self.ssh_keys.len())
            .finish()
    }
}

/// A YAML double-quoted scalar: safe for any single-line string.
fn yaml_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `meta-data` document.
pub fn meta_data(input: &SeedInput<'_>) -> String {
    let mut md = format!(
        "instance-id: {}\nlocal-hostname: {}\n",
        yaml_quote(input.instance_id),
        yaml_quote(input.hostname)
    );
    if !input.ssh_keys.is_empty() {
        md.push_str("public-keys:\n");
        for k in input.ssh_keys {
            md.push_str("  - ");
            md.push_str(&yaml_quote(k.trim()));
            md.push('\n');
        }
    }
    md
}

/// Builds the seed image.
pub fn build(input: &SeedInput<'_>) -> io::Result<Vec<u8>> {
    if input.user_data.len() > MAX_USER_DATA {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "user-data is {} bytes; at most {MAX_USER_DATA} fit in a seed",
                input.user_data.len()
            ),
        ));
    }
    let md = meta_data(input);
    // Room for both files plus FAT overhead, rounded up to whole MiB.
    let need = input.user_data.len() + md.len() + (512 << 10);
    let size = need.max(MIN_SIZE).div_ceil(1 << 20) << 20;
    let mut disk = Cursor::new(vec![0u8; size]);
    fatfs::format_volume(
        &mut disk,
        fatfs::FormatVolumeOptions::new().volume_label(*b"CIDATA     "),
    )?;
    {
        let fs = fatfs::FileSystem::new(&mut disk, fatfs::FsOptions::new())?;
        {
            let root = fs.root_dir();
            let mut f = root.create_file("meta-data")?;
            f.write_all(md.as_bytes())?;
            f.flush()?;
            let mut f = root.create_file("user-data")?;
            f.write_all(input.user_data)?;
            f.flush()?;
        }
        fs.unmount()?;
    }
    Ok(disk.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn files_and_label_read_back() {
        let keys = vec![
            "ssh-ed25519 AAAA a@b".to_owned(),
            "ssh-rsa \"q\" x".to_owned(),
        ];
        let ud = b"#cloud-config\nruncmd: [echo hi]\n\x00\xff".to_vec();
        let img = build(&SeedInput {
            instance_id: "u-1",
            hostname: "kvm-a-u-1",
            user_data: &ud,
            ssh_keys: &keys,
        })
        .unwrap();
        assert_eq!(img.len(), MIN_SIZE);
        let mut disk = Cursor::new(img);
        let fs = fatfs::FileSystem::new(&mut disk, fatfs::FsOptions::new()).unwrap();
        assert_eq!(fs.volume_label(), "CIDATA");
        assert_eq!(
            fs.read_volume_label_from_root_dir().unwrap().as_deref(),
            Some("CIDATA")
        );
        let root = fs.root_dir();
        let mut got = Vec::new();
        root.open_file("user-data")
            .unwrap()
            .read_to_end(&mut got)
            .unwrap();
        assert_eq!(got, ud);
        let mut md = String::new();
        root.open_file("meta-data")
            .unwrap()
            .read_to_string(&mut md)
            .unwrap();
        assert_eq!(
            md,
            "instance-id: \"u-1\"\nlocal-hostname: \"kvm-a-u-1\"\npublic-keys:\n  - \"ssh-ed25519 AAAA a@b\"\n  - \"ssh-rsa \\\"q\\\" x\"\n"
        );
    }

    #[test]
    fn large_user_data_grows_the_image() {
        let ud = vec![b'x'; 3 << 20];
        let img = build(&SeedInput {
            instance_id: "u",
            hostname: "h",
            user_data: &ud,
            ssh_keys: &[],
        })
        .unwrap();
        assert_eq!(img.len() % (1 << 20), 0);
        assert!(img.len() > 3 << 20);
        let too_big = vec![0u8; MAX_USER_DATA + 1];
        assert!(
            build(&SeedInput {
                instance_id: "u",
                hostname: "h",
                user_data: &too_big,
                ssh_keys: &[],
            })
            .is_err()
        );
    }
}
