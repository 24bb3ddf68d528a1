//! `lv event` against a private libvirtd: lifecycle lines of the test driver's networks, and
//! a prompt non-zero exit when the daemon dies under it.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use libvirt_remote::client::{Client, ConnectOptions};
use libvirt_remote::proto::procs::common::XmlArgs;
use libvirt_remote::proto::procs::network::{
    NetworkArgs, NetworkCreate, NetworkDefineXml, NetworkDestroy, NetworkUndefine,
};
use testbed::libvirtd::Libvirtd;

/// Start `lv … event …` and wait until it has subscribed (its "waiting for events" line).
/// Returns the rest of its stderr too.
fn spawn_lv_event(uri: &str, args: &[&str]) -> (Child, BufReader<ChildStderr>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lv"))
        .args(["-c", uri, "--timeout", "30", "event"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lv");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert_eq!(
        line.trim(),
        "waiting for events",
        "lv event did not subscribe"
    );
    (child, err)
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        assert!(t.elapsed() < within, "lv still running after {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_event_prints_network_lifecycle() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let (mut child, _) = spawn_lv_event(&d.test_uri(), &["--kind", "network", "--count", "4"]);
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let net = c
        .call::<NetworkDefineXml>(&XmlArgs {
            xml: "<network><name>lv-event-net</name><bridge name='lvevbr1'/></network>".into(),
        })
        .await
        .unwrap()
        .net;
    let args = NetworkArgs { net };
    c.call::<NetworkCreate>(&args).await.unwrap();
    c.call::<NetworkDestroy>(&args).await.unwrap();
    c.call::<NetworkUndefine>(&args).await.unwrap();
    let st = wait_exit(&mut child, Duration::from_secs(10));
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(st.success(), "lv event failed ({st}); stdout: {out}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "network lv-event-net: defined",
            "network lv-event-net: started",
            "network lv-event-net: stopped",
            "network lv-event-net: undefined",
        ]
    );
    c.close();
}

#[test]
fn lv_event_fails_promptly_when_the_daemon_dies() {
    let Some(mut d) = Libvirtd::start_or_skip() else {
        return;
    };
    let (mut child, mut stderr) = spawn_lv_event(&d.uri(), &["--kind", "domain"]);
    d.kill().unwrap();
    // Timed from the daemon's death (the kill and its reaping are not lv's to answer for).
    let t = Instant::now();
    let st = wait_exit(&mut child, Duration::from_secs(2));
    let mut err = String::new();
    stderr.read_to_string(&mut err).unwrap();
    assert!(!st.success(), "lv event exited 0 after the daemon died");
    assert!(
        err.contains("connection"),
        "no reason in the error: {err:?}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "lv event took {:?} to notice the daemon's death",
        t.elapsed()
    );
}

/// `lv event --loop --reconnect` crosses a SIGKILL and restart of the daemon: a line on
/// stderr when the connection is lost and when it is back, and the next event printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_event_loop_reconnect_crosses_a_daemon_restart() {
    let Some(mut d) = Libvirtd::start_or_skip() else {
        return;
    };
    let (mut child, mut stderr) = spawn_lv_event(
        &d.test_uri(),
        &["--event", "lifecycle", "--loop", "--reconnect"],
    );
    d.kill().unwrap();
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.starts_with("connection lost"),
        "no line on stderr for the loss: {line:?}"
    );
    d.restart().unwrap();
    line.clear();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.starts_with("connection back"),
        "no line on stderr for the return: {line:?}"
    );
    // The subscription is registered again right after the handshake that made the link
    // live; the event below comes after that line, so it is seen.
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    c.call::<libvirt_remote::proto::procs::domain::DomainDefineXml>(
        &libvirt_remote::proto::procs::domain::DomainDefineXmlArgs {
            xml: "<domain type='test'><name>lv-rc-event</name><memory>1024</memory>\
                  <os><type>hvm</type></os></domain>"
                .into(),
        },
    )
    .await
    .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    out.read_line(&mut printed).unwrap();
    assert_eq!(
        printed.trim(),
        "event 'lifecycle' for domain 'lv-rc-event': Defined Added"
    );
    let _ = child.kill();
    let _ = child.wait();
    c.close();
}
