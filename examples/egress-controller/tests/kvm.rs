//! The reconcile decisions against the real KVM provider on a private libvirtd, with the
//! real egress guest (the set-up of `crates/egress-kvm2/tests/guest.rs`, shared through the
//! `egress-kvm2-testkit` crate): the image is fetched from a loopback mirror, the VM boots under TCG,
//! its address comes from the guest agent. One test, one guest:
//!
//! create → `Running` with the agent's IP in the status → the agent restarts inside the
//! running VM (stopped, started again 10 s later, through the guest's control server) →
//! every status on the way keeps the IP (`Provisioning`, `Ready` by `AddressGrace`) →
//! `Running` again → cleanup → the domain and every volume of the instance are gone.
//!
//! With `TESTBED_REQUIRED` unset, a machine without libvirt or the guest image skips.

use egress_kvm2_testkit as common;

use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use common::guest_bed::guest_entry;
use egress_controller::build_providers;
use egress_controller::reconcile::{Policy, Proxy, Reconciler, Secrets, condition};
use egress_controller::resource::{EgressProxySpec, EgressProxyStatus, SecretKeyRef};
use egress_provider::{ProviderError, ProvidersConfig};
use serde_json::json;
use testbed::guest::{self, CONTROL_PORT};
use testbed::http::get_via_proxy;

const UID: &str = "0d3c9a4e-7b21-4c55-9e1a-2f6b8c0d1e2f";
/// What qemu's user-network DHCP hands the guest.
const GUEST_IP: &str = "10.0.2.15";
/// Bound on each wait (generous: TCG on a loaded 2-core machine; boot measured 4–15 s).
const WITHIN: Duration = Duration::from_secs(150);
/// How long the agent stays down in the restart.
const AGENT_DOWN_SECS: u32 = 10;

/// A control-server script (next to `freeze-agent` and `stop-agent`) that stops qemu-ga,
/// waits `AGENT_DOWN_SECS`, and starts it again as the guest's init does.
fn restart_agent_cgi() -> String {
    format!(
        r#"cat >/run/egress-ctl/cgi-bin/restart-agent <<'EOF'
#!/bin/sh
printf 'Content-Type: text/plain\r\n\r\n'
echo "restarting qemu-ga"
( /usr/sbin/egress-stop-agent 0; sleep {AGENT_DOWN_SECS}
  qemu-ga -d -m virtio-serial -p /dev/virtio-ports/org.qemu.guest_agent.0 \
    -f /run/qemu-ga.pid -l /var/log/qemu-ga.log &&
  echo "egress-guest: [$(cut -d' ' -f1 /proc/uptime)] qemu-ga restarted" >/dev/console
) </dev/null >/dev/null 2>&1 &
EOF
chmod 755 /run/egress-ctl/cgi-bin/restart-agent
"#
    )
}

struct OneSecret(Vec<u8>);

#[async_trait]
impl Secrets for OneSecret {
    async fn read(&self, _: &SecretKeyRef) -> Result<Vec<u8>, ProviderError> {
        Ok(self.0.clone())
    }
}

