//! Telling failures apart with the error predicates: `errors URI` looks up a domain that does
//! not exist, then dials a socket nobody listens on.

use libvirt_remote::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let uri = std::env::args().nth(1).expect("a URI");
    let conn = Connect::open(&uri).await?;
    match conn.lookup_domain_by_name("no-such-domain").await {
        Err(e) if e.is_not_found() => println!("not found: {e}"),
        Err(e) => return Err(e),
        Ok(dom) => println!("unexpectedly found {}", dom.name()),
    }
    match Connect::open("qemu+unix:///session?socket=/nonexistent/libvirt-sock").await {
        Err(e) if e.is_unreachable() => println!("unreachable: {e}"),
        Err(e) => println!("other connect error: {e}"),
        Ok(_) => println!("unexpectedly connected"),
    }
    conn.close();
    match conn.hostname().await {
        Err(e) if e.is_connection_dead() => println!("connection dead: {e}"),
        other => println!("unexpected: {other:?}"),
    }
    Ok(())
}
