//! `domstats` (virsh's, line for line) and the bulk state read behind `list`: one
//! `ConnectGetAllDomainStats` call returns every domain's state, where virsh makes one
//! `DomainGetState` call per domain.

use std::io::Write as _;

use futures::StreamExt as _;
use libvirt_remote::prelude::*;
use libvirt_remote::proto::ErrorCode;
use libvirt_remote::proto::procs::connect::{
    ConnectGetAllDomainStatsFlags, ConnectListAllDomainsFlags, DomainStatsRecord, DomainStatsTypes,
};
use libvirt_remote::proto::types::{self, TypedParamValue};

use crate::{R, err, lookup};

/// `DomainGetState` calls `list` keeps in flight when the daemon has no bulk stats call.
const STATE_CALLS_IN_FLIGHT: usize = 64;

/// `domstats`: statistics of every domain (or of the named ones), as virsh prints them.
#[derive(clap::Args)]
#[allow(clippy::struct_excessive_bools, reason = "virsh's options")]
pub struct Args {
    /// Domain state.
    #[arg(long)]
    state: bool,
    /// Physical CPU use of the domain.
    #[arg(long)]
    cpu_total: bool,
    /// Balloon statistics.
    #[arg(long)]
    balloon: bool,
    /// Virtual CPU information.
    #[arg(long)]
    vcpu: bool,
    /// Network interface statistics.
    #[arg(long)]
    interface: bool,
    /// Block device statistics.
    #[arg(long)]
    block: bool,
    /// perf event statistics.
    #[arg(long)]
    perf: bool,
    /// IOThread information.
    #[arg(long)]
    iothread: bool,
    /// Memory use.
    #[arg(long)]
    memory: bool,
    /// Dirty rate information.
    #[arg(long)]
    dirtyrate: bool,
    /// Hypervisor-specific statistics.
    #[arg(long)]
    vm: bool,
    /// Only active domains.
    #[arg(long)]
    list_active: bool,
    /// Only inactive domains.
    #[arg(long)]
    list_inactive: bool,
    /// Only persistent domains.
    #[arg(long)]
    list_persistent: bool,
    /// Only transient domains.
    #[arg(long)]
    list_transient: bool,
    /// Only running domains.
    #[arg(long)]
    list_running: bool,
    /// Only paused domains.
    #[arg(long)]
    list_paused: bool,
    /// Only shut-off domains.
    #[arg(long)]
    list_shutoff: bool,
    /// Only domains in other states.
    #[arg(long)]
    list_other: bool,
    /// Do not pretty-print the fields (virsh prints them raw either way).
    #[arg(long)]
    raw: bool,
    /// Fail when a requested group is not supported.
    #[arg(long)]
    enforce: bool,
    /// Backing chain information in the block statistics.
    #[arg(long)]
    backing: bool,
    /// Only statistics that are at hand without waiting.
    #[arg(long)]
    nowait: bool,
    /// The domains (name, id or UUID; default: every domain the filters select).
    #[arg(value_name = "DOMAIN")]
    domains: Vec<String>,
    /// A domain, as an option (repeatable).
    #[arg(long = "domain", value_name = "DOMAIN")]
    domain_opts: Vec<String>,
}

impl Args {
    /// The groups and the flags of the call, as virsh builds them from its options.
    fn call(&self) -> (DomainStatsTypes, ConnectGetAllDomainStatsFlags) {
        type F = ConnectGetAllDomainStatsFlags;
        type S = DomainStatsTypes;
        let mut stats = S::empty();
        for (on, s) in [
            (self.state, S::STATE),
            (self.cpu_total, S::CPU_TOTAL),
            (self.balloon, S::BALLOON),
            (self.vcpu, S::VCPU),
            (self.interface, S::INTERFACE),
            (self.block, S::BLOCK),
            (self.perf, S::PERF),
            (self.iothread, S::IOTHREAD),
            (self.memory, S::MEMORY),
            (self.dirtyrate, S::DIRTYRATE),
            (self.vm, S::VM),
        ] {
            stats.set(s, on);
        }
        let mut flags = F::empty();
        for (on, f) in [
            (self.list_active, F::ACTIVE),
            (self.list_inactive, F::INACTIVE),
            (self.list_persistent, F::PERSISTENT),
            (self.list_transient, F::TRANSIENT),
            (self.list_running, F::RUNNING),
            (self.list_paused, F::PAUSED),
            (self.list_shutoff, F::SHUTOFF),
            (self.list_other, F::OTHER),
            (self.enforce, F::ENFORCE_STATS),
            (self.backing, F::BACKING),
            (self.nowait, F::NOWAIT),
        ] {
            flags.set(f, on);
        }
        (stats, flags)
    }
}

