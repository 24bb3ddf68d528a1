//! The procedure table: one declaration per procedure, typed args and return.
//!
//! Adding a procedure is one line in a [`procedures!`](crate::proto::procedures) block (plus its
//! `xdr_struct!` args/ret types when they are not void or shared).

use std::fmt::{self, Debug};

use crate::wire::xdr::{Decode, Encode};

/// Which way a stream procedure moves data, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamDirection {
    /// The client sends data (`@writestream`, e.g. `STORAGE_VOL_UPLOAD`).
    Upload,
    /// The server sends data (`@readstream`, e.g. `STORAGE_VOL_DOWNLOAD`).
    Download,
    /// Both send data on the same stream (`DOMAIN_OPEN_CONSOLE`, `DOMAIN_OPEN_CHANNEL`: the
    /// guest's output one way, keystrokes the other). Either side may finish or abort it.
    Duplex,
}

/// Which side of a call carries file descriptors (`CALL_WITH_FDS` / `REPLY_WITH_FDS`: a
/// descriptor count after the header, the descriptors as `SCM_RIGHTS` ancillary data on a
/// unix socket).
///
/// Such a call goes through `call_with_fds` (`Connection::call_with_fds`,
/// `Client::call_with_fds`), on a unix socket only; the plain `call` refuses it before
/// anything is sent ([`Procedure::refuse_fds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FdPassing {
    /// The call sends descriptors (`CALL_WITH_FDS`).
    Call,
    /// The reply returns descriptors (`REPLY_WITH_FDS`).
    Reply,
    /// The call sends descriptors and the reply may return some.
    Both,
}

/// A procedure that passes file descriptors, made through a path that carries none (what
/// [`Procedure::refuse_fds`] reports; the connection turns it into its own error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeedsFds {
    /// The procedure's name.
    pub procedure: &'static str,
    /// Which side carries descriptors.
    pub fds: FdPassing,
}

/// A libvirt release, `major.minor.micro` (ordered; `Display` is `9.0.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LibvirtVersion {
    /// Major release.
    pub major: u32,
    /// Minor release.
    pub minor: u32,
    /// Micro release.
    pub micro: u32,
}

impl LibvirtVersion {
    /// `major.minor.micro`.
    pub const fn new(major: u32, minor: u32, micro: u32) -> Self {
        Self {
            major,
            minor,
            micro,
        }
    }

    /// Parses `"x.y.z"` at compile time (a malformed literal in a table row is a build error).
    ///
    /// # Panics
    ///
    /// When `s` is not three dot-separated decimal numbers.
    pub const fn parse(s: &str) -> Self {
        let b = s.as_bytes();
        let mut parts = [0u32; 3];
        let mut part = 0;
        let mut digits = 0;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c == b'.' {
                assert!(digits > 0 && part < 2, "libvirt version is not x.y.z");
                part += 1;
                digits = 0;
            } else {
                assert!(c.is_ascii_digit(), "libvirt version is not x.y.z");
                parts[part] = parts[part] * 10 + (c - b'0') as u32;
                digits += 1;
            }
            i += 1;
        }
        assert!(digits > 0 && part == 2, "libvirt version is not x.y.z");
        Self::new(parts[0], parts[1], parts[2])
    }

    /// The number `virConnectGetLibVersion` reports: `major * 1_000_000 + minor * 1_000 +
    /// micro` (9.0.0 is `9000000`).
    pub const fn as_number(self) -> u64 {
        self.major as u64 * 1_000_000 + self.minor as u64 * 1_000 + self.micro as u64
    }

    /// The inverse of [`as_number`](Self::as_number) (e.g. for
    /// `ConnectGetLibVersionRet::lib_ver`).
    pub const fn from_number(n: u64) -> Self {
        Self::new(
            (n / 1_000_000) as u32,
            (n / 1_000 % 1_000) as u32,
            (n % 1_000) as u32,
        )
    }
}

impl fmt::Display for LibvirtVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.micro)
    }
}

/// The arguments of a stream procedure. They decide whether the stream is sparse (for volume
/// transfers, a flag in the arguments), so the core's hole rules follow from what was sent
/// and cannot disagree with it.
pub trait StreamArgs {
    /// True when these arguments open a sparse stream: holes may travel both ways.
    fn sparse(&self) -> bool {
        false
    }

    /// The most a download opened with these arguments may carry, data and holes counted,
    /// when the arguments say (a volume download's `length`); `None`: no bound but 2^64 - 1.
    fn receive_limit(&self) -> Option<u64> {
        None
    }
}

