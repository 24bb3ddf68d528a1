//! Domain commands: list, dominfo, domstate, dumpxml, define, undefine, the lifecycle verbs,
//! domifaddr, snapshots and the QEMU monitor and agent passthroughs.

use std::fmt::Write as _;
use std::path::PathBuf;

use libvirt_remote::prelude::*;
use libvirt_remote::proto::names::IpAddrType;
use libvirt_remote::proto::procs::connect::ConnectListAllDomainsFlags;
use libvirt_remote::proto::procs::domain::{DomainXmlFlags, InterfaceAddressesSource};
use libvirt_remote::proto::procs::qemu::{QemuMonitorCommandFlags, agent_timeout};
use libvirt_remote::proto::procs::snapshot::{
    DomainSnapshotCreateFlags, DomainSnapshotRevertFlags,
};

use crate::table::{Table, field, yes_no};
use crate::{R, err, lookup};

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// List domains (running ones; --all adds the inactive).
    List {
        /// Active and inactive domains.
        #[arg(long)]
        all: bool,
        /// Inactive domains only.
        #[arg(long)]
        inactive: bool,
        /// Names only, one per line.
        #[arg(long)]
        name: bool,
        /// UUIDs only, one per line.
        #[arg(long)]
        uuid: bool,
    },
    /// Domain information.
    Dominfo {
        #[command(flatten)]
        domain: DomArg,
    },
    /// Domain state.
    Domstate {
        #[command(flatten)]
        domain: DomArg,
        /// Also the reason for the state.
        #[arg(long)]
        reason: bool,
    },
    /// Domain XML.
    Dumpxml {
        #[command(flatten)]
        domain: DomArg,
        /// The persistent definition, not the live one.
        #[arg(long)]
        inactive: bool,
        /// Include security-sensitive information.
        #[arg(long)]
        security_info: bool,
        /// Update the guest CPU from the host.
        #[arg(long)]
        update_cpu: bool,
        /// XML suitable for migration.
        #[arg(long)]
        migratable: bool,
    },
    /// Define (but do not start) a domain from an XML file.
    Define {
        /// The domain's XML.
        file: PathBuf,
    },
    /// Undefine a domain.
    Undefine {
        #[command(flatten)]
        domain: DomArg,
    },
    /// Connect this terminal to a running domain's serial console (`Ctrl-]` leaves).
    Console {
        #[command(flatten)]
        domain: DomArg,
        /// The console or serial device alias (default: the first console).
        #[arg(long)]
        devname: Option<String>,
        /// Take the console over from another client.
        #[arg(long)]
        force: bool,
    },
    /// Start an inactive domain.
    Start {
        #[command(flatten)]
        domain: DomArg,
    },
    /// Ask a domain to shut down.
    Shutdown {
        #[command(flatten)]
        domain: DomArg,
    },
    /// Ask a domain to reboot.
    Reboot {
        #[command(flatten)]
        domain: DomArg,
    },
    /// Stop a domain at once.
    Destroy {
        #[command(flatten)]
        domain: DomArg,
    },
    /// Pause a domain.
    Suspend {
        #[command(flatten)]
        domain: DomArg,
    },
    /// Resume a paused domain.
    Resume {
        #[command(flatten)]
        domain: DomArg,
    },
    /// A domain's interface addresses.
    Domifaddr {
        #[command(flatten)]
        domain: DomArg,
        /// Only this interface.
        interface: Option<String>,
        /// Print the name and MAC on every line.
        #[arg(long)]
        full: bool,
        /// Where the addresses come from.
        #[arg(long, value_enum, default_value_t = AddrSource::Lease)]
        source: AddrSource,
    },
    /// A domain's snapshots.
    SnapshotList {
        #[command(flatten)]
        domain: DomArg,
    },
    /// Create a snapshot from a name and a description.
    SnapshotCreateAs {
        #[command(flatten)]
        domain: DomArg,
        /// Snapshot name (default: chosen by libvirt).
        name: Option<String>,
        /// Description.
        description: Option<String>,
        /// Print the snapshot XML instead of creating it.
        #[arg(long)]
        print_xml: bool,
        /// Do not keep metadata.
        #[arg(long)]
        no_metadata: bool,
        /// Stop the domain after the snapshot.
        #[arg(long)]
        halt: bool,
        /// Disks only.
        #[arg(long)]
        disk_only: bool,
        /// All or nothing.
        #[arg(long)]
        atomic: bool,
    },
    /// Revert a domain to a snapshot.
    SnapshotRevert {
        #[command(flatten)]
        domain: DomArg,
        /// Snapshot name.
        snapshotname: Option<String>,
        /// The current snapshot.
        #[arg(long)]
        current: bool,
        /// Running after the revert.
        #[arg(long)]
        running: bool,
        /// Paused after the revert.
        #[arg(long)]
        paused: bool,
        /// Revert even when it is risky.
        #[arg(long)]
        force: bool,
    },
    /// A QEMU monitor command (QMP JSON, or --hmp).
    QemuMonitorCommand {
        /// Domain name, id or UUID.
        domain: String,
        /// The command as human monitor text.
        #[arg(long)]
        hmp: bool,
        /// Pretty-print the JSON reply.
        #[arg(long)]
        pretty: bool,
        /// The command (its words are joined with spaces).
        #[arg(required = true, num_args = 1..)]
        cmd: Vec<String>,
    },
    /// A QEMU guest agent command.
    QemuAgentCommand {
        /// Domain name, id or UUID.
        domain: String,
        /// Seconds to wait for the reply.
        #[arg(long)]
        timeout: Option<i32>,
        /// Do not wait for the reply.
        #[arg(long = "async")]
        no_wait: bool,
        /// Wait for the reply forever.
        #[arg(long)]
        block: bool,
        /// Pretty-print the JSON reply.
        #[arg(long)]
        pretty: bool,
        /// The command (its words are joined with spaces).
        #[arg(required = true, num_args = 1..)]
        cmd: Vec<String>,
    },
}

