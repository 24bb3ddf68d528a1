//! Network commands: net-list, net-info, net-dumpxml.

use libvirt_rpc::Client;
use libvirt_rpc::proto::procs::common::ListAllArgs;
use libvirt_rpc::proto::procs::network::{
    ConnectListAllNetworks, ConnectListAllNetworksFlags, NetworkArgs, NetworkFlagsArgs,
    NetworkGetAutostart, NetworkGetBridgeName, NetworkGetXmlDesc, NetworkIsActive,
    NetworkIsPersistent, NetworkXmlFlags,
};
use libvirt_rpc::proto::types::Network;

use crate::table::{Table, field, yes_no};
use crate::{R, err, lookup};

#[derive(clap::Subcommand)]
#[allow(clippy::enum_variant_names, reason = "virsh's command names")]
pub enum Cmd {
    /// List networks (active ones; --all adds the inactive).
    NetList {
        /// Active and inactive networks.
        #[arg(long)]
        all: bool,
        /// Inactive networks only.
        #[arg(long)]
        inactive: bool,
    },
    /// Network information.
    NetInfo {
        /// Network name or UUID.
        network: String,
    },
    /// Network XML.
    NetDumpxml {
        /// Network name or UUID.
        network: String,
        /// The persistent definition, not the live one.
        #[arg(long)]
        inactive: bool,
    },
}

pub async fn run(c: &Client, cmd: Cmd) -> R {
    match cmd {
        Cmd::NetList { all, inactive } => net_list(c, all, inactive).await,
        Cmd::NetInfo { network } => net_info(c, &network).await,
        Cmd::NetDumpxml { network, inactive } => {
            let net = lookup::network(c, &network).await?;
            let flags = if inactive {
                NetworkXmlFlags::INACTIVE.bits()
            } else {
                0
            };
            let xml = c
                .call::<NetworkGetXmlDesc>(&NetworkFlagsArgs {
                    net,
                    flags: flags.into(),
                })
                .await
                .map_err(err)?
                .xml;
            print!("{xml}");
            Ok(())
        }
    }
}

async fn networks(c: &Client, flags: u32) -> R<Vec<Network>> {
    let mut nets = c
        .call::<ConnectListAllNetworks>(&ListAllArgs {
            need_results: 1,
            flags: flags.into(),
        })
        .await
        .map_err(err)?
        .nets;
    nets.sort_by_key(|n| n.name.to_string().to_lowercase());
    Ok(nets)
}

/// Active, persistent and autostart flags (`None` where the call failed).
async fn net_flags(c: &Client, net: &Network) -> (Option<bool>, Option<bool>, Option<bool>) {
    let args = NetworkArgs { net: net.clone() };
    let active = c
        .call::<NetworkIsActive>(&args)
        .await
        .ok()
        .map(|r| r.active != 0);
    let persistent = c
        .call::<NetworkIsPersistent>(&args)
        .await
        .ok()
        .map(|r| r.persistent != 0);
    let autostart = c
        .call::<NetworkGetAutostart>(&args)
        .await
        .ok()
        .map(|r| r.autostart != 0);
    (active, persistent, autostart)
}

async fn net_list(c: &Client, all: bool, inactive: bool) -> R {
    let flags = match (all, inactive) {
        (true, _) => 0,
        (false, true) => ConnectListAllNetworksFlags::INACTIVE.bits(),
        (false, false) => ConnectListAllNetworksFlags::ACTIVE.bits(),
    };
    let mut t = Table::new(&["Name", "State", "Autostart", "Persistent"]);
    for n in networks(c, flags).await? {
        let (active, persistent, autostart) = net_flags(c, &n).await;
        t.row(vec![
            n.name.to_string(),
            if active.unwrap_or(false) {
                "active"
            } else {
                "inactive"
            }
            .into(),
            autostart.map_or("no autostart", yes_no).into(),
            persistent.map_or("unknown", yes_no).into(),
        ]);
    }
    print!("{}", t.render());
    Ok(())
}

async fn net_info(c: &Client, name: &str) -> R {
    let n = lookup::network(c, name).await?;
    let (active, persistent, autostart) = net_flags(c, &n).await;
    let mut out = field("Name:", &n.name);
    out += &field("UUID:", n.uuid);
    if let Some(a) = active {
        out += &field("Active:", yes_no(a));
    }
    out += &field("Persistent:", persistent.map_or("unknown", yes_no));
    out += &field("Autostart:", autostart.map_or("no autostart", yes_no));
    if let Ok(b) = c
        .call::<NetworkGetBridgeName>(&NetworkArgs { net: n.clone() })
        .await
    {
        out += &field("Bridge:", b.name);
    }
    print!("{out}");
    Ok(())
}