/// A typed libvirt procedure.
pub trait Procedure {
    /// Program number ([`REMOTE_PROGRAM`](crate::proto::REMOTE_PROGRAM),
    /// [`QEMU_PROGRAM`](crate::proto::QEMU_PROGRAM) or [`LXC_PROGRAM`](crate::proto::LXC_PROGRAM)).
    const PROGRAM: u32;
    /// Procedure number (stable forever).
    const NUMBER: i32;
    /// Name for logs and errors.
    const NAME: &'static str;
    /// `Some` when a successful call opens a stream.
    const STREAM: Option<StreamDirection>;
    /// The first libvirt release whose daemon knows this procedure. An older daemon answers
    /// it with "unknown procedure", reported as
    /// [`ErrorCode::NO_SUPPORT`](crate::proto::ErrorCode::NO_SUPPORT).
    const SINCE: LibvirtVersion;
    /// `Some` when the call or its reply carries file descriptors (`call_with_fds` only).
    const FDS: Option<FdPassing> = None;
    /// `Some("Object::method")` when the row names a method of the object API (built by the
    /// client, feature `client`), e.g. `"Domain::xml_desc"`; `Connect` for the connection's
    /// own methods.
    const METHOD: Option<&'static str> = None;

    /// [`NeedsFds`] for a procedure that passes descriptors: the plain typed call paths
    /// check this before anything is queued and report it as their own error (the
    /// descriptor path, `call_with_fds`, does not check).
    fn refuse_fds() -> Result<(), NeedsFds> {
        match Self::FDS {
            None => Ok(()),
            Some(fds) => Err(NeedsFds {
                procedure: Self::NAME,
                fds,
            }),
        }
    }
    /// Arguments (`()` when void).
    type Args: Encode + Send + Sync;
    /// Return value (`()` when void).
    type Ret: Decode + Send + 'static;
}

/// Visits procedures with their types: [`procs::visit_procedures`](crate::proto::procs::visit_procedures)
/// calls [`visit`](Self::visit) once per declared procedure, so code that must cover every
/// procedure's `Args` and `Ret` (the XDR fuzz checks, say) iterates the table itself instead
/// of a list kept beside it.
pub trait ProcedureVisitor {
    /// Called with one procedure.
    fn visit<P: Procedure<Args: Decode + Debug, Ret: Encode + Debug>>(&mut self);
}

/// Static facts about one procedure, for lookups by number (tracing, raw calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    /// Program number.
    pub program: u32,
    /// Procedure number.
    pub number: i32,
    /// Name.
    pub name: &'static str,
    /// Stream direction, if any.
    pub stream: Option<StreamDirection>,
    /// The first libvirt release whose daemon knows the procedure.
    pub since: LibvirtVersion,
    /// Descriptor passing, if the call or its reply carries descriptors.
    pub fds: Option<FdPassing>,
    /// The object API method the row generates, `"Object::method"` ([`Procedure::METHOD`]).
    pub method: Option<&'static str>,
}

impl ProcInfo {
    /// The row of procedure `P` (what its table holds for it).
    pub const fn of<P: Procedure>() -> Self {
        Self {
            program: P::PROGRAM,
            number: P::NUMBER,
            name: P::NAME,
            stream: P::STREAM,
            since: P::SINCE,
            fds: P::FDS,
            method: P::METHOD,
        }
    }
}