impl Cmd {
    /// The console streams until the user leaves.
    pub fn long_running(&self) -> bool {
        matches!(self, Cmd::Console { .. })
    }
}

/// A domain given positionally (virsh's usual way) or as `--domain`.
#[derive(clap::Args)]
pub struct DomArg {
    /// Domain name, id or UUID.
    #[arg(value_name = "DOMAIN", required_unless_present = "domain_opt")]
    domain: Option<String>,
    /// Domain name, id or UUID, as an option.
    #[arg(long = "domain", value_name = "DOMAIN", conflicts_with = "domain")]
    domain_opt: Option<String>,
}

impl std::ops::Deref for DomArg {
    type Target = str;
    fn deref(&self) -> &str {
        self.domain
            .as_deref()
            .or(self.domain_opt.as_deref())
            .expect("clap requires one")
    }
}

/// `domifaddr --source`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum AddrSource {
    /// DHCP leases.
    Lease,
    /// The guest agent.
    Agent,
    /// The host's ARP table.
    Arp,
}

pub async fn run(c: &Connect, cmd: Cmd) -> R {
    match cmd {
        Cmd::List {
            all,
            inactive,
            name,
            uuid,
        } => list(c, all, inactive, name, uuid).await,
        Cmd::Dominfo { domain } => dominfo(c, &domain).await,
        Cmd::Domstate { domain, reason } => {
            let d = lookup::domain(c, &domain).await?;
            let st = d.state(Default::default()).await.map_err(err)?;
            if reason {
                println!("{st}");
            } else {
                println!("{}", st.state);
            }
            Ok(())
        }
        Cmd::Dumpxml {
            domain,
            inactive,
            security_info,
            update_cpu,
            migratable,
        } => {
            let mut flags = DomainXmlFlags::empty();
            for (on, f) in [
                (inactive, DomainXmlFlags::INACTIVE),
                (security_info, DomainXmlFlags::SECURE),
                (update_cpu, DomainXmlFlags::UPDATE_CPU),
                (migratable, DomainXmlFlags::MIGRATABLE),
            ] {
                flags.set(f, on);
            }
            let dom = lookup::domain(c, &domain).await?;
            print!("{}", dom.xml_desc(flags).await.map_err(err)?);
            Ok(())
        }
        Cmd::Define { file } => {
            let xml = std::fs::read_to_string(&file).map_err(|e| {
                format!(
                    "Failed to read file '{}' to define domain: {e}",
                    file.display()
                )
            })?;
            let dom = c.define_domain_xml(&xml).await.map_err(|e| {
                format!(
                    "Failed to define domain from {}\nerror: {}",
                    file.display(),
                    crate::msg(&e)
                )
            })?;
            crate::say!("Domain '{}' defined from {}\n", dom.name(), file.display());
            Ok(())
        }
        Cmd::Undefine { domain } => lifecycle(c, &domain, Verb::Undefine).await,
        Cmd::Console {
            domain,
            devname,
            force,
        } => {
            let d = lookup::domain(c, &domain).await?;
            eprintln!("Connected to domain '{}'", d.name());
            eprintln!("Escape character is ^] (Ctrl + ])");
            examples::console::console(&d, devname.as_deref(), force)
                .await
                .map_err(|e| format!("error: {e}"))?;
            eprintln!();
            Ok(())
        }
        Cmd::Start { domain } => lifecycle(c, &domain, Verb::Start).await,
        Cmd::Shutdown { domain } => lifecycle(c, &domain, Verb::Shutdown).await,
        Cmd::Reboot { domain } => lifecycle(c, &domain, Verb::Reboot).await,
        Cmd::Destroy { domain } => lifecycle(c, &domain, Verb::Destroy).await,
        Cmd::Suspend { domain } => lifecycle(c, &domain, Verb::Suspend).await,
        Cmd::Resume { domain } => lifecycle(c, &domain, Verb::Resume).await,
        Cmd::Domifaddr {
            domain,
            interface,
            full,
            source,
        } => domifaddr(c, &domain, interface.as_deref(), full, source).await,
        Cmd::SnapshotList { domain } => snapshot_list(c, &domain).await,
        Cmd::SnapshotCreateAs {
            domain,
            name,
            description,
            print_xml,
            no_metadata,
            halt,
            disk_only,
            atomic,
        } => {
            let xml = libvirt_xml::DomainSnapshot {
                name,
                description,
                ..Default::default()
            }
            .to_xml();
            if print_xml {
                print!("{xml}");
                return Ok(());
            }
            let mut flags = DomainSnapshotCreateFlags::empty();
            for (on, f) in [
                (no_metadata, DomainSnapshotCreateFlags::NO_METADATA),
                (halt, DomainSnapshotCreateFlags::HALT),
                (disk_only, DomainSnapshotCreateFlags::DISK_ONLY),
                (atomic, DomainSnapshotCreateFlags::ATOMIC),
            ] {
                flags.set(f, on);
            }
            let dom = lookup::domain(c, &domain).await?;
            let snap = dom.snapshot_create_xml(&xml, flags).await.map_err(err)?;
            // virsh prints this line without a newline; its footer ends it.
            crate::say!("Domain snapshot {} created", snap.name());
            Ok(())
        }
        Cmd::SnapshotRevert {
            domain,
            snapshotname,
            current,
            running,
            paused,
            force,
        } => {
            let dom = lookup::domain(c, &domain).await?;
            let snap = match (snapshotname, current) {
                (Some(n), false) => dom.snapshot_lookup_by_name(&n, Default::default()).await,
                (None, true) => dom.snapshot_current(Default::default()).await,
                _ => return Err("specify a snapshot name or --current".into()),
            }
            .map_err(err)?;
            let mut flags = DomainSnapshotRevertFlags::empty();
            for (on, f) in [
                (running, DomainSnapshotRevertFlags::RUNNING),
                (paused, DomainSnapshotRevertFlags::PAUSED),
                (force, DomainSnapshotRevertFlags::FORCE),
            ] {
                flags.set(f, on);
            }
            snap.revert(flags).await.map_err(err)?;
            crate::say!("Domain snapshot {} reverted\n", snap.name());
            Ok(())
        }
        Cmd::QemuMonitorCommand {
            domain,
            hmp,
            pretty,
            cmd,
        } => {
            let dom = lookup::domain(c, &domain).await?;
            let flags = if hmp {
                QemuMonitorCommandFlags::HMP
            } else {
                QemuMonitorCommandFlags::DEFAULT
            };
            let out = dom
                .qemu_monitor_command(&cmd.join(" "), flags)
                .await
                .map_err(err)?;
            print_json_reply(&out, pretty && !hmp);
            Ok(())
        }
        Cmd::QemuAgentCommand {
            domain,
            timeout,
            no_wait,
            block,
            pretty,
            cmd,
        } => {
            let timeout = match (timeout, no_wait, block) {
                (Some(t), false, false) if t > 0 => t,
                (Some(_), false, false) => return Err("timeout must be positive".into()),
                (None, true, false) => agent_timeout::NOWAIT,
                (None, false, true) => agent_timeout::BLOCK,
                (None, false, false) => agent_timeout::DEFAULT,
                _ => return Err("--timeout, --async and --block are exclusive".into()),
            };
            let dom = lookup::domain(c, &domain).await?;
            let out = dom
                .qemu_agent_command(&cmd.join(" "), timeout, Default::default())
                .await
                .map_err(err)?
                .unwrap_or_default();
            if pretty {
                // virsh's agent path prints the beautifier's text with its final newline,
                // then a line end (its monitor path trims that newline).
                print!("{}\n\n", pretty_json(&out));
            } else {
                println!("{out}");
            }
            Ok(())
        }
    }
}

