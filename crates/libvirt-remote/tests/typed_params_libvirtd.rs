//! Typed-parameter getters as libvirt.so sends them, against a private libvirtd (test
//! driver), compared with the C library (python3-libvirt) on the same daemon.

use std::collections::BTreeSet;
use std::process::Command;

use libvirt_remote::conn::CallError;
use libvirt_remote::proto::Procedure;
use libvirt_remote::proto::procs::common::NameArgs;
use libvirt_remote::proto::procs::domain::{
    DomainGetBlkioParameters, DomainGetParamsArgs, DomainLookupByName,
};
use libvirt_remote::proto::procs::domain_tune::DomainGetNumaParameters;
use libvirt_remote::proto::typed_params::{STRING_OKAY, TypedParamsGetter};
use libvirt_remote::proto::types::{NonnullDomain, TypedParam, TypedParamValue};
use libvirt_remote::{Client, ConnectOptions};
use testbed::libvirtd::Libvirtd;

/// The field names the C library's getter answers for domain `test`, through python.
fn c_library_fields(uri: &str, method: &str) -> Option<BTreeSet<String>> {
    let script = format!(
        "import libvirt, sys\n\
         c = libvirt.open(sys.argv[1])\n\
         for k in sorted(c.lookupByName('test').{method}(0)): print(k)\n"
    );
    let out = Command::new("/usr/bin/python3")
        .args(["-c", &script, uri])
        .output()
        .ok()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !testbed::required() || !err.contains("No module named"),
            "python3-libvirt is missing (scripts/install-deps): {err}"
        );
        eprintln!("skipping the C library comparison: {err}");
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
    )
}

fn names(params: &[TypedParam]) -> BTreeSet<String> {
    params
        .iter()
        .map(|p| p.field.to_string_lossy().into_owned())
        .collect()
}

fn strings(params: &[TypedParam]) -> usize {
    params
        .iter()
        .filter(|p| matches!(p.value, TypedParamValue::String(_)))
        .count()
}

/// The two-call pattern (count, then fetch), through `call_typed_params` (`libvirt`) or the
/// raw table with the caller's flags only.
async fn fetch<P>(
    c: &Client,
    dom: &NonnullDomain,
    libvirt: bool,
    params: fn(&P::Ret) -> (&[TypedParam], i32),
) -> Result<Vec<TypedParam>, CallError>
where
    P: TypedParamsGetter<Args = DomainGetParamsArgs> + Procedure,
{
    let call = |nparams| {
        let args = DomainGetParamsArgs {
            dom: dom.clone(),
            nparams,
            flags: Default::default(),
        };
        async move {
            if libvirt {
                c.call_typed_params::<P>(&args).await
            } else {
                c.call::<P>(&args).await
            }
        }
    };
    let n = params(&call(0).await?).1;
    let ret = call(n).await?;
    Ok(params(&ret).0.to_vec())
}

fn blkio(r: &<DomainGetBlkioParameters as Procedure>::Ret) -> (&[TypedParam], i32) {
    (&r.params, r.nparams)
}

fn numa(r: &<DomainGetNumaParameters as Procedure>::Ret) -> (&[TypedParam], i32) {
    (&r.params, r.nparams)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn getters_return_string_parameters_like_the_c_library() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let uri = d.test_uri();
    let c = Client::connect(&uri, ConnectOptions::default())
        .await
        .expect("connect to the test driver");
    let dom = c
        .call::<DomainLookupByName>(&NameArgs {
            name: "test".into(),
        })
        .await
        .expect("the test driver's domain")
        .dom;

    let cases = [
        (
            "DomainGetBlkioParameters",
            "blkioParameters",
            fetch::<DomainGetBlkioParameters>(&c, &dom, true, blkio).await,
            fetch::<DomainGetBlkioParameters>(&c, &dom, false, blkio).await,
        ),
        (
            "DomainGetNumaParameters",
            "numaParameters",
            fetch::<DomainGetNumaParameters>(&c, &dom, true, numa).await,
            fetch::<DomainGetNumaParameters>(&c, &dom, false, numa).await,
        ),
    ];
    for (name, method, libvirt, raw) in cases {
        let libvirt = libvirt.unwrap_or_else(|e| panic!("{name} with STRING_OKAY: {e}"));
        let raw = raw.unwrap_or_else(|e| panic!("{name} without STRING_OKAY: {e}"));
        eprintln!(
            "{name}: {} parameters ({} strings) as libvirt.so asks, {} with flags 0",
            libvirt.len(),
            strings(&libvirt),
            raw.len()
        );
        assert!(
            strings(&libvirt) > 0,
            "{name}: no string parameter came back with STRING_OKAY ({:?})",
            names(&libvirt)
        );
        assert_eq!(
            raw.len(),
            libvirt.len() - strings(&libvirt),
            "{name}: without the flag the daemon drops exactly the strings"
        );
        if let Some(c_fields) = c_library_fields(&uri, method) {
            assert_eq!(
                names(&libvirt),
                c_fields,
                "{name}: the fields differ from the C library's on the same daemon"
            );
        }
    }
    assert_eq!(STRING_OKAY, 4);
}
