//! The opening sequence virsh uses, as a small step machine the driver feeds replies to:
//!
//! ```text
//! AUTH_LIST ─▶ [AUTH_POLKIT | AUTH_SASL_INIT ─▶ AUTH_SASL_START ─▶ AUTH_SASL_STEP…]
//!   ─▶ [SUPPORTS_FEATURE(keepalive)] ─▶ CONNECT_OPEN(name, flags)
//!   ─▶ [SUPPORTS_FEATURE(event callbacks)] ─▶ [SUPPORTS_FEATURE(close callback) ─▶ REGISTER_CLOSE_CALLBACK]
//! ```
//!
//! SASL is in [`super::sasl`]. Over TLS, libvirt's one-byte "accepted" status precedes all of
//! this: [`tls_accept_status`].
//!
//! The keepalive feature is only asked for when we will answer pings (asking starts the
//! daemon's pings, and a client that then ignores them is disconnected).

use bytes::Bytes;

use super::error::CallError;
use super::sasl::{self, CredentialRequest, SaslError, SaslExchange, SaslOptions, SaslProgress};
use crate::proto::RemoteError;
use crate::proto::procs::connect::{
    self, AuthListRet, AuthPolkitRet, AuthSaslInitRet, AuthSaslStepRet, ConnectFlags,
    ConnectOpenArgs, ConnectSupportsFeatureArgs, ConnectSupportsFeatureRet, auth_type,
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
    /// SASL settings: used only if the daemon demands SASL.
    pub sasl: SaslOptions,
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
    /// The SASL mechanism we authenticated with, if the daemon demanded SASL.
    pub sasl_mechanism: Option<String>,
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
    /// The daemon requires an authentication method we do not implement.
    #[error(
        "the daemon requires authentication this client does not implement (types {0:?}; none, polkit and SASL are implemented)"
    )]
    UnsupportedAuth(Vec<i32>),
    /// polkit refused.
    #[error("polkit authentication did not complete")]
    PolkitIncomplete,
    /// SASL could not run or our side refused the daemon's messages.
    #[error(transparent)]
    Sasl(#[from] SaslError),
    /// The daemon rejected our SASL credentials (wrong password, unknown user).
    #[error("SASL {mechanism} authentication was rejected by the daemon: {error}")]
    AuthRejected {
        /// The mechanism.
        mechanism: String,
        /// The daemon's error (usually `VIR_ERR_AUTH_FAILED`; boxed, as in
        /// [`CallError::Remote`]).
        error: Box<RemoteError>,
    },
    /// Over TLS: the daemon did not send its "accepted" byte: it refused our client
    /// certificate (or our address) and closed the connection.
    #[error(
        "the daemon refused this client after the TLS handshake (client certificate missing, \
         not signed by its CA, or not in its allowed list; or our address): {detail}"
    )]
    TlsRefused {
        /// What we saw instead of the byte.
        detail: String,
    },
}

impl super::error::ErrorPredicates for HandshakeError {
    /// The daemon's error, if a handshake step failed with one.
    fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Call { error, .. } => error.remote(),
            Self::AuthRejected { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The connection died during the handshake.
    fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Call { error, .. } if error.is_connection_dead())
    }

    fn is_auth_failed_here(&self) -> bool {
        self.is_auth_failed()
    }
}

impl HandshakeError {
    /// Authentication failed: credentials rejected, none available, or a refused client
    /// certificate.
    pub fn is_auth_failed(&self) -> bool {
        matches!(
            self,
            Self::AuthRejected { .. }
                | Self::TlsRefused { .. }
                | Self::PolkitIncomplete
                | Self::Sasl(SaslError::NoCredentials { .. })
        )
    }
}

/// libvirt's status byte after the TLS handshake (`virnetclient.c`; in no protocol document):
/// `1` means the daemon accepted our certificate and address; anything else, or the
/// connection ending first (`None`), means it refused. Read exactly one byte: the RPC stream
/// starts right after it.
pub fn tls_accept_status(byte: Option<u8>) -> Result<(), HandshakeError> {
    match byte {
        Some(1) => Ok(()),
        Some(b) => Err(HandshakeError::TlsRefused {
            detail: format!("status byte {b:#04x} instead of 0x01"),
        }),
        None => Err(HandshakeError::TlsRefused {
            detail: "the connection ended before the status byte".into(),
        }),
    }
}

/// One call the driver should make next. `Debug` shows the arguments' length only: a SASL
/// PLAIN response carries the password.
#[derive(Clone, PartialEq, Eq)]
pub struct HandshakeCall {
    /// Procedure number (remote program).
    pub procedure: i32,
    /// Name, for logs.
    pub name: &'static str,
    /// Encoded arguments.
    pub args: Bytes,
}