/// `result\n`, or with `pretty` the JSON re-indented (virsh prints that without the newline).
fn print_json_reply(out: &str, pretty: bool) {
    if pretty {
        print!("{}", pretty_json(out));
    } else {
        println!("{out}");
    }
}

/// The verbs that take only the domain.
#[derive(Clone, Copy)]
enum Verb {
    Start,
    Shutdown,
    Reboot,
    Destroy,
    Suspend,
    Resume,
    Undefine,
}

/// One of the verbs that take only the domain: `Domain 'NAME' <done>`, or virsh's
/// `Failed to <verb> domain 'NAME'`.
async fn lifecycle(c: &Connect, domain: &str, verb: Verb) -> R {
    let dom = lookup::domain(c, domain).await?;
    let (word, done, r) = match verb {
        Verb::Start => ("start", "started", dom.create().await),
        Verb::Shutdown => ("shutdown", "is being shutdown", dom.shutdown().await),
        Verb::Reboot => (
            "reboot",
            "is being rebooted",
            dom.reboot(Default::default()).await,
        ),
        Verb::Destroy => ("destroy", "destroyed", dom.destroy().await),
        Verb::Suspend => ("suspend", "suspended", dom.suspend().await),
        Verb::Resume => ("resume", "resumed", dom.resume().await),
        Verb::Undefine => (
            "undefine",
            "has been undefined",
            dom.undefine_flags(Default::default()).await,
        ),
    };
    r.map_err(|e| {
        format!(
            "Failed to {word} domain '{}'\nerror: {}",
            dom.name(),
            crate::msg(&e)
        )
    })?;
    crate::say!("Domain '{}' {done}\n", dom.name());
    Ok(())
}

