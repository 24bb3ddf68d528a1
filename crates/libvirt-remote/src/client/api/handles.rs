//! The object API: [`Connect`] and the object handles ([`Domain`], [`StoragePool`], …) with
//! one async method per procedure.
//!
//! The methods are not written here: each row of the procedure tables
//! ([`proto::procs`](crate::proto::procs)) that names an object and a method is expanded into
//! one here (`client::api::methods`, from the rows the table hands over; the row grammar is
//! [`procedures!`](crate::proto::procedures)'s). The handles' own accessors (`name()` and
//! `name_bytes()`, `uuid()`, …) are columns of their declaration (`handles!`). A method takes the row's argument struct's
//! fields except the handle itself, each of one concrete type ([`Param`]): strings as
//! `&str` (`Option<&str>` when optional), another object as its handle (`&StorageVol`),
//! everything else as the field's own type
//! ([`FieldType`](crate::wire::xdr::FieldType): `flags` of its flags type), so
//! `Default::default()`, `None` and integer literals infer. A string that is not UTF-8
//! (libvirt allows any bytes) goes through the raw table ([`Client::call`]). It
//! returns what a caller wants of the reply: the one interesting field, strings as
//! [`String`], objects as handles on the same connection ([`Lift`]), yes/no answers as
//! `bool`; replies with several fields come back as their wire struct.
//!
//! A handle is its connection plus the object's identity (the wire struct of
//! [`proto::types`](crate::proto::types): a domain's name, UUID and id, a volume's pool,
//! name and key). It is `Send + Sync + Clone`; a clone shares the connection. The daemon
//! resolves the identity on whichever connection carries the call, so re-binding a handle
//! to another connection ([`Connect::bind`]) is allowed: on another connection to the same
//! daemon it names the same object; on a connection to another daemon it names the object
//! with that identity there, usually none (the call fails with
//! [`is_not_found`](crate::Error::is_not_found)). Nothing stops that, as nothing stops
//! passing a UUID to the wrong host; a handle's own methods always use its own connection.
//!
//! Procedures that open a stream have methods written by hand, named as `virt` names them:
//! [`StorageVol::upload`], [`StorageVol::download`], [`Domain::open_console`],
//! [`Domain::open_channel`], [`Domain::screenshot`]; they return the stream's typed end
//! ([`Upload`], [`Download`], [`Duplex`]). Tunnelled migration and the procedures that pass
//! file descriptors have none: use the [`Client`] (`conn.client()`).
//!
//! Events come from the handles too: [`Connect::subscribe`] for every object,
//! `subscribe` on a [`Domain`], [`Network`], [`StoragePool`], [`NodeDevice`] or [`Secret`] for
//! that object (`dom.subscribe::<event_id::Lifecycle>()`), one generic method for every event.

use std::borrow::Cow;
use std::fmt;

use crate::client::{
    Client, ConnectError, ConnectOptions, Download, DownloadOptions, Duplex, Error, Progress,
    Upload, UploadOptions,
};
use crate::conn::StreamError;
use crate::proto::procs::domain::{DomainScreenshot, DomainScreenshotArgs};
use crate::proto::types;
use crate::wire::xdr::LvString;

pub use super::methods::{Lift, Lifted, Param, ParamOf};
use super::methods::{OnConnect, SelfArg};

/// A libvirt connection with the object API (libvirt's `virConnectPtr`, `virt`'s
/// `Connect`): lookups, defines, lists and host facts as methods, and object handles that
/// carry it. A cheap clone of a [`Client`] (clones share one connection; the last to drop
/// closes it); [`client`](Self::client) is the low-level layer underneath.
///
/// ```no_run
/// # async fn demo() -> Result<(), libvirt_remote::Error> {
/// use libvirt_remote::prelude::*;
///
/// let conn = Connect::open("test:///default").await?;
/// println!("{} runs libvirt {}", conn.hostname().await?, conn.lib_version().await?);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Connect {
    client: Client,
}

