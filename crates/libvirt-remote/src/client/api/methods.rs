//! How the procedure table's rows become the object API's methods.
//!
//! The table lives in the protocol layer ([`proto::procs`](crate::proto::procs)), which knows
//! nothing of this one: each of its modules hands its rows to a callback macro (`rows!`, as
//! quinn's `apply_params!`), and [`object_methods!`] here is that callback. A row with a
//! `=> Object::method(…)` line becomes an async method of that handle (see
//! [`procedures!`](crate::proto::procedures) for the row grammar): its parameters are the argument
//! struct's fields that the row leaves to the caller, each taken as [`Param`] says; its return
//! is the reply field the row names, lifted as [`Lift`] says, or the whole reply.

use super::handles::Connect;
use crate::client::Error;
use crate::proto::types::{self, TypedInt};
use crate::wire::xdr::{FieldType, LvString};

/// A wire value as a caller wants it, given the connection it came from: strings as
/// [`String`] (lossily, as `virt` does; the raw bytes stay in the wire struct), object
/// identities as handles, lists and options element by element, everything else as is.
pub trait Lift {
    /// What the caller gets.
    type Out;
    /// Convert, binding object identities to `conn`.
    fn lift(self, conn: &Connect) -> Self::Out;
}

/// What a generated method returns for field `N` of reply struct `R`.
pub type Lifted<R, const N: usize> = <FieldType<R, N> as Lift>::Out;

macro_rules! lift_as_is {
    ($($t:ty),* $(,)?) => {
        $(
            impl Lift for $t {
                type Out = $t;
                fn lift(self, _: &Connect) -> $t {
                    self
                }
            }
        )*
        #[cfg(feature = "blocking")]
        crate::blocking::same_in_blocking!($($t),*);
    };
}

lift_as_is!(
    (),
    bool,
    i32,
    u32,
    i64,
    u64,
    f64,
    u8,
    types::Uuid,
    types::TypedParam,
    types::CharVec,
    bytes::Bytes,
    crate::proto::procs::connect::DomainStatsRecord,
    crate::proto::procs::domain::DomainFsInfo,
    crate::proto::procs::domain::DomainGetSecurityLabelRet,
    crate::proto::procs::domain::DomainInterface,
    crate::proto::procs::domain::DomainMemoryStat,
    crate::proto::procs::domain_tune::DomainIoThreadInfo,
    crate::proto::procs::network::NetworkDhcpLease,
    crate::proto::procs::node::NodeStat,
    crate::proto::names::DomainLifecycle,
    crate::proto::names::DomainStateReason,
    crate::proto::names::StateReason,
    crate::proto::names::LifecycleDetail,
);

impl<const N: usize> Lift for types::CharArray<N> {
    type Out = Self;
    fn lift(self, _: &Connect) -> Self {
        self
    }
}

#[cfg(feature = "blocking")]
impl<const N: usize> crate::blocking::IntoBlocking for types::CharArray<N> {
    type Out = Self;
    #[allow(private_interfaces)]
    fn into_blocking(self, _: &crate::blocking::Runtime) -> Self {
        self
    }
}

impl Lift for LvString {
    type Out = String;
    fn lift(self, _: &Connect) -> String {
        self.to_string_lossy().into_owned()
    }
}

impl<T: Lift> Lift for Option<T> {
    type Out = Option<T::Out>;
    fn lift(self, conn: &Connect) -> Self::Out {
        self.map(|v| v.lift(conn))
    }
}

impl<T: Lift> Lift for Vec<T> {
    type Out = Vec<T::Out>;
    fn lift(self, conn: &Connect) -> Self::Out {
        self.into_iter().map(|v| v.lift(conn)).collect()
    }
}

