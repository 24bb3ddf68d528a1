//! Tests of the private privileged LXC daemon's teardown (root only: they skip otherwise).

use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use testbed::lxcd::{Lxcd, ns_link};

/// Wait (bounded) until `what` holds.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let t = Instant::now();
    while !done() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{what}: not within 10 s"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// A daemon's teardown kills what is in its mount namespace. The kernel hands a dead
/// namespace's number to the next one made (`unshare --mount` twice prints the same
/// `mnt:[…]`), so a teardown that found "its" processes by that number after its namespace
/// died killed whatever lived in the next namespace — in CI, another test's container
/// controller, whose half-made cgroup it then removed ("Unable to write to
/// …/cpuset/machine/lxc-…/tasks: No such file or directory"). The daemon's namespace is held
/// open for the daemon's life, so its number stays its own until the teardown is done.
#[test]
fn teardown_spares_a_namespace_made_after_the_daemon_died() {
    let Some(d) = Lxcd::start_or_skip() else {
        return;
    };
    let ns = d.mount_namespace().to_owned();
    let own = ns_link(std::process::id(), "mnt").expect("our mount namespace");
    assert_ne!(ns, own, "the daemon runs in a mount namespace of its own");

    // The daemon dies by itself (no containers: nothing else is in its namespace).
    let pid = d.pid();
    kill_process(Pid::from_raw(pid as i32).expect("a pid"), Signal::KILL).expect("kill");
    wait_until("the daemon's namespace gone from its pid", || {
        ns_link(pid, "mnt").is_none()
    });

    // A bystander in a namespace made after that death.
    let mut bystander = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--", "sleep", "60"])
        .stdin(Stdio::null())
        .spawn()
        .expect("spawning unshare … sleep");
    let bpid = bystander.id();
    wait_until("the bystander in a namespace of its own", || {
        ns_link(bpid, "mnt").is_some_and(|l| l != own)
    });
    let theirs = ns_link(bpid, "mnt").expect("the bystander's namespace");
    eprintln!("daemon's namespace {ns}, bystander's {theirs}");

    drop(d);
    let survived = bystander.try_wait().expect("try_wait").is_none();
    let _ = bystander.kill();
    let _ = bystander.wait();
    assert!(
        survived,
        "the daemon's teardown killed a process of another namespace ({theirs}; the daemon's was {ns})"
    );
}