impl fmt::Debug for Connect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Connect").field(&self.client).finish()
    }
}

impl From<Client> for Connect {
    fn from(client: Client) -> Self {
        Self { client }
    }
}

impl Connect {
    /// Connect to a libvirt URI with default options (see [`Client::connect`] for the URIs).
    pub async fn open(uri: &str) -> Result<Self, ConnectError> {
        Self::open_with(uri, ConnectOptions::default()).await
    }

    /// Connect to a libvirt URI with `opts` (read-only, keepalive, SSH settings, …).
    pub async fn open_with(uri: &str, opts: ConnectOptions) -> Result<Self, ConnectError> {
        Client::connect(uri, opts).await.map(Self::from)
    }

    /// Connect to the URI libvirt would pick when none is given ([`Client::connect_default`]).
    pub async fn open_default() -> Result<Self, ConnectError> {
        Client::connect_default(ConnectOptions::default())
            .await
            .map(Self::from)
    }

    /// The low-level client: typed calls by procedure, streams by procedure, untyped and QEMU
    /// monitor event subscriptions (typed ones: [`subscribe`](Self::subscribe)).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Close the connection now (see [`Client::close`]); every handle on it stops working.
    pub fn close(&self) {
        self.client.close();
    }

    /// True when `self` and `other` are clones of one connection.
    pub fn same_connection(&self, other: &Self) -> bool {
        self.client.same_connection(&other.client)
    }

    /// A handle on this connection for an object identity from the wire (a
    /// [`types::NonnullDomain`] becomes a [`Domain`], a `Vec` of them a `Vec` of handles), e.g. one
    /// taken from an event or from a handle of another connection (see the
    /// [module docs](self) for what that means).
    pub fn bind<W: Lift>(&self, wire: W) -> W::Out {
        wire.lift(self)
    }
}

/// Declares the handle types: one row per object, with its columns of accessors:
/// `strings [name / name_bytes = field "what", …]` (strings of the wire identity, each read
/// lossily as `Cow<str>` and as its bytes), `uuid ["what"]` (the identity's UUID), then in
/// braces any other methods, written out.
macro_rules! handles {
    ($(
        $(#[$m:meta])*
        $name:ident($wire:ident)
            $(strings [ $( $acc:ident / $bytes:ident = $field:ident $what:literal ),+ $(,)? ])?
            $(uuid [ $uuid_what:literal ])?
            { $($extra:tt)* }
    )*) => {
        $(
            $(#[$m])*
            ///
            /// Carries its connection; `Send + Sync`, cheap to clone (see the
            /// [module docs](self) for identity and other connections).
            #[derive(Clone)]
            pub struct $name {
                conn: Connect,
                wire: types::$wire,
            }

            impl $name {
                /// The connection this handle calls on.
                pub fn connect(&self) -> &Connect {
                    &self.conn
                }

                /// The object's identity as the wire carries it.
                pub fn wire(&self) -> &types::$wire {
                    &self.wire
                }

                /// The identity, giving up the connection.
                pub fn into_wire(self) -> types::$wire {
                    self.wire
                }

                $($(
                    #[doc = concat!(
                        $what, ", to print and compare (`== \"…\"`); one that is not UTF-8 reads \
                        with U+FFFD in place of its bad bytes, as `virt` reads it (the bytes: \
                        [`", stringify!($bytes), "`](Self::", stringify!($bytes), "))."
                    )]
                    pub fn $acc(&self) -> Cow<'_, str> {
                        self.wire.$field.to_string_lossy()
                    }

                    #[doc = concat!($what, " as the daemon sent it: any bytes, UTF-8 or not.")]
                    pub fn $bytes(&self) -> &[u8] {
                        self.wire.$field.as_bytes()
                    }
                )+)?

                $(
                    #[doc = concat!($uuid_what, ".")]
                    pub fn uuid(&self) -> types::Uuid {
                        self.wire.uuid
                    }
                )?

                $($extra)*
            }

            impl fmt::Debug for $name {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.debug_tuple(stringify!($name)).field(&self.wire).finish()
                }
            }

            impl Lift for types::$wire {
                type Out = $name;
                fn lift(self, conn: &Connect) -> $name {
                    $name { conn: conn.clone(), wire: self }
                }
            }

            impl OnConnect for $name {
                fn on_connect(&self) -> &Connect {
                    &self.conn
                }
            }

            impl Param for types::$wire {
                type In<'a> = &'a $name;
                fn from_param(p: &$name) -> Self {
                    p.wire.clone()
                }
            }

            /// A list of objects is taken as handles (`&[&dom1, &dom2]`).
            impl Param for Vec<types::$wire> {
                type In<'a> = &'a [&'a $name];
                fn from_param(p: &[&$name]) -> Self {
                    p.iter().map(|h| h.wire.clone()).collect()
                }
            }

            impl SelfArg<types::$wire> for $name {
                fn self_arg(&self) -> types::$wire {
                    self.wire.clone()
                }
            }
        )*
    };
}

