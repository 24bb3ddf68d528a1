//! `lv event`: virsh's form (`--all` / `--event NAME`, `--domain`, `--loop`, `--timeout`,
//! `--list`), printing virsh's lines, and lv's own `--kind` form for the lifecycle events of
//! networks, pools, node devices and secrets.

use futures::StreamExt;
use futures::stream::BoxStream;
use libvirt_remote::Client;
use libvirt_remote::proto::events::DomainEvent;

use crate::{R, err, lookup};

#[derive(clap::Args)]
pub struct Args {
    /// Only events of this domain (name, id or UUID).
    #[arg(long)]
    domain: Option<String>,
    /// Which event type to wait for (see --list).
    #[arg(long, conflicts_with_all = ["all", "list"])]
    event: Option<String>,
    /// Every event type.
    #[arg(long, conflicts_with = "list")]
    all: bool,
    /// Keep waiting after the first event (until --timeout or Ctrl-C).
    #[arg(long = "loop")]
    repeat: bool,
    /// Stop waiting after this many seconds.
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// The event type names.
    #[arg(long)]
    list: bool,
    /// lv's form: lifecycle events of this kind of object, as `KIND NAME: EVENT`.
    #[arg(long, value_enum, conflicts_with_all = ["event", "all", "list", "domain"])]
    kind: Option<EventKind>,
    /// lv's form: stop after this many events.
    #[arg(long, requires = "kind")]
    count: Option<u64>,
    /// Redial a lost connection and keep printing (with --loop, or lv's --kind form), where
    /// virsh exits: a line on stderr when the connection is lost and when it is back, and
    /// every subscription registered again.
    #[arg(long, conflicts_with = "list")]
    reconnect: bool,
}

impl Args {
    /// The connection should redial when lost (`--reconnect`).
    pub fn reconnect(&self) -> bool {
        self.reconnect
    }
}

/// Say on stderr when the link is lost (`--reconnect`), until it closes. The line saying it
/// is back comes from the subscriptions' gap ([`Back`]): by then they are registered again.
fn report_loss(c: &Client) {
    use libvirt_remote::conn::reconnect::LinkState;
    let mut rx = c.watch_link();
    tokio::spawn(async move {
        let mut up = true;
        while rx.changed().await.is_ok() {
            let state = rx.borrow_and_update().clone();
            match state {
                LinkState::Reconnecting { lost, .. } if up => {
                    up = false;
                    eprintln!("connection lost ({lost}); reconnecting");
                }
                LinkState::Connected => up = true,
                LinkState::Closed(_) => return,
                _ => {}
            }
        }
    });
}

/// One item to print: an event's line, or a subscription's reconnect gap.
enum Out {
    Line(String),
    Gap(libvirt_remote::client::Gap),
}

/// Says once per reconnect (the subscriptions of one connection each yield a gap) that the
/// connection is back and its subscriptions registered again.
#[derive(Default)]
struct Back(Option<std::time::SystemTime>);

impl Back {
    fn report(&mut self, gap: &libvirt_remote::client::Gap) {
        if self.0 != Some(gap.lost_at) {
            self.0 = Some(gap.lost_at);
            let down = gap
                .resubscribed_at
                .duration_since(gap.lost_at)
                .unwrap_or_default();
            eprintln!(
                "connection back after {:.1} s; events meanwhile were not seen (re-list to catch up)",
                down.as_secs_f64()
            );
        }
    }
}

/// `events`' items (events and gaps) as a stream of [`Out`], events rendered by `line`.
fn items<E: Send + 'static>(
    events: libvirt_remote::client::EventStream<E>,
    line: impl Fn(E) -> String + Send + 'static,
) -> BoxStream<'static, Out> {
    use libvirt_remote::client::EventItem;
    futures::stream::unfold(events, |mut s| async move {
        s.next_item().await.map(|i| (i, s))
    })
    .filter_map(move |item| {
        futures::future::ready(match item {
            EventItem::Event(e) => Some(Out::Line(line(e))),
            EventItem::Gap(g) => Some(Out::Gap(g)),
            _ => None,
        })
    })
    .boxed()
}

/// Object kinds for `lv event --kind`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum EventKind {
    Domain,
    Network,
    Pool,
    Nodedev,
    Secret,
}

