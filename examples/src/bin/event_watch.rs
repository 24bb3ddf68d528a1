//! Watch domain lifecycle events: `event_watch URI [COUNT]` prints `ready` once subscribed,
//! then one line per event, and exits after COUNT events (default: never).

use libvirt_remote::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let conn = Connect::open(
        &args
            .next()
            .unwrap_or_else(libvirt_remote::client::uri::default_uri),
    )
    .await?;
    let count: usize = args
        .next()
        .map_or(usize::MAX, |n| n.parse().expect("a count"));
    let mut events = conn.subscribe::<event_id::Lifecycle>().await?;
    println!("ready");
    for _ in 0..count {
        let Some(ev) = events.next().await else { break };
        println!("{} event {} detail {}", ev.dom.name, ev.event, ev.detail);
    }
    Ok(())
}
