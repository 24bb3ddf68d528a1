//! Domain procedures.

use crate::proto::types::{Domain, Uuid};
use crate::procedures;
use crate::wire::xdr::LvString;
use crate::xdr_struct;

xdr_struct! {
    /// Args holding just a domain (`remote_domain_create_args`, `…_destroy_args`, …).
    pub struct DomainArgs {
        /// The domain.
        pub dom: Domain,
    }
}

xdr_struct! {
    /// Args holding a domain and flags.
    pub struct DomainFlagsArgs {
        /// The domain.
        pub dom: Domain,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a domain.
    pub struct DomainRet {
        /// The domain.
        pub dom: Domain,
    }
}

xdr_struct! {
    /// `remote_domain_lookup_by_name_args`.
    pub struct DomainLookupByNameArgs {
        /// Name.
        pub name: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_lookup_by_uuid_args`.
    pub struct DomainLookupByUuidArgs {
        /// UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_domain_define_xml_args`.
    pub struct DomainDefineXmlArgs {
        /// Domain XML.
        pub xml: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_get_state_ret`.
    pub struct DomainGetStateRet {
        /// `virDomainState` (RUNNING 1, PAUSED 3, SHUTOFF 5, CRASHED 6, …).
        pub state: i32,
        /// State-specific reason.
        pub reason: i32,
    }
}

procedures! {
    table PROCEDURES;
    /// `virDomainCreate`: start a defined domain.
    DomainCreate = 9: DomainArgs => ();
    /// `virDomainDefineXML`.
    DomainDefineXml = 11: DomainDefineXmlArgs => DomainRet;
    /// `virDomainDestroy`.
    DomainDestroy = 12: DomainArgs => ();
    /// `virDomainLookupByName`.
    DomainLookupByName = 23: DomainLookupByNameArgs => DomainRet;
    /// `virDomainLookupByUUID`.
    DomainLookupByUuid = 24: DomainLookupByUuidArgs => DomainRet;
    /// `virDomainGetState` (flags must be 0).
    DomainGetState = 212: DomainFlagsArgs => DomainGetStateRet;
    /// `virDomainUndefineFlags`.
    DomainUndefineFlags = 231: DomainFlagsArgs => ();
    /// `virDomainDestroyFlags`.
    DomainDestroyFlags = 234: DomainFlagsArgs => ();
}