handles! {
    /// A domain (a guest; libvirt's `virDomainPtr`).
    Domain(NonnullDomain)
        strings [name / name_bytes = name "The domain's name"]
        uuid ["The domain's UUID"]
    {
        /// The runtime id when the handle was obtained (-1: inactive then). Starting or
        /// stopping the domain does not update it: look the domain up again.
        pub fn id(&self) -> Option<u32> {
            u32::try_from(self.wire.id).ok()
        }
    }
    /// A storage pool (`virStoragePoolPtr`).
    StoragePool(NonnullStoragePool)
        strings [name / name_bytes = name "The pool's name"]
        uuid ["The pool's UUID"]
    {}
    /// A storage volume (`virStorageVolPtr`).
    StorageVol(NonnullStorageVol) strings [
        name / name_bytes = name "The volume's name",
        pool_name / pool_name_bytes = pool "The name of the pool holding the volume",
        key / key_bytes = key "The volume's key (usually its path)",
    ] {}
    /// A virtual network (`virNetworkPtr`).
    Network(NonnullNetwork)
        strings [name / name_bytes = name "The network's name"]
        uuid ["The network's UUID"]
    {}
    /// A port of a virtual network (`virNetworkPortPtr`).
    NetworkPort(NonnullNetworkPort) uuid ["The port's UUID"] {
        /// The network the port belongs to.
        pub fn network(&self) -> Network {
            self.wire.net.clone().lift(&self.conn)
        }
    }
    /// A host device (`virNodeDevicePtr`); the daemon knows it by name.
    NodeDevice(NonnullNodeDevice) strings [name / name_bytes = name "The device's name"] {}
    /// A secret (`virSecretPtr`).
    Secret(NonnullSecret)
        strings [
            usage_id / usage_id_bytes = usage_id
                "The usage id (e.g. the volume path for a volume secret)",
        ]
        uuid ["The secret's UUID"]
    {
        /// What the secret is for (`virSecretUsageType`).
        pub fn usage_type(&self) -> crate::proto::names::SecretUsageType {
            self.wire.usage_type
        }
    }
    /// A host network interface (`virInterfacePtr`).
    Interface(NonnullInterface) strings [
        name / name_bytes = name "The interface's name",
        mac / mac_bytes = mac "The interface's MAC address",
    ] {}
    /// A network filter (`virNWFilterPtr`).
    NwFilter(NonnullNwFilter)
        strings [name / name_bytes = name "The filter's name"]
        uuid ["The filter's UUID"]
    {}
    /// A network filter bound to a port (`virNWFilterBindingPtr`).
    NwFilterBinding(NonnullNwFilterBinding) strings [
        port_dev / port_dev_bytes = portdev "The port device the filter is bound to",
        filter_name / filter_name_bytes = filtername "The filter's name",
    ] {}
    /// A domain snapshot (`virDomainSnapshotPtr`).
    DomainSnapshot(NonnullDomainSnapshot) strings [name / name_bytes = name "The snapshot's name"] {
        /// The domain the snapshot belongs to.
        pub fn domain(&self) -> Domain {
            self.wire.dom.clone().lift(&self.conn)
        }
    }
    /// A domain checkpoint (`virDomainCheckpointPtr`).
    DomainCheckpoint(NonnullDomainCheckpoint) strings [name / name_bytes = name "The checkpoint's name"] {
        /// The domain the checkpoint belongs to.
        pub fn domain(&self) -> Domain {
            self.wire.dom.clone().lift(&self.conn)
        }
    }
}

