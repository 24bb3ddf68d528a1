//! `egress-controller crd` prints the CRD; `egress-controller run --providers FILE` runs the
//! controller with the kubeconfig of the environment (`KUBECONFIG`, `~/.kube/config`, or
//! the in-cluster service account).

use std::process::ExitCode;
use std::time::Duration;

use egress_controller::reconcile::{Policy, Reconciler};
use egress_controller::{build_providers, controller, resource};
use egress_provider::ProvidersConfig;

const USAGE: &str = "usage: egress-controller crd\n       \
                     egress-controller run --providers FILE [--ip-grace-secs N]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("crd") if args.len() == 1 => {
            print!("{}", resource::crd_yaml());
            ExitCode::SUCCESS
        }
        Some("run") => match run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("egress-controller: {e}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let mut providers = None;
    let mut policy = Policy::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--providers" => providers = it.next().cloned(),
            "--ip-grace-secs" => {
                let n: u64 = it.next().ok_or(USAGE)?.parse()?;
                policy.ip_grace = Duration::from_secs(n);
            }
            _ => return Err(USAGE.into()),
        }
    }
    let path = providers.ok_or(USAGE)?;
    let config = ProvidersConfig::from_file(&path)?;
    let set = build_providers(&config)?;
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    tokio::runtime::Runtime::new()?.block_on(async {
        let client = kube::Client::try_default().await?;
        controller::run(client, Reconciler::new(set, &config, policy)).await;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