/// `-` for an inactive domain, else its id.
fn id_text(dom: &Domain) -> String {
    dom.id()
        .map_or_else(|| "-".to_string(), |id| id.to_string())
}

#[allow(clippy::fn_params_excessive_bools, reason = "virsh's options")]
async fn list(c: &Connect, all: bool, inactive: bool, names: bool, uuids: bool) -> R {
    let flags = match (all, inactive) {
        (true, _) => ConnectListAllDomainsFlags::ACTIVE | ConnectListAllDomainsFlags::INACTIVE,
        (false, true) => ConnectListAllDomainsFlags::INACTIVE,
        (false, false) => ConnectListAllDomainsFlags::ACTIVE,
    };
    // One bulk call for every state where the driver has it (virsh: one call per domain).
    let mut doms = crate::stats::domains_with_state(c, flags).await?;
    // virsh's order (`virshDomainSorter`): running domains by id, then the others by name,
    // compared as C's strcasecmp does (ASCII letters folded, other bytes as they are); its
    // qsort is glibc's merge sort, stable like this one.
    doms.sort_by_cached_key(|(d, _)| {
        let name: Vec<u8> = if d.id < 0 {
            d.name.as_bytes().to_ascii_lowercase()
        } else {
            Vec::new()
        };
        (d.id < 0, d.id, name)
    });
    let id_text = |d: &libvirt_remote::proto::types::NonnullDomain| {
        if d.id < 0 {
            "-".to_string()
        } else {
            d.id.to_string()
        }
    };
    if names || uuids {
        let mut out = String::new();
        for (d, _) in &doms {
            let name = d.name.to_string_lossy();
            let _ = match (names, uuids) {
                (true, true) => writeln!(out, "{} {name}", d.uuid),
                (true, false) => writeln!(out, "{name}"),
                _ => writeln!(out, "{}", d.uuid),
            };
        }
        print!("{out}");
        return Ok(());
    }
    let mut t = Table::new(&["Id", "Name", "State"]);
    for (d, st) in doms {
        t.row(vec![
            id_text(&d),
            d.name.to_string_lossy().into_owned(),
            st.to_string(),
        ]);
    }
    print!("{}", t.render());
    Ok(())
}