/// Hands the name of [`Connect`] and of every handle `handles!` declares to `$cb!` (the
/// blocking API declares its twins from it; a name missing here fails the build there).
#[allow(unused_macros)] // used by the blocking API and the tests, when they are built
macro_rules! for_each_handle {
    ($cb:ident) => {
        $cb!(
            Connect,
            Domain,
            StoragePool,
            StorageVol,
            Network,
            NetworkPort,
            NodeDevice,
            Secret,
            Interface,
            NwFilter,
            NwFilterBinding,
            DomainSnapshot,
            DomainCheckpoint
        );
    };
}
#[allow(unused_imports)] // the blocking API's, when it is built
pub(crate) use for_each_handle;

// Stream methods: written here, not generated (a stream procedure's row has no method
// line): they open the stream and hand back its typed end (`client::stream`).

impl StorageVol {
    /// Write the volume (`virStorageVolUpload`): the whole of it, or the part `opts` says,
    /// optionally sparse, optionally deleting the volume if the upload fails
    /// ([`UploadOptions::delete_on_failure`]). Feed the [`Upload`] with
    /// [`send_file_and_finish`](Upload::send_file_and_finish),
    /// [`send_all_and_finish`](Upload::send_all_and_finish) or
    /// [`into_writer`](Upload::into_writer).
    ///
    /// ```no_run
    /// # async fn f(vol: &libvirt_remote::StorageVol) -> Result<(), libvirt_remote::Error> {
    /// use libvirt_remote::client::UploadOptions;
    ///
    /// let up = vol.upload(UploadOptions::new().sparse(true)).await?;
    /// let up = up.with_progress(|p| eprintln!("{} of {:?} bytes", p.done, p.total));
    /// up.send_file_and_finish("disk.raw".as_ref()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn upload(&self, opts: UploadOptions) -> Result<Upload, StreamError> {
        self.conn.client.vol_upload(&self.wire, opts).await
    }

    /// Read the volume (`virStorageVolDownload`): the whole of it, or the part `opts` says.
    /// Drain the [`Download`] with [`write_to_file`](Download::write_to_file),
    /// [`write_to`](Download::write_to), [`into_reader`](Download::into_reader) or as a
    /// `futures::Stream`.
    ///
    /// ```no_run
    /// # async fn f(vol: &libvirt_remote::StorageVol) -> Result<(), libvirt_remote::Error> {
    /// use libvirt_remote::client::DownloadOptions;
    ///
    /// let dl = vol.download(DownloadOptions::new()).await?;
    /// let bytes = dl.write_to_file("copy.raw".as_ref()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn download(&self, opts: DownloadOptions) -> Result<Download, StreamError> {
        self.conn.client.vol_download(&self.wire, opts).await
    }

    /// Write the whole of file `path` into the volume (`vol-upload`), telling `progress`
    /// the bytes done and the file's size; if the upload fails the volume is deleted
    /// ([`UploadOptions::delete_on_failure`]: for a volume made to receive the file). Returns
    /// the bytes sent. For a part, sparse data or another source use [`upload`](Self::upload).
    ///
    /// ```no_run
    /// # async fn f(vol: &libvirt_remote::StorageVol) -> Result<(), libvirt_remote::Error> {
    /// let sent = vol.upload_file("disk.raw".as_ref(), |p| eprintln!("{} of {:?}", p.done, p.total)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn upload_file(
        &self,
        path: &std::path::Path,
        progress: impl FnMut(Progress) + Send + 'static,
    ) -> Result<u64, Error> {
        let up = self
            .upload(UploadOptions::new().delete_on_failure(true))
            .await?;
        Ok(up
            .with_progress(progress)
            .send_file_and_finish(path)
            .await?)
    }

    /// Read the whole volume into file `path` (`vol-download`, created or truncated),
    /// telling `progress` the bytes done and the volume's capacity. Returns the bytes
    /// written. For a part or another sink use [`download`](Self::download).
    pub async fn download_to_file(
        &self,
        path: &std::path::Path,
        progress: impl FnMut(Progress) + Send + 'static,
    ) -> Result<u64, Error> {
        let total = self.info().await?.capacity;
        let dl = self.download(DownloadOptions::new()).await?;
        let dl = dl.with_total(total).with_progress(progress);
        Ok(dl.write_to_file(path).await?)
    }
}