/// virsh's names of the domain event ids, in id order.
const DOMAIN_EVENTS: &[&str] = &[
    "lifecycle",
    "reboot",
    "rtc-change",
    "watchdog",
    "io-error",
    "graphics",
    "io-error-reason",
    "control-error",
    "block-job",
    "disk-change",
    "tray-change",
    "pm-wakeup",
    "pm-suspend",
    "balloon-change",
    "pm-suspend-disk",
    "device-removed",
    "block-job-2",
    "tunable",
    "agent-lifecycle",
    "device-added",
    "migration-iteration",
    "job-completed",
    "device-removal-failed",
    "metadata-change",
    "block-threshold",
    "memory-failure",
    "memory-device-size-change",
    "nic-mac-change",
    "vcpu-removed",
    "channel-lifecycle",
];

/// One domain event as virsh prints it.
fn domain_line(ev: &DomainEvent) -> String {
    use libvirt_remote::proto::events::EventKind as _;
    let dom = &ev.object().name;
    let id = ev.event_id();
    let name = usize::try_from(id)
        .ok()
        .and_then(|i| DOMAIN_EVENTS.get(i))
        .copied()
        .unwrap_or("unknown");
    match ev {
        DomainEvent::Lifecycle(l) => {
            let (e, d) = (known(l.event.text()), known(l.detail.text()));
            format!("event 'lifecycle' for domain '{dom}': {e} {d}")
        }
        DomainEvent::RtcChange(r) => {
            format!("event 'rtc-change' for domain '{dom}': {}", r.offset)
        }
        DomainEvent::Watchdog(w) => {
            let a = known(w.action.text());
            format!("event 'watchdog' for domain '{dom}': {a}")
        }
        DomainEvent::IoError(e) => format!(
            "event 'io-error' for domain '{dom}': {} ({}) {}",
            e.src_path,
            e.dev_alias,
            known(e.action.text())
        ),
        DomainEvent::IoErrorReason(e) => format!(
            "event 'io-error' for domain '{dom}': {} ({}) {} due to {}",
            e.src_path,
            e.dev_alias,
            known(e.action.text()),
            e.reason
        ),
        DomainEvent::BlockJob(j) => block_job(name, dom, &j.path, j.kind, j.status),
        DomainEvent::BlockJob2(j) => block_job(name, dom, &j.dst, j.kind, j.status),
        DomainEvent::DiskChange(d) => format!(
            "event 'disk-change' for domain '{dom}' disk {}: {} -> {}: {}",
            d.dev_alias,
            null_str(d.old_src_path.as_ref()),
            null_str(d.new_src_path.as_ref()),
            known(d.reason.text())
        ),
        DomainEvent::TrayChange(t) => format!(
            "event 'tray-change' for domain '{dom}' disk {}: {}",
            t.dev_alias,
            known(t.reason.text())
        ),
        DomainEvent::BalloonChange(b) => {
            format!("event 'balloon-change' for domain '{dom}': {}KiB", b.actual)
        }
        DomainEvent::DeviceRemoved(d)
        | DomainEvent::DeviceAdded(d)
        | DomainEvent::DeviceRemovalFailed(d) => {
            format!("event '{name}' for domain '{dom}': {}", d.dev_alias)
        }
        DomainEvent::AgentLifecycle(a) => format!(
            "event 'agent-lifecycle' for domain '{dom}': state: '{}' reason: '{}'",
            known(a.state.text()),
            known(a.reason.text())
        ),
        DomainEvent::MigrationIteration(m) => format!(
            "event 'migration-iteration' for domain '{dom}': iteration: '{}'",
            m.iteration
        ),
        DomainEvent::MetadataChange(m) => format!(
            "event 'metadata-change' for domain '{dom}': type {}, uri {}",
            known(m.kind.text()),
            null_str(m.nsuri.as_ref())
        ),
        DomainEvent::BlockThreshold(b) => format!(
            "event 'block-threshold' for domain '{dom}': dev: {}({}) {} {}",
            b.dev,
            null_str(b.path.as_ref()),
            b.threshold,
            b.excess
        ),
        DomainEvent::MemoryDeviceSizeChange(m) => format!(
            "event 'memory-device-size-change' for domain '{dom}':\nalias: {}\nsize: {}",
            m.alias, m.size
        ),
        DomainEvent::NicMacChange(n) => format!(
            "event 'nic-mac-change' for domain '{dom}':\nalias: {}\noldMAC: {}\nnewMAC: {}",
            n.alias, n.old_mac, n.new_mac
        ),
        _ => format!("event '{name}' for domain '{dom}'"),
    }
}