/// How a generated method takes an argument field of type `Self`: strings as `&str`
/// ([`Option<&str>`] when optional), another object as its handle (`&StorageVol`), every
/// other type as itself (so `Default::default()`, `None` and integer literals infer).
pub trait Param: Sized {
    /// The parameter's type.
    type In<'a>;
    /// The field's value.
    fn from_param(p: Self::In<'_>) -> Self;
}

/// What a generated method takes for field `N` of argument struct `A` ([`Param`]).
pub type ParamOf<'a, A, const N: usize> = <FieldType<A, N> as Param>::In<'a>;

/// Types a method takes as they are.
macro_rules! param_as_is {
    ($($t:ty),* $(,)?) => {
        $(
            impl Param for $t {
                type In<'a> = $t;
                fn from_param(p: $t) -> $t {
                    p
                }
            }
        )*
    };
}

param_as_is!(bool, u8, i32, u32, i64, u64, f64);
param_as_is!(types::Uuid, types::CharVec, bytes::Bytes);

// Lists of objects are taken as slices of handles (in `handles!`); other lists as they are.
param_as_is!(
    Vec<types::TypedParam>,
    Vec<LvString>,
    Vec<i32>,
    Vec<u32>,
    Vec<u64>
);

impl<const N: usize> Param for types::CharArray<N> {
    type In<'a> = Self;
    fn from_param(p: Self) -> Self {
        p
    }
}

impl Param for LvString {
    type In<'a> = &'a str;
    fn from_param(p: &str) -> Self {
        p.into()
    }
}

impl Param for Option<LvString> {
    type In<'a> = Option<&'a str>;
    fn from_param(p: Option<&str>) -> Self {
        p.map(Into::into)
    }
}

/// The connection a generated method calls on (for [`Connect`] itself and every handle).
pub(crate) trait OnConnect {
    /// The connection.
    fn on_connect(&self) -> &Connect;
}

impl OnConnect for Connect {
    fn on_connect(&self) -> &Connect {
        self
    }
}

/// The argument field a handle fills in for itself (its wire identity, or a node device's
/// name).
pub(crate) trait SelfArg<T> {
    /// The field's value.
    fn self_arg(&self) -> T;
}

/// A generated method's call: typed, through the connection's client.
pub(crate) async fn call<P: crate::proto::Procedure>(
    on: &impl OnConnect,
    args: &P::Args,
) -> Result<P::Ret, Error> {
    Ok(on.on_connect().client().call::<P>(args).await?)
}

/// A generated typed-parameter getter's call: with `VIR_TYPED_PARAM_STRING_OKAY`
/// ([`Client::call_typed_params`]).
pub(crate) async fn call_typed<P: crate::proto::typed_params::TypedParamsGetter>(
    on: &impl OnConnect,
    args: &P::Args,
) -> Result<P::Ret, Error>
where
    P::Args: Clone,
{
    Ok(on
        .on_connect()
        .client()
        .call_typed_params::<P>(args)
        .await?)
}

/// Flag families and named values are taken and returned as they are.
impl<T: TypedInt> Lift for T {
    type Out = T;
    fn lift(self, _: &Connect) -> T {
        self
    }
}

#[cfg(feature = "blocking")]
impl<T: TypedInt> crate::blocking::IntoBlocking for T {
    type Out = T;
    #[allow(private_interfaces)]
    fn into_blocking(self, _: &crate::blocking::Runtime) -> T {
        self
    }
}

impl<T: TypedInt> Param for T {
    type In<'a> = T;
    fn from_param(p: T) -> T {
        p
    }
}

/// The callback that turns one `procs` module's rows into methods (see the
/// [module docs](self)). Of a row it reads the docs, the name and the method line; the other
/// columns (the table's own, and `stream`/`fds`) are the protocol layer's. Rows without a
/// method line expand to nothing.
macro_rules! object_methods {
    (
        [$module:ident] table $table:ident $(, $_program:ident $_program_name:ident)?;
        $(
            $(#[$m:meta])*
            $name:ident = $_num:literal : $_args:ty => $_ret:ty, since $_since:literal
                $(, $_column:ident $_value:ident)* ;
            $( => $obj:ident :: $meth:ident ( $($a:tt)* )
                $(-> $rf:ident [$ri:literal] $(as $conv:ident)?)? ; )?
        )*
    ) => {
        /// The methods of one table, in a module that sees the table's names (the rows'
        /// docs link to them).
        mod $module {
            #[allow(unused_imports)]
            use $crate::proto::procs::$module::*;
            $(
                object_methods!(@row [$(#[$m])*] $module, $name;
                    $( $obj :: $meth ( $($a)* ) $(-> $rf [$ri] $(as $conv)?)? )?);
            )*
        }
    };

    (@row [$($d:tt)*] $module:ident, $name:ident;) => {};
    (@row [$($d:tt)*] $module:ident, $name:ident;
        $obj:ident :: $meth:ident ( $($a:tt)* ) $($r:tt)*) => {
        object_methods!(@args
            (self, $module, $name, [$($d)*], $obj, $meth, [$($r)*])
            [] [] [] [] $($a)*
        );
    };

    // The argument list, one field at a time: [position] [method params] [struct fields]
    // [call kind: empty, `count FIELD` or `typed`].
    (@args $ctx:tt [$($c:tt)*] [$($p:tt)*] [$($f:tt)*] [$($k:tt)*]) => {
        object_methods!(@emit $ctx [$($p)*] [$($f)*] [$($k)*]);
    };
    (@args ($s:tt, $($ctx:tt)*) [$($c:tt)*] [$($p:tt)*] [$($f:tt)*] [$($k:tt)*]
        $field:ident = self $(, $($rest:tt)*)?) => {
        object_methods!(@args ($s, $($ctx)*) [$($c)* 1] [$($p)*]
            [$($f)* $field: $crate::client::api::methods::SelfArg::self_arg($s),] [$($k)*]
            $($($rest)*)?);
    };
    (@args $ctx:tt [$($c:tt)*] [$($p:tt)*] [$($f:tt)*] [$($k:tt)*]
        $field:ident = count $(, $($rest:tt)*)?) => {
        object_methods!(@args $ctx [$($c)* 1] [$($p)*]
            [$($f)* $field: 0,] [count $field] $($($rest)*)?);
    };
    (@args $ctx:tt [$($c:tt)*] [$($p:tt)*] [$($f:tt)*] [$($k:tt)*]
        $field:ident = typed_count $(, $($rest:tt)*)?) => {
        object_methods!(@args $ctx [$($c)* 1] [$($p)*]
            [$($f)* $field: 0,] [typed_count $field] $($($rest)*)?);
    };
    (@args $ctx:tt [$($c:tt)*] [$($p:tt)*] [$($f:tt)*] [$($k:tt)*]
        $field:ident = typed($e:expr) $(, $($rest:tt)*)?) => {
        object_methods!(@args $ctx [$($c)* 1] [$($p)*]
            [$($f)* $field: $e,] [typed] $($($rest)*)?);
    };
    (@args $ctx:tt [$($c:tt)*] [$($p:tt)*] [$($f:tt)*] [$($k:tt)*]
        $field:ident = $e:expr $(, $($rest:tt)*)?) => {
        object_methods!(@args $ctx [$($c)* 1] [$($p)*]
            [$($f)* $field: $e,] [$($k)*] $($($rest)*)?);
    };
    (@args ($s:tt, $module:ident, $name:ident, $($ctx:tt)*) [$($c:tt)*] [$($p:tt)*]
        [$($f:tt)*] [$($k:tt)*] $field:ident $(, $($rest:tt)*)?) => {
        object_methods!(@args ($s, $module, $name, $($ctx)*) [$($c)* 1]
            [$($p)* $field: $crate::client::handles::ParamOf<
                '_,
                <$crate::proto::procs::$module::$name as $crate::proto::Procedure>::Args,
                { 0 $(+ $c)* },
            >,]
            [$($f)* $field: $crate::client::handles::Param::from_param($field),] [$($k)*]
            $($($rest)*)?);
    };

    (@emit ($s:tt, $module:ident, $name:ident, [$($m:tt)*], $obj:ident, $meth:ident, [$($r:tt)*])
        [$($p:tt)*] [$($f:tt)*] [$($k:tt)*]) => {
        impl $crate::client::handles::$obj {
            $($m)*
            #[doc = ""]
            #[doc = concat!(
                "Calls [`", stringify!($name), "`](crate::proto::procs::", stringify!($module),
                "::", stringify!($name), ")."
            )]
            #[allow(unused_braces, clippy::too_many_arguments)]
            pub async fn $meth(&$s, $($p)*) -> ::core::result::Result<
                object_methods!(@rty $crate::proto::procs::$module::$name; $($r)*),
                $crate::client::Error,
            > {
                type A = <$crate::proto::procs::$module::$name as $crate::proto::Procedure>::Args;
                #[allow(unused_mut)]
                let mut args: A = object_methods!(@build A; $($f)*);
                let ret = object_methods!(@call $crate::proto::procs::$module::$name, $s, args; $($k)*);
                Ok(object_methods!(@rval $s, ret; $($r)*))
            }
        }

        #[cfg(feature = "blocking")]
        object_methods!(@blocking ($s, $module, $name, [$($m)*], $obj, $meth, [$($r)*]) $($p)*);
    };
    // The blocking twin (`crate::blocking`): the same parameters, the async method run on the
    // connection's private runtime, its result made blocking ([`IntoBlocking`]).
    (@blocking ($s:tt, $module:ident, $name:ident, [$($m:tt)*], $obj:ident, $meth:ident,
        [$($r:tt)*]) $($pn:ident : $pt:ty,)*) => {
        impl $crate::blocking::$obj {
            $($m)*
            #[doc = ""]
            #[doc = concat!(
                "Blocking: runs [`", stringify!($obj), "::", stringify!($meth), "`](crate::",
                stringify!($obj), "::", stringify!($meth), ") on the connection's private runtime."
            )]
            #[allow(unused_braces, clippy::too_many_arguments)]
            pub fn $meth(&$s, $($pn: $pt),*) -> ::core::result::Result<
                object_methods!(@bty $crate::proto::procs::$module::$name; $($r)*),
                $crate::client::Error,
            > {
                let ret = $s.rt.block_on($s.inner.$meth($($pn),*))?;
                Ok(object_methods!(@bval $s, ret; $($r)*))
            }
        }
    };
    (@bty $p:path; -> $rf:ident [$ri:literal]) => {
        <object_methods!(@rty $p; -> $rf [$ri]) as $crate::blocking::IntoBlocking>::Out
    };
    (@bty $p:path; $($r:tt)*) => { object_methods!(@rty $p; $($r)*) };
    (@bval $s:tt, $v:ident; -> $rf:ident [$ri:literal]) => {
        $crate::blocking::IntoBlocking::into_blocking($v, &$s.rt)
    };
    (@bval $s:tt, $v:ident; $($r:tt)*) => { $v };
    (@build $args:ident;) => { () };
    (@build $args:ident; $($f:tt)+) => { $args { $($f)+ } };
    (@call $p:path, $s:tt, $a:ident;) => {
        $crate::client::api::methods::call::<$p>($s, &$a).await?
    };
    (@call $p:path, $s:tt, $a:ident; typed) => {
        $crate::client::api::methods::call_typed::<$p>($s, &$a).await?
    };
    (@call $p:path, $s:tt, $a:ident; count $field:ident) => {{
        let first = $crate::client::api::methods::call::<$p>($s, &$a).await?;
        $a.$field = first.nparams as _;
        $crate::client::api::methods::call::<$p>($s, &$a).await?
    }};
    (@call $p:path, $s:tt, $a:ident; typed_count $field:ident) => {{
        let first = $crate::client::api::methods::call_typed::<$p>($s, &$a).await?;
        $a.$field = first.nparams as _;
        $crate::client::api::methods::call_typed::<$p>($s, &$a).await?
    }};
    (@rty $p:path;) => { <$p as $crate::proto::Procedure>::Ret };
    (@rty $p:path; -> $rf:ident [$ri:literal]) => {
        $crate::client::handles::Lifted<<$p as $crate::proto::Procedure>::Ret, $ri>
    };
    (@rty $p:path; -> $rf:ident [$ri:literal] as bool) => { bool };
    (@rty $p:path; -> $rf:ident [$ri:literal] as version) => {
        $crate::proto::LibvirtVersion
    };
    (@rval $s:tt, $v:ident;) => { $v };
    (@rval $s:tt, $v:ident; -> $rf:ident [$ri:literal]) => {
        $crate::client::handles::Lift::lift(
            $v.$rf,
            $crate::client::api::methods::OnConnect::on_connect($s),
        )
    };
    (@rval $s:tt, $v:ident; -> $rf:ident [$ri:literal] as bool) => { $v.$rf != 0 };
    (@rval $s:tt, $v:ident; -> $rf:ident [$ri:literal] as version) => {
        $crate::proto::LibvirtVersion::from_number($v.$rf)
    };
}

crate::proto::procs::for_each_table!(object_methods);
