//! Invariants of the XDR codecs of every typed procedure, the error and event messages and
//! the shared types: the `xdr_decode` fuzz target, and the replay of its corpus under
//! `cargo test`.
//!
//! **Input**: packets as on the wire (`len | header | payload`), back to back; each length
//! word only delimits its packet (at least 4 bytes, at most what is left), so one captured
//! packet is a seed as it is and a corpus file can hold many. Each packet's header picks what
//! its payload is decoded as, the way the connection does it:
//! * CALL → the procedure's `Args`; REPLY OK → its `Ret` (every procedure of
//!   [`visit_procedures`], so none is left out: of the QEMU or LXC program when the program
//!   word names it, else of the remote program); REPLY ERROR and STREAM ERROR →
//!   `remote_error`; MESSAGE → `events::decode` (or the QEMU monitor event) and the typed
//!   event message;
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
//! * unless the decoder reports it [normalized](Decoder::normalized) a value (a typed-param
//!   boolean other than 0/1, an rpcgen char outside the sign-extended range), the re-encoding
//!   equals the consumed bytes except for padding (which decoding does not check and encoding
//!   writes as zeros).

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::OnceLock;

use bytes::Bytes;
use libvirt_remote::proto::events::{
    self, CallbackMsg, ConnectionClosedMsg, DomainOnly, EVENT_PROCS, Lifecycle, QEMU_EVENT_PROCS,
    QemuMonitorEvent,
};
use libvirt_remote::proto::names::DomainState;
use libvirt_remote::proto::procs::visit_procedures;
use libvirt_remote::proto::types::{
    NonnullDomain, NonnullDomainSnapshot, NonnullInterface, NonnullNetwork, NonnullNodeDevice,
    NonnullNwFilter, NonnullSecret, NonnullStoragePool, NonnullStorageVol, StreamHole, TypedParam,
    Uuid,
};
use libvirt_remote::proto::{
    ErrorCode, ErrorDomain, LXC_PROGRAM, ProcInfo, Procedure, ProcedureVisitor, QEMU_PROGRAM,
    REMOTE_PROGRAM, RemoteError, WireError,
};
use libvirt_remote::wire::xdr::{self, Decode, DecodeError, Decoder, Encode, LvString};

/// The wire messages of events 318 and 319.
type LifecycleMsg = CallbackMsg<Lifecycle>;
type RebootMsg = CallbackMsg<DomainOnly>;

libvirt_remote::wire::xdr::xdr_struct! {
    /// A typed-parameter list, as many returns carry.
    pub struct Params {
        /// The parameters.
        pub params: Vec<TypedParam> [1024],
    }
}

libvirt_remote::wire::xdr::xdr_struct! {
    /// A name list, as the legacy list calls return.
    pub struct Names {
        /// The names.
        pub names: Vec<LvString> [16_384],
        /// An optional name.
        pub opt: Option<LvString> [64],
    }
}

/// Runs a closure; returns the most heap bytes it had live at once (the fuzz binary's
/// counting allocator provides one).
pub type Meter = fn(&mut dyn FnMut()) -> usize;

/// Most heap bytes decoding `len` input bytes may hold at once: element counts are bounded by
/// the bytes left, so memory is proportional to the input (in-memory values are a few times
/// larger than their wire form), never to a length word.
pub fn alloc_bound(len: usize) -> usize {
    64 * len + 4096
}

