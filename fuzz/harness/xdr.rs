//! Invariants of the XDR codecs of every typed procedure, the error and event messages and
//! the shared types. Shared by the `xdr_decode` fuzz target and
//! `crates/libvirt-rpc/tests/fuzz_corpus.rs` (included with `#[path]`).
//!
//! **Input**: packets as on the wire (`len | header | payload`), back to back; each length
//! word only delimits its packet (at least 4 bytes, at most what is left), so one captured
//! packet is a seed as it is and a corpus file can hold many. Each packet's header picks what
//! its payload is decoded as, the way the connection does it:
//! * CALL → the procedure's `Args`; REPLY OK → its `Ret`; REPLY ERROR and STREAM ERROR →
//!   `remote_error`; MESSAGE → `events::decode` and the typed event message;
//!   `STREAM_HOLE` → the hole record;
//! * any other type word (7 and up) → one of the shared types, chosen by the procedure word.
//!
//! **Invariants** for every type `T`, on every payload:
//! * decoding never panics; on success `position + remaining == payload length`, the consumed
//!   length is a multiple of 4 and at least `T::MIN_SIZE` (the bound used to refuse counts
//!   before allocating must never exceed a real encoding);
//! * `xdr::from_bytes` agrees: it succeeds exactly when nothing is left over;
//! * re-encoding the value succeeds (nothing decodable is unencodable), has exactly the
//!   consumed length, and is a fixpoint: it decodes to the same value, which re-encodes to the
//!   same bytes;
//! * for lossless types, the re-encoding equals the consumed bytes except for padding (which
//!   decoding does not check and encoding writes as zeros).

#![allow(dead_code)]

use std::fmt::Debug;
use std::sync::OnceLock;

use bytes::Bytes;
use libvirt_rpc::proto::Procedure;
use libvirt_rpc::proto::error::{RemoteError, WireError};
use libvirt_rpc::proto::events::{
    self, CallbackMsg, ConnectionClosedMsg, DomainOnly, EVENT_PROCS, Lifecycle,
};
use libvirt_rpc::proto::types::{
    Domain, DomainSnapshot, Interface, Network, NodeDevice, NwFilter, Secret, StoragePool,
    StorageVol, StreamHole, TypedParam, Uuid,
};
use libvirt_rpc::wire::xdr::{self, Decode, DecodeError, Decoder, Encode, LvString};

/// The wire messages of events 318 and 319.
type LifecycleMsg = CallbackMsg<Lifecycle>;
type RebootMsg = CallbackMsg<DomainOnly>;

libvirt_rpc::xdr_struct! {
    /// A typed-parameter list, as many returns carry.
    pub struct Params {
        /// The parameters.
        pub params: Vec<TypedParam> [1024],
    }
}

libvirt_rpc::xdr_struct! {
    /// A name list, as the legacy list calls return.
    pub struct Names {
        /// The names.
        pub names: Vec<LvString> [16_384],
        /// An optional name.
        pub opt: Option<LvString> [64],
    }
}

/// Set by the fuzz target: runs a closure and returns the peak of heap bytes it had live.
/// When set, each decode must stay within [`alloc_bound`] of its input.
pub static METER: OnceLock<Meter> = OnceLock::new();

/// Runs a closure; returns the most heap bytes it had live at once.
pub type Meter = fn(&mut dyn FnMut()) -> usize;

/// Most heap bytes decoding `len` input bytes may hold at once: element counts are bounded by
/// the bytes left, so memory is proportional to the input (in-memory values are a few times
/// larger than their wire form), never to a length word.
pub fn alloc_bound(len: usize) -> usize {
    64 * len + 4096
}