impl std::fmt::Debug for HandshakeCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandshakeCall")
            .field("procedure", &self.procedure)
            .field("name", &self.name)
            .field("args_len", &self.args.len())
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // `SaslStep` is the procedure's name
enum Step {
    AuthList,
    Polkit,
    SaslInit,
    SaslStart,
    SaslStep,
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
    sasl: Option<SaslExchange>,
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
            sasl: None,
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
            Step::SaslInit => call::<connect::AuthSaslInit>(&()),
            Step::SaslStart => call::<connect::AuthSaslStart>(&self.sasl.as_ref()?.start_args()),
            Step::SaslStep => call::<connect::AuthSaslStep>(&self.sasl.as_ref()?.step_args()),
            Step::Keepalive => feature(proto::FEATURE_PROGRAM_KEEPALIVE),
            Step::Open => call::<connect::ConnectOpen>(&ConnectOpenArgs {
                name: self.opts.name.as_deref().map(LvString::from),
                flags: if self.opts.read_only {
                    ConnectFlags::READ_ONLY
                } else {
                    ConnectFlags::empty()
                },
            }),
            Step::EventFeature => feature(proto::FEATURE_REMOTE_EVENT_CALLBACK),
            Step::CloseFeature => feature(proto::FEATURE_REMOTE_CLOSE_CALLBACK),
            Step::CloseRegister => call::<connect::ConnectRegisterCloseCallback>(&()),
            Step::Done => return None,
        })
    }

    /// The calls to make next, all at once, or none when the handshake is complete: one
    /// ([`next_call`](Self::next_call)'s), or, after authentication, the keepalive probe and
    /// `CONNECT_OPEN` together (the daemon answers that probe without an open connection, as
    /// it must: libvirt's clients may probe before opening), which saves a round trip. Feed
    /// their results to [`handle_reply`](Self::handle_reply) in this order.
    pub fn next_calls(&self) -> Vec<HandshakeCall> {
        let Some(first) = self.next_call() else {
            return Vec::new();
        };
        if self.step != Step::Keepalive {
            return vec![first];
        }
        let open = Self {
            opts: self.opts.clone(),
            step: Step::Open,
            outcome: HandshakeOutcome::default(),
            sasl: None,
        }
        .next_call();
        std::iter::once(first).chain(open).collect()
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

    fn step_name(&self) -> &'static str {
        match self.step {
            Step::AuthList => connect::AuthList::NAME,
            Step::Polkit => connect::AuthPolkit::NAME,
            Step::SaslInit => connect::AuthSaslInit::NAME,
            Step::SaslStart => connect::AuthSaslStart::NAME,
            Step::SaslStep => connect::AuthSaslStep::NAME,
            Step::Keepalive | Step::EventFeature | Step::CloseFeature => {
                connect::ConnectSupportsFeature::NAME
            }
            Step::Open => connect::ConnectOpen::NAME,
            Step::CloseRegister => connect::ConnectRegisterCloseCallback::NAME,
            Step::Done => "handshake",
        }
    }

    /// After `AUTH_SASL_INIT`: pick the mechanism, get credentials, run its first step.
    fn sasl_begin(&mut self, mechlist: &str) -> Result<Step, HandshakeError> {
        let offered = sasl::parse_mechlist(mechlist);
        let mechanism = sasl::choose_mechanism(&offered, self.opts.sasl.mechanism.as_deref())?;
        if mechanism == sasl::PLAIN && self.opts.sasl.unverified_peer {
            return Err(SaslError::PlainUnverified.into());
        }
        let creds = self
            .opts
            .sasl
            .credentials
            .as_ref()
            .and_then(|cb| (cb.0)(&CredentialRequest { mechanism }))
            .ok_or_else(|| SaslError::NoCredentials {
                mechanism: mechanism.into(),
            })?;
        self.sasl = Some(SaslExchange::start(sasl::new_mechanism(
            mechanism, &creds,
        )?)?);
        Ok(Step::SaslStart)
    }

    /// After `AUTH_SASL_START` / `AUTH_SASL_STEP`.
    fn sasl_continue(&mut self, ret: &AuthSaslStepRet) -> Result<Step, HandshakeError> {
        let x = self.sasl.as_mut().expect("SASL steps follow its start");
        match x.handle(ret)? {
            SaslProgress::Step => Ok(Step::SaslStep),
            SaslProgress::Done => {
                self.outcome.sasl_mechanism = Some(x.mechanism().to_string());
                self.sasl = None;
                Ok(self.after_auth())
            }
        }
    }

    /// Feed the result of the call [`next_call`](Self::next_call) returned.
    pub fn handle_reply(&mut self, result: Result<Bytes, CallError>) -> Result<(), HandshakeError> {
        let name = self.step_name();
        let payload = match result {
            Ok(p) => p,
            Err(CallError::Remote(error))
                if matches!(self.step, Step::SaslStart | Step::SaslStep) =>
            {
                let mechanism = self
                    .sasl
                    .take()
                    .map(|x| x.mechanism().to_string())
                    .unwrap_or_default();
                return Err(HandshakeError::AuthRejected { mechanism, error });
            }
            Err(error) => return Err(HandshakeError::Call { step: name, error }),
        };
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
                } else if types.contains(&auth_type::SASL) {
                    if self.opts.sasl.insecure_transport {
                        return Err(SaslError::NeedsSecurityLayer.into());
                    }
                    Step::SaslInit
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
            Step::SaslInit => {
                let ret = xdr::from_bytes::<AuthSaslInitRet>(payload).map_err(dec)?;
                self.sasl_begin(&ret.mechlist.to_string())?
            }
            Step::SaslStart | Step::SaslStep => {
                let ret = xdr::from_bytes::<AuthSaslStepRet>(payload).map_err(dec)?;
                self.sasl_continue(&ret)?
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
