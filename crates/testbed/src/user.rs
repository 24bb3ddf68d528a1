//! The unprivileged user the test daemons run as.
//!
//! libvirtd in session mode and a non-root sshd both want an ordinary user. When the tests run
//! as root (CI does) we create a system user `lvtest` once; otherwise we run as ourselves.

use std::path::Path;
use std::process::Command;

/// Name of the user created when the tests run as root.
pub const TEST_USER: &str = "lvtest";

/// An unprivileged user to run daemons as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestUser {
    /// Login name.
    pub name: String,
    /// Numeric user id.
    pub uid: u32,
    /// Numeric primary group id.
    pub gid: u32,
    /// True when we are root and must switch to this user with `runuser`.
    pub switch: bool,
}

/// Errors from setting up the test user.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UserError {
    /// A helper command could not run or failed.
    #[error("{cmd} failed: {detail}")]
    Command {
        /// The command line.
        cmd: String,
        /// What it printed or why it could not start.
        detail: String,
    },
}

impl TestUser {
    /// The user to run daemons as: `lvtest` (created on first use) when we are root, else us.
    pub fn get() -> Result<Self, UserError> {
        let euid = rustix::process::geteuid().as_raw();
        if euid != 0 {
            let gid = rustix::process::getegid().as_raw();
            let name = std::env::var("USER")
                .ok()
                .or_else(|| output("id", &["-un"]).ok())
                .unwrap_or_else(|| euid.to_string());
            return Ok(Self {
                name,
                uid: euid,
                gid,
                switch: false,
            });
        }
        if output("id", &["-u", TEST_USER]).is_err() {
            // A login shell is needed: sshd refuses users whose shell is nologin.
            let r = output(
                "useradd",
                &["--system", "--create-home", "--shell", "/bin/sh", TEST_USER],
            );
            // Another test process may have created it meanwhile.
            if r.is_err() && output("id", &["-u", TEST_USER]).is_err() {
                r?;
            }
        }
        let uid = output("id", &["-u", TEST_USER])?
            .parse()
            .map_err(|e| UserError::Command {
                cmd: "id -u".into(),
                detail: format!("{e}"),
            })?;
        let gid = output("id", &["-g", TEST_USER])?
            .parse()
            .map_err(|e| UserError::Command {
                cmd: "id -g".into(),
                detail: format!("{e}"),
            })?;
        Ok(Self {
            name: TEST_USER.into(),
            uid,
            gid,
            switch: true,
        })
    }

    /// A command that runs `program` as this user (through `runuser` when we are root).
    pub fn command(&self, program: &str) -> Command {
        if self.switch {
            let mut c = Command::new("runuser");
            c.args(["-u", &self.name, "--", program]);
            c
        } else {
            Command::new(program)
        }
    }

    /// Give `path` (recursively) to this user, so a daemon running as it can use the dir.
    pub fn own(&self, path: &Path) -> Result<(), UserError> {
        if !self.switch {
            return Ok(());
        }
        let spec = format!("{}:{}", self.uid, self.gid);
        output("chown", &["-R", &spec, &path.to_string_lossy()]).map(|_| ())
    }
}

fn output(cmd: &str, args: &[&str]) -> Result<String, UserError> {
    let line = format!("{cmd} {}", args.join(" "));
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| UserError::Command {
            cmd: line.clone(),
            detail: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(UserError::Command {
            cmd: line,
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
