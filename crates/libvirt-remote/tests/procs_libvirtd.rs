//! The procedure table against a real, private libvirtd 9.0 and its `test:///default` driver:
//! one daemon, one connection, every procedure the test driver implements (read-only ones on
//! the driver's default objects, mutating ones on objects this test creates), each answer
//! checked for sense (the name returned matches, a list holds the default object, a value set
//! is what the next get returns). Nothing is mocked.
//!
//! The calls run in sequence and never stop at the first problem: every failed call and every
//! failed check is collected and reported together, with the count of distinct procedures
//! that answered sensibly.
#![cfg(feature = "client")]

use std::collections::BTreeSet;
use std::fmt::Debug;

use bytes::Bytes;
use libvirt_remote::client::{Client, ConnectOptions, DownloadOptions, UploadOptions};
use libvirt_remote::conn::CallError;
use libvirt_remote::proto::names::{
    DomainState, MetadataType, RunningReason, SecretUsageType, StateReason, StoragePoolState,
};
use libvirt_remote::proto::procs::common::{
    FlagsArgs, ListAllArgs, MaxNamesArgs, NameArgs, NameFlagsArgs, UuidArgs, XmlArgs, XmlFlagsArgs,
};
use libvirt_remote::proto::procs::connect::{
    ConnectFlags, ConnectGetAllDomainStatsFlags, DomainStatsTypes,
};
use libvirt_remote::proto::procs::domain::DomainModificationImpact;
use libvirt_remote::proto::procs::network::NetworkUpdateFlags;
use libvirt_remote::proto::procs::qemu::{QemuMonitorCommandFlags, QemuMonitorEventRegisterFlags};
use libvirt_remote::proto::procs::snapshot::DomainSnapshotListFlags;
use libvirt_remote::proto::procs::{
    connect, domain, domain_tune, interface, network, node, nodedev, secret, snapshot, storage,
};
use libvirt_remote::proto::types::typed_param_flags::STRING_OKAY;
use libvirt_remote::proto::types::{
    NonnullDomain, NonnullDomainCheckpoint, NonnullDomainSnapshot, NonnullInterface,
    NonnullNetwork, NonnullSecret, NonnullStoragePool, NonnullStorageVol, TypedParam,
    TypedParamValue,
};
use libvirt_remote::proto::{ErrorCode, LibvirtVersion, Procedure, RemoteError};
use testbed::libvirtd::Libvirtd;

/// Procedures that answered sensibly, and everything that went wrong.
struct Run<'a> {
    c: &'a Client,
    /// `(program, procedure)`: the QEMU program's numbers overlap the remote program's.
    answered: BTreeSet<(u32, i32)>,
    refused: BTreeSet<(u32, i32)>,
    problems: Vec<String>,
}

impl<'a> Run<'a> {
    fn new(c: &'a Client) -> Self {
        Self {
            c,
            answered: BTreeSet::new(),
            refused: BTreeSet::new(),
            problems: Vec::new(),
        }
    }

    /// Call `P`; the answer must satisfy `sensible` (described by `what`).
    async fn expect<P: Procedure>(
        &mut self,
        args: P::Args,
        what: &str,
        sensible: impl FnOnce(&P::Ret) -> bool,
    ) -> Option<P::Ret>
    where
        P::Ret: Debug,
    {
        match self.c.call::<P>(&args).await {
            Ok(ret) => {
                if sensible(&ret) {
                    self.answered.insert((P::PROGRAM, P::NUMBER));
                } else {
                    self.problems.push(format!(
                        "{} ({}): expected {what}, got {ret:?}",
                        P::NAME,
                        P::NUMBER
                    ));
                }
                Some(ret)
            }
            Err(e) => {
                self.problems
                    .push(format!("{} ({}) failed: {e}", P::NAME, P::NUMBER));
                None
            }
        }
    }

    /// Call `P` where only success is checked here (the effect is checked by a later call).
    async fn done<P: Procedure>(&mut self, args: P::Args) -> Option<P::Ret>
    where
        P::Ret: Debug,
    {
        self.expect::<P>(args, "success", |_| true).await
    }

    /// Register events with `R` (a callback id back), then deregister them with `D`.
    async fn register_and_deregister<R, D>(&mut self, args: R::Args)
    where
        R: Procedure<Ret = libvirt_remote::proto::procs::common::CallbackIdRet>,
        D: Procedure<Args = libvirt_remote::proto::procs::common::CallbackIdArgs>,
        D::Ret: Debug,
    {
        let registered = self
            .expect::<R>(args, "a callback id", |r| r.callback_id >= 0)
            .await;
        if let Some(r) = registered {
            let args = libvirt_remote::proto::procs::common::CallbackIdArgs {
                callback_id: r.callback_id,
            };
            self.done::<D>(args).await;
        }
    }

    /// Call `P` where the daemon must refuse with an error `expected` accepts.
    async fn refuse<P: Procedure>(
        &mut self,
        args: P::Args,
        what: &str,
        expected: impl FnOnce(&RemoteError) -> bool,
    ) where
        P::Ret: Debug,
    {
        match self.c.call::<P>(&args).await {
            Ok(ret) => self.problems.push(format!(
                "{} ({}): expected the error {what}, got {ret:?}",
                P::NAME,
                P::NUMBER
            )),
            Err(e) => match e.remote() {
                Some(r) if expected(r) => {
                    self.refused.insert((P::PROGRAM, P::NUMBER));
                }
                _ => self.problems.push(format!(
                    "{} ({}): expected the error {what}, got {e}",
                    P::NAME,
                    P::NUMBER
                )),
            },
        }
    }

    /// Take over what a run on another connection found.
    fn absorb(&mut self, other: Run<'_>) {
        self.answered.extend(other.answered);
        self.refused.extend(other.refused);
        self.problems.extend(other.problems);
    }

    /// Record a procedure whose answer was checked outside [`Run::expect`] (streams).
    fn record<P: Procedure>(&mut self, ok: bool, what: impl std::fmt::Display) {
        if ok {
            self.answered.insert((P::PROGRAM, P::NUMBER));
        } else {
            self.problems
                .push(format!("{} ({}): {what}", P::NAME, P::NUMBER));
        }
    }

    fn check(&mut self, ok: bool, what: impl std::fmt::Display) {
        if !ok {
            self.problems.push(format!("check failed: {what}"));
        }
    }
}

fn tp(field: &str, value: TypedParamValue) -> TypedParam {
    TypedParam {
        field: field.into(),
        value,
    }
}

fn param<'p>(params: &'p [TypedParam], field: &str) -> Option<&'p TypedParamValue> {
    params.iter().find(|p| p.field == field).map(|p| &p.value)
}

fn refuses_string_okay(e: &RemoteError) -> bool {
    e.code == ErrorCode::INVALID_ARG && e.message().contains("unsupported flags (0x4)")
}

fn text(s: &libvirt_remote::wire::xdr::LvString) -> String {
    s.to_string_lossy().into_owned()
}

const TEST_UUID: &str = "6695eb01-f6a4-8304-79aa-97f2502e193f";
const LIVE: u32 = 1;

/// A domain and flags of any family (`DomainFlagsArgs` is generic over it).
fn flags<F>(d: &NonnullDomain, flags: F) -> domain::DomainFlagsArgs<F> {
    domain::DomainFlagsArgs {
        dom: d.clone(),
        flags,
    }
}

/// The arguments that read `dom`'s title.
fn title_of(dom: &NonnullDomain) -> domain::DomainGetMetadataArgs {
    domain::DomainGetMetadataArgs {
        dom: dom.clone(),
        kind: MetadataType::TITLE,
        uri: None,
        flags: Default::default(),
    }
}

/// The test driver's domain `test`, looked up by name.
async fn lookup_test(c: &Client) -> NonnullDomain {
    c.call::<domain::DomainLookupByName>(&NameArgs {
        name: "test".into(),
    })
    .await
    .unwrap()
    .dom
}