impl Domain {
    /// The domain's console `dev_name` (`None`: the first one) as a [`Duplex`] stream
    /// (`virDomainOpenConsole`): guest output is read, keystrokes are written. `flags`:
    /// `virDomainConsoleFlags` (FORCE 1 takes the console from another client, SAFE 2).
    ///
    /// ```no_run
    /// # async fn f(dom: &libvirt_remote::Domain) -> std::io::Result<()> {
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let mut console = dom.open_console(None, 0).await.map_err(std::io::Error::other)?;
    /// console.write_all(b"\n").await?;
    /// let mut buf = [0; 4096];
    /// let n = console.read(&mut buf).await?;
    /// # Ok(()) }
    /// ```
    pub async fn open_console(
        &self,
        dev_name: Option<&str>,
        flags: u32,
    ) -> Result<Duplex, StreamError> {
        self.conn
            .client
            .domain_open_console(&self.wire, dev_name, flags)
            .await
    }

    /// The domain's channel `name` (`None`: the first one) as a [`Duplex`] stream
    /// (`virDomainOpenChannel`, e.g. the guest agent's `org.qemu.guest_agent.0`). `flags`:
    /// `virDomainChannelFlags` (FORCE 1).
    pub async fn open_channel(
        &self,
        name: Option<&str>,
        flags: u32,
    ) -> Result<Duplex, StreamError> {
        let client = &self.conn.client;
        client.domain_open_channel(&self.wire, name, flags).await
    }

    /// A screenshot of screen `screen` (`virDomainScreenshot`; `flags` must be 0): the
    /// image's MIME type (what the daemon names, e.g. `image/x-portable-pixmap`) and the
    /// image as a [`Download`].
    ///
    /// ```no_run
    /// # async fn f(dom: &libvirt_remote::Domain) -> Result<(), libvirt_remote::Error> {
    /// let (mime, image) = dom.screenshot(0, 0).await?;
    /// println!("{}", mime.as_deref().unwrap_or("unknown type"));
    /// image.write_to_file("screen.ppm".as_ref()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn screenshot(
        &self,
        screen: u32,
        flags: u32,
    ) -> Result<(Option<String>, Download), StreamError> {
        let args = DomainScreenshotArgs {
            dom: self.wire.clone(),
            screen,
            flags,
        };
        let image = self.conn.client.download::<DomainScreenshot>(&args).await?;
        match image.open_reply::<DomainScreenshot>() {
            Ok(ret) => Ok((ret.mime.lift(&self.conn), image)),
            Err(e) => Err(image
                .abort(&format!("the screenshot reply does not decode: {e}"))
                .await),
        }
    }
}

/// Node devices travel by name in most of their procedures.
impl SelfArg<LvString> for NodeDevice {
    fn self_arg(&self) -> LvString {
        self.wire.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync_clone<T: Send + Sync + Clone + 'static>() {}

    macro_rules! all_send_sync_clone {
        ($($name:ident),*) => {
            $(send_sync_clone::<$name>();)*
        };
    }

    #[test]
    fn handles_are_send_sync_clone() {
        for_each_handle!(all_send_sync_clone);
    }
}