/// Decode `payload` as `T` and check every codec invariant. `lossless`: re-encoding must
/// reproduce the input bytes except for padding. Returns the value when it decoded.
pub fn check_type<T>(payload: &Bytes, lossless: bool) -> Option<T>
where
    T: Decode + Encode + Debug,
{
    let mut dec = Decoder::new(payload.clone());
    let decoded = match METER.get() {
        None => T::decode(&mut dec),
        Some(meter) => {
            let mut out = None;
            let peak = meter(&mut || out = Some(T::decode(&mut dec)));
            assert!(
                peak <= alloc_bound(payload.len()),
                "{}: {peak} heap bytes to decode {} bytes",
                std::any::type_name::<T>(),
                payload.len()
            );
            out.expect("ran")
        }
    };
    let whole = xdr::from_bytes::<T>(payload.clone());
    let v = match decoded {
        Ok(v) => v,
        Err(e) => {
            assert!(
                whole.is_err(),
                "from_bytes succeeded where decode failed: {e}"
            );
            check_error(&e, payload.len());
            return None;
        }
    };
    let consumed = dec.position();
    assert_eq!(
        consumed + dec.remaining(),
        payload.len(),
        "position + remaining == input"
    );
    assert_eq!(consumed % 4, 0, "XDR items are multiples of 4 bytes");
    assert!(
        consumed >= T::MIN_SIZE,
        "{} decoded from {consumed} bytes but claims MIN_SIZE {}",
        std::any::type_name::<T>(),
        T::MIN_SIZE
    );
    match (&whole, dec.remaining()) {
        (Ok(_), 0) => {}
        (Err(DecodeError::TrailingBytes { remaining, .. }), n) if n > 0 => {
            assert_eq!(*remaining, n);
        }
        (w, n) => panic!("from_bytes disagrees with decode: {w:?} with {n} bytes left"),
    }
    let enc = xdr::to_bytes(&v).unwrap_or_else(|e| panic!("decoded value does not re-encode: {e}"));
    assert_eq!(enc.len(), consumed, "re-encoding has the consumed length");
    if lossless {
        for (i, (a, b)) in enc.iter().zip(&payload[..consumed]).enumerate() {
            assert!(
                a == b || *a == 0,
                "byte {i}: re-encoded {a:#04x}, input {b:#04x} (not padding)"
            );
        }
    }
    let v2: T = xdr::from_bytes(enc.clone()).expect("re-encoded bytes decode");
    let enc2 = xdr::to_bytes(&v2).expect("second re-encoding");
    assert_eq!(enc, enc2, "encode(decode(encode(v))) == encode(v)");
    assert_eq!(
        format!("{v:?}"),
        format!("{v2:?}"),
        "decode(encode(v)) == v"
    );
    Some(v)
}

/// A decode error must point inside the input.
fn check_error(e: &DecodeError, len: usize) {
    match e {
        DecodeError::Truncated {
            offset,
            needed,
            available,
        } => {
            assert!(offset + available == len && needed > available, "{e}");
        }
        DecodeError::TooLong { offset, .. } | DecodeError::InvalidDiscriminant { offset, .. } => {
            assert!(*offset + 4 <= len, "{e}");
        }
        _ => {}
    }
    let _ = e.to_string();
}

fn word(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |w| u32::from_be_bytes(w.try_into().expect("4 bytes")))
}

/// Check one input (see the module docs for its layout).
pub fn check(data: &[u8]) {
    let mut rest = data;
    while !rest.is_empty() {
        let take = (word(rest, 0) as usize).max(4).min(rest.len());
        check_packet(&rest[..take]);
        rest = &rest[take..];
    }
}

/// Check one packet.
pub fn check_packet(data: &[u8]) {
    let head = |at| word(data, at);
    let procedure = head(12) as i32;
    let kind = head(16);
    let status = head(24);
    let payload = Bytes::copy_from_slice(data.get(28..).unwrap_or_default());
    match (kind, status) {
        (0, _) => {
            dispatch(procedure, true, &payload);
        }
        (1, 0) => {
            dispatch(procedure, false, &payload);
        }
        (1 | 3, 1) => check_error_payload(&payload),
        (2, _) => check_event(procedure, &payload),
        (6, _) => {
            check_type::<StreamHole>(&payload, true);
        }
        (0..=6, _) => {}
        _ => standalone(procedure as u32, &payload),
    }
}