fn domain_xml(name: &str) -> String {
    format!(
        "<domain type='test'><name>{name}</name>\
         <memory unit='KiB'>1048576</memory><currentMemory unit='KiB'>524288</currentMemory>\
         <vcpu current='1'>2</vcpu><os><type arch='i686'>hvm</type></os>\
         <devices>\
         <disk type='file' device='disk'><source file='/guest/{name}.img'/>\
         <target dev='vda' bus='virtio'/></disk>\
         <interface type='network'><mac address='52:54:00:4c:56:01'/>\
         <source network='default'/><target dev='lvnet0'/></interface>\
         <memballoon model='virtio'/>\
         </devices></domain>"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_driver_answers_every_procedure_it_implements() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .expect("connect to the test driver");
    let mut run = Run::new(&c);
    let dir = d.dir().to_path_buf();

    connection_facts(&mut run).await;
    let test = test_domain(&mut run).await;
    if let Some(test) = &test {
        domain_lifecycle(&mut run, test, &dir).await;
    }
    networks(&mut run).await;
    interfaces(&mut run).await;
    storage_pools(&mut run).await;
    host(&mut run).await;
    node_devices(&mut run).await;
    event_registrations(&mut run, test.as_ref()).await;
    other_programs(&mut run, test.as_ref()).await;

    // The test driver has no secret driver, and libvirt does not lend it the daemon's: the
    // secret calls (and a few storage and host calls the test driver lacks) go to the same
    // daemon's qemu:///session connection, which needs no qemu probing for them.
    let s = Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .expect("connect to the session driver");
    let mut session = Run::new(&s);
    secrets(&mut session).await;
    session_storage_and_host(&mut session, &d).await;
    session_qemu_program(&mut session).await;
    run.absorb(session);

    // Last: a second open is refused, and close ends the connection cleanly.
    run.refuse::<connect::ConnectOpen>(
        connect::ConnectOpenArgs {
            name: Some("test:///default".into()),
            flags: ConnectFlags::empty(),
        },
        "connection already open",
        |e| e.message().contains("already open"),
    )
    .await;
    run.done::<connect::ConnectClose>(()).await;

    let answered = run.answered.len();
    let refused: BTreeSet<(u32, i32)> = run.refused.difference(&run.answered).copied().collect();
    let total: BTreeSet<(u32, i32)> = run.answered.union(&run.refused).copied().collect();
    eprintln!(
        "{} distinct procedures answered sensibly, {} more refused as expected ({:?})",
        answered,
        refused.len(),
        refused
    );
    assert!(
        run.problems.is_empty(),
        "{} problems ({} procedures fine):\n{}",
        run.problems.len(),
        total.len(),
        run.problems.join("\n")
    );
    assert!(
        total.len() >= 250,
        "only {} distinct procedures called",
        total.len()
    );
}

async fn connection_facts(run: &mut Run<'_>) {
    use connect::*;
    run.expect::<AuthList>((), "no authentication on the session socket", |r| {
        r.types == [auth_type::NONE]
    })
    .await;
    run.expect::<ConnectSupportsFeature>(
        ConnectSupportsFeatureArgs {
            feature: libvirt_remote::proto::FEATURE_REMOTE_EVENT_CALLBACK,
        },
        "callback events supported",
        |r| r.supported == 1,
    )
    .await;
    run.expect::<ConnectGetType>((), "TEST", |r| r.kind == "TEST")
        .await;
    run.expect::<ConnectGetVersion>((), "a version", |r| r.hv_ver > 0)
        .await;
    run.expect::<ConnectGetLibVersion>((), "libvirt 9.x", |r| {
        LibvirtVersion::from_number(r.lib_ver).major == 9
    })
    .await;
    run.expect::<ConnectGetUri>((), "test:///default", |r| r.uri == "test:///default")
        .await;
    run.expect::<ConnectGetHostname>((), "a host name", |r| !r.hostname.is_empty())
        .await;
    run.expect::<ConnectIsSecure>((), "a unix socket is secure", |r| r.secure == 1)
        .await;
    run.expect::<ConnectGetMaxVcpus>(
        ConnectGetMaxVcpusArgs {
            kind: Some("test".into()),
        },
        "a vCPU limit",
        |r| r.max_vcpus > 0,
    )
    .await;
    run.expect::<ConnectGetCapabilities>((), "capabilities XML", |r| {
        text(&r.capabilities).contains("<capabilities>")
    })
    .await;
    run.expect::<ConnectGetSysinfo>(
        FlagsArgs {
            flags: Default::default(),
        },
        "sysinfo XML",
        |r| text(&r.sysinfo).contains("<sysinfo"),
    )
    .await;
    run.expect::<ConnectGetCpuModelNames>(
        ConnectGetCpuModelNamesArgs {
            arch: "x86_64".into(),
            need_results: 1,
            flags: Default::default(),
        },
        "x86 models including pentium",
        |r| r.ret > 0 && r.models.iter().any(|m| *m == "pentium"),
    )
    .await;
    let cpu = "<cpu><arch>x86_64</arch><model>pentium</model></cpu>";
    run.expect::<ConnectBaselineCpu>(
        ConnectBaselineCpuArgs {
            xml_cpus: vec![cpu.into(), cpu.into()],
            flags: ConnectBaselineCpuFlags::empty(),
        },
        "a baseline CPU",
        |r| text(&r.cpu).contains("<cpu"),
    )
    .await;
    run.expect::<ConnectNumOfDomains>((), "the running test domain", |r| r.num >= 1)
        .await;
    run.expect::<ConnectListDomains>(ConnectListDomainsArgs { maxids: 64 }, "id 1 (test)", |r| {
        r.ids.contains(&1)
    })
    .await;
    run.expect::<ConnectListAllDomains>(
        ConnectListAllDomainsArgs {
            need_results: 1,
            flags: ConnectListAllDomainsFlags::empty(),
        },
        "the test domain",
        |r| r.domains.iter().any(|d| d.name == "test") && r.ret as usize == r.domains.len(),
    )
    .await;
    run.expect::<ConnectRegisterCloseCallback>((), "success", |()| true)
        .await;
    run.expect::<ConnectUnregisterCloseCallback>((), "success", |()| true)
        .await;
}

async fn test_domain(run: &mut Run<'_>) -> Option<NonnullDomain> {
    use domain::*;
    let test = run
        .expect::<DomainLookupByName>(
            NameArgs {
                name: "test".into(),
            },
            "test",
            |r| r.dom.name == "test" && r.dom.uuid.to_string() == TEST_UUID,
        )
        .await?
        .dom;
    let dom = || DomainArgs { dom: test.clone() };
    run.expect::<DomainLookupByUuid>(UuidArgs { uuid: test.uuid }, "test", |r| {
        r.dom.name == "test"
    })
    .await;
    run.expect::<DomainLookupById>(DomainLookupByIdArgs { id: test.id }, "test", |r| {
        r.dom.name == "test"
    })
    .await;
    run.expect::<DomainGetXmlDesc>(flags(&test, DomainXmlFlags::empty()), "its XML", |r| {
        text(&r.xml).contains("<name>test</name>")
    })
    .await;
    run.expect::<DomainGetInfo>(dom(), "running, 8 GiB max, 2 vCPUs", |r| {
        r.state == DomainState::RUNNING && r.max_mem == 8_388_608 && r.nr_virt_cpu == 2
    })
    .await;
    run.expect::<DomainGetState>(flags(&test, 0), "running", |r| {
        r.state == DomainState::RUNNING
    })
    .await;
    run.expect::<DomainGetMaxMemory>(dom(), "8 GiB", |r| r.memory == 8_388_608)
        .await;
    run.expect::<DomainGetMaxVcpus>(dom(), "at least 2", |r| r.num >= 2)
        .await;
    // The test driver answers a fixed "linux", whatever the XML says.
    run.expect::<DomainGetOsType>(dom(), "linux", |r| r.kind == "linux")
        .await;
    run.expect::<DomainGetAutostart>(dom(), "not autostarted", |r| r.autostart == 0)
        .await;
    run.expect::<DomainIsActive>(dom(), "active", |r| r.active == 1)
        .await;
    run.expect::<DomainIsPersistent>(dom(), "persistent", |r| r.persistent == 1)
        .await;
    run.expect::<DomainIsUpdated>(dom(), "not updated", |r| r.updated == 0)
        .await;
    run.expect::<DomainGetVcpus>(
        DomainGetVcpusArgs {
            dom: test.clone(),
            maxinfo: 2,
            maplen: 1,
        },
        "2 vCPUs with maps",
        |r| r.info.len() == 2 && r.cpumaps.len() == 2,
    )
    .await;
    run.expect::<DomainGetVcpusFlags>(flags(&test, DomainVcpuFlags::empty()), "2 vCPUs", |r| {
        r.num == 2
    })
    .await;
    run.expect::<DomainGetSchedulerType>(dom(), "fair, 1 parameter", |r| {
        r.kind == "fair" && r.nparams == 1
    })
    .await;
    // libvirt's API layer adds VIR_TYPED_PARAM_STRING_OKAY to these getters' flags in the
    // daemon, and the 9.0 test driver refuses that flag: the calls reach the driver and come
    // back as a typed error.
    run.refuse::<DomainGetSchedulerParametersFlags>(
        DomainGetParamsArgs {
            dom: test.clone(),
            nparams: 1,
            flags: Default::default(),
        },
        "the test driver refusing STRING_OKAY",
        refuses_string_okay,
    )
    .await;
    run.refuse::<domain_tune::DomainGetLaunchSecurityInfo>(
        flags(&test, 0),
        "the test driver refusing STRING_OKAY",
        refuses_string_okay,
    )
    .await;
    run.expect::<domain_tune::DomainGetSchedulerParameters>(
        domain_tune::DomainGetSchedulerParametersArgs {
            dom: test.clone(),
            nparams: 1,
        },
        "weight 50",
        |r| param(&r.params, "weight") == Some(&TypedParamValue::UInt(50)),
    )
    .await;
    run.expect::<DomainBlockStats>(
        DomainBlockStatsArgs {
            dom: test.clone(),
            path: "vda".into(),
        },
        "counters",
        |r| r.rd_req >= 0 && r.wr_bytes >= 0,
    )
    .await;
    run.expect::<DomainInterfaceStats>(
        DomainInterfaceStatsArgs {
            dom: test.clone(),
            device: "testnet0".into(),
        },
        "counters",
        |r| r.rx_bytes >= 0 && r.tx_packets >= 0,
    )
    .await;
    run.expect::<DomainMemoryStats>(
        DomainMemoryStatsArgs {
            dom: test.clone(),
            max_stats: 16,
            flags: Default::default(),
        },
        "some statistics",
        |r| !r.stats.is_empty(),
    )
    .await;
    run.expect::<DomainMemoryPeek>(
        DomainMemoryPeekArgs {
            dom: test.clone(),
            offset: 0,
            size: 32,
            flags: 1, // VIR_MEMORY_VIRTUAL
        },
        "32 bytes",
        |r| r.buffer.len() == 32,
    )
    .await;
    run.expect::<DomainGetBlockInfo>(
        DomainGetBlockInfoArgs {
            dom: test.clone(),
            path: "vda".into(),
            flags: Default::default(),
        },
        "sizes",
        |r| r.capacity > 0 && r.physical > 0,
    )
    .await;
    run.expect::<DomainGetControlInfo>(flags(&test, 0), "control OK", |r| r.state == 0)
        .await;
    run.expect::<DomainGetSecurityLabel>(dom(), "a label reply", |r| r.enforcing >= 0)
        .await;
    run.expect::<DomainGetHostname>(
        flags(&test, DomainGetHostnameFlags::empty()),
        "a host name",
        |r| !r.hostname.is_empty(),
    )
    .await;
    run.expect::<DomainGetTime>(flags(&test, 0), "a time", |r| r.seconds > 0)
        .await;
    run.expect::<DomainGetFsInfo>(flags(&test, 0), "file systems", |r| {
        r.ret as usize == r.info.len() && !r.info.is_empty()
    })
    .await;
    run.expect::<DomainInterfaceAddresses>(
        DomainInterfaceAddressesArgs {
            dom: test.clone(),
            source: InterfaceAddressesSource::LEASE,
            flags: Default::default(),
        },
        "an address of testnet0",
        |r| r.ifaces.iter().any(|i| !i.addrs.is_empty()),
    )
    .await;
    run.expect::<DomainGetDiskErrors>(
        DomainGetDiskErrorsArgs {
            dom: test.clone(),
            maxerrors: 16,
            flags: Default::default(),
        },
        "a consistent count",
        |r| r.nerrors as usize == r.errors.len(),
    )
    .await;
    run.expect::<DomainGetMessages>(flags(&test, 0), "a list", |r| r.msgs.len() < 100)
        .await;
    run.expect::<DomainHasManagedSaveImage>(flags(&test, 0), "none", |r| r.result == 0)
        .await;
    let cpu = run
        .expect::<DomainGetCpuStats>(
            DomainGetCpuStatsArgs {
                dom: test.clone(),
                nparams: 0,
                start_cpu: -1,
                ncpus: 1,
                flags: Default::default(),
            },
            "a parameter count",
            |r| r.nparams > 0,
        )
        .await;
    if let Some(cpu) = cpu {
        match run
            .c
            .call::<DomainGetCpuStats>(&DomainGetCpuStatsArgs {
                dom: test.clone(),
                nparams: cpu.nparams as u32,
                start_cpu: -1,
                ncpus: 1,
                flags: Default::default(),
            })
            .await
        {
            Ok(r) => run.check(
                param(&r.params, "cpu_time").is_some(),
                format!("domain CPU totals hold cpu_time: {r:?}"),
            ),
            Err(e) => run.check(false, format!("DomainGetCpuStats with a count: {e}")),
        }
    }
    run.expect::<connect::ConnectGetAllDomainStats>(
        connect::ConnectGetAllDomainStatsArgs {
            doms: vec![test.clone()],
            stats: DomainStatsTypes::STATE, // VIR_DOMAIN_STATS_STATE
            flags: ConnectGetAllDomainStatsFlags::empty(),
        },
        "the state of test",
        |r| {
            r.ret_stats.len() == 1
                && r.ret_stats[0].dom.name == "test"
                && param(&r.ret_stats[0].params, "state.state")
                    == Some(&TypedParamValue::Int(DomainState::RUNNING.0))
        },
    )
    .await;
    match run
        .c
        .download::<DomainScreenshot>(&DomainScreenshotArgs {
            dom: test.clone(),
            screen: 0,
            flags: Default::default(),
        })
        .await
    {
        Ok(dl) => {
            let mime = dl.open_reply::<DomainScreenshot>();
            let mut png = Vec::new();
            let r = dl.write_to(&mut png).await;
            run.record::<DomainScreenshot>(
                r.is_ok()
                    && png.starts_with(b"\x89PNG")
                    && mime
                        .as_ref()
                        .is_ok_and(|m| m.mime.as_ref().is_some_and(|m| *m == "image/png")),
                format!("a PNG image, got {mime:?}, {r:?} and {} bytes", png.len()),
            );
        }
        Err(e) => run.record::<DomainScreenshot>(false, e),
    }
    run.expect::<snapshot::DomainSnapshotNum>(
        flags(&test, DomainSnapshotListFlags::empty()),
        "no snapshots",
        |r| r.num == 0,
    )
    .await;
    run.expect::<snapshot::DomainSnapshotListNames>(
        snapshot::DomainSnapshotListNamesArgs {
            dom: test.clone(),
            maxnames: 16,
            flags: DomainSnapshotListFlags::empty(),
        },
        "no snapshots",
        |r| r.names.is_empty(),
    )
    .await;
    run.expect::<snapshot::DomainHasCurrentSnapshot>(flags(&test, 0), "none", |r| r.result == 0)
        .await;
    run.expect::<snapshot::DomainListAllCheckpoints>(
        snapshot::DomainListAllCheckpointsArgs {
            dom: test.clone(),
            need_results: 1,
            flags: Default::default(),
        },
        "no checkpoints",
        |r| r.ret == 0 && r.checkpoints.is_empty(),
    )
    .await;
    run.refuse::<DomainGetMetadata>(title_of(&test), "no title set", RemoteError::is_no_metadata)
        .await;
    Some(test)
}

/// Everything that changes a domain, on domains this test defines.
#[allow(clippy::too_many_lines)]
async fn domain_lifecycle(run: &mut Run<'_>, test: &NonnullDomain, dir: &std::path::Path) {
    use domain::*;
    let name = "lv-procs";
    let Some(ret) = run
        .expect::<DomainDefineXml>(
            XmlArgs {
                xml: domain_xml(name).into(),
            },
            "the defined domain",
            |r| r.dom.name == name && r.dom.id == -1,
        )
        .await
    else {
        return;
    };
    let mut d = ret.dom;
    let dom = |d: &NonnullDomain| DomainArgs { dom: d.clone() };
    run.expect::<connect::ConnectNumOfDefinedDomains>((), "lv-procs", |r| r.num >= 1)
        .await;
    run.expect::<connect::ConnectListDefinedDomains>(
        MaxNamesArgs { maxnames: 64 },
        "lv-procs",
        |r| r.names.iter().any(|n| *n == name),
    )
    .await;
    run.expect::<DomainIsActive>(dom(&d), "inactive", |r| r.active == 0)
        .await;
    run.expect::<DomainDefineXmlFlags>(
        XmlFlagsArgs {
            xml: domain_xml(name)
                .replace("</name>", &format!("</name><uuid>{}</uuid>", d.uuid))
                .into(),
            flags: DomainDefineFlags::VALIDATE,
        },
        "the same domain redefined",
        |r| r.dom.uuid == d.uuid,
    )
    .await;

    // Definition-time settings.
    run.done::<DomainSetAutostart>(DomainSetAutostartArgs {
        dom: d.clone(),
        autostart: 1,
    })
    .await;
    run.expect::<DomainGetAutostart>(dom(&d), "autostart set", |r| r.autostart == 1)
        .await;
    run.done::<DomainSetMetadata>(DomainSetMetadataArgs {
        dom: d.clone(),
        kind: MetadataType::TITLE,
        metadata: Some("procedure table".into()),
        key: None,
        uri: None,
        flags: DomainModificationImpact::empty(),
    })
    .await;
    run.expect::<DomainGetMetadata>(title_of(&d), "the title just set", |r| {
        r.metadata == "procedure table"
    })
    .await;
    run.done::<DomainSetMaxMemory>(DomainSetMemoryArgs {
        dom: d.clone(),
        memory: 2_097_152,
    })
    .await;
    run.expect::<DomainGetMaxMemory>(dom(&d), "the new maximum", |r| r.memory == 2_097_152)
        .await;
    run.done::<DomainSetMemoryFlags>(DomainSetMemoryFlagsArgs {
        dom: d.clone(),
        memory: 786_432,
        flags: DomainMemoryModFlags::CONFIG,
    })
    .await;
    run.done::<DomainSetVcpusFlags>(DomainSetVcpusFlagsArgs {
        dom: d.clone(),
        nvcpus: 2,
        flags: DomainVcpuFlags::CONFIG,
    })
    .await;
    run.expect::<DomainGetVcpusFlags>(
        flags(&d, DomainVcpuFlags::CONFIG),
        "2 configured vCPUs",
        |r| r.num == 2,
    )
    .await;
    run.done::<DomainSetLifecycleAction>(DomainSetLifecycleActionArgs {
        dom: d.clone(),
        kind: 0,   // VIR_DOMAIN_LIFECYCLE_POWEROFF
        action: 1, // VIR_DOMAIN_LIFECYCLE_ACTION_RESTART
        flags: DomainModificationImpact::CONFIG,
    })
    .await;
    run.expect::<DomainGetXmlDesc>(
        flags(&d, DomainXmlFlags::INACTIVE),
        "the new settings",
        |r| {
            let x = text(&r.xml);
            x.contains("<on_poweroff>restart</on_poweroff>") && x.contains(">786432<")
        },
    )
    .await;
    // The test driver validates scheduler parameters but keeps none (its weight is a fixed
    // 50), and takes no flags.
    run.done::<DomainSetSchedulerParametersFlags>(DomainSetSchedulerParametersFlagsArgs {
        dom: d.clone(),
        params: vec![tp("weight", TypedParamValue::UInt(10))],
        flags: DomainModificationImpact::empty(),
    })
    .await;
    run.expect::<DomainRename>(
        DomainRenameArgs {
            dom: d.clone(),
            new_name: Some("lv-procs-2".into()),
            flags: Default::default(),
        },
        "renamed",
        |r| r.retcode == 0,
    )
    .await;
    if let Some(r) = run
        .expect::<DomainLookupByName>(
            NameArgs {
                name: "lv-procs-2".into(),
            },
            "the renamed domain",
            |r| r.dom.uuid == d.uuid,
        )
        .await
    {
        d = r.dom;
    }

    // Running.
    run.done::<DomainCreate>(dom(&d)).await;
    if let Some(r) = run
        .expect::<DomainLookupByUuid>(UuidArgs { uuid: d.uuid }, "running", |r| r.dom.id > 0)
        .await
    {
        d = r.dom;
    }
    run.expect::<DomainGetState>(flags(&d, 0), "running", |r| r.state == DomainState::RUNNING)
        .await;
    run.done::<DomainSuspend>(dom(&d)).await;
    run.expect::<DomainGetState>(flags(&d, 0), "paused", |r| r.state == DomainState::PAUSED)
        .await;
    run.done::<DomainResume>(dom(&d)).await;
    run.expect::<DomainGetInfo>(dom(&d), "running again", |r| {
        r.state == DomainState::RUNNING
    })
    .await;
    run.done::<DomainSetMemory>(DomainSetMemoryArgs {
        dom: d.clone(),
        memory: 655_360,
    })
    .await;
    run.expect::<DomainGetInfo>(dom(&d), "the new balloon size", |r| r.memory == 655_360)
        .await;
    run.done::<DomainSetVcpus>(DomainSetVcpusArgs {
        dom: d.clone(),
        nvcpus: 2,
    })
    .await;
    run.expect::<DomainGetVcpusFlags>(flags(&d, DomainVcpuFlags::LIVE), "2 live vCPUs", |r| {
        r.num == 2
    })
    .await;
    run.done::<DomainPinVcpu>(DomainPinVcpuArgs {
        dom: d.clone(),
        vcpu: 0,
        cpumap: Bytes::from_static(&[0b01]),
    })
    .await;
    run.done::<DomainPinVcpuFlags>(DomainPinVcpuFlagsArgs {
        dom: d.clone(),
        vcpu: 1,
        cpumap: Bytes::from_static(&[0b10]),
        flags: DomainModificationImpact::empty(),
    })
    .await;
    run.expect::<domain_tune::DomainGetVcpuPinInfo>(
        domain_tune::DomainGetVcpuPinInfoArgs {
            dom: d.clone(),
            ncpumaps: 2,
            maplen: 1,
            flags: DomainModificationImpact::LIVE,
        },
        "the pins just set",
        |r| r.num == 2 && r.cpumaps[..] == [0b01, 0b10],
    )
    .await;
    run.done::<domain_tune::DomainPinEmulator>(domain_tune::DomainPinEmulatorArgs {
        dom: d.clone(),
        cpumap: Bytes::from_static(&[0b10]),
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.expect::<domain_tune::DomainGetEmulatorPinInfo>(
        domain_tune::DomainGetEmulatorPinInfoArgs {
            dom: d.clone(),
            maplen: 1,
            flags: DomainModificationImpact::LIVE,
        },
        "the emulator pin just set",
        |r| r.ret == 1 && r.cpumaps[..] == [0b10],
    )
    .await;
    iothreads(run, &d).await;
    tunables(run, &d).await;
    run.done::<domain_tune::DomainSetMemoryStatsPeriod>(
        domain_tune::DomainSetMemoryStatsPeriodArgs {
            dom: d.clone(),
            period: 5,
            flags: DomainModificationImpact::LIVE,
        },
    )
    .await;
    run.expect::<DomainGetXmlDesc>(
        flags(&d, DomainXmlFlags::empty()),
        "the stats period",
        |r| text(&r.xml).contains("<stats period='5'/>"),
    )
    .await;
    run.done::<DomainSetTime>(DomainSetTimeArgs {
        dom: d.clone(),
        seconds: 1_700_000_000,
        nseconds: 0,
        flags: Default::default(),
    })
    .await;
    run.done::<DomainSendKey>(DomainSendKeyArgs {
        dom: d.clone(),
        codeset: 0, // VIR_KEYCODE_SET_LINUX
        holdtime: 10,
        keycodes: vec![28], // KEY_ENTER
        flags: Default::default(),
    })
    .await;
    run.done::<DomainSendProcessSignal>(DomainSendProcessSignalArgs {
        dom: d.clone(),
        pid_value: 1,
        signum: 0, // VIR_DOMAIN_PROCESS_SIGNAL_NOP
        flags: Default::default(),
    })
    .await;
    run.done::<DomainInjectNmi>(flags(&d, 0)).await;
    run.done::<DomainReset>(flags(&d, 0)).await;
    run.done::<DomainFsTrim>(DomainFsTrimArgs {
        dom: d.clone(),
        mount_point: None,
        minimum: 0,
        flags: Default::default(),
    })
    .await;
    run.expect::<DomainFsFreeze>(
        DomainFsFreezeArgs {
            dom: d.clone(),
            mountpoints: vec![],
            flags: Default::default(),
        },
        "frozen file systems",
        |r| r.filesystems > 0,
    )
    .await;
    run.expect::<DomainFsThaw>(
        DomainFsFreezeArgs {
            dom: d.clone(),
            mountpoints: vec![],
            flags: Default::default(),
        },
        "thawed file systems",
        |r| r.filesystems > 0,
    )
    .await;
    run.done::<DomainSetUserPassword>(DomainSetUserPasswordArgs {
        dom: d.clone(),
        user: Some("root".into()),
        password: Some("secret".into()),
        flags: Default::default(),
    })
    .await;
    snapshots(run, &d).await;
    checkpoints(run, &d).await;
    run.done::<DomainReboot>(flags(&d, DomainRebootFlagValues::empty()))
        .await;
    run.expect::<DomainGetState>(flags(&d, 0), "running after reboot", |r| {
        r.state == DomainState::RUNNING
    })
    .await;

    // Saving and restoring.
    run.done::<DomainManagedSave>(flags(&d, DomainSaveRestoreFlags::empty()))
        .await;
    run.expect::<DomainHasManagedSaveImage>(flags(&d, 0), "an image", |r| r.result == 1)
        .await;
    run.done::<DomainManagedSaveRemove>(flags(&d, 0)).await;
    run.expect::<DomainHasManagedSaveImage>(flags(&d, 0), "no image", |r| r.result == 0)
        .await;
    // The test driver takes no start flags.
    run.done::<DomainCreateWithFlags>(flags(&d, DomainCreateFlags::empty()))
        .await;
    run.expect::<DomainGetState>(flags(&d, 0), "started", |r| r.state == DomainState::RUNNING)
        .await;
    let image = dir.join("lv-procs.save").display().to_string();
    run.done::<DomainSave>(DomainSaveArgs {
        dom: d.clone(),
        to: image.as_str().into(),
    })
    .await;
    run.expect::<DomainIsActive>(dom(&d), "stopped by save", |r| r.active == 0)
        .await;
    let saved = run
        .expect::<DomainSaveImageGetXmlDesc>(
            DomainSaveImageGetXmlDescArgs {
                file: image.as_str().into(),
                flags: DomainXmlFlags::empty(),
            },
            "the saved domain",
            |r| text(&r.xml).contains("<name>lv-procs-2</name>"),
        )
        .await;
    if let Some(saved) = saved {
        let edited = text(&saved.xml).replace("procedure table", "saved title");
        run.done::<DomainSaveImageDefineXml>(DomainSaveImageDefineXmlArgs {
            file: image.as_str().into(),
            dxml: edited.into(),
            flags: DomainSaveRestoreFlags::empty(),
        })
        .await;
    }
    run.done::<DomainRestore>(DomainRestoreArgs {
        from: image.as_str().into(),
    })
    .await;
    run.expect::<DomainGetMetadata>(title_of(&d), "the title edited in the image", |r| {
        r.metadata == "saved title"
    })
    .await;
    let image2 = dir.join("lv-procs.save2").display().to_string();
    run.done::<DomainSaveFlags>(DomainSaveFlagsArgs {
        dom: d.clone(),
        to: image2.as_str().into(),
        dxml: None,
        flags: DomainSaveRestoreFlags::empty(),
    })
    .await;
    run.done::<DomainRestoreFlags>(DomainRestoreFlagsArgs {
        from: image2.as_str().into(),
        dxml: None,
        flags: DomainSaveRestoreFlags::empty(),
    })
    .await;
    run.expect::<DomainGetState>(flags(&d, 0), "restored", |r| {
        r.state == DomainState::RUNNING
    })
    .await;
    run.done::<DomainCoreDump>(DomainCoreDumpArgs {
        dom: d.clone(),
        to: dir.join("lv-procs.core").display().to_string().into(),
        flags: Default::default(),
    })
    .await;
    run.done::<DomainCoreDumpWithFormat>(DomainCoreDumpWithFormatArgs {
        dom: d.clone(),
        to: dir.join("lv-procs.core2").display().to_string().into(),
        dumpformat: 0, // VIR_DOMAIN_CORE_DUMP_FORMAT_RAW
        flags: Default::default(),
    })
    .await;
    run.check(
        dir.join("lv-procs.core").exists() || dir.join("lv-procs.core2").exists(),
        "a core dump file was written",
    );
    // on_poweroff is `restart` (set above): the shutdown comes back running.
    run.done::<DomainShutdown>(dom(&d)).await;
    run.expect::<DomainGetState>(flags(&d, 0), "restarted by on_poweroff", |r| {
        r.state == DomainState::RUNNING
    })
    .await;
    run.done::<DomainSetLifecycleAction>(DomainSetLifecycleActionArgs {
        dom: d.clone(),
        kind: 0,   // VIR_DOMAIN_LIFECYCLE_POWEROFF
        action: 0, // VIR_DOMAIN_LIFECYCLE_ACTION_DESTROY
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.done::<DomainShutdownFlags>(flags(&d, DomainShutdownFlagValues::DEFAULT))
        .await;
    run.expect::<DomainGetState>(flags(&d, 0), "shut off", |r| {
        r.state == DomainState::SHUTOFF
    })
    .await;
    run.done::<DomainCreate>(dom(&d)).await;
    run.done::<DomainDestroyFlags>(flags(&d, DomainDestroyFlagsValues::DEFAULT))
        .await;
    run.done::<DomainCreate>(dom(&d)).await;
    run.done::<DomainDestroy>(dom(&d)).await;
    run.expect::<DomainIsActive>(dom(&d), "stopped", |r| r.active == 0)
        .await;
    run.done::<DomainUndefineFlags>(flags(&d, DomainUndefineFlagsValues::SNAPSHOTS_METADATA))
        .await;
    run.refuse::<DomainLookupByUuid>(UuidArgs { uuid: d.uuid }, "no such domain", |e| {
        e.is_not_found()
    })
    .await;

    // A transient domain, and a defined one removed with the flagless undefine.
    if let Some(t) = run
        .expect::<DomainCreateXml>(
            DomainCreateXmlArgs {
                xml_desc: domain_xml("lv-transient").into(),
                flags: DomainCreateFlags::empty(),
            },
            "a running transient domain",
            |r| r.dom.name == "lv-transient" && r.dom.id > 0,
        )
        .await
    {
        run.expect::<DomainIsPersistent>(dom(&t.dom), "transient", |r| r.persistent == 0)
            .await;
        run.done::<DomainDestroy>(dom(&t.dom)).await;
    }
    if let Some(u) = run
        .done::<DomainDefineXml>(XmlArgs {
            xml: domain_xml("lv-undefine").into(),
        })
        .await
    {
        run.done::<DomainUndefine>(dom(&u.dom)).await;
        run.refuse::<DomainLookupByName>(
            NameArgs {
                name: "lv-undefine".into(),
            },
            "no such domain",
            RemoteError::is_not_found,
        )
        .await;
    }
    let _ = test;
}

async fn iothreads(run: &mut Run<'_>, d: &NonnullDomain) {
    use domain_tune::*;
    let live = || domain::DomainFlagsArgs {
        dom: d.clone(),
        flags: LIVE,
    };
    run.done::<DomainAddIoThread>(DomainIoThreadIdArgs {
        dom: d.clone(),
        iothread_id: 5,
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.done::<DomainPinIoThread>(DomainPinIoThreadArgs {
        dom: d.clone(),
        iothreads_id: 5,
        cpumap: Bytes::from_static(&[0b1]),
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.done::<DomainSetIoThreadParams>(DomainSetIoThreadParamsArgs {
        dom: d.clone(),
        iothread_id: 5,
        params: vec![tp("poll_max_ns", TypedParamValue::ULLong(1000))],
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.expect::<DomainGetIoThreadInfo>(live(), "I/O thread 5 pinned to CPU 0", |r| {
        r.info
            .iter()
            .any(|t| t.iothread_id == 5 && t.cpumap.first() == Some(&0b1))
    })
    .await;
    run.done::<DomainDelIoThread>(DomainIoThreadIdArgs {
        dom: d.clone(),
        iothread_id: 5,
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.expect::<DomainGetIoThreadInfo>(live(), "I/O thread 5 gone", |r| {
        r.info.iter().all(|t| t.iothread_id != 5)
    })
    .await;
}

/// Typed-parameter setters, each read back by its getter.
async fn tunables(run: &mut Run<'_>, d: &NonnullDomain) {
    use domain::*;
    use domain_tune::*;
    let get = |nparams| DomainGetParamsArgs {
        dom: d.clone(),
        nparams,
        flags: (LIVE | STRING_OKAY).into(),
    };
    run.done::<DomainSetSchedulerParameters>(DomainSetSchedulerParametersArgs {
        dom: d.clone(),
        params: vec![tp("weight", TypedParamValue::UInt(20))],
    })
    .await;
    run.expect::<DomainGetSchedulerParameters>(
        DomainGetSchedulerParametersArgs {
            dom: d.clone(),
            nparams: 1,
        },
        "the test driver's fixed weight 50",
        |r| param(&r.params, "weight") == Some(&TypedParamValue::UInt(50)),
    )
    .await;
    run.done::<DomainSetMemoryParameters>(DomainSetMemoryParametersArgs {
        dom: d.clone(),
        params: vec![tp("hard_limit", TypedParamValue::ULLong(1_048_576))],
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.expect::<DomainGetMemoryParameters>(get(16), "the hard limit", |r| {
        param(&r.params, "hard_limit") == Some(&TypedParamValue::ULLong(1_048_576))
    })
    .await;
    run.done::<DomainSetBlkioParameters>(DomainSetBlkioParametersArgs {
        dom: d.clone(),
        params: vec![tp("weight", TypedParamValue::UInt(500))],
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.expect::<DomainGetBlkioParameters>(get(16), "blkio weight 500", |r| {
        param(&r.params, "weight") == Some(&TypedParamValue::UInt(500))
    })
    .await;
    run.done::<DomainSetNumaParameters>(DomainSetNumaParametersArgs {
        dom: d.clone(),
        params: vec![
            tp("numa_mode", TypedParamValue::Int(0)), // strict
            tp("numa_nodeset", TypedParamValue::String("0".into())),
        ],
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.expect::<DomainGetNumaParameters>(get(16), "nodeset 0", |r| {
        param(&r.params, "numa_nodeset") == Some(&TypedParamValue::String("0".into()))
    })
    .await;
    run.done::<DomainSetInterfaceParameters>(DomainSetInterfaceParametersArgs {
        dom: d.clone(),
        device: "lvnet0".into(),
        params: vec![tp("inbound.average", TypedParamValue::UInt(1000))],
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.expect::<DomainGetInterfaceParameters>(
        DomainGetInterfaceParametersArgs {
            dom: d.clone(),
            device: "lvnet0".into(),
            nparams: 16,
            flags: LIVE.into(),
        },
        "inbound average 1000",
        |r| param(&r.params, "inbound.average") == Some(&TypedParamValue::UInt(1000)),
    )
    .await;
    run.done::<DomainSetBlockIoTune>(DomainSetBlockIoTuneArgs {
        dom: d.clone(),
        disk: "vda".into(),
        params: vec![
            tp("total_bytes_sec", TypedParamValue::ULLong(4096)),
            tp("total_bytes_sec_max", TypedParamValue::ULLong(8192)),
        ],
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.expect::<DomainGetBlockIoTune>(
        DomainGetBlockIoTuneArgs {
            dom: d.clone(),
            disk: Some("vda".into()),
            nparams: 32,
            flags: (LIVE | STRING_OKAY).into(),
        },
        "4096 bytes/s",
        |r| param(&r.params, "total_bytes_sec") == Some(&TypedParamValue::ULLong(4096)),
    )
    .await;
    run.done::<DomainSetPerfEvents>(DomainSetPerfEventsArgs {
        dom: d.clone(),
        params: vec![tp("cmt", TypedParamValue::Boolean(true))],
        flags: DomainModificationImpact::LIVE,
    })
    .await;
    run.expect::<DomainGetPerfEvents>(
        DomainFlagsArgs {
            dom: d.clone(),
            flags: LIVE,
        },
        "cmt enabled",
        |r| param(&r.params, "cmt") == Some(&TypedParamValue::Boolean(true)),
    )
    .await;
}

async fn snapshots(run: &mut Run<'_>, d: &NonnullDomain) {
    use snapshot::*;
    let create = |name: &str| DomainCreateChildXmlArgs {
        dom: d.clone(),
        xml_desc: format!("<domainsnapshot><name>{name}</name></domainsnapshot>").into(),
        flags: DomainSnapshotCreateFlags::empty(),
    };
    let snap = |name: &str| NonnullDomainSnapshot {
        name: name.into(),
        dom: d.clone(),
    };
    // Generic over the flag family: the procedures below take different ones.
    #[allow(clippy::items_after_statements)]
    fn snap_flags<F: From<u32>>(snap: NonnullDomainSnapshot, flags: u32) -> SnapshotFlagsArgs<F> {
        SnapshotFlagsArgs {
            snap,
            flags: F::from(flags),
        }
    }
    #[allow(clippy::items_after_statements)]
    fn dom_flags<F: Default>(dom: &NonnullDomain) -> domain::DomainFlagsArgs<F> {
        domain::DomainFlagsArgs {
            dom: dom.clone(),
            flags: F::default(),
        }
    }
    run.expect::<DomainSnapshotCreateXml>(create("s1"), "s1", |r| r.snap.name == "s1")
        .await;
    run.expect::<DomainSnapshotCreateXml>(create("s2"), "s2", |r| r.snap.name == "s2")
        .await;
    run.expect::<DomainSnapshotCurrent>(dom_flags(d), "s2 current", |r| r.snap.name == "s2")
        .await;
    run.expect::<DomainHasCurrentSnapshot>(dom_flags(d), "a current snapshot", |r| r.result == 1)
        .await;
    run.expect::<DomainSnapshotGetParent>(snap_flags(snap("s2"), 0), "s1", |r| r.snap.name == "s1")
        .await;
    run.expect::<DomainSnapshotNumChildren>(snap_flags(snap("s1"), 0), "one child", |r| r.num == 1)
        .await;
    run.expect::<DomainSnapshotListChildrenNames>(
        DomainSnapshotListChildrenNamesArgs {
            snap: snap("s1"),
            maxnames: 8,
            flags: DomainSnapshotListFlags::empty(),
        },
        "[s2]",
        |r| r.names.len() == 1 && r.names[0] == "s2",
    )
    .await;
    run.expect::<DomainSnapshotListAllChildren>(
        SnapshotListAllChildrenArgs {
            snap: snap("s1"),
            need_results: 1,
            flags: DomainSnapshotListFlags::empty(),
        },
        "[s2]",
        |r| r.ret == 1 && r.snapshots[0].name == "s2",
    )
    .await;
    run.expect::<DomainSnapshotIsCurrent>(snap_flags(snap("s2"), 0), "current", |r| r.current == 1)
        .await;
    run.expect::<DomainSnapshotHasMetadata>(snap_flags(snap("s2"), 0), "metadata", |r| {
        r.metadata == 1
    })
    .await;
    run.expect::<DomainSnapshotGetXmlDesc>(snap_flags(snap("s2"), 0), "its XML", |r| {
        text(&r.xml).contains("<name>s2</name>")
    })
    .await;
    run.expect::<DomainSnapshotLookupByName>(
        DomainChildLookupArgs {
            dom: d.clone(),
            name: "s1".into(),
            flags: Default::default(),
        },
        "s1",
        |r| r.snap.name == "s1",
    )
    .await;
    run.expect::<DomainSnapshotNum>(dom_flags(d), "2 snapshots", |r| r.num == 2)
        .await;
    run.expect::<DomainSnapshotListNames>(
        DomainSnapshotListNamesArgs {
            dom: d.clone(),
            maxnames: 8,
            flags: DomainSnapshotListFlags::empty(),
        },
        "s1 and s2",
        |r| r.names.len() == 2,
    )
    .await;
    run.expect::<DomainListAllSnapshots>(
        DomainListAllSnapshotsArgs {
            dom: d.clone(),
            need_results: 1,
            flags: DomainSnapshotListFlags::empty(),
        },
        "s1 and s2",
        |r| r.ret == 2 && r.snapshots.iter().any(|s| s.name == "s1"),
    )
    .await;
    run.done::<DomainRevertToSnapshot>(snap_flags(snap("s1"), 0))
        .await;
    run.expect::<DomainSnapshotCurrent>(dom_flags(d), "s1 current", |r| r.snap.name == "s1")
        .await;
    run.done::<DomainSnapshotDelete>(snap_flags(snap("s2"), 0))
        .await;
    run.done::<DomainSnapshotDelete>(snap_flags(snap("s1"), 0))
        .await;
    run.expect::<DomainSnapshotNum>(dom_flags(d), "none left", |r| r.num == 0)
        .await;
}

async fn checkpoints(run: &mut Run<'_>, d: &NonnullDomain) {
    use snapshot::*;
    let create = |name: &str| DomainCreateChildXmlArgs {
        dom: d.clone(),
        xml_desc: format!("<domaincheckpoint><name>{name}</name></domaincheckpoint>").into(),
        flags: Default::default(),
    };
    let cp = |name: &str| NonnullDomainCheckpoint {
        name: name.into(),
        dom: d.clone(),
    };
    let on = |name: &str| CheckpointFlagsArgs {
        checkpoint: cp(name),
        flags: Default::default(),
    };
    run.expect::<DomainCheckpointCreateXml>(create("c1"), "c1", |r| r.checkpoint.name == "c1")
        .await;
    run.expect::<DomainCheckpointCreateXml>(create("c2"), "c2", |r| r.checkpoint.name == "c2")
        .await;
    run.expect::<DomainCheckpointGetParent>(on("c2"), "c1", |r| r.checkpoint.name == "c1")
        .await;
    run.expect::<DomainCheckpointGetXmlDesc>(on("c1"), "its XML", |r| {
        text(&r.xml).contains("<name>c1</name>")
    })
    .await;
    run.expect::<DomainCheckpointLookupByName>(
        DomainChildLookupArgs {
            dom: d.clone(),
            name: "c2".into(),
            flags: Default::default(),
        },
        "c2",
        |r| r.checkpoint.name == "c2",
    )
    .await;
    run.expect::<DomainCheckpointListAllChildren>(
        CheckpointListAllChildrenArgs {
            checkpoint: cp("c1"),
            need_results: 1,
            flags: Default::default(),
        },
        "[c2]",
        |r| r.ret == 1 && r.checkpoints[0].name == "c2",
    )
    .await;
    run.expect::<DomainListAllCheckpoints>(
        DomainListAllCheckpointsArgs {
            dom: d.clone(),
            need_results: 1,
            flags: Default::default(),
        },
        "c1 and c2",
        |r| r.ret == 2,
    )
    .await;
    run.done::<DomainCheckpointDelete>(on("c2")).await;
    run.done::<DomainCheckpointDelete>(on("c1")).await;
    run.expect::<DomainListAllCheckpoints>(
        DomainListAllCheckpointsArgs {
            dom: d.clone(),
            need_results: 1,
            flags: Default::default(),
        },
        "none left",
        |r| r.ret == 0,
    )
    .await;
}

#[allow(clippy::too_many_lines)]
async fn networks(run: &mut Run<'_>) {
    use network::*;
    let Some(def) = run
        .expect::<NetworkLookupByName>(
            NameArgs {
                name: "default".into(),
            },
            "default",
            |r| r.net.name == "default",
        )
        .await
    else {
        return;
    };
    let def = def.net;
    let net = |n: &NonnullNetwork| NetworkArgs { net: n.clone() };
    run.expect::<NetworkLookupByUuid>(UuidArgs { uuid: def.uuid }, "default", |r| {
        r.net.name == "default"
    })
    .await;
    run.expect::<NetworkGetXmlDesc>(
        NetworkFlagsArgs {
            net: def.clone(),
            flags: NetworkXmlFlags::empty(),
        },
        "its bridge",
        |r| text(&r.xml).contains("virbr0"),
    )
    .await;
    run.expect::<NetworkGetBridgeName>(net(&def), "virbr0", |r| r.name == "virbr0")
        .await;
    run.expect::<NetworkGetAutostart>(net(&def), "a flag", |r| r.autostart <= 1)
        .await;
    run.expect::<NetworkIsActive>(net(&def), "active", |r| r.active == 1)
        .await;
    run.expect::<NetworkIsPersistent>(net(&def), "persistent", |r| r.persistent == 1)
        .await;
    run.expect::<ConnectNumOfNetworks>((), "default", |r| r.num >= 1)
        .await;
    run.expect::<ConnectListNetworks>(MaxNamesArgs { maxnames: 16 }, "default", |r| {
        r.names.iter().any(|n| *n == "default")
    })
    .await;
    run.expect::<ConnectListAllNetworks>(
        ListAllArgs {
            need_results: 1,
            flags: ConnectListAllNetworksFlags::empty(),
        },
        "default",
        |r| r.nets.iter().any(|n| n.name == "default"),
    )
    .await;

    let xml = |name: &str, br: &str| {
        format!("<network><name>{name}</name><bridge name='{br}'/></network>")
    };
    if let Some(n) = run
        .expect::<NetworkDefineXml>(
            XmlArgs {
                xml: xml("lv-net", "lvbr0").into(),
            },
            "lv-net",
            |r| r.net.name == "lv-net",
        )
        .await
    {
        let n = n.net;
        run.expect::<ConnectNumOfDefinedNetworks>((), "lv-net", |r| r.num >= 1)
            .await;
        run.expect::<ConnectListDefinedNetworks>(MaxNamesArgs { maxnames: 16 }, "lv-net", |r| {
            r.names.iter().any(|x| *x == "lv-net")
        })
        .await;
        run.done::<NetworkCreate>(net(&n)).await;
        run.expect::<NetworkIsActive>(net(&n), "started", |r| r.active == 1)
            .await;
        run.done::<NetworkSetAutostart>(NetworkSetAutostartArgs {
            net: n.clone(),
            autostart: 1,
        })
        .await;
        run.expect::<NetworkGetAutostart>(net(&n), "autostart set", |r| r.autostart == 1)
            .await;
        run.done::<NetworkUpdate>(NetworkUpdateArgs {
            net: n.clone(),
            command: NetworkUpdateCommand::ADD_LAST, // VIR_NETWORK_UPDATE_COMMAND_ADD_LAST
            section: NetworkUpdateSection::DNS_TXT,  // VIR_NETWORK_SECTION_DNS_TXT
            parent_index: -1,
            xml: "<txt name='lv' value='procs'/>".into(),
            flags: NetworkUpdateFlags::AFFECT_LIVE | NetworkUpdateFlags::AFFECT_CONFIG,
        })
        .await;
        run.expect::<NetworkGetXmlDesc>(
            NetworkFlagsArgs {
                net: n.clone(),
                flags: NetworkXmlFlags::empty(),
            },
            "the added DNS TXT record",
            |r| text(&r.xml).contains("name='lv'"),
        )
        .await;
        run.done::<NetworkDestroy>(net(&n)).await;
        run.done::<NetworkUndefine>(net(&n)).await;
        run.refuse::<NetworkLookupByName>(
            NameArgs {
                name: "lv-net".into(),
            },
            "no such network",
            RemoteError::is_not_found,
        )
        .await;
    }
    if let Some(t) = run
        .expect::<NetworkCreateXml>(
            XmlArgs {
                xml: xml("lv-tnet", "lvbr1").into(),
            },
            "lv-tnet",
            |r| r.net.name == "lv-tnet",
        )
        .await
    {
        run.expect::<NetworkIsPersistent>(net(&t.net), "transient", |r| r.persistent == 0)
            .await;
        run.done::<NetworkDestroy>(net(&t.net)).await;
    }
    if let Some(t) = run
        .expect::<NetworkCreateXmlFlags>(
            XmlFlagsArgs {
                xml: xml("lv-tnet2", "lvbr2").into(),
                flags: NetworkCreateFlags::VALIDATE, // VIR_NETWORK_CREATE_VALIDATE
            },
            "lv-tnet2",
            |r| r.net.name == "lv-tnet2",
        )
        .await
    {
        run.done::<NetworkDestroy>(net(&t.net)).await;
    }
    if let Some(n) = run
        .expect::<NetworkDefineXmlFlags>(
            XmlFlagsArgs {
                xml: xml("lv-net2", "lvbr3").into(),
                flags: NetworkDefineFlags::VALIDATE, // VIR_NETWORK_DEFINE_VALIDATE
            },
            "lv-net2",
            |r| r.net.name == "lv-net2",
        )
        .await
    {
        run.done::<NetworkUndefine>(net(&n.net)).await;
    }
}

async fn interfaces(run: &mut Run<'_>) {
    use interface::*;
    let Some(eth1) = run
        .expect::<InterfaceLookupByName>(
            NameArgs {
                name: "eth1".into(),
            },
            "eth1",
            |r| r.iface.name == "eth1",
        )
        .await
    else {
        return;
    };
    let eth1 = eth1.iface;
    let ifc = |i: &NonnullInterface| InterfaceArgs { iface: i.clone() };
    let fl = |i: &NonnullInterface| InterfaceFlagsArgs {
        iface: i.clone(),
        flags: Default::default(),
    };
    run.expect::<InterfaceLookupByMacString>(
        InterfaceLookupByMacStringArgs {
            mac: eth1.mac.clone(),
        },
        "eth1",
        |r| r.iface.name == "eth1",
    )
    .await;
    run.expect::<InterfaceGetXmlDesc>(fl(&eth1), "its XML", |r| text(&r.xml).contains("eth1"))
        .await;
    run.expect::<InterfaceIsActive>(ifc(&eth1), "active", |r| r.active == 1)
        .await;
    run.expect::<ConnectNumOfInterfaces>((), "eth1", |r| r.num >= 1)
        .await;
    run.expect::<ConnectListInterfaces>(MaxNamesArgs { maxnames: 16 }, "eth1", |r| {
        r.names.iter().any(|n| *n == "eth1")
    })
    .await;
    run.expect::<ConnectListAllInterfaces>(
        ListAllArgs {
            need_results: 1,
            flags: ConnectListAllInterfacesFlags::empty(),
        },
        "eth1",
        |r| r.ifaces.iter().any(|i| i.name == "eth1"),
    )
    .await;

    let xml = |name: &str| {
        format!(
            "<interface type='ethernet' name='{name}'><start mode='onboot'/>\
             <mac address='52:54:00:4c:56:09'/></interface>"
        )
    };
    run.done::<InterfaceChangeBegin>(FlagsArgs {
        flags: Default::default(),
    })
    .await;
    if let Some(i) = run
        .expect::<InterfaceDefineXml>(
            XmlFlagsArgs {
                xml: xml("lv-eth9").into(),
                flags: Default::default(),
            },
            "lv-eth9",
            |r| r.iface.name == "lv-eth9",
        )
        .await
    {
        let i = i.iface;
        run.expect::<ConnectNumOfDefinedInterfaces>((), "lv-eth9", |r| r.num >= 1)
            .await;
        run.expect::<ConnectListDefinedInterfaces>(MaxNamesArgs { maxnames: 16 }, "lv-eth9", |r| {
            r.names.iter().any(|n| *n == "lv-eth9")
        })
        .await;
        run.done::<InterfaceCreate>(fl(&i)).await;
        run.expect::<InterfaceIsActive>(ifc(&i), "started", |r| r.active == 1)
            .await;
        run.done::<InterfaceDestroy>(fl(&i)).await;
        run.done::<InterfaceUndefine>(ifc(&i)).await;
    }
    run.done::<InterfaceChangeCommit>(FlagsArgs {
        flags: Default::default(),
    })
    .await;
    run.done::<InterfaceChangeBegin>(FlagsArgs {
        flags: Default::default(),
    })
    .await;
    run.done::<InterfaceDefineXml>(XmlFlagsArgs {
        xml: xml("lv-eth10").into(),
        flags: Default::default(),
    })
    .await;
    run.done::<InterfaceChangeRollback>(FlagsArgs {
        flags: Default::default(),
    })
    .await;
    run.refuse::<InterfaceLookupByName>(
        NameArgs {
            name: "lv-eth10".into(),
        },
        "rolled back",
        RemoteError::is_not_found,
    )
    .await;
}

#[allow(clippy::too_many_lines)]
async fn storage_pools(run: &mut Run<'_>) {
    use storage::*;
    let Some(pool) = run
        .expect::<StoragePoolLookupByName>(
            NameArgs {
                name: "default-pool".into(),
            },
            "default-pool",
            |r| r.pool.name == "default-pool",
        )
        .await
    else {
        return;
    };
    let pool = pool.pool;
    let p = |p: &NonnullStoragePool| StoragePoolArgs { pool: p.clone() };
    // Generic over the flag family: create, build, delete and XML take different ones.
    #[allow(clippy::items_after_statements)]
    fn pf<F: Default>(p: &NonnullStoragePool) -> StoragePoolFlagsArgs<F> {
        StoragePoolFlagsArgs {
            pool: p.clone(),
            flags: F::default(),
        }
    }
    run.expect::<StoragePoolLookupByUuid>(UuidArgs { uuid: pool.uuid }, "default-pool", |r| {
        r.pool.name == "default-pool"
    })
    .await;
    run.expect::<StoragePoolGetInfo>(p(&pool), "running", |r| {
        r.state == StoragePoolState::RUNNING
    })
    .await;
    run.expect::<StoragePoolGetXmlDesc>(pf(&pool), "its XML", |r| {
        text(&r.xml).contains("default-pool")
    })
    .await;
    run.expect::<StoragePoolGetAutostart>(p(&pool), "a flag", |r| r.autostart <= 1)
        .await;
    run.expect::<StoragePoolIsActive>(p(&pool), "active", |r| r.active == 1)
        .await;
    run.expect::<StoragePoolIsPersistent>(p(&pool), "persistent", |r| r.persistent == 1)
        .await;
    run.done::<StoragePoolRefresh>(pf(&pool)).await;
    run.expect::<ConnectNumOfStoragePools>((), "default-pool", |r| r.num >= 1)
        .await;
    run.expect::<ConnectListStoragePools>(MaxNamesArgs { maxnames: 16 }, "default-pool", |r| {
        r.names.iter().any(|n| *n == "default-pool")
    })
    .await;
    run.expect::<ConnectListAllStoragePools>(
        ListAllArgs {
            need_results: 1,
            flags: ConnectListAllStoragePoolsFlags::empty(),
        },
        "default-pool",
        |r| r.pools.iter().any(|x| x.name == "default-pool"),
    )
    .await;
    run.expect::<ConnectFindStoragePoolSources>(
        ConnectFindStoragePoolSourcesArgs {
            kind: "logical".into(),
            src_spec: None,
            flags: Default::default(),
        },
        "sources XML",
        |r| text(&r.xml).contains("<sources>"),
    )
    .await;

    let vol_xml = |name: &str| {
        format!(
            "<volume><name>{name}</name><capacity unit='KiB'>1024</capacity>\
             <allocation>0</allocation></volume>"
        )
    };
    if let Some(v) = run
        .expect::<StorageVolCreateXml>(
            StorageVolCreateXmlArgs {
                pool: pool.clone(),
                xml: vol_xml("lv-vol.img").into(),
                flags: StorageVolCreateFlags::empty(),
            },
            "lv-vol.img",
            |r| r.vol.name == "lv-vol.img" && r.vol.pool == "default-pool",
        )
        .await
    {
        let v = v.vol;
        let va = |v: &NonnullStorageVol| StorageVolArgs { vol: v.clone() };
        run.expect::<StorageVolLookupByName>(
            StorageVolLookupByNameArgs {
                pool: pool.clone(),
                name: "lv-vol.img".into(),
            },
            "the same key",
            |r| r.vol.key == v.key,
        )
        .await;
        run.expect::<StorageVolLookupByKey>(
            StorageVolLookupByKeyArgs { key: v.key.clone() },
            "lv-vol.img",
            |r| r.vol.name == "lv-vol.img",
        )
        .await;
        let path = run
            .expect::<StorageVolGetPath>(va(&v), "a path ending in the name", |r| {
                text(&r.name).ends_with("/lv-vol.img")
            })
            .await;
        if let Some(path) = path {
            run.expect::<StorageVolLookupByPath>(
                StorageVolLookupByPathArgs { path: path.name },
                "lv-vol.img",
                |r| r.vol.name == "lv-vol.img",
            )
            .await;
        }
        run.expect::<StorageVolGetInfo>(va(&v), "1 MiB", |r| r.capacity == 1 << 20)
            .await;
        run.expect::<StorageVolGetXmlDesc>(
            StorageVolFlagsArgs {
                vol: v.clone(),
                flags: Default::default(),
            },
            "its XML",
            |r| text(&r.xml).contains("lv-vol.img"),
        )
        .await;
        run.expect::<StoragePoolLookupByVolume>(va(&v), "default-pool", |r| {
            r.pool.name == "default-pool"
        })
        .await;
        let clone = run
            .expect::<StorageVolCreateXmlFrom>(
                StorageVolCreateXmlFromArgs {
                    pool: pool.clone(),
                    xml: vol_xml("lv-clone.img").into(),
                    clonevol: v.clone(),
                    flags: StorageVolCreateFlags::empty(),
                },
                "lv-clone.img",
                |r| r.vol.name == "lv-clone.img",
            )
            .await;
        run.expect::<StoragePoolNumOfVolumes>(p(&pool), "both volumes", |r| r.num >= 2)
            .await;
        run.expect::<StoragePoolListVolumes>(
            StoragePoolListVolumesArgs {
                pool: pool.clone(),
                maxnames: 16,
            },
            "both volumes",
            |r| r.names.iter().any(|n| *n == "lv-clone.img"),
        )
        .await;
        run.expect::<StoragePoolListAllVolumes>(
            StoragePoolListAllVolumesArgs {
                pool: pool.clone(),
                need_results: 1,
                flags: Default::default(),
            },
            "both volumes",
            |r| r.vols.iter().any(|x| x.name == "lv-vol.img"),
        )
        .await;
        for v in std::iter::once(v).chain(clone.map(|c| c.vol)) {
            run.done::<StorageVolDelete>(StorageVolFlagsArgs {
                vol: v,
                flags: StorageVolDeleteFlags::empty(),
            })
            .await;
        }
        run.expect::<StoragePoolNumOfVolumes>(p(&pool), "none of ours", |r| r.num == 0)
            .await;
    }

    let pool_xml = |name: &str| {
        format!("<pool type='dir'><name>{name}</name><target><path>/{name}</path></target></pool>")
    };
    if let Some(n) = run
        .expect::<StoragePoolDefineXml>(
            XmlFlagsArgs {
                xml: pool_xml("lv-pool").into(),
                flags: StoragePoolDefineFlags::empty(),
            },
            "lv-pool",
            |r| r.pool.name == "lv-pool",
        )
        .await
    {
        let n = n.pool;
        run.expect::<ConnectNumOfDefinedStoragePools>((), "lv-pool", |r| r.num >= 1)
            .await;
        run.expect::<ConnectListDefinedStoragePools>(
            MaxNamesArgs { maxnames: 16 },
            "lv-pool",
            |r| r.names.iter().any(|x| *x == "lv-pool"),
        )
        .await;
        run.done::<StoragePoolBuild>(pf(&n)).await;
        run.done::<StoragePoolCreate>(pf(&n)).await;
        run.expect::<StoragePoolIsActive>(p(&n), "started", |r| r.active == 1)
            .await;
        run.done::<StoragePoolSetAutostart>(StoragePoolSetAutostartArgs {
            pool: n.clone(),
            autostart: 1,
        })
        .await;
        run.expect::<StoragePoolGetAutostart>(p(&n), "autostart set", |r| r.autostart == 1)
            .await;
        run.done::<StoragePoolDestroy>(p(&n)).await;
        run.done::<StoragePoolDelete>(pf(&n)).await;
        run.done::<StoragePoolUndefine>(p(&n)).await;
        run.refuse::<StoragePoolLookupByName>(
            NameArgs {
                name: "lv-pool".into(),
            },
            "no such pool",
            RemoteError::is_not_found,
        )
        .await;
    }
    if let Some(t) = run
        .expect::<StoragePoolCreateXml>(
            XmlFlagsArgs {
                xml: pool_xml("lv-tpool").into(),
                flags: StoragePoolCreateFlags::empty(),
            },
            "lv-tpool",
            |r| r.pool.name == "lv-tpool",
        )
        .await
    {
        run.expect::<StoragePoolIsPersistent>(p(&t.pool), "transient", |r| r.persistent == 0)
            .await;
        run.done::<StoragePoolDestroy>(p(&t.pool)).await;
    }
}

async fn host(run: &mut Run<'_>) {
    use node::*;
    run.expect::<NodeGetInfo>((), "CPUs and memory", |r| r.cpus > 0 && r.memory > 0)
        .await;
    run.expect::<NodeGetFreeMemory>((), "free memory", |r| r.free_mem > 0)
        .await;
    run.expect::<NodeGetCellsFreeMemory>(
        NodeGetCellsFreeMemoryArgs {
            start_cell: 0,
            maxcells: 2,
        },
        "two cells",
        |r| r.cells.len() == 2,
    )
    .await;
    run.expect::<NodeGetCpuStats>(
        NodeGetCpuStatsArgs {
            cpu_num: -1,
            nparams: 8,
            flags: Default::default(),
        },
        "CPU times",
        |r| r.params.iter().any(|s| s.field == "user"),
    )
    .await;
    run.expect::<NodeGetCpuMap>(
        NodeGetCpuMapArgs {
            need_map: 1,
            need_online: 1,
            flags: Default::default(),
        },
        "the node's CPUs",
        |r| r.ret > 0 && r.online <= r.ret as u32 && !r.cpumap.is_empty(),
    )
    .await;
    // The 9.0 test driver fills the counts but returns 0 entries, which the daemon's
    // dispatcher takes for a failure without an error.
    run.refuse::<NodeGetFreePages>(
        NodeGetFreePagesArgs {
            pages: vec![4, 2048],
            start_cell: 0,
            cell_count: 1,
            flags: Default::default(),
        },
        "the dispatcher's unset error",
        |e| e.message().contains("did not set virError"),
    )
    .await;
    run.expect::<NodeGetSecurityModel>((), "a model reply", |r| r.model.0.len() <= 257)
        .await;
}

async fn node_devices(run: &mut Run<'_>) {
    use nodedev::*;
    run.expect::<NodeNumOfDevices>(
        NodeNumOfDevicesArgs {
            cap: None,
            flags: Default::default(),
        },
        "some devices",
        |r| r.num > 1,
    )
    .await;
    run.expect::<NodeListDevices>(
        NodeListDevicesArgs {
            cap: None,
            maxnames: 64,
            flags: Default::default(),
        },
        "computer",
        |r| r.names.iter().any(|n| *n == "computer"),
    )
    .await;
    run.expect::<ConnectListAllNodeDevices>(
        ListAllArgs {
            need_results: 1,
            flags: Default::default(),
        },
        "computer",
        |r| r.devices.iter().any(|d| d.name == "computer"),
    )
    .await;
    run.expect::<NodeDeviceLookupByName>(
        NameArgs {
            name: "computer".into(),
        },
        "computer",
        |r| r.dev.name == "computer",
    )
    .await;
    run.expect::<NodeDeviceGetXmlDesc>(
        NameFlagsArgs {
            name: "computer".into(),
            flags: Default::default(),
        },
        "its XML",
        |r| text(&r.xml).contains("<name>computer</name>"),
    )
    .await;
    run.expect::<NodeDeviceNumOfCaps>(
        NameArgs {
            name: "computer".into(),
        },
        "one capability",
        |r| r.num == 1,
    )
    .await;
    run.expect::<NodeDeviceListCaps>(
        NodeDeviceListCapsArgs {
            name: "computer".into(),
            maxnames: 8,
        },
        "system",
        |r| r.names.iter().any(|n| *n == "system"),
    )
    .await;
    run.expect::<NodeDeviceGetParent>(
        NameArgs {
            name: "scsi_host1".into(),
        },
        "computer",
        |r| r.parent_name.as_ref().is_some_and(|p| *p == "computer"),
    )
    .await;
    let vhba = "<device><parent>scsi_host1</parent><capability type='scsi_host'>\
                <capability type='fc_host'><wwnn>2000000012341234</wwnn>\
                <wwpn>1000000012341234</wwpn></capability></capability></device>";
    if let Some(dev) = run
        .expect::<NodeDeviceCreateXml>(
            NodeDeviceXmlArgs {
                xml_desc: vhba.into(),
                flags: Default::default(),
            },
            "a new scsi_host",
            |r| text(&r.dev.name).starts_with("scsi_host"),
        )
        .await
    {
        run.done::<NodeDeviceDestroy>(NameArgs {
            name: dev.dev.name.clone(),
        })
        .await;
        run.refuse::<NodeDeviceLookupByName>(NameArgs { name: dev.dev.name }, "destroyed", |e| {
            e.is_not_found()
        })
        .await;
    }
}

async fn secrets(run: &mut Run<'_>) {
    use secret::*;
    let uuid = "2a4f4d2c-7c05-4a43-9c4e-1b1b6a5c0f01";
    let xml = format!(
        "<secret ephemeral='no' private='no'><uuid>{uuid}</uuid>\
         <usage type='volume'><volume>/lv/procs.img</volume></usage></secret>"
    );
    let Some(s) = run
        .expect::<SecretDefineXml>(
            XmlFlagsArgs {
                xml: xml.into(),
                flags: Default::default(),
            },
            "the secret",
            |r| r.secret.uuid.to_string() == uuid,
        )
        .await
    else {
        return;
    };
    let s: NonnullSecret = s.secret;
    let sf = |s: &NonnullSecret| SecretFlagsArgs {
        secret: s.clone(),
        flags: Default::default(),
    };
    run.expect::<SecretLookupByUuid>(UuidArgs { uuid: s.uuid }, "the secret", |r| {
        r.secret.usage_id == "/lv/procs.img"
    })
    .await;
    run.expect::<SecretLookupByUsage>(
        SecretLookupByUsageArgs {
            usage_type: SecretUsageType::VOLUME, // VIR_SECRET_USAGE_TYPE_VOLUME
            usage_id: "/lv/procs.img".into(),
        },
        "the secret",
        |r| r.secret.uuid == s.uuid,
    )
    .await;
    run.expect::<SecretGetXmlDesc>(sf(&s), "its XML", |r| text(&r.xml).contains(uuid))
        .await;
    run.done::<SecretSetValue>(SecretSetValueArgs {
        secret: s.clone(),
        value: Bytes::from_static(b"hunter2"),
        flags: Default::default(),
    })
    .await;
    run.expect::<SecretGetValue>(sf(&s), "the value set", |r| r.value[..] == *b"hunter2")
        .await;
    run.expect::<ConnectNumOfSecrets>((), "ours", |r| r.num >= 1)
        .await;
    run.expect::<ConnectListSecrets>(ConnectListSecretsArgs { maxuuids: 16 }, "ours", |r| {
        r.uuids.iter().any(|u| *u == uuid)
    })
    .await;
    run.expect::<ConnectListAllSecrets>(
        ListAllArgs {
            need_results: 1,
            flags: ConnectListAllSecretsFlags::empty(),
        },
        "ours",
        |r| r.secrets.iter().any(|x| x.uuid == s.uuid),
    )
    .await;
    run.done::<SecretUndefine>(SecretArgs { secret: s.clone() })
        .await;
    run.register_and_deregister::<ConnectSecretEventRegisterAny, ConnectSecretEventDeregisterAny>(
        ConnectSecretEventRegisterAnyArgs {
            event_id: 0,
            secret: None,
        },
    )
    .await;
    run.refuse::<SecretLookupByUuid>(
        UuidArgs { uuid: s.uuid },
        "undefined",
        RemoteError::is_not_found,
    )
    .await;
}

/// Storage and host calls the test driver lacks, on the session daemon's own pool.
async fn session_storage_and_host(run: &mut Run<'_>, d: &Libvirtd) {
    use node::{
        NodeGetMemoryParameters, NodeGetMemoryParametersArgs, NodeGetMemoryStats,
        NodeGetMemoryStatsArgs,
    };
    use storage::*;
    let Some(pool) = run
        .expect::<StoragePoolLookupByName>(
            NameArgs {
                name: d.pool_name().into(),
            },
            "the testbed pool",
            |r| r.pool.name == d.pool_name(),
        )
        .await
    else {
        return;
    };
    let pool = pool.pool;
    let target = d.pool_path().display().to_string();
    run.expect::<StoragePoolLookupByTargetPath>(
        StorageVolLookupByPathArgs {
            path: target.as_str().into(),
        },
        "the testbed pool",
        |r| r.pool.uuid == pool.uuid,
    )
    .await;
    run.expect::<connect::ConnectGetStoragePoolCapabilities>(
        FlagsArgs {
            flags: Default::default(),
        },
        "storage pool capabilities with dir pools",
        |r| {
            let x = text(&r.capabilities);
            x.contains("<storagepoolCapabilities") && x.contains("type='dir'")
        },
    )
    .await;
    let Some(vol) = run
        .done::<StorageVolCreateXml>(StorageVolCreateXmlArgs {
            pool: pool.clone(),
            xml: "<volume><name>lv-stream.raw</name><capacity unit='KiB'>64</capacity>\
                  <allocation>0</allocation><target><format type='raw'/></target></volume>"
                .into(),
            flags: StorageVolCreateFlags::empty(),
        })
        .await
    else {
        return;
    };
    let vol = vol.vol;
    let data: Vec<u8> = (0..64 * 1024).map(|i| (i % 251) as u8).collect();
    let sent = match run.c.vol_upload(&vol, UploadOptions::new()).await {
        Ok(up) => up
            .send_all_and_finish(std::io::Cursor::new(data.clone()))
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    run.record::<StorageVolUpload>(sent == Ok(64 * 1024), format!("64 KiB sent: {sent:?}"));
    let got = download(run.c, &vol).await;
    run.record::<StorageVolDownload>(
        got.as_deref() == Ok(&data[..]),
        format!("the uploaded bytes back: {:?}", got.as_ref().map(Vec::len)),
    );
    run.expect::<StorageVolGetInfoFlags>(
        StorageVolFlagsArgs {
            vol: vol.clone(),
            flags: StorageVolInfoFlags::GET_PHYSICAL, // VIR_STORAGE_VOL_GET_PHYSICAL
        },
        "64 KiB",
        |r| r.capacity == 64 * 1024,
    )
    .await;
    run.done::<StorageVolResize>(StorageVolResizeArgs {
        vol: vol.clone(),
        capacity: 128 * 1024,
        flags: StorageVolResizeFlags::empty(),
    })
    .await;
    run.expect::<StorageVolGetInfo>(StorageVolArgs { vol: vol.clone() }, "the new size", |r| {
        r.capacity == 128 * 1024
    })
    .await;
    run.done::<StorageVolWipe>(StorageVolFlagsArgs {
        vol: vol.clone(),
        flags: Default::default(),
    })
    .await;
    let got = download(run.c, &vol).await;
    run.check(
        got.as_ref()
            .is_ok_and(|b| b.len() == 128 * 1024 && b.iter().all(|&x| x == 0)),
        format!(
            "a wiped volume reads zeros: {:?}",
            got.as_ref().map(Vec::len)
        ),
    );
    run.done::<StorageVolWipePattern>(StorageVolWipePatternArgs {
        vol: vol.clone(),
        algorithm: StorageVolWipeAlgorithm::ZERO, // VIR_STORAGE_VOL_WIPE_ALG_ZERO
        flags: Default::default(),
    })
    .await;
    run.done::<StorageVolDelete>(StorageVolFlagsArgs {
        vol,
        flags: StorageVolDeleteFlags::empty(),
    })
    .await;

    let count = run
        .expect::<NodeGetMemoryStats>(
            NodeGetMemoryStatsArgs {
                nparams: 0,
                cell_num: -1,
                flags: Default::default(),
            },
            "a parameter count",
            |r| r.nparams > 0,
        )
        .await;
    if let Some(count) = count {
        match run
            .c
            .call::<NodeGetMemoryStats>(&NodeGetMemoryStatsArgs {
                nparams: count.nparams,
                cell_num: -1,
                flags: Default::default(),
            })
            .await
        {
            Ok(r) => run.check(
                r.params.iter().any(|p| p.field == "total" && p.value > 0),
                format!("host memory total: {r:?}"),
            ),
            Err(e) => run.check(false, format!("NodeGetMemoryStats with a count: {e}")),
        }
    }
    run.expect::<NodeGetMemoryParameters>(
        NodeGetMemoryParametersArgs {
            nparams: 0,
            flags: Default::default(),
        },
        "a parameter count",
        |r| r.nparams >= 0,
    )
    .await;
}

async fn download(c: &Client, vol: &NonnullStorageVol) -> Result<Vec<u8>, String> {
    let dl = c
        .vol_download(vol, DownloadOptions::new())
        .await
        .map_err(|e| e.to_string())?;
    let mut got = Vec::new();
    dl.write_to(&mut got).await.map_err(|e| e.to_string())?;
    Ok(got)
}

/// Every registration call, with its undo.
async fn event_registrations(run: &mut Run<'_>, test: Option<&NonnullDomain>) {
    run.register_and_deregister::<connect::ConnectDomainEventCallbackRegisterAny, connect::ConnectDomainEventCallbackDeregisterAny>(connect::ConnectDomainEventCallbackRegisterAnyArgs {
        event_id: 0,
        dom: test.cloned(),
    })
    .await;
    run.register_and_deregister::<network::ConnectNetworkEventRegisterAny, network::ConnectNetworkEventDeregisterAny>(network::ConnectNetworkEventRegisterAnyArgs {
        event_id: 0,
        net: None,
    })
    .await;
    run.register_and_deregister::<storage::ConnectStoragePoolEventRegisterAny, storage::ConnectStoragePoolEventDeregisterAny>(storage::ConnectStoragePoolEventRegisterAnyArgs {
        event_id: 0,
        pool: None,
    })
    .await;
    run.register_and_deregister::<nodedev::ConnectNodeDeviceEventRegisterAny, nodedev::ConnectNodeDeviceEventDeregisterAny>(nodedev::ConnectNodeDeviceEventRegisterAnyArgs {
        event_id: 0,
        dev: None,
    })
    .await;
    // The legacy registrations (before callback ids). The daemon never fills
    // `cb_registered` (it stays 0); the registration shows in a second deregistration
    // being refused.
    run.done::<connect::ConnectDomainEventRegister>(()).await;
    run.done::<connect::ConnectDomainEventDeregister>(()).await;
    match run
        .c
        .call::<connect::ConnectDomainEventDeregister>(&())
        .await
    {
        Err(e) if e.remote().is_some() => {}
        other => run.check(false, format!("a second legacy deregister: {other:?}")),
    }
    let any = connect::ConnectDomainEventRegisterAnyArgs { event_id: 1 };
    run.done::<connect::ConnectDomainEventRegisterAny>(any.clone())
        .await;
    match run
        .c
        .call::<connect::ConnectDomainEventRegisterAny>(&any)
        .await
    {
        Err(e) if e.remote().is_some() => {}
        other => run.check(false, format!("a duplicate legacy register: {other:?}")),
    }
    run.done::<connect::ConnectDomainEventDeregisterAny>(any.clone())
        .await;
    match run
        .c
        .call::<connect::ConnectDomainEventDeregisterAny>(&any)
        .await
    {
        Err(e) if e.remote().is_some() => {}
        other => run.check(false, format!("a second legacy deregister: {other:?}")),
    }
}

/// The QEMU and LXC programs and the descriptor-passing calls on the test driver. The test
/// driver implements none of the QEMU program's calls: each is answered (through the QEMU
/// program, on the same connection) with the driver's typed `NO_SUPPORT`. The calls that pass
/// descriptors never reach the daemon: the client refuses them locally.
async fn other_programs(run: &mut Run<'_>, test: Option<&NonnullDomain>) {
    use libvirt_remote::proto::FdPassing;
    use libvirt_remote::proto::procs::common::CallbackIdArgs;
    use libvirt_remote::proto::procs::{lxc, qemu};
    let Some(test) = test else { return };
    let unsupported =
        |e: &RemoteError| e.code == ErrorCode::NO_SUPPORT && e.message().contains("not supported");
    run.refuse::<qemu::QemuDomainMonitorCommand>(
        qemu::QemuDomainMonitorCommandArgs {
            dom: test.clone(),
            cmd: r#"{"execute":"query-status"}"#.into(),
            flags: QemuMonitorCommandFlags::empty(),
        },
        "NO_SUPPORT from the test driver",
        unsupported,
    )
    .await;
    run.refuse::<qemu::QemuDomainAgentCommand>(
        qemu::QemuDomainAgentCommandArgs {
            dom: test.clone(),
            cmd: r#"{"execute":"guest-ping"}"#.into(),
            timeout: qemu::agent_timeout::DEFAULT,
            flags: Default::default(),
        },
        "NO_SUPPORT from the test driver",
        unsupported,
    )
    .await;
    run.refuse::<qemu::QemuDomainAttach>(
        qemu::QemuDomainAttachArgs {
            pid_value: std::process::id(),
            flags: Default::default(),
        },
        "NO_SUPPORT from the test driver",
        unsupported,
    )
    .await;
    run.refuse::<qemu::QemuConnectDomainMonitorEventRegister>(
        qemu::QemuConnectDomainMonitorEventRegisterArgs {
            dom: Some(test.clone()),
            event: Some("STOP".into()),
            flags: QemuMonitorEventRegisterFlags::empty(),
        },
        "NO_SUPPORT from the test driver",
        unsupported,
    )
    .await;
    // Nothing registered: the daemon's own bookkeeping refuses the callback id.
    run.refuse::<qemu::QemuConnectDomainMonitorEventDeregister>(
        CallbackIdArgs { callback_id: 4242 },
        "an unknown callback id",
        |e| e.message().contains("4242"),
    )
    .await;

    let graphics = domain::DomainOpenGraphicsArgs {
        dom: test.clone(),
        idx: 0,
        flags: Default::default(),
    };
    let flags = domain::DomainFlagsArgs {
        dom: test.clone(),
        flags: Default::default(),
    };
    let create_flags = domain::DomainFlagsArgs {
        dom: test.clone(),
        flags: domain::DomainCreateFlags::empty(),
    };
    let before = run.c.stats().packets_out;
    let c = run.c;
    let refusals = [
        (
            refused_locally::<domain::DomainOpenGraphics>(c, &graphics).await,
            FdPassing::Call,
        ),
        (
            refused_locally::<domain::DomainOpenGraphicsFd>(c, &graphics).await,
            FdPassing::Reply,
        ),
        (
            refused_locally::<domain::DomainCreateWithFiles>(c, &create_flags).await,
            FdPassing::Call,
        ),
        (
            refused_locally::<lxc::LxcDomainOpenNamespace>(c, &flags).await,
            FdPassing::Reply,
        ),
    ];
    for (err, want) in refusals {
        run.check(
            matches!(err, Some(CallError::NeedsFdPassing { fds, .. }) if fds == want),
            format!("a descriptor-passing call refused locally ({want:?}): {err:?}"),
        );
    }
    run.check(
        run.c.stats().packets_out == before,
        "a refused descriptor-passing call sent a packet",
    );
}

/// The error of a call expected to fail before reaching the daemon.
async fn refused_locally<P: Procedure>(c: &Client, args: &P::Args) -> Option<CallError>
where
    P::Ret: Debug,
{
    c.call::<P>(args).await.err()
}

/// The QEMU program reaches the session qemu driver: a monitor command for a domain that
/// does not exist is the qemu driver's `NO_DOMAIN` (no guest needed; the egress-kvm2 tests
/// run monitor commands against a booted TCG guest).
async fn session_qemu_program(run: &mut Run<'_>) {
    use libvirt_remote::proto::procs::qemu;
    run.refuse::<qemu::QemuDomainMonitorCommand>(
        qemu::QemuDomainMonitorCommandArgs {
            dom: NonnullDomain {
                name: "no-such-guest".into(),
                uuid: libvirt_remote::proto::types::Uuid([0x42; 16]),
                id: -1,
            },
            cmd: "info status".into(),
            flags: QemuMonitorCommandFlags::HMP,
        },
        "NO_DOMAIN from the qemu driver",
        RemoteError::is_not_found,
    )
    .await;
}

/// Events of the legacy registrations arrive without a callback id and decode (to
/// `Event::DomainLegacy`): the daemon's lifecycle messages (procedure 107) are counted as
/// decoded-but-unrouted, never as unknown or malformed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_registration_events_decode() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let test = lookup_test(&c).await;
    let any = connect::ConnectDomainEventRegisterAnyArgs {
        event_id: libvirt_remote::proto::events::event_id::LIFECYCLE,
    };
    c.call::<connect::ConnectDomainEventRegisterAny>(&any)
        .await
        .unwrap();
    let before = c.stats();
    let dom = domain::DomainArgs { dom: test.clone() };
    c.call::<domain::DomainSuspend>(&dom).await.unwrap();
    c.call::<domain::DomainResume>(&dom).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while c.stats().unrouted_events < before.unrouted_events + 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no legacy lifecycle events decoded: {:?}",
            c.stats()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let after = c.stats();
    assert_eq!(after.unknown_messages, before.unknown_messages, "{after:?}");
    assert_eq!(after.malformed_events, 0, "{after:?}");
    c.call::<connect::ConnectDomainEventDeregisterAny>(&any)
        .await
        .unwrap();
    let st = c
        .call::<domain::DomainGetState>(&domain::DomainFlagsArgs {
            dom: test,
            flags: Default::default(),
        })
        .await
        .unwrap();
    assert_eq!(st.to_string(), "running (unpaused)");
    assert_eq!(st.reason, StateReason::Running(RunningReason::UNPAUSED));
}

/// A call newer than the daemon is refused with "unknown procedure", reported as
/// `NO_SUPPORT`: a typed error, no hang, and the connection stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn procedure_newer_than_the_daemon_is_unsupported() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let lib = c
        .call::<connect::ConnectGetLibVersion>(&())
        .await
        .unwrap()
        .lib_ver;
    let daemon = LibvirtVersion::from_number(lib);
    assert!(
        domain::DomainGraphicsReload::SINCE > daemon,
        "this test needs a daemon older than {}; it is {daemon}",
        domain::DomainGraphicsReload::SINCE
    );
    let test = lookup_test(&c).await;
    let err = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        c.call::<domain::DomainGraphicsReload>(&domain::DomainGraphicsReloadArgs {
            dom: test.clone(),
            kind: 0,
            flags: Default::default(),
        }),
    )
    .await
    .expect("an answer, not a hang")
    .expect_err("libvirt 9.0 lacks procedure 448");
    let remote = err.remote().expect("the daemon's own error");
    assert_eq!(remote.code, ErrorCode::NO_SUPPORT, "{remote:?}");
    assert!(remote.is_unsupported(), "{remote:?}");
    assert!(
        remote.message().contains("unknown procedure"),
        "{}",
        remote.message()
    );
    // Also one with arguments the daemon cannot even parse as anything it knows.
    let err = c
        .call::<network::NetworkGetMetadata>(&network::NetworkGetMetadataArgs {
            network: NonnullNetwork {
                name: "default".into(),
                uuid: libvirt_remote::proto::types::Uuid::default(),
            },
            kind: MetadataType::DESCRIPTION,
            uri: None,
            flags: NetworkUpdateFlags::empty(),
        })
        .await
        .expect_err("libvirt 9.0 lacks procedure 445");
    assert!(
        err.remote().is_some_and(RemoteError::is_unsupported),
        "{err}"
    );
    // The connection is still fine.
    assert_eq!(
        c.call::<domain::DomainGetState>(&domain::DomainFlagsArgs {
            dom: test,
            flags: Default::default()
        })
        .await
        .unwrap()
        .state,
        DomainState::RUNNING
    );
}