/// `domstats`: one call (`virConnectGetAllDomainStats`, or `virDomainListGetStats` for named
/// domains), printed as virsh prints it.
pub async fn domstats(c: &Connect, args: Args) -> R {
    let (stats, flags) = args.call();
    let _ = args.raw; // virsh 9.0 prints raw fields with or without it
    let mut doms = Vec::new();
    for name in args.domains.iter().chain(&args.domain_opts) {
        doms.push(lookup::domain(c, name).await?);
    }
    let doms: Vec<&Domain> = doms.iter().collect();
    let records = c.all_domain_stats(&doms, stats, flags).await.map_err(err)?;
    let out = render(&records);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&out)
        .and_then(|()| stdout.flush())
        .map_err(crate::text)
}

/// virsh's `domstats` text: `Domain: 'NAME'`, then `  field=value` per parameter, an empty
/// line between domains.
fn render(records: &[DomainStatsRecord]) -> Vec<u8> {
    let mut out = Vec::with_capacity(records.len() * 128);
    for (i, r) in records.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(b"Domain: '");
        out.extend_from_slice(r.dom.name.as_bytes());
        out.extend_from_slice(b"'\n");
        for p in &r.params {
            out.extend_from_slice(b"  ");
            out.extend_from_slice(p.field.as_bytes());
            out.push(b'=');
            push_value(&mut out, &p.value);
            out.push(b'\n');
        }
    }
    out
}

/// A typed parameter's value as virsh prints it (`vshGetTypedParamValue`): integers in
/// decimal, doubles as C's `%f`, booleans as yes/no, strings as they are.
fn push_value(out: &mut Vec<u8>, v: &TypedParamValue) {
    use std::io::Write as _;
    let _ = match v {
        TypedParamValue::Int(x) => write!(out, "{x}"),
        TypedParamValue::UInt(x) => write!(out, "{x}"),
        TypedParamValue::LLong(x) => write!(out, "{x}"),
        TypedParamValue::ULLong(x) => write!(out, "{x}"),
        TypedParamValue::Double(x) => out.write_all(c_fixed(*x).as_bytes()),
        TypedParamValue::Boolean(b) => out.write_all(if *b { b"yes" } else { b"no" }),
        TypedParamValue::String(s) => out.write_all(s.as_bytes()),
        // A value type added after these (the enum is open): its Debug form.
        #[allow(unreachable_patterns, reason = "TypedParamValue may grow")]
        other => write!(out, "{other:?}"),
    };
}