/// The library's word for a value (the words virsh prints), or virsh's `unknown`.
fn known(text: Option<&'static str>) -> &'static str {
    text.unwrap_or("unknown")
}

/// virsh's `NULLSTR`.
fn null_str(s: Option<&libvirt_remote::wire::xdr::LvString>) -> String {
    s.map_or_else(|| "<null>".to_string(), ToString::to_string)
}

fn block_job(
    name: &str,
    dom: &libvirt_remote::wire::xdr::LvString,
    disk: &libvirt_remote::wire::xdr::LvString,
    kind: libvirt_remote::proto::names::BlockJobType,
    status: libvirt_remote::proto::names::BlockJobStatus,
) -> String {
    let (kind, status) = (known(kind.text()), known(status.text()));
    format!("event '{name}' for domain '{dom}': {kind} for {disk} {status}")
}

/// Returns whether virsh's footer follows (virsh's form: yes).
pub async fn run(conn: &libvirt_remote::Connect, a: Args) -> R<bool> {
    let c = conn.client();
    if a.reconnect {
        report_loss(c);
    }
    if let Some(kind) = a.kind {
        lv_form(c, kind, a.count).await?;
        return Ok(false);
    }
    if a.list {
        for n in DOMAIN_EVENTS {
            println!("{n}");
        }
        return Ok(true);
    }
    let ids: Vec<i32> = match (&a.event, a.all) {
        (_, true) => (0..DOMAIN_EVENTS.len()).map(|i| i as i32).collect(),
        (Some(name), false) => match DOMAIN_EVENTS.iter().position(|n| n == name) {
            Some(i) => vec![i as i32],
            None => return Err(format!("unknown event type {name}")),
        },
        (None, false) => {
            return Err("one of --list, --all, or --event <type> is required".into());
        }
    };
    let dom = match &a.domain {
        Some(d) => Some(lookup::domain(conn, d).await?.into_wire()),
        None => None,
    };
    let mut streams = Vec::new();
    for (i, id) in ids.into_iter().enumerate() {
        match c.subscribe::<DomainEvent>(id, dom.clone()).await {
            Ok(s) => streams.push(items(s, |ev| domain_line(&ev))),
            // As virsh: an older daemon knows fewer events; only the first must register.
            Err(e) if i == 0 => return Err(err(e)),
            Err(_) => {}
        }
    }
    let mut events = futures::stream::select_all(streams);
    // On stderr, so that scripts and tests know when events will be seen.
    eprintln!("waiting for events");
    let deadline = a
        .timeout
        .map(|s| tokio::time::Instant::now() + std::time::Duration::from_secs(s));
    let mut count = 0u64;
    let mut back = Back::default();
    loop {
        let next = async {
            match deadline {
                Some(d) => tokio::time::timeout_at(d, events.next()).await.ok(),
                None => Some(events.next().await),
            }
        };
        match next.await {
            None => {
                println!("event loop timed out");
                break;
            }
            Some(None) => return Err(c.closed().await.to_string()),
            Some(Some(Out::Gap(g))) => back.report(&g),
            Some(Some(Out::Line(line))) => {
                println!("{line}");
                count += 1;
                if !a.repeat {
                    break;
                }
            }
        }
    }
    println!("events received: {count}");
    if count == 0 {
        return Err("no events received".into());
    }
    Ok(true)
}

/// The name of lifecycle event `e` in lower case: `virDomainEventType` for domains, the
/// lifecycle enums of networks, pools, node devices and secrets otherwise.
fn event_name(kind: EventKind, e: i32) -> String {
    use libvirt_remote::proto::names::{
        DomainEventType, NetworkEventType, NodeDeviceEventType, SecretEventType,
        StoragePoolEventType,
    };
    let name = match kind {
        EventKind::Domain => DomainEventType(e).name(),
        EventKind::Network => NetworkEventType(e).name(),
        EventKind::Pool => StoragePoolEventType(e).name(),
        EventKind::Nodedev => NodeDeviceEventType(e).name(),
        EventKind::Secret => SecretEventType(e).name(),
    };
    known(name).to_lowercase()
}

/// Subscribe to the lifecycle events of `kind` and render each as one line.
async fn event_lines(
    c: &Client,
    kind: EventKind,
) -> Result<BoxStream<'static, Out>, libvirt_remote::conn::CallError> {
    use libvirt_remote::proto::events::{
        NetworkEvent, NodeDeviceEvent, SecretEvent, StoragePoolEvent,
    };
    match kind {
        EventKind::Domain => lifecycle_lines::<DomainEvent>(c, kind, |d| &d.name).await,
        EventKind::Network => lifecycle_lines::<NetworkEvent>(c, kind, |n| &n.name).await,
        EventKind::Pool => lifecycle_lines::<StoragePoolEvent>(c, kind, |p| &p.name).await,
        EventKind::Nodedev => lifecycle_lines::<NodeDeviceEvent>(c, kind, |d| &d.name).await,
        EventKind::Secret => lifecycle_lines::<SecretEvent>(c, kind, |s| &s.usage_id).await,
    }
}