/// Reconciles until `done(status)` holds, as the controller would (requeue intervals capped
/// at 250 ms so the test does not idle); every status on the way goes to `seen`.
async fn reconcile_until(
    r: &Reconciler,
    spec: &EgressProxySpec,
    secrets: &OneSecret,
    status: &mut Option<EgressProxyStatus>,
    seen: &mut Vec<EgressProxyStatus>,
    done: impl Fn(&EgressProxyStatus) -> bool,
) {
    let until = Instant::now() + WITHIN;
    loop {
        let proxy = Proxy {
            uid: UID,
            name: "ops/egress-kvm",
            generation: Some(1),
            spec,
            status: status.as_ref(),
        };
        let out = r.apply(proxy, secrets, SystemTime::now()).await;
        assert_eq!(out.transient, None, "no Transient answer expected: {out:?}");
        seen.push(out.status.clone());
        let finished = done(&out.status);
        *status = Some(out.status);
        if finished {
            return;
        }
        assert!(
            Instant::now() < until,
            "not done within {WITHIN:?}; statuses: {seen:#?}"
        );
        tokio::time::sleep(out.requeue_after.min(Duration::from_millis(250))).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_guest_create_running_agent_restart_grace_then_delete() {
    let Some(g) = guest_entry("ctl", "raw", true).await else {
        return;
    };
    let config = ProvidersConfig::from_value(&json!({ "providers": [g.entry] })).unwrap();
    let mut policy = Policy::default();
    // Longer than the restart (agent down 10 s, then libvirt reconnects to it).
    policy.ip_grace = Duration::from_secs(120);
    let reconciler = Reconciler::new(build_providers(&config).unwrap(), &config, policy);
    let budget = reconciler.budget("ctl");
    // The entry's budgets (call 20 s, transfer 120 s, connect 15 s, lease wait 5 s): the
    // reconcile bound is derived from them.
    assert_eq!(budget, Duration::from_secs(15 + 5 + 120 + 12 * 20 + 10));
    let spec = EgressProxySpec::new("ctl", "guest")
        .with_size_and_tags(256, &["egress"])
        .with_user_data("ud", "user-data");
    let secrets = OneSecret(
        format!(
            "{}{}",
            guest::proxy_user_data_with_control(),
            restart_agent_cgi()
        )
        .into_bytes(),
    );
    let mut status = None;
    let mut seen = Vec::new();
    let t = Instant::now();
    reconcile_until(&reconciler, &spec, &secrets, &mut status, &mut seen, |s| {
        s.state.as_deref() == Some("Running")
    })
    .await;
    let to_running = t.elapsed();
    let st = status.clone().unwrap();
    assert_eq!(st.ip.as_deref(), Some(GUEST_IP), "{st:?}");
    assert_eq!(condition(&st, "Ready").unwrap().reason, "Running");
    assert!(
        seen.iter()
            .any(|s| s.state.as_deref() == Some("Provisioning")),
        "the boot was seen: {seen:?}"
    );
    let domains = g.env.d.virsh(&["list", "--name"]).unwrap();
    assert_eq!(domains.trim(), format!("ctl-{UID}"));

    // The agent restarts inside the running VM.
    let url = format!("http://127.0.0.1:{CONTROL_PORT}/cgi-bin/restart-agent");
    let r = get_via_proxy(g.proxy, &url, Duration::from_secs(20))
        .await
        .unwrap_or_else(|e| panic!("restart-agent through the guest's proxy: {e}"));
    assert!(
        r.status == 200 && String::from_utf8_lossy(&r.body).contains("restarting"),
        "{r:?}"
    );
    let t = Instant::now();
    let mut blip = Vec::new();
    reconcile_until(&reconciler, &spec, &secrets, &mut status, &mut blip, |s| {
        s.state.as_deref() == Some("Provisioning")
    })
    .await;
    let to_blip = t.elapsed();
    let during = status.clone().unwrap();
    assert_eq!(during.ip.as_deref(), Some(GUEST_IP), "IP kept: {during:?}");
    assert_eq!(condition(&during, "Ready").unwrap().reason, "AddressGrace");
    reconcile_until(&reconciler, &spec, &secrets, &mut status, &mut blip, |s| {
        s.state.as_deref() == Some("Running")
    })
    .await;
    let blip_len = t.elapsed();
    for s in &blip {
        assert_eq!(
            s.ip.as_deref(),
            Some(GUEST_IP),
            "every status across the restart keeps the IP: {blip:#?}"
        );
    }
    let provisioning = blip
        .iter()
        .filter(|s| s.state.as_deref() == Some("Provisioning"))
        .count();

    // Delete (the finalizer's cleanup): the domain and the instance's volumes go.
    let t = Instant::now();
    let proxy = Proxy {
        uid: UID,
        name: "ops/egress-kvm",
        generation: Some(1),
        spec: &spec,
        status: status.as_ref(),
    };
    reconciler
        .cleanup(proxy)
        .await
        .unwrap_or_else(|e| panic!("cleanup: {}", e.chain()));
    let delete = t.elapsed();
    assert_eq!(
        g.env.d.virsh(&["list", "--all", "--name"]).unwrap().trim(),
        "",
        "no domain (nor lease) left"
    );
    let left: Vec<String> = common::volumes(&g.env.d)
        .into_iter()
        .filter(|v| v.contains(UID))
        .collect();
    assert!(left.is_empty(), "volumes of the instance left: {left:?}");
    let mut base: Vec<String> = common::volumes(&g.env.d);
    base.sort();
    assert_eq!(
        base,
        ["base-ctl-guest.raw", "base-ctl-guest.raw.sha256"],
        "only the cached base image and its marker stay"
    );
    eprintln!(
        "controller-timing: create→Running {to_running:.2?} ({} reconciles), agent restart → \
         Provisioning {to_blip:.2?}, → Running again {blip_len:.2?} ({provisioning} \
         Provisioning statuses, IP kept in all {}), delete {delete:.2?}, total {:.2?}",
        seen.len(),
        blip.len(),
        g.started.elapsed()
    );
    let _ = &g.logs;
}
