//! A domain's life through the object API: define, start, pause, resume, stop, undefine,
//! printing the state after each step. `lifecycle URI NAME` with a test-driver URI
//! (`test:///default`, `test+unix:///default?socket=…`): the domain is a `type='test'` one.

use libvirt_remote::prelude::*;

async fn show(dom: &Domain, step: &str) -> Result<(), Error> {
    let st = dom.state(Default::default()).await?;
    println!("{step:<9} {}", st.state);
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let uri = args.next().unwrap_or_else(|| "test:///default".into());
    let name = args.next().unwrap_or_else(|| "lifecycle-demo".into());
    let conn = Connect::open(&uri).await?;
    let doc = libvirt_xml::Domain::new(libvirt_xml::DomainType::Test, name).with_memory_mib(64);
    let dom = conn.define_domain(&doc).await?;
    show(&dom, "defined").await?;
    dom.create().await?;
    show(&dom, "started").await?;
    dom.suspend().await?;
    show(&dom, "paused").await?;
    dom.resume().await?;
    show(&dom, "resumed").await?;
    dom.destroy().await?;
    show(&dom, "stopped").await?;
    dom.undefine().await?;
    println!("undefined");
    Ok(())
}
