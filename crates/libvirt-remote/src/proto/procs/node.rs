//! Host (node) procedures: CPU, memory, NUMA cells, power.
//!
//! Node *devices* are in [`super::nodedev`].

use bytes::Bytes;

use crate::proto::types::{CharArray, CharVec, TypedParam};
use crate::proto::{limits, procedures};
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::names::named! {
    /// `virNodeSuspendTarget` for [`NodeSuspendForDuration`] (and domain PM suspend).
    pub struct NodeSuspendTarget(u32) {
        /// Suspend to RAM.
        MEM = 0,
        /// Suspend to disk.
        DISK = 1,
        /// Both.
        HYBRID = 2,
    }
}

/// Special cell / CPU numbers for the statistics calls.
pub mod all {
    /// `VIR_NODE_CPU_STATS_ALL_CPUS`: totals over every CPU.
    pub const CPUS: i32 = -1;
    /// `VIR_NODE_MEMORY_STATS_ALL_CELLS`: totals over every NUMA cell.
    pub const CELLS: i32 = -1;
}

xdr_struct! {
    /// `remote_node_get_info_ret`. `model` is an rpcgen `char[32]`: 128 bytes on the wire.
    pub struct NodeGetInfoRet {
        /// CPU model (NUL-padded).
        pub model: CharArray<32>,
        /// Memory in KiB.
        pub memory: u64,
        /// Active CPUs.
        pub cpus: i32,
        /// CPU frequency in MHz.
        pub mhz: i32,
        /// NUMA nodes (1 when uniform).
        pub nodes: i32,
        /// Sockets per node.
        pub sockets: i32,
        /// Cores per socket.
        pub cores: i32,
        /// Threads per core.
        pub threads: i32,
    }
}

xdr_struct! {
    /// `remote_node_get_free_memory_ret`.
    pub struct NodeGetFreeMemoryRet {
        /// Free memory in bytes.
        pub free_mem: u64,
    }
}

xdr_struct! {
    /// `remote_node_get_cells_free_memory_args`.
    pub struct NodeGetCellsFreeMemoryArgs {
        /// First NUMA cell.
        pub start_cell: i32,
        /// Most cells wanted.
        pub maxcells: i32,
    }
}

xdr_struct! {
    /// `remote_node_get_cells_free_memory_ret`.
    pub struct NodeGetCellsFreeMemoryRet {
        /// Free bytes per cell.
        pub cells: Vec<u64> [limits::NODE_MAX_CELLS],
    }
}

xdr_struct! {
    /// `remote_node_get_security_model_ret`. Both fields are rpcgen `char<>`: 4 bytes per
    /// character on the wire.
    pub struct NodeGetSecurityModelRet {
        /// Security model (e.g. `apparmor`), NUL-terminated.
        pub model: CharVec [limits::SECURITY_MODEL_MAX],
        /// Domain of interpretation, NUL-terminated.
        pub doi: CharVec [limits::SECURITY_DOI_MAX],
    }
}

xdr_struct! {
    /// `remote_node_get_cpu_stats` / `remote_node_get_memory_stats`: one named counter.
    pub struct NodeStat {
        /// Counter name (`kernel`, `user`, `total`, `free`, …).
        pub field: LvString,
        /// Value (nanoseconds or KiB).
        pub value: u64,
    }
}

