//! The opening sequence virsh uses, as a small step machine the driver feeds replies to:
//!
//! ```text
//! AUTH_LIST ─▶ [AUTH_POLKIT] ─▶ [SUPPORTS_FEATURE(keepalive)] ─▶ CONNECT_OPEN(name, flags)
//!   ─▶ [SUPPORTS_FEATURE(event callbacks)] ─▶ [SUPPORTS_FEATURE(close callback) ─▶ REGISTER_CLOSE_CALLBACK]
//! ```
//!
//! The keepalive feature is only asked for when we will answer pings (asking starts the
//! daemon's pings, and a client that then ignores them is disconnected).

use bytes::Bytes;

use super::error::CallError;
use crate::proto::procs::connect::{
    self, AuthListRet, AuthPolkitRet, ConnectOpenArgs, ConnectSupportsFeatureArgs,
    ConnectSupportsFeatureRet, auth_type, open_flags,
};
use crate::proto::{self, Procedure};
use crate::wire::xdr::{self, LvString};

/// What to ask for when opening.
#[derive(Debug, Clone, Default)]
pub struct HandshakeOptions {
    /// URI the daemon should open (e.g. `qemu:///session`); `None` lets it pick.
    pub name: Option<String>,
    /// Open read-only.
    pub read_only: bool,
    /// Ask the daemon to ping us (we answer); required for server-side dead-peer detection.
    pub keepalive: bool,
    /// Probe the event-callback feature (needed for domain event subscriptions).
    pub events: bool,
    /// Register for the daemon's close notice.
    pub close_callback: bool,
}

/// What the handshake learned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HandshakeOutcome {
    /// Auth types the daemon listed.
    pub auth_types: Vec<i32>,
    /// The daemon agreed to keepalive.
    pub keepalive: bool,
    /// The daemon supports `*_CALLBACK_REGISTER_ANY` events.
    pub event_callbacks: bool,
    /// A close callback is registered (unregister it before `CONNECT_CLOSE`).
    pub close_callback: bool,
}

/// Why the handshake failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeError {
    /// A call failed.
    #[error("{step} failed: {error}")]
    Call {
        /// The step.
        step: &'static str,
        /// Its error.
        error: CallError,
    },
    /// A reply did not decode.
    #[error("{step}: undecodable reply: {error}")]
    Decode {
        /// The step.
        step: &'static str,
        /// The decode failure.
        error: xdr::DecodeError,
    },
    /// The daemon requires an authentication method we do not implement (SASL).
    #[error(
        "the daemon requires authentication this client does not implement (types {0:?}; SASL is unsupported)"
    )]
    UnsupportedAuth(Vec<i32>),
    /// polkit refused.
    #[error("polkit authentication did not complete")]
    PolkitIncomplete,
}

/// One call the driver should make next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeCall {
    /// Procedure number (remote program).
    pub procedure: i32,
    /// Name, for logs.
    pub name: &'static str,
    /// Encoded arguments.
    pub args: Bytes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    AuthList,
    Polkit,
    Keepalive,
    Open,
    EventFeature,
    CloseFeature,
    CloseRegister,
    Done,
}

/// Drives the opening sequence: call [`next_call`](Self::next_call), make the call, feed the
/// result to [`handle_reply`](Self::handle_reply), until `next_call` returns `None`.
#[derive(Debug)]
pub struct Handshake {
    opts: HandshakeOptions,
    step: Step,
    outcome: HandshakeOutcome,
}

fn call<P: Procedure>(args: &P::Args) -> HandshakeCall {
    HandshakeCall {
        procedure: P::NUMBER,
        name: P::NAME,
        args: xdr::to_bytes(args).expect("handshake args are small"),
    }
}

impl Handshake {
    /// Start with these options.
    pub fn new(opts: HandshakeOptions) -> Self {
        Self {
            opts,
            step: Step::AuthList,
            outcome: HandshakeOutcome::default(),
        }
    }

    /// What was learned so far.
    pub fn outcome(&self) -> &HandshakeOutcome {
        &self.outcome
    }