async fn dominfo(c: &Connect, name: &str) -> R {
    let dom = lookup::domain(c, name).await?;
    let mut out = String::new();
    out += &field("Id:", id_text(&dom));
    out += &field("Name:", dom.name());
    out += &field("UUID:", dom.uuid());
    if let Ok(os) = dom.os_type().await {
        out += &field("OS Type:", os);
    }
    let info = dom.info().await.map_err(err)?;
    out += &field("State:", info.domain_state());
    out += &field("CPU(s):", info.nr_virt_cpu);
    if info.cpu_time != 0 {
        #[allow(clippy::cast_precision_loss, reason = "a display value")]
        let secs = info.cpu_time as f64 / 1e9;
        out += &field("CPU time:", format!("{secs:.1}s"));
    }
    if info.max_mem == u64::from(u32::MAX) {
        out += &field("Max memory:", "no limit");
    } else {
        out += &field("Max memory:", format!("{} KiB", info.max_mem));
    }
    out += &field("Used memory:", format!("{} KiB", info.memory));
    let persistent = dom.is_persistent().await;
    out += &field("Persistent:", persistent.map_or("unknown", yes_no));
    if let Ok(a) = dom.autostart().await {
        out += &field("Autostart:", if a { "enable" } else { "disable" });
    }
    let saved = dom.has_managed_save_image(Default::default()).await;
    out += &field("Managed save:", saved.map_or("unknown", yes_no));
    match c.node_security_model().await {
        Ok(m) if !m.model.to_string_lossy().is_empty() => {
            out += &field("Security model:", m.model.to_string_lossy());
            out += &field("Security DOI:", m.doi.to_string_lossy());
            let label = dom.security_label().await.map_err(err)?;
            let text = label.label.to_string_lossy();
            if !text.is_empty() {
                let mode = if label.enforcing != 0 {
                    "enforcing"
                } else {
                    "permissive"
                };
                out += &field("Security label:", format!("{text} ({mode})"));
            }
        }
        Ok(_) => {}
        Err(e)
            if e.remote()
                .is_some_and(|r| r.code == libvirt_remote::proto::ErrorCode::NO_SUPPORT) => {}
        Err(e) => return Err(err(e)),
    }
    if let Ok(msgs) = dom.messages(Default::default()).await {
        for (i, msg) in msgs.iter().enumerate() {
            out += &field(if i == 0 { "Messages:" } else { "" }, msg);
        }
    }
    print!("{out}");
    Ok(())
}

