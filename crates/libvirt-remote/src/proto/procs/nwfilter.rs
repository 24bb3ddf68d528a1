//! Network filter and filter binding procedures.

use super::common::{
    ListAllArgs, MaxNamesArgs, NameArgs, NumRet, UuidArgs, XmlArgs, XmlFlagsArgs, XmlRet,
};
use crate::proto::types::{NonnullNwFilter, NonnullNwFilterBinding};
use crate::proto::{limits, procedures};
use crate::wire::xdr::{LvString, xdr_struct};

xdr_struct! {
    /// Args holding just a network filter.
    pub struct NwFilterArgs {
        /// The filter.
        pub nwfilter: NonnullNwFilter,
    }
}

xdr_struct! {
    /// Args holding a network filter and flags.
    pub struct NwFilterFlagsArgs {
        /// The filter.
        pub nwfilter: NonnullNwFilter,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a network filter.
    pub struct NwFilterRet {
        /// The filter.
        pub nwfilter: NonnullNwFilter,
    }
}

xdr_struct! {
    /// `remote_connect_list_nwfilters_ret`.
    pub struct ConnectListNwFiltersRet {
        /// Filter names.
        pub names: Vec<LvString> [limits::NWFILTER_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_connect_list_all_nwfilters_ret`.
    pub struct ConnectListAllNwFiltersRet {
        /// The filters.
        pub filters: Vec<NonnullNwFilter> [limits::NWFILTER_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// Args holding just a filter binding.
    pub struct NwFilterBindingArgs {
        /// The binding.
        pub nwfilter: NonnullNwFilterBinding,
    }
}

xdr_struct! {
    /// Args holding a filter binding and flags.
    pub struct NwFilterBindingFlagsArgs {
        /// The binding.
        pub nwfilter: NonnullNwFilterBinding,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a filter binding.
    pub struct NwFilterBindingRet {
        /// The binding.
        pub nwfilter: NonnullNwFilterBinding,
    }
}

xdr_struct! {
    /// `remote_connect_list_all_nwfilter_bindings_ret`.
    pub struct ConnectListAllNwFilterBindingsRet {
        /// The bindings.
        pub bindings: Vec<NonnullNwFilterBinding> [limits::NWFILTER_BINDING_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [nwfilter]
    table PROCEDURES;
    /// `virNWFilterLookupByName`.
    NwFilterLookupByName = 175: NameArgs => NwFilterRet, since "0.8.0";
        => Connect::lookup_nw_filter_by_name(name) -> nwfilter[0];
    /// `virNWFilterLookupByUUID`.
    NwFilterLookupByUuid = 176: UuidArgs => NwFilterRet, since "0.8.0";
        => Connect::lookup_nw_filter_by_uuid(uuid) -> nwfilter[0];
    /// `virNWFilterGetXMLDesc`.
    NwFilterGetXmlDesc = 177: NwFilterFlagsArgs => XmlRet, since "0.8.0";
        => NwFilter::xml_desc(nwfilter = self, flags) -> xml[0];
    /// `virConnectNumOfNWFilters`.
    ConnectNumOfNwFilters = 178: () => NumRet, since "0.8.0";
        => Connect::num_of_nw_filters() -> num[0];
    /// `virConnectListNWFilters` (legacy; prefer [`ConnectListAllNwFilters`]).
    ConnectListNwFilters = 179: MaxNamesArgs => ConnectListNwFiltersRet, since "0.8.0";
        => Connect::list_nw_filters(maxnames) -> names[0];
    /// `virNWFilterDefineXML`.
    NwFilterDefineXml = 180: XmlArgs => NwFilterRet, since "0.8.0";
        => Connect::define_nw_filter_xml(xml) -> nwfilter[0];
    /// `virNWFilterUndefine`.
    NwFilterUndefine = 181: NwFilterArgs => (), since "0.8.0";
        => NwFilter::undefine(nwfilter = self);
    /// `virConnectListAllNWFilters` (flags must be 0).
    ConnectListAllNwFilters = 286: ListAllArgs => ConnectListAllNwFiltersRet, since "0.10.2";
        => Connect::list_all_nw_filters(need_results = 1, flags) -> filters[0];
    /// `virNWFilterBindingLookupByPortDev`.
    NwFilterBindingLookupByPortDev = 397: NameArgs => NwFilterBindingRet, since "4.5.0";
        => Connect::lookup_nw_filter_binding_by_port_dev(name) -> nwfilter[0];
    /// `virNWFilterBindingGetXMLDesc`.
    NwFilterBindingGetXmlDesc = 398: NwFilterBindingFlagsArgs => XmlRet, since "4.5.0";
        => NwFilterBinding::xml_desc(nwfilter = self, flags) -> xml[0];
    /// `virNWFilterBindingCreateXML`.
    NwFilterBindingCreateXml = 399: XmlFlagsArgs => NwFilterBindingRet, since "4.5.0";
        => Connect::create_nw_filter_binding_xml(xml, flags) -> nwfilter[0];
    /// `virNWFilterBindingDelete`.
    NwFilterBindingDelete = 400: NwFilterBindingArgs => (), since "4.5.0";
        => NwFilterBinding::delete(nwfilter = self);
    /// `virConnectListAllNWFilterBindings` (flags must be 0).
    ConnectListAllNwFilterBindings = 401: ListAllArgs => ConnectListAllNwFilterBindingsRet, since "4.5.0";
        => Connect::list_all_nw_filter_bindings(need_results = 1, flags) -> bindings[0];
    /// `virNWFilterDefineXMLFlags` (flags: VALIDATE 1).
    NwFilterDefineXmlFlags = 431: XmlFlagsArgs => NwFilterRet, since "7.7.0";
        => Connect::define_nw_filter_xml_flags(xml, flags) -> nwfilter[0];
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