fn check_error_payload(payload: &Bytes) {
    if let Some(w) = check_type::<WireError>(payload, true) {
        let r = RemoteError::from(w);
        let _ = (
            r.to_string(),
            format!("{r:?}"),
            r.message(),
            r.is_not_found(),
            r.errno(),
        );
    }
}

fn check_event(procedure: i32, payload: &Bytes) {
    let known = EVENT_PROCS.iter().any(|(n, _)| *n == procedure);
    let decoded = events::decode(procedure, payload.clone());
    match &decoded {
        Ok(None) => assert!(!known, "EVENT_PROCS lists {procedure} but decode skips it"),
        Ok(Some(_)) | Err(_) => assert!(known, "decode handles {procedure}, EVENT_PROCS misses it"),
    }
    let again = events::decode(procedure, payload.clone());
    assert_eq!(
        format!("{decoded:?}"),
        format!("{again:?}"),
        "decoding is deterministic"
    );
    // The typed messages behind three events: `events::decode` succeeds exactly when they do,
    // and they roundtrip.
    let typed_ok = match procedure {
        318 => {
            check_type::<LifecycleMsg>(payload, true).is_some() && whole::<LifecycleMsg>(payload)
        }
        319 => check_type::<RebootMsg>(payload, true).is_some() && whole::<RebootMsg>(payload),
        362 => {
            check_type::<ConnectionClosedMsg>(payload, true).is_some()
                && whole::<ConnectionClosedMsg>(payload)
        }
        _ => return,
    };
    assert_eq!(
        decoded.is_ok(),
        typed_ok,
        "events::decode disagrees with the typed message"
    );
}

/// `payload` decodes as exactly one `T`.
fn whole<T: Decode>(payload: &Bytes) -> bool {
    xdr::from_bytes::<T>(payload.clone()).is_ok()
}

/// Shared types, picked by `selector`.
fn standalone(selector: u32, payload: &Bytes) {
    macro_rules! pick {
        ($($t:ty => $lossless:expr),* $(,)?) => {{
            let all: &[fn(&Bytes)] = &[$(|p| { check_type::<$t>(p, $lossless); }),*];
            all[selector as usize % all.len()](payload);
        }};
    }
    pick! {
        WireError => true,
        TypedParam => false,
        Params => false,
        Domain => true,
        Network => true,
        StoragePool => true,
        StorageVol => true,
        NodeDevice => true,
        Secret => true,
        Interface => true,
        NwFilter => true,
        DomainSnapshot => true,
        Uuid => true,
        LvString => true,
        Option<LvString> => true,
        Option<Domain> => true,
        Names => true,
        LifecycleMsg => true,
        RebootMsg => true,
        ConnectionClosedMsg => true,
        StreamHole => true,
        bool => true,
        u32 => true,
        i64 => true,
        f64 => true,
        [u8; 5] => true,
    }
}

/// Declares `LISTED` (number, name) and `dispatch` over every procedure of the list.
macro_rules! procs {
    ($($p:path $([$flag:ident])?),* $(,)?) => {
        /// (number, name) of every procedure the harness decodes.
        pub const LISTED: &[(i32, &str)] = &[$((<$p as Procedure>::NUMBER, <$p as Procedure>::NAME)),*];

        /// Decode `payload` as procedure `procedure`'s Args (`call`) or Ret; false when the
        /// procedure is not listed.
        pub fn dispatch(procedure: i32, call: bool, payload: &Bytes) -> bool {
            $(
                if procedure == <$p as Procedure>::NUMBER {
                    let lossless = procs!(@lossless $($flag)?);
                    if call {
                        check_type::<<$p as Procedure>::Args>(payload, lossless);
                    } else {
                        check_type::<<$p as Procedure>::Ret>(payload, lossless);
                    }
                    return true;
                }
            )*
            false
        }
    };
    (@lossless) => { true };
    (@lossless lossy) => { false };
}

include!("procs_list.rs");
