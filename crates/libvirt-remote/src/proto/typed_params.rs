//! Typed-parameter getters as libvirt's C library sends them.
//!
//! libvirt.so adds [`STRING_OKAY`] (`VIR_TYPED_PARAM_STRING_OKAY`, 4) to the flags of the
//! getters listed here before the call leaves the process, and the daemon serialises string
//! parameters only when the client's flags carry it: without it they are left out of the
//! answer silently (`DomainGetBlkioParameters` on qemu answers 1 of its 6 parameters). The
//! procedure table sends exactly the flags it is given; [`as_libvirt_sends`] and
//! `Client::call_typed_params` add the flag the way the C library does.

use crate::proto::Procedure;
use crate::proto::procs::{domain, domain_tune, node};

/// `VIR_TYPED_PARAM_STRING_OKAY` (4): the caller accepts string parameters.
pub use crate::proto::types::typed_param_flags::STRING_OKAY;

/// A flags word that can carry [`STRING_OKAY`]: the raw `u32` and the typed getter flags
/// ([`DomainGetParamsFlags`](domain::DomainGetParamsFlags),
/// [`TypedParameterFlags`](crate::proto::types::TypedParameterFlags)).
pub trait StringOkay {
    /// Add [`STRING_OKAY`], keeping every other bit.
    fn add_string_okay(&mut self);
}

impl StringOkay for u32 {
    fn add_string_okay(&mut self) {
        *self |= STRING_OKAY;
    }
}

impl StringOkay for domain::DomainGetParamsFlags {
    fn add_string_okay(&mut self) {
        self.insert(Self::STRING_OKAY);
    }
}

impl StringOkay for crate::proto::types::TypedParameterFlags {
    fn add_string_okay(&mut self) {
        self.insert(Self::STRING_OKAY);
    }
}

/// A getter to whose flags libvirt's C library adds [`STRING_OKAY`].
pub trait TypedParamsGetter: Procedure {
    /// The flags word of the arguments.
    fn flags_mut(args: &mut Self::Args) -> &mut dyn StringOkay;
}

macro_rules! string_okay_getters {
    ($( $(#[$m:meta])* $p:path, )*) => {
        $(
            $(#[$m])*
            impl TypedParamsGetter for $p {
                fn flags_mut(args: &mut Self::Args) -> &mut dyn StringOkay {
                    &mut args.flags
                }
            }
        )*

        /// Procedure numbers of every [`TypedParamsGetter`], in table order.
        pub const STRING_OKAY_GETTERS: &[i32] = &[$( <$p as Procedure>::NUMBER, )*];
    };
}

string_okay_getters! {
    /// `virDomainGetMemoryParameters`.
    domain::DomainGetMemoryParameters,
    /// `virDomainGetBlkioParameters`.
    domain::DomainGetBlkioParameters,
    /// `virDomainGetSchedulerParametersFlags`.
    domain::DomainGetSchedulerParametersFlags,
    /// `virDomainBlockStatsFlags`.
    domain::DomainBlockStatsFlags,
    /// `virDomainGetCPUStats`.
    domain::DomainGetCpuStats,
    /// `virDomainGetBlockIoTune`.
    domain_tune::DomainGetBlockIoTune,
    /// `virDomainGetNumaParameters`.
    domain_tune::DomainGetNumaParameters,
    /// `virDomainGetInterfaceParameters`.
    domain_tune::DomainGetInterfaceParameters,
    /// `virNodeGetMemoryParameters`.
    node::NodeGetMemoryParameters,
}

/// `args` with [`STRING_OKAY`] added to its flags, as libvirt.so sends them.
pub fn as_libvirt_sends<P: TypedParamsGetter>(mut args: P::Args) -> P::Args {
    P::flags_mut(&mut args).add_string_okay();
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::procs::domain::{
        DomainGetBlkioParameters, DomainGetParamsArgs, DomainGetParamsFlags,
    };
    use crate::proto::types::{NonnullDomain, Uuid};

    #[test]
    fn the_flag_is_added_and_other_bits_kept() {
        let args = DomainGetParamsArgs {
            dom: NonnullDomain {
                name: "d".into(),
                uuid: Uuid([0; 16]),
                id: -1,
            },
            nparams: 0,
            flags: DomainGetParamsFlags::LIVE,
        };
        let sent = as_libvirt_sends::<DomainGetBlkioParameters>(args);
        assert_eq!(sent.flags.bits(), 1 | STRING_OKAY);
        assert_eq!(sent.flags.to_string(), "LIVE | STRING_OKAY");
        assert_eq!(STRING_OKAY, 4);
        assert_eq!(STRING_OKAY_GETTERS.len(), 9);
    }
}