/// virsh's `domifaddr` layout (fixed columns, not a table).
async fn domifaddr(
    c: &Connect,
    domain: &str,
    only: Option<&str>,
    full: bool,
    source: AddrSource,
) -> R {
    let source = match source {
        AddrSource::Lease => InterfaceAddressesSource::LEASE,
        AddrSource::Agent => InterfaceAddressesSource::AGENT,
        AddrSource::Arp => InterfaceAddressesSource::ARP,
    };
    let dom = lookup::domain(c, domain).await?;
    let ifaces = dom
        .interface_addresses(source, Default::default())
        .await
        .map_err(err)?;
    let mut out = format!(
        " {:<10} {:<20} {:<8}     {}\n{}\n",
        "Name",
        "MAC address",
        "Protocol",
        "Address",
        "-".repeat(79)
    );
    for i in ifaces {
        let name = i.name.to_string();
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let mac = i
            .hwaddr
            .as_ref()
            .map_or("N/A".to_string(), ToString::to_string);
        if i.addrs.is_empty() {
            let _ = writeln!(out, " {name:<10} {mac:<17}    {:<12} N/A", "N/A");
        }
        for (n, a) in i.addrs.iter().enumerate() {
            let proto = match a.kind {
                IpAddrType::IPV4 => "ipv4",
                IpAddrType::IPV6 => "ipv6",
                _ => "unknown",
            };
            let (name, mac) = if n == 0 || full {
                (name.as_str(), mac.as_str())
            } else {
                ("-", "-")
            };
            let _ = writeln!(
                out,
                " {name:<10} {mac:<17}    {proto:<12} {}/{}",
                a.addr, a.prefix
            );
        }
    }
    print!("{out}");
    Ok(())
}

async fn snapshot_list(c: &Connect, domain: &str) -> R {
    let dom = lookup::domain(c, domain).await?;
    let mut snaps = dom
        .list_all_snapshots(Default::default())
        .await
        .map_err(err)?;
    snaps.sort_by_key(|s| s.name().to_string());
    let mut t = Table::new(&["Name", "Creation Time", "State"]);
    for s in snaps {
        let xml = s.xml_desc(Default::default()).await.map_err(err)?;
        let doc =
            libvirt_xml::DomainSnapshot::from_xml_with(&xml, &libvirt_xml::ParseOptions::lenient())
                .map_err(crate::text)?
                .document;
        let created = doc
            .creation_time
            .as_deref()
            .and_then(|t| t.trim().parse::<i64>().ok())
            .map(utc_time)
            .unwrap_or_default();
        let state = doc.state.map(|s| s.as_str()).unwrap_or_default();
        t.row(vec![s.name().to_string(), created, state.to_string()]);
    }
    print!("{}", t.render());
    Ok(())
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM:SS +0000` (virsh's format, in UTC).
fn utc_time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} +0000",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// JSON re-indented as libvirt (9.0, yajl's beautifier) pretty-prints it: two spaces per
/// level, `"key": value`, an empty container still broken over lines (`{`, an empty line, `}`
/// at the container's indentation). Works on the text (no reordering of keys).
fn pretty_json(s: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut chars = s.trim().chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    };
    while let Some(ch) = chars.next() {
        match ch {
            '"' => {
                out.push('"');
                while let Some(c) = chars.next() {
                    out.push(c);
                    if c == '\\' {
                        if let Some(e) = chars.next() {
                            out.push(e);
                        }
                    } else if c == '"' {
                        break;
                    }
                }
            }
            '{' | '[' => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                let close = if ch == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    // Empty: libvirt's beautifier still breaks the line after the opening
                    // bracket and before the closing one (`{\n\n  }`).
                    chars.next();
                    out.push(ch);
                    out.push('\n');
                    newline(&mut out, depth);
                    out.push(close);
                } else {
                    out.push(ch);
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(ch);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_json_indents_like_libvirt() {
        assert_eq!(
            pretty_json(r#"{"return":{"status":"running","a":[]},"id":"x, \"y\""}"#),
            "{\n  \"return\": {\n    \"status\": \"running\",\n    \"a\": [\n\n    ]\n  },\n  \"id\": \"x, \\\"y\\\"\"\n}"
        );
        // virsh's `qemu-agent-command --pretty '{"execute":"guest-ping"}'` on libvirt 9.0.
        assert_eq!(
            pretty_json(r#"{"return":{}}"#),
            "{\n  \"return\": {\n\n  }\n}"
        );
    }

    #[test]
    fn utc_times() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00 +0000");
        assert_eq!(utc_time(1_796_138_975), "2026-12-01 15:29:35 +0000");
    }
}