/// One output line per event of family `K`: `KIND OBJECT: EVENT` for a lifecycle event (the
/// object named by `name`), the decoded event otherwise.
async fn lifecycle_lines<K: libvirt_remote::proto::events::EventKind>(
    c: &Client,
    kind: EventKind,
    name: fn(&K::Object) -> &libvirt_remote::wire::xdr::LvString,
) -> Result<BoxStream<'static, Out>, libvirt_remote::conn::CallError> {
    use clap::ValueEnum;
    let events = c.subscribe::<K>(K::LIFECYCLE, None).await?;
    let label = kind.to_possible_value().expect("no skipped variants");
    Ok(items(events, move |ev| match ev.lifecycle() {
        Some((e, _)) => format!(
            "{} {}: {}",
            label.get_name(),
            name(ev.object()),
            event_name(kind, e)
        ),
        None => format!("{}: {ev:?}", label.get_name()),
    }))
}

/// lv's form: print lines until `count` events (or the global --timeout, or Ctrl-C).
async fn lv_form(c: &Client, kind: EventKind, count: Option<u64>) -> R {
    let mut lines = event_lines(c, kind).await.map_err(err)?;
    eprintln!("waiting for events");
    let mut seen = 0u64;
    let mut back = Back::default();
    while count.is_none_or(|n| seen < n) {
        match lines.next().await {
            // The stream ends when the connection dies (for good, with --reconnect): say why.
            None => return Err(c.closed().await.to_string()),
            Some(Out::Gap(g)) => back.report(&g),
            Some(Out::Line(line)) => {
                println!("{line}");
                seen += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use libvirt_remote::proto::events::{BalloonChange, DomainEvent, Lifecycle, TrayChange};
    use libvirt_remote::proto::types::NonnullDomain;

    use super::domain_line;

    fn dom() -> NonnullDomain {
        NonnullDomain {
            name: "d".into(),
            uuid: libvirt_remote::proto::types::Uuid::default(),
            id: 1,
        }
    }

    #[test]
    fn events_print_like_virsh() {
        let l = DomainEvent::Lifecycle(Lifecycle {
            dom: dom(),
            event: libvirt_remote::proto::names::DomainEventType(5),
            detail: libvirt_remote::proto::names::StoppedDetail::DESTROYED.into(),
        });
        assert_eq!(
            domain_line(&l),
            "event 'lifecycle' for domain 'd': Stopped Destroyed"
        );
        let t = DomainEvent::TrayChange(TrayChange {
            dom: dom(),
            dev_alias: "sata0".into(),
            reason: libvirt_remote::proto::names::TrayChangeReason(1),
        });
        assert_eq!(
            domain_line(&t),
            "event 'tray-change' for domain 'd' disk sata0: closed"
        );
        let b = DomainEvent::BalloonChange(BalloonChange {
            dom: dom(),
            actual: 1024,
        });
        assert_eq!(
            domain_line(&b),
            "event 'balloon-change' for domain 'd': 1024KiB"
        );
    }
}