xdr_struct! {
    /// `remote_node_get_cpu_stats_args`. Call with `nparams = 0` first to learn the count.
    pub struct NodeGetCpuStatsArgs {
        /// CPU number or [`all::CPUS`].
        pub cpu_num: i32,
        /// Counters wanted.
        pub nparams: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_get_cpu_stats_ret`.
    pub struct NodeGetCpuStatsRet {
        /// Counters.
        pub params: Vec<NodeStat> [limits::NODE_CPU_STATS_MAX],
        /// Number of counters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_node_get_memory_stats_args`. Call with `nparams = 0` first to learn the count.
    pub struct NodeGetMemoryStatsArgs {
        /// Counters wanted.
        pub nparams: i32,
        /// NUMA cell or [`all::CELLS`].
        pub cell_num: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_get_memory_stats_ret`.
    pub struct NodeGetMemoryStatsRet {
        /// Counters.
        pub params: Vec<NodeStat> [limits::NODE_MEMORY_STATS_MAX],
        /// Number of counters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_node_get_memory_parameters_args`.
    pub struct NodeGetMemoryParametersArgs {
        /// Parameters wanted (0: just count).
        pub nparams: i32,
        /// [`TypedParameterFlags`](crate::proto::types::TypedParameterFlags) (nothing else is defined).
        pub flags: crate::proto::types::TypedParameterFlags,
    }
}

xdr_struct! {
    /// `remote_node_get_memory_parameters_ret`.
    pub struct NodeGetMemoryParametersRet {
        /// KSM parameters.
        pub params: Vec<TypedParam> [limits::NODE_MEMORY_PARAMETERS_MAX],
        /// Number of parameters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_node_set_memory_parameters_args`.
    pub struct NodeSetMemoryParametersArgs {
        /// KSM parameters to change.
        pub params: Vec<TypedParam> [limits::NODE_MEMORY_PARAMETERS_MAX],
        /// Reserved: must be 0. libvirt defines no flag for this call and the daemon refuses
        /// any other value ("unsupported flags"), [`STRING_OKAY`](crate::proto::typed_params::STRING_OKAY)
        /// included: that bit belongs to the getters, and the C library adds it only there.
        /// A plain `u32` like every reserved flags field of the tables (decisions.md, "Typed
        /// flags"); a flag libvirt adds later gets a type then.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_suspend_for_duration_args`.
    pub struct NodeSuspendForDurationArgs {
        /// [`NodeSuspendTarget`].
        pub target: NodeSuspendTarget,
        /// Seconds.
        pub duration: u64,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_get_cpu_map_args`.
    pub struct NodeGetCpuMapArgs {
        /// Non-zero to get the bitmap.
        pub need_map: i32,
        /// Non-zero to get the online count.
        pub need_online: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_get_cpu_map_ret`.
    pub struct NodeGetCpuMapRet {
        /// Online CPU bitmap.
        pub cpumap: Bytes [limits::CPUMAP_MAX],
        /// Online CPUs.
        pub online: u32,
        /// Total CPUs (bitmap length in bits).
        pub ret: i32,
    }
}

xdr_struct! {
    /// `remote_node_get_free_pages_args`.
    pub struct NodeGetFreePagesArgs {
        /// Page sizes in KiB.
        pub pages: Vec<u32> [limits::NODE_MAX_CELLS],
        /// First NUMA cell.
        pub start_cell: i32,
        /// Cells wanted.
        pub cell_count: u32,
        /// `virNodeGetFreePagesFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_get_free_pages_ret`.
    pub struct NodeGetFreePagesRet {
        /// Free pages, cell-major then page size.
        pub counts: Vec<u64> [limits::NODE_MAX_CELLS],
    }
}

xdr_struct! {
    /// `remote_node_alloc_pages_args`.
    pub struct NodeAllocPagesArgs {
        /// Page sizes in KiB, one per entry of `page_counts`.
        pub page_sizes: Vec<u32> [limits::NODE_MAX_CELLS],
        /// Pages of each size wanted.
        pub page_counts: Vec<u64> [limits::NODE_MAX_CELLS],
        /// First NUMA cell (-1: the whole host).
        pub start_cell: i32,
        /// Number of cells.
        pub cell_count: u32,
        /// `virNodeAllocPagesFlags` (ADD 1: add to the pool rather than set it).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_alloc_pages_ret`.
    pub struct NodeAllocPagesRet {
        /// Number of cells whose pool was changed.
        pub ret: i32,
    }
}

xdr_struct! {
    /// `remote_node_get_sev_info_args`.
    pub struct NodeGetSevInfoArgs {
        /// Parameters wanted (0: just report how many exist).
        pub nparams: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_get_sev_info_ret`.
    pub struct NodeGetSevInfoRet {
        /// AMD SEV platform facts (`pdh`, `cert-chain`, `cbitpos`, …).
        pub params: Vec<TypedParam> [limits::NODE_SEV_INFO_MAX],
        /// Number of parameters available.
        pub nparams: i32,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [node]
    table PROCEDURES;
    /// `virNodeGetInfo`.
    NodeGetInfo = 6: () => NodeGetInfoRet, since "0.3.0";
        => Connect::node_info();
    /// `virNodeGetCellsFreeMemory`.
    NodeGetCellsFreeMemory = 101: NodeGetCellsFreeMemoryArgs => NodeGetCellsFreeMemoryRet, since "0.3.3";
        => Connect::node_cells_free_memory(start_cell, maxcells) -> cells[0];
    /// `virNodeGetFreeMemory`.
    NodeGetFreeMemory = 102: () => NodeGetFreeMemoryRet, since "0.3.3";
        => Connect::node_free_memory() -> free_mem[0];
    /// `virNodeGetSecurityModel`.
    NodeGetSecurityModel = 122: () => NodeGetSecurityModelRet, since "0.6.1";
        => Connect::node_security_model();
    /// `virNodeGetCPUStats`.
    NodeGetCpuStats = 227: NodeGetCpuStatsArgs => NodeGetCpuStatsRet, since "0.9.3";
        => Connect::node_cpu_stats(cpu_num, nparams = count, flags) -> params[0];
    /// `virNodeGetMemoryStats`.
    NodeGetMemoryStats = 228: NodeGetMemoryStatsArgs => NodeGetMemoryStatsRet, since "0.9.3";
        => Connect::node_memory_stats(nparams = count, cell_num, flags) -> params[0];
    /// `virNodeSuspendForDuration`.
    NodeSuspendForDuration = 250: NodeSuspendForDurationArgs => (), since "0.9.8";
        => Connect::node_suspend_for_duration(target, duration, flags);
    /// `virNodeSetMemoryParameters`.
    NodeSetMemoryParameters = 288: NodeSetMemoryParametersArgs => (), since "0.10.2";
        => Connect::node_set_memory_parameters(params, flags);
    /// `virNodeGetMemoryParameters`.
    NodeGetMemoryParameters = 289: NodeGetMemoryParametersArgs => NodeGetMemoryParametersRet, since "0.10.2";
        => Connect::node_memory_parameters(nparams = typed_count, flags) -> params[0];
    /// `virNodeGetCPUMap`.
    NodeGetCpuMap = 293: NodeGetCpuMapArgs => NodeGetCpuMapRet, since "1.0.0";
        => Connect::node_cpu_map(need_map, need_online, flags);
    /// `virNodeGetFreePages`.
    NodeGetFreePages = 340: NodeGetFreePagesArgs => NodeGetFreePagesRet, since "1.2.6";
        => Connect::node_free_pages(pages, start_cell, cell_count, flags) -> counts[0];
    /// `virNodeAllocPages`.
    NodeAllocPages = 347: NodeAllocPagesArgs => NodeAllocPagesRet, since "1.2.9";
        => Connect::node_alloc_pages(page_sizes, page_counts, start_cell, cell_count, flags) -> ret[0];
    /// `virNodeGetSEVInfo`.
    NodeGetSevInfo = 395: NodeGetSevInfoArgs => NodeGetSevInfoRet, since "4.5.0";
        => Connect::node_sev_info(nparams = count, flags) -> params[0];
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