/// Decode `payload` as `T` and check every codec invariant; with a `meter`, also that decoding
/// stays within [`alloc_bound`]. Returns the value when it decoded.
pub fn check_type<T>(payload: &Bytes, meter: Option<Meter>) -> Option<T>
where
    T: Decode + Encode + Debug,
{
    let mut dec = Decoder::new(payload.clone());
    let decoded = match meter {
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
    if !dec.normalized() {
        for (i, (a, b)) in enc.iter().zip(&payload[..consumed]).enumerate() {
            assert!(
                a == b || *a == 0,
                "byte {i}: re-encoded {a:#04x}, input {b:#04x} (not padding, and the decoder \
                 normalized nothing)"
            );
        }
    }
    let mut dec2 = Decoder::new(enc.clone());
    let v2 = T::decode(&mut dec2).expect("re-encoded bytes decode");
    assert_eq!(dec2.remaining(), 0, "re-encoded bytes decode whole");
    assert!(!dec2.normalized(), "an encoding needs no normalizing");
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
    check_with(data, None);
}

/// [`check`], and with a `meter` also that each decode allocates at most [`alloc_bound`].
pub fn check_with(data: &[u8], meter: Option<Meter>) {
    let mut rest = data;
    while !rest.is_empty() {
        let take = (word(rest, 0) as usize).max(4).min(rest.len());
        check_packet(&rest[..take], meter);
        rest = &rest[take..];
    }
}

/// Check one packet.
pub fn check_packet(data: &[u8], meter: Option<Meter>) {
    let head = |at| word(data, at);
    // The program decides whose procedure this is; a harness input that names none of
    // libvirt's (most random ones) is read as the remote program's, as before.
    let program = match head(4) {
        p @ (QEMU_PROGRAM | LXC_PROGRAM) => p,
        _ => REMOTE_PROGRAM,
    };
    let procedure = head(12) as i32;
    let kind = head(16);
    let status = head(24);
    let payload = Bytes::copy_from_slice(data.get(28..).unwrap_or_default());
    match (kind, status) {
        (0, _) => {
            dispatch(program, procedure, Part::Args, &payload, meter);
        }
        (1, 0) => {
            dispatch(program, procedure, Part::Ret, &payload, meter);
        }
        (1 | 3, 1) => check_error_payload(&payload, meter),
        (2, _) => check_event(program, procedure, &payload, meter),
        (6, _) => {
            check_type::<StreamHole>(&payload, meter);
        }
        (0..=6, _) => {}
        _ => standalone(procedure as u32, &payload, meter),
    }
}

fn check_error_payload(payload: &Bytes, meter: Option<Meter>) {
    if let Some(w) = check_type::<WireError>(payload, meter) {
        let r = RemoteError::from(w);
        // Any number names or prints itself (an open set, never a panic).
        let _ = (
            r.code.name(),
            r.domain.name(),
            ErrorCode(r.code.0).to_string(),
            ErrorDomain(r.domain.0).to_string(),
            DomainState(r.code.0).with_reason(r.domain.0).to_string(),
        );
        let _ = (
            r.to_string(),
            format!("{r:?}"),
            r.message(),
            r.is_not_found(),
            r.errno(),
        );
    }
}

fn check_event(program: u32, procedure: i32, payload: &Bytes, meter: Option<Meter>) {
    if program != REMOTE_PROGRAM {
        let known =
            program == QEMU_PROGRAM && QEMU_EVENT_PROCS.iter().any(|(n, _)| *n == procedure);
        let decoded = events::decode_message(program, procedure, payload.clone());
        match &decoded {
            Ok(None) => assert!(
                !known,
                "QEMU_EVENT_PROCS lists {procedure} but decode skips it"
            ),
            Ok(Some(e)) => {
                assert!(known, "decode_message handles {program:#x}/{procedure}");
                let _ = (e.callback_id(), e.kind(), format!("{e:?}"));
            }
            Err(_) => assert!(known, "decode_message handles {program:#x}/{procedure}"),
        }
        if known {
            let typed = check_type::<CallbackMsg<QemuMonitorEvent>>(payload, meter).is_some()
                && whole::<CallbackMsg<QemuMonitorEvent>>(payload);
            assert_eq!(
                decoded.is_ok(),
                typed,
                "decode_message disagrees with the typed message"
            );
        }
        return;
    }
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
            check_type::<LifecycleMsg>(payload, meter).is_some() && whole::<LifecycleMsg>(payload)
        }
        319 => check_type::<RebootMsg>(payload, meter).is_some() && whole::<RebootMsg>(payload),
        362 => {
            check_type::<ConnectionClosedMsg>(payload, meter).is_some()
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
fn standalone(selector: u32, payload: &Bytes, meter: Option<Meter>) {
    macro_rules! pick {
        ($($t:ty),* $(,)?) => {{
            let all: &[fn(&Bytes, Option<Meter>)] = &[$(|p, m| { check_type::<$t>(p, m); }),*];
            all[selector as usize % all.len()](payload, meter);
        }};
    }
    pick! {
        WireError,
        TypedParam,
        Params,
        NonnullDomain,
        NonnullNetwork,
        NonnullStoragePool,
        NonnullStorageVol,
        NonnullNodeDevice,
        NonnullSecret,
        NonnullInterface,
        NonnullNwFilter,
        NonnullDomainSnapshot,
        Uuid,
        LvString,
        Option<LvString>,
        Option<NonnullDomain>,
        Names,
        LifecycleMsg,
        RebootMsg,
        ConnectionClosedMsg,
        CallbackMsg<QemuMonitorEvent>,
        StreamHole,
        bool,
        u32,
        i64,
        f64,
        [u8; 5],
    }
}

/// Which half of a procedure a payload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The CALL's arguments.
    Args,
    /// The REPLY's return value.
    Ret,
}

/// The checks of one procedure's two types.
#[derive(Clone, Copy)]
struct Entry {
    info: ProcInfo,
    args: fn(&Bytes, Option<Meter>),
    ret: fn(&Bytes, Option<Meter>),
}

/// Every typed procedure by number, collected once from [`visit_procedures`].
fn entries() -> &'static HashMap<(u32, i32), Entry> {
    struct Collect(HashMap<(u32, i32), Entry>);
    impl ProcedureVisitor for Collect {
        fn visit<P: Procedure<Args: Decode + Debug, Ret: Encode + Debug>>(&mut self) {
            let entry = Entry {
                info: ProcInfo::of::<P>(),
                args: |p, m| {
                    check_type::<P::Args>(p, m);
                },
                ret: |p, m| {
                    check_type::<P::Ret>(p, m);
                },
            };
            assert!(
                self.0.insert((P::PROGRAM, P::NUMBER), entry).is_none(),
                "{} declared twice",
                P::NAME
            );
        }
    }
    static ENTRIES: OnceLock<HashMap<(u32, i32), Entry>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        let mut c = Collect(HashMap::new());
        visit_procedures(&mut c);
        c.0
    })
}

/// Every procedure [`dispatch`] checks (all of `proto::procs`).
pub fn procedures() -> Vec<ProcInfo> {
    let mut all: Vec<ProcInfo> = entries().values().map(|e| e.info).collect();
    all.sort_by_key(|p| (p.program, p.number));
    all
}

/// Decode `payload` as procedure `procedure` of `program`: its `Args` or `Ret`, and check it;
/// false when no typed procedure has that program and number.
pub fn dispatch(
    program: u32,
    procedure: i32,
    part: Part,
    payload: &Bytes,
    meter: Option<Meter>,
) -> bool {
    let Some(e) = entries().get(&(program, procedure)) else {
        return false;
    };
    match part {
        Part::Args => (e.args)(payload, meter),
        Part::Ret => (e.ret)(payload, meter),
    }
    true
}