/// C's `printf("%f", x)`: six decimals (both round exact halves to even), `inf`, `-inf`,
/// `nan`, `-nan`.
fn c_fixed(x: f64) -> String {
    if x.is_nan() {
        if x.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if x.is_infinite() {
        if x < 0.0 { "-inf" } else { "inf" }.to_string()
    } else {
        format!("{x:.6}")
    }
}

/// Every domain the list flags select, with its state: one `ConnectGetAllDomainStats` call
/// for the state group where the driver has it (qemu, test, …); else `ConnectListAllDomains`
/// and one `DomainGetState` per domain, [`STATE_CALLS_IN_FLIGHT`] at a time. A domain that
/// went away between the list and its state call is left out, as virsh leaves it out.
pub async fn domains_with_state(
    c: &Connect,
    flags: ConnectListAllDomainsFlags,
) -> R<Vec<(types::NonnullDomain, DomainState)>> {
    let bulk = ConnectGetAllDomainStatsFlags::from_bits_retain(flags.bits());
    match c.all_domain_stats(&[], DomainStatsTypes::STATE, bulk).await {
        Ok(records) => Ok(records
            .into_iter()
            .map(|r| {
                let state = r
                    .params
                    .iter()
                    .find(|p| p.field == "state.state")
                    .and_then(|p| match p.value {
                        TypedParamValue::Int(s) => Some(s),
                        _ => None,
                    })
                    .unwrap_or(0);
                (r.dom, DomainState::from(state))
            })
            .collect()),
        Err(e) if e.remote().is_some_and(|r| r.code == ErrorCode::NO_SUPPORT) => {
            let doms = c.list_all_domains(flags).await.map_err(err)?;
            let states: Vec<_> = futures::stream::iter(doms)
                .map(|d| async move {
                    let st = d.state(Default::default()).await;
                    (d, st)
                })
                .buffered(STATE_CALLS_IN_FLIGHT)
                .collect()
                .await;
            let mut out = Vec::with_capacity(states.len());
            for (d, st) in states {
                match st {
                    Ok(s) => out.push((d.wire().clone(), s.state)),
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(err(e)),
                }
            }
            Ok(out)
        }
        Err(e) => Err(err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_c_does() {
        assert_eq!(c_fixed(0.0), "0.000000");
        assert_eq!(c_fixed(-0.0), "-0.000000");
        assert_eq!(c_fixed(1.5), "1.500000");
        assert_eq!(c_fixed(123_456_789.123_456_78), "123456789.123457");
        // An exact half at the sixth decimal: glibc rounds it to even.
        assert_eq!(c_fixed(0.507_812_5), "0.507812");
        assert_eq!(c_fixed(0.507_813_5 + 1e-12), "0.507814");
        assert_eq!(c_fixed(f64::INFINITY), "inf");
        assert_eq!(c_fixed(f64::NEG_INFINITY), "-inf");
        assert_eq!(c_fixed(f64::NAN), "nan");
        assert_eq!(c_fixed(1e-7), "0.000000");
        assert_eq!(c_fixed(-1e-7), "-0.000000");
    }

    #[test]
    fn records_print_as_virsh_prints_them() {
        use libvirt_remote::proto::types::TypedParam;
        let rec = |name: &str, params: Vec<(&str, TypedParamValue)>| DomainStatsRecord {
            dom: types::NonnullDomain {
                name: name.into(),
                uuid: Uuid([0; 16]),
                id: -1,
            },
            params: params
                .into_iter()
                .map(|(f, value)| TypedParam {
                    field: f.into(),
                    value,
                })
                .collect(),
        };
        let out = render(&[
            rec(
                "a",
                vec![
                    ("state.state", TypedParamValue::Int(5)),
                    ("state.reason", TypedParamValue::Int(0)),
                ],
            ),
            rec(
                "b",
                vec![
                    ("cpu.time", TypedParamValue::ULLong(u64::MAX)),
                    ("vcpu.0.halted", TypedParamValue::Boolean(true)),
                    ("dirtyrate.megabytes_per_second", TypedParamValue::LLong(-3)),
                    ("x.d", TypedParamValue::Double(2.25)),
                    ("x.u", TypedParamValue::UInt(7)),
                    ("block.0.name", TypedParamValue::String("vda".into())),
                ],
            ),
            rec("c", vec![]),
        ]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Domain: 'a'\n  state.state=5\n  state.reason=0\n\n\
             Domain: 'b'\n  cpu.time=18446744073709551615\n  vcpu.0.halted=yes\n  \
             dirtyrate.megabytes_per_second=-3\n  x.d=2.250000\n  x.u=7\n  block.0.name=vda\n\n\
             Domain: 'c'\n"
        );
        assert!(render(&[]).is_empty());
    }
}