    /// The next call to make, or `None` when the handshake is complete.
    pub fn next_call(&self) -> Option<HandshakeCall> {
        let feature =
            |f| call::<connect::ConnectSupportsFeature>(&ConnectSupportsFeatureArgs { feature: f });
        Some(match self.step {
            Step::AuthList => call::<connect::AuthList>(&()),
            Step::Polkit => call::<connect::AuthPolkit>(&()),
            Step::Keepalive => feature(proto::FEATURE_PROGRAM_KEEPALIVE),
            Step::Open => call::<connect::ConnectOpen>(&ConnectOpenArgs {
                name: self.opts.name.as_deref().map(LvString::from),
                flags: if self.opts.read_only {
                    open_flags::READ_ONLY
                } else {
                    0
                },
            }),
            Step::EventFeature => feature(proto::FEATURE_REMOTE_EVENT_CALLBACK),
            Step::CloseFeature => feature(proto::FEATURE_REMOTE_CLOSE_CALLBACK),
            Step::CloseRegister => call::<connect::ConnectRegisterCloseCallback>(&()),
            Step::Done => return None,
        })
    }

    fn after_open(&self) -> Step {
        if self.opts.events {
            Step::EventFeature
        } else {
            self.after_events()
        }
    }

    fn after_events(&self) -> Step {
        if self.opts.close_callback {
            Step::CloseFeature
        } else {
            Step::Done
        }
    }

    fn after_auth(&self) -> Step {
        if self.opts.keepalive {
            Step::Keepalive
        } else {
            Step::Open
        }
    }

    /// Feed the result of the call [`next_call`](Self::next_call) returned.
    pub fn handle_reply(&mut self, result: Result<Bytes, CallError>) -> Result<(), HandshakeError> {
        let name = self.next_call().map_or("handshake", |c| c.name);
        let payload = result.map_err(|error| HandshakeError::Call { step: name, error })?;
        let dec = |e| HandshakeError::Decode {
            step: name,
            error: e,
        };
        let supported = |p: Bytes| -> Result<bool, HandshakeError> {
            Ok(xdr::from_bytes::<ConnectSupportsFeatureRet>(p)
                .map_err(dec)?
                .supported
                != 0)
        };
        self.step = match self.step {
            Step::AuthList => {
                let types = xdr::from_bytes::<AuthListRet>(payload).map_err(dec)?.types;
                self.outcome.auth_types.clone_from(&types);
                if types.is_empty() || types.contains(&auth_type::NONE) {
                    self.after_auth()
                } else if types.contains(&auth_type::POLKIT) {
                    Step::Polkit
                } else {
                    return Err(HandshakeError::UnsupportedAuth(types));
                }
            }
            Step::Polkit => {
                if xdr::from_bytes::<AuthPolkitRet>(payload)
                    .map_err(dec)?
                    .complete
                    == 0
                {
                    return Err(HandshakeError::PolkitIncomplete);
                }
                self.after_auth()
            }
            Step::Keepalive => {
                self.outcome.keepalive = supported(payload)?;
                Step::Open
            }
            Step::Open => {
                xdr::from_bytes::<()>(payload).map_err(dec)?;
                self.after_open()
            }
            Step::EventFeature => {
                self.outcome.event_callbacks = supported(payload)?;
                self.after_events()
            }
            Step::CloseFeature => {
                if supported(payload)? {
                    Step::CloseRegister
                } else {
                    Step::Done
                }
            }
            Step::CloseRegister => {
                xdr::from_bytes::<()>(payload).map_err(dec)?;
                self.outcome.close_callback = true;
                Step::Done
            }
            Step::Done => Step::Done,
        };
        Ok(())
    }

    /// The calls for a polite teardown, in order.
    pub fn close_calls(outcome: &HandshakeOutcome) -> Vec<HandshakeCall> {
        let mut v = Vec::new();
        if outcome.close_callback {
            v.push(call::<connect::ConnectUnregisterCloseCallback>(&()));
        }
        v.push(call::<connect::ConnectClose>(&()));
        v
    }
}