/// Declares procedures of one program: a unit type implementing [`Procedure`] per entry,
/// a `&[ProcInfo]` table named by the first line, and `visit_procedures`, which hands each
/// entry's type to a [`ProcedureVisitor`] in table order. The program is the remote program
/// unless the first line names another (`table PROCEDURES, program QEMU_PROGRAM;`, a
/// constant of [`crate::proto`]). Every row names the libvirt release that introduced the
/// procedure (`since`); a stream procedure adds its direction, a procedure that passes file
/// descriptors adds which side carries them ([`FdPassing`]).
///
/// Each module of [`procs`](crate::proto::procs) keeps its rows in a macro of its own
/// (`rows!`, which hands them to a callback macro, as quinn's `apply_params!` does) and
/// applies this one to them; the first token group (`[storage]`) names the module, for the
/// callbacks of the layers above that expand the same rows.
///
/// A row may be followed by a `=> Object::method(…)` line: a method of the object API that a
/// layer above builds from the row (`Object` is `Connect` for the connection's own methods).
/// Here it is data only: [`Procedure::METHOD`] and the type's docs name it. The parentheses
/// list the argument struct's fields in order:
/// * `field = self`: the handle fills it in (its wire identity);
/// * `field = EXPR`: a fixed value (`need_results = 1`);
/// * `field = count`: a parameter getter's `nparams`: the method asks for the count first
///   (0), then for that many (the reply's `nparams`);
/// * `field = typed_count`: the same for a typed-parameter getter, both calls with
///   `VIR_TYPED_PARAM_STRING_OKAY` added ([`typed_params`](crate::proto::typed_params));
/// * `field = typed(EXPR)`: a fixed value, and the call adds `VIR_TYPED_PARAM_STRING_OKAY`;
/// * `field`: an argument of the method, of the field's own type
///   ([`FieldType`](crate::wire::xdr::FieldType)).
///
/// `-> field[N]` returns field `N` of the reply struct, lifted (strings as `String`, object
/// identities as handles); `-> field[N] as bool` returns whether it is non-zero,
/// `-> field[N] as version` a [`LibvirtVersion`] decoded from `major·10⁶ + minor·10³ + micro`;
/// without `->` the method returns the reply struct as it is.
///
/// ```text
/// procedures! {
///     [connect] table CONNECT;
///     /// doc
///     ConnectGetType = 3: () => ConnectGetTypeRet, since "0.3.0";
///         => Connect::kind() -> kind[0];
///     DomainGetXmlDesc = 14: DomainFlagsArgs => XmlRet, since "0.3.0";
///         => Domain::xml_desc(dom = self, flags) -> xml[0];
///     StorageVolUpload = 208: StorageVolUploadArgs => (), since "0.9.0", stream Upload;
/// }
/// procedures! {
///     [lxc] table PROCEDURES, program LXC_PROGRAM;
///     LxcDomainOpenNamespace = 1: LxcDomainOpenNamespaceArgs => (), since "1.0.2", fds Reply;
/// }
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __procedures {
    (
        [$module:ident] $($rest:tt)*
    ) => {
        $crate::__procedures! { $($rest)* }
    };
    (
        table $table:ident;
        $($rows:tt)*
    ) => {
        $crate::__procedures! { table $table, program REMOTE_PROGRAM; $($rows)* }
    };
    (
        table $table:ident, program $program:ident;
        $(
            $(#[$m:meta])*
            $name:ident = $num:literal : $args:ty => $ret:ty, since $since:literal
                $(, stream $dir:ident)? $(, fds $fds:ident)? ;
            $( => $obj:ident :: $meth:ident ( $($a:tt)* )
                $(-> $rf:ident [$ri:literal] $(as $conv:ident)?)? ; )?
        )*
    ) => {
        $(
            $(#[$m])*
            #[doc = ""]
            #[doc = concat!(
                "Procedure ", stringify!($num), " of `", stringify!($program),
                "`, since libvirt ", $since, "."
            )]
            $(#[doc = concat!(
                "Object API: `", stringify!($obj), "::", stringify!($meth), "`."
            )])?
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
            pub struct $name;

            impl $crate::proto::Procedure for $name {
                const PROGRAM: u32 = $crate::proto::$program;
                const NUMBER: i32 = $num;
                const NAME: &'static str = stringify!($name);
                const STREAM: Option<$crate::proto::StreamDirection> =
                    $crate::__procedures!(@dir $($dir)?);
                const SINCE: $crate::proto::LibvirtVersion =
                    $crate::proto::LibvirtVersion::parse($since);
                const FDS: Option<$crate::proto::FdPassing> =
                    $crate::__procedures!(@fds $($fds)?);
                const METHOD: Option<&'static str> =
                    $crate::__procedures!(@method_name $($obj $meth)?);
                type Args = $args;
                type Ret = $ret;
            }
        )*

        /// Every procedure declared in this module.
        pub const $table: &[$crate::proto::ProcInfo] = &[
            $( $crate::proto::ProcInfo::of::<$name>(), )*
        ];

        /// Hand every procedure declared in this module to `v`, in table order.
        pub fn visit_procedures(v: &mut impl $crate::proto::ProcedureVisitor) {
            $( v.visit::<$name>(); )*
        }
    };
    (@dir) => { None };
    (@dir $dir:ident) => { Some($crate::proto::StreamDirection::$dir) };
    (@fds) => { None };
    (@fds $fds:ident) => { Some($crate::proto::FdPassing::$fds) };
    (@method_name) => { None };
    (@method_name $obj:ident $meth:ident) => {
        Some(concat!(stringify!($obj), "::", stringify!($meth)))
    };
}

#[cfg(test)]
mod tests {
    use super::LibvirtVersion;

    #[test]
    fn versions_parse_order_and_round_trip() {
        let v = LibvirtVersion::parse("9.0.0");
        assert_eq!(v, LibvirtVersion::new(9, 0, 0));
        assert_eq!(v.as_number(), 9_000_000);
        assert_eq!(LibvirtVersion::from_number(9_000_000), v);
        assert_eq!(LibvirtVersion::parse("12.10.3").to_string(), "12.10.3");
        assert!(LibvirtVersion::parse("0.10.2") > LibvirtVersion::parse("0.9.13"));
        assert!(LibvirtVersion::parse("10.0.0") > LibvirtVersion::parse("9.7.0"));
    }

    #[test]
    fn malformed_versions_are_refused() {
        for bad in ["", "9", "9.0", "9.0.0.1", "9..0", "v9.0.0", "9.0.x", ".9.0"] {
            assert!(
                std::panic::catch_unwind(|| LibvirtVersion::parse(bad)).is_err(),
                "{bad:?}"
            );
        }
    }
}
