//! SASL authentication inside the handshake, as libvirt's client runs it:
//!
//! ```text
//! AUTH_SASL_INIT ─▶ mechlist ─▶ pick a mechanism ─▶ AUTH_SASL_START(mech, initial response)
//!   ─▶ { complete, challenge } ─▶ [AUTH_SASL_STEP(response) ─▶ { complete, challenge }]…
//! ```
//!
//! The client always runs its mechanism on the daemon's last message, even when the daemon
//! already says `complete`: that is where SCRAM checks the server's signature (mutual
//! authentication). "No data" (`nil = 1`) and "empty data" are different things in SASL and
//! stay different here. The exchange is bounded ([`MAX_STEPS`]).
//!
//! The mechanisms themselves (SCRAM-SHA-256, SCRAM-SHA-1, PLAIN) come from rsasl (feature
//! `sasl`); [`SaslMechanism`] is what the exchange needs of one. Nothing here reads files or
//! sockets: credentials arrive through [`CredentialCallback`].

use std::fmt;
use std::sync::Arc;

use zeroize::Zeroizing;

use crate::proto::procs::connect::{AuthSaslStartArgs, AuthSaslStepArgs, AuthSaslStepRet};
use crate::proto::types::SaslData;
use crate::wire::xdr::LvString;

/// Most START/STEP round trips before the exchange is abandoned (SCRAM needs two).
pub const MAX_STEPS: usize = 16;

/// The most PBKDF2 iterations a daemon may ask of SCRAM (`i=` in its first message): more
/// is refused before any hashing.
pub const MAX_SCRAM_ITERATIONS: u32 = 1_000_000;

/// Mechanisms this client can run, most preferred first.
pub const SUPPORTED_MECHANISMS: &[&str] = &["SCRAM-SHA-256", "SCRAM-SHA-1", PLAIN];

/// A user name and password for SASL. `Debug` never shows the password, and it is wiped
/// from memory when the credentials are dropped (`zeroize`; the copy the SASL mechanism
/// library keeps for the exchange is that library's).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    authname: String,
    password: Zeroizing<String>,
}

impl Credentials {
    /// `authname` (libvirt's auth.conf `authname=`) and its password (wiped when dropped:
    /// pass a `String` to move it in without a copy).
    pub fn new(authname: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            authname: authname.into(),
            password: Zeroizing::new(password.into()),
        }
    }

    /// The user name.
    pub fn authname(&self) -> &str {
        &self.authname
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("authname", &self.authname)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// What the daemon asked for when credentials are needed.
#[derive(Debug, Clone, Copy)]
pub struct CredentialRequest<'a> {
    /// The mechanism that will be used (e.g. `SCRAM-SHA-256`).
    pub mechanism: &'a str,
}

/// The function behind a [`CredentialCallback`].
pub type CredentialFn = dyn Fn(&CredentialRequest<'_>) -> Option<Credentials> + Send + Sync;

/// Supplies credentials when the daemon demands SASL; `None` means "I have none" (the
/// handshake then fails with [`SaslError::NoCredentials`]). Called at most once per handshake,
/// and only when the daemon asks for SASL.
#[derive(Clone)]
pub struct CredentialCallback(pub Arc<CredentialFn>);

impl CredentialCallback {
    /// Wrap a closure.
    pub fn new(
        f: impl Fn(&CredentialRequest<'_>) -> Option<Credentials> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(f))
    }

    /// Always the same credentials.
    pub fn fixed(c: Credentials) -> Self {
        Self::new(move |_| Some(c.clone()))
    }
}

impl fmt::Debug for CredentialCallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CredentialCallback")
    }
}

/// SASL settings of a handshake.
#[derive(Debug, Clone, Default)]
pub struct SaslOptions {
    /// Use only this mechanism (libvirt's `?auth=sasl.MECH`, case-insensitive).
    pub mechanism: Option<String>,
    /// Where credentials come from.
    pub credentials: Option<CredentialCallback>,
    /// The byte stream is neither encrypted nor local (plain TCP): libvirtd then demands a
    /// SASL security layer, which no mechanism here provides, so SASL is refused up front.
    pub insecure_transport: bool,
    /// The daemon's identity was not verified (TLS `no_verify=1`, SSH `no_verify=1` or
    /// `known_hosts_verify=ignore`): PLAIN, which hands it the password, is refused
    /// ([`SaslError::PlainUnverified`]).
    pub unverified_peer: bool,
}

/// Why SASL authentication failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SaslError {
    /// Over plain TCP the daemon requires a SASL security layer (SSF ≥ 56).
    #[error(
        "the daemon requires SASL over plain TCP, where libvirt demands a SASL security layer \
         (GSSAPI/Kerberos or DIGEST-MD5); this client implements neither (GSSAPI is not \
         supported): use qemu+tls:// or qemu+ssh://"
    )]
    NeedsSecurityLayer,
    /// The daemon offers no mechanism this client implements.
    #[error(
        "the daemon offers SASL mechanisms {offered:?}; this client implements {} (GSSAPI is not supported)",
        SUPPORTED_MECHANISMS.join(", ")
    )]
    NoCommonMechanism {
        /// What the daemon offered.
        offered: Vec<String>,
    },
    /// Of the mechanisms implemented here the daemon offers only PLAIN, which hands it the
    /// password itself: it is used only when asked for (`?auth=sasl.plain`).
    #[error(
        "the daemon offers SASL mechanisms {offered:?}: of those this client implements only \
         PLAIN, which hands the daemon the password itself; it is used only when asked for: \
         add ?auth=sasl.plain to the URI"
    )]
    PlainNotRequested {
        /// What the daemon offered.
        offered: Vec<String>,
    },
    /// PLAIN was asked for, but the daemon's identity was not verified (`no_verify`): the
    /// password would go to whoever answers. Nothing was sent.
    #[error(
        "refusing SASL PLAIN: the daemon's identity is not verified (no_verify), and PLAIN \
         would hand the password to whoever answers"
    )]
    PlainUnverified,
    /// The mechanism asked for (`?auth=sasl.MECH`) is not offered or not implemented.
    #[error("SASL mechanism {wanted} is not available (the daemon offers {offered:?})")]
    MechanismUnavailable {
        /// The mechanism asked for.
        wanted: String,
        /// What the daemon offered.
        offered: Vec<String>,
    },
    /// Nobody supplied credentials (no auth.conf entry, no callback answer).
    #[error(
        "the daemon requires SASL ({mechanism}) and no credentials were found (auth.conf or callback)"
    )]
    NoCredentials {
        /// The mechanism that would have been used.
        mechanism: String,
    },
    /// The mechanism rejected the daemon's data (bad nonce, bad server signature, …).
    #[error("SASL {mechanism}: {reason}")]
    Mechanism {
        /// The mechanism.
        mechanism: String,
        /// What it said.
        reason: String,
    },
    /// The daemon broke the exchange (complete before our mechanism finished, data after the
    /// end, too many steps).
    #[error("SASL {mechanism}: {reason}")]
    Protocol {
        /// The mechanism.
        mechanism: String,
        /// What went wrong.
        reason: &'static str,
    },
    /// This build has no SASL mechanisms (feature `sasl`).
    #[error("the daemon requires SASL and this build has no SASL mechanisms (feature `sasl`)")]
    NotBuilt,
}

/// One step of a mechanism.
#[derive(Clone, PartialEq, Eq)]
pub enum MechStep {
    /// Send this (or nothing) and wait for the daemon's next message.
    Continue(Option<Vec<u8>>),
    /// The mechanism is done; send this last message if there is one.
    Done(Option<Vec<u8>>),
}

impl fmt::Debug for MechStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, d) = match self {
            Self::Continue(d) => ("Continue", d),
            Self::Done(d) => ("Done", d),
        };
        write!(f, "{what}({:?} bytes)", d.as_ref().map(Vec::len))
    }
}

/// What the exchange needs of a SASL mechanism (a client session of it).
pub trait SaslMechanism: Send {
    /// Its name as the daemon spells it (`SCRAM-SHA-256`).
    fn name(&self) -> &str;
    /// Run one step on the daemon's data (`None`: no data, distinct from empty; the first
    /// call of a client-first mechanism gets `None`).
    fn step(&mut self, input: Option<&[u8]>) -> Result<MechStep, String>;
}

/// Splits Cyrus SASL's mechanism list ("SCRAM-SHA-256 PLAIN" or comma-separated).
pub fn parse_mechlist(list: &str) -> Vec<String> {
    list.split([' ', ',', '\t', '\n'])
        .filter(|m| !m.is_empty())
        .map(str::to_ascii_uppercase)
        .collect()
}

/// The mechanism to use: `wanted` if offered and implemented, else the most preferred one
/// both sides have, PLAIN excepted (it hands the daemon the password: only when `wanted`).
pub fn choose_mechanism(
    offered: &[String],
    wanted: Option<&str>,
) -> Result<&'static str, SaslError> {
    let offers = |m: &str| offered.iter().any(|o| o.eq_ignore_ascii_case(m));
    if let Some(w) = wanted {
        return SUPPORTED_MECHANISMS
            .iter()
            .copied()
            .find(|m| m.eq_ignore_ascii_case(w) && offers(m))
            .ok_or_else(|| SaslError::MechanismUnavailable {
                wanted: w.to_ascii_uppercase(),
                offered: offered.to_vec(),
            });
    }
    match SUPPORTED_MECHANISMS.iter().copied().find(|m| offers(m)) {
        Some(PLAIN) => Err(SaslError::PlainNotRequested {
            offered: offered.to_vec(),
        }),
        Some(m) => Ok(m),
        None => Err(SaslError::NoCommonMechanism {
            offered: offered.to_vec(),
        }),
    }
}

/// The mechanism that sends the password itself.
pub(crate) const PLAIN: &str = "PLAIN";

/// A client session of `mechanism` with `credentials`.
#[cfg(feature = "sasl")]
pub fn new_mechanism(
    mechanism: &str,
    credentials: &Credentials,
) -> Result<Box<dyn SaslMechanism>, SaslError> {
    rsasl_mech::Rsasl::start(mechanism, credentials).map(|m| Box::new(m) as Box<dyn SaslMechanism>)
}

/// A client session of `mechanism` with `credentials`.
#[cfg(not(feature = "sasl"))]
pub fn new_mechanism(
    _mechanism: &str,
    _credentials: &Credentials,
) -> Result<Box<dyn SaslMechanism>, SaslError> {
    Err(SaslError::NotBuilt)
}

#[cfg(feature = "sasl")]
mod rsasl_mech {
    use rsasl::prelude::{MessageSent, SASLClient, SASLConfig, Session, State};

    use super::{Credentials, MechStep, SaslError, SaslMechanism};

    pub(super) struct Rsasl {
        name: &'static str,
        session: Session,
    }

    impl Rsasl {
        pub(super) fn start(mechanism: &str, c: &Credentials) -> Result<Self, SaslError> {
            let name = super::SUPPORTED_MECHANISMS
                .iter()
                .copied()
                .find(|m| m.eq_ignore_ascii_case(mechanism))
                .ok_or_else(|| SaslError::MechanismUnavailable {
                    wanted: mechanism.into(),
                    offered: Vec::new(),
                })?;
            let fail = |e: &dyn std::fmt::Display| SaslError::Mechanism {
                mechanism: name.into(),
                reason: e.to_string(),
            };
            let config =
                SASLConfig::with_credentials(None, c.authname.clone(), String::clone(&c.password))
                    .map_err(|e| fail(&e))?;
            let mech = rsasl::prelude::Mechname::parse(name.as_bytes()).map_err(|e| fail(&e))?;
            let session = SASLClient::new(config)
                .start_suggested(&[mech])
                .map_err(|e| fail(&e))?;
            Ok(Self { name, session })
        }
    }

    /// RFC 5802's attribute shape (`ALPHA "=" value`, comma-separated) for a server message.
    /// rsasl 2.3.1 slices `[0..2]` of each attribute and panics on a shorter one (found by
    /// the `handshake` fuzz target): a hostile daemon must get an error, not a crash.
    fn scram_shape(msg: &[u8]) -> Result<(), String> {
        let ok = msg
            .split(|b| *b == b',')
            .all(|a| a.len() >= 2 && a[0].is_ascii_alphabetic() && a[1] == b'=');
        if ok {
            Ok(())
        } else {
            Err("malformed server message (RFC 5802 attributes are `x=value`)".into())
        }
    }

    /// The server's `i=` (PBKDF2 iterations), if the message has one, within
    /// [`MAX_SCRAM_ITERATIONS`](super::MAX_SCRAM_ITERATIONS): the daemon chooses it and
    /// the client pays for it.
    fn scram_iterations(msg: &[u8]) -> Result<(), String> {
        let max = super::MAX_SCRAM_ITERATIONS;
        for a in msg.split(|b| *b == b',') {
            if let Some(v) = a.strip_prefix(b"i=") {
                let n = std::str::from_utf8(v)
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or("the server's iteration count is not a number")?;
                if n > u64::from(max) {
                    return Err(format!(
                        "the server asks for {n} PBKDF2 iterations, more than the {max} this \
                         client computes"
                    ));
                }
            }
        }
        Ok(())
    }

    impl SaslMechanism for Rsasl {
        fn name(&self) -> &str {
            self.name
        }

        fn step(&mut self, input: Option<&[u8]>) -> Result<MechStep, String> {
            if self.name.starts_with("SCRAM") {
                if let Some(msg) = input {
                    scram_shape(msg)?;
                    scram_iterations(msg)?;
                }
            }
            let mut out = Vec::new();
            match self.session.step(input, &mut out) {
                Ok(State::Running) => Ok(MechStep::Continue(Some(out))),
                Ok(State::Finished(MessageSent::Yes)) => Ok(MechStep::Done(Some(out))),
                Ok(State::Finished(MessageSent::No)) => Ok(MechStep::Done(None)),
                // rsasl's errors name what failed (nonce, signature, server error), never
                // the password.
                Err(e) => Err(e.to_string()),
            }
        }
    }
}

/// The START/STEP part of the exchange for one chosen mechanism.
pub struct SaslExchange {
    mech: Box<dyn SaslMechanism>,
    /// What to send next (`None`: nil).
    out: Option<Vec<u8>>,
    /// The mechanism reported `Done`.
    local_done: bool,
    steps: usize,
    finished: bool,
}

impl fmt::Debug for SaslExchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslExchange")
            .field("mechanism", &self.mech.name())
            .field("local_done", &self.local_done)
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

/// What the exchange wants after a daemon reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaslProgress {
    /// Send [`SaslExchange::step_args`].
    Step,
    /// Authenticated.
    Done,
}

impl SaslExchange {
    /// Start `mech`: runs its first step (the initial response) at once.
    pub fn start(mut mech: Box<dyn SaslMechanism>) -> Result<Self, SaslError> {
        let first = mech.step(None).map_err(|reason| SaslError::Mechanism {
            mechanism: mech.name().into(),
            reason,
        })?;
        let (out, local_done) = match first {
            MechStep::Continue(d) => (d, false),
            MechStep::Done(d) => (d, true),
        };
        Ok(Self {
            mech,
            out,
            local_done,
            steps: 0,
            finished: false,
        })
    }

    /// The mechanism's name.
    pub fn mechanism(&self) -> &str {
        self.mech.name()
    }

    /// Arguments of `AUTH_SASL_START`.
    pub fn start_args(&self) -> AuthSaslStartArgs {
        let (nil, data) = self.nil_data();
        AuthSaslStartArgs {
            mech: LvString::from(self.mech.name()),
            nil,
            data,
        }
    }

    /// Arguments of the next `AUTH_SASL_STEP`.
    pub fn step_args(&self) -> AuthSaslStepArgs {
        let (nil, data) = self.nil_data();
        AuthSaslStepArgs { nil, data }
    }

    fn nil_data(&self) -> (i32, SaslData) {
        match &self.out {
            Some(d) => (0, SaslData(d.clone())),
            None => (1, SaslData::default()),
        }
    }

    fn protocol(&self, reason: &'static str) -> SaslError {
        SaslError::Protocol {
            mechanism: self.mech.name().into(),
            reason,
        }
    }

    /// Feed the daemon's answer to START or STEP.
    pub fn handle(&mut self, ret: &AuthSaslStepRet) -> Result<SaslProgress, SaslError> {
        if self.finished {
            return Err(self.protocol("the exchange already ended"));
        }
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.protocol("too many SASL steps"));
        }
        let input = (ret.nil == 0).then_some(ret.data.0.as_slice());
        let complete = ret.complete != 0;
        if self.local_done {
            // Our side has said everything; only an empty acknowledgement may follow.
            if input.is_some_and(|d| !d.is_empty()) {
                return Err(self.protocol("the daemon sent data after our mechanism finished"));
            }
            if complete {
                self.finished = true;
                return Ok(SaslProgress::Done);
            }
            self.out = None;
            return Ok(SaslProgress::Step);
        }
        let step = self
            .mech
            .step(input)
            .map_err(|reason| SaslError::Mechanism {
                mechanism: self.mech.name().into(),
                reason,
            })?;
        match step {
            MechStep::Continue(d) => {
                if complete {
                    return Err(self.protocol(
                        "the daemon reported success before our mechanism could verify it",
                    ));
                }
                self.out = d;
                Ok(SaslProgress::Step)
            }
            MechStep::Done(d) => {
                self.local_done = true;
                if complete {
                    if d.is_some_and(|d| !d.is_empty()) {
                        return Err(self.protocol(
                            "the daemon reported success while our mechanism had more to say",
                        ));
                    }
                    self.finished = true;
                    return Ok(SaslProgress::Done);
                }
                self.out = d;
                Ok(SaslProgress::Step)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mechlist_parses_and_choice_prefers_scram_sha_256() {
        let offered = parse_mechlist("PLAIN scram-sha-1,SCRAM-SHA-256 GSSAPI");
        assert_eq!(offered, ["PLAIN", "SCRAM-SHA-1", "SCRAM-SHA-256", "GSSAPI"]);
        assert_eq!(choose_mechanism(&offered, None).unwrap(), "SCRAM-SHA-256");
        assert_eq!(
            choose_mechanism(&parse_mechlist("SCRAM-SHA-1"), None).unwrap(),
            "SCRAM-SHA-1"
        );
        assert_eq!(choose_mechanism(&offered, Some("plain")).unwrap(), "PLAIN");
        assert!(matches!(
            choose_mechanism(&offered, Some("digest-md5")),
            Err(SaslError::MechanismUnavailable { .. })
        ));
        let e = choose_mechanism(&parse_mechlist("GSSAPI"), None).unwrap_err();
        assert!(e.to_string().contains("GSSAPI is not supported"), "{e}");
    }

    /// PLAIN hands the daemon the password itself: it is never picked by itself, only when
    /// asked for (`?auth=sasl.plain`).
    #[test]
    fn plain_is_used_only_when_asked_for() {
        let plain_only = parse_mechlist("PLAIN GSSAPI");
        assert!(
            choose_mechanism(&plain_only, None).is_err(),
            "PLAIN chosen although nobody asked for it"
        );
        assert_eq!(
            choose_mechanism(&parse_mechlist("PLAIN SCRAM-SHA-1"), None).unwrap(),
            "SCRAM-SHA-1"
        );
        assert_eq!(
            choose_mechanism(&plain_only, Some("plain")).unwrap(),
            "PLAIN"
        );
    }

    #[test]
    fn credentials_debug_hides_the_password() {
        let c = Credentials::new("alice", "secret123");
        let s = format!("{c:?} {:?}", CredentialCallback::fixed(c.clone()));
        assert!(s.contains("alice") && !s.contains("secret123"), "{s}");
    }

    /// A mechanism that says what it is told to, for the exchange's own rules.
    struct Scripted(Vec<MechStep>);

    impl SaslMechanism for Scripted {
        fn name(&self) -> &'static str {
            "SCRIPTED"
        }
        fn step(&mut self, _: Option<&[u8]>) -> Result<MechStep, String> {
            if self.0.is_empty() {
                Err("no more steps".into())
            } else {
                Ok(self.0.remove(0))
            }
        }
    }

    fn ret(complete: bool, data: Option<&[u8]>) -> AuthSaslStepRet {
        AuthSaslStepRet {
            complete: i32::from(complete),
            nil: i32::from(data.is_none()),
            data: SaslData(data.unwrap_or_default().to_vec()),
        }
    }

    #[test]
    fn the_client_verifies_the_servers_final_message_even_when_complete() {
        // SCRAM: first, final, verify.
        let m = Scripted(vec![
            MechStep::Continue(Some(b"n,,n=a,r=x".to_vec())),
            MechStep::Continue(Some(b"c=biws,...".to_vec())),
            MechStep::Done(None),
        ]);
        let mut x = SaslExchange::start(Box::new(m)).unwrap();
        assert_eq!(x.start_args().nil, 0);
        assert_eq!(
            x.handle(&ret(false, Some(b"r=xy"))).unwrap(),
            SaslProgress::Step
        );
        assert_eq!(x.step_args().data.0, b"c=biws,...");
        assert_eq!(
            x.handle(&ret(true, Some(b"v=sig"))).unwrap(),
            SaslProgress::Done
        );
        assert!(x.handle(&ret(true, None)).is_err(), "nothing after the end");
    }

    #[test]
    fn success_before_verification_is_refused() {
        let m = Scripted(vec![
            MechStep::Continue(Some(b"first".to_vec())),
            MechStep::Continue(Some(b"final".to_vec())),
        ]);
        let mut x = SaslExchange::start(Box::new(m)).unwrap();
        assert!(matches!(
            x.handle(&ret(true, Some(b"r=xy"))),
            Err(SaslError::Protocol { .. })
        ));
    }

    #[test]
    fn plain_finishes_on_an_empty_complete_and_nil_is_not_empty() {
        let m = Scripted(vec![MechStep::Done(Some(b"\0a\0p".to_vec()))]);
        let mut x = SaslExchange::start(Box::new(m)).unwrap();
        assert_eq!(
            x.handle(&ret(false, Some(b""))).unwrap(),
            SaslProgress::Step
        );
        assert_eq!(x.step_args().nil, 1, "nothing left to say: nil, not empty");
        assert_eq!(x.handle(&ret(true, None)).unwrap(), SaslProgress::Done);

        let m = Scripted(vec![MechStep::Done(Some(b"\0a\0p".to_vec()))]);
        let mut x = SaslExchange::start(Box::new(m)).unwrap();
        assert!(x.handle(&ret(true, Some(b"surprise"))).is_err());
    }

    #[test]
    fn the_exchange_is_bounded() {
        let steps = (0..=MAX_STEPS + 1)
            .map(|_| MechStep::Continue(Some(b"more".to_vec())))
            .collect();
        let mut x = SaslExchange::start(Box::new(Scripted(steps))).unwrap();
        let mut n = 0;
        while x.handle(&ret(false, Some(b"again"))).is_ok() {
            n += 1;
        }
        assert_eq!(n, MAX_STEPS);
    }

    #[cfg(feature = "sasl")]
    #[test]
    fn scram_sha_256_matches_rfc_7677_shape_and_rejects_a_bad_server() {
        let c = Credentials::new("user", "pencil");
        let mut x = SaslExchange::start(new_mechanism("scram-sha-256", &c).unwrap()).unwrap();
        let first = String::from_utf8(x.start_args().data.0).unwrap();
        assert!(first.starts_with("n,,n=user,r="), "{first}");
        // A server nonce that does not extend ours must be refused (RFC 5802 §5.1).
        let bad = ret(
            false,
            Some(b"r=someone-else,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"),
        );
        assert!(matches!(x.handle(&bad), Err(SaslError::Mechanism { .. })));
    }

    /// The daemon picks SCRAM's PBKDF2 iteration count (`i=`, any u32): a hostile one would
    /// have the client hash for hours. Past 1,000,000 the exchange fails at once, as other
    /// SCRAM clients cap it.
    #[cfg(feature = "sasl")]
    #[test]
    fn a_huge_scram_iteration_count_is_refused_at_once() {
        let c = Credentials::new("user", "pencil");
        let mut x = SaslExchange::start(new_mechanism("SCRAM-SHA-256", &c).unwrap()).unwrap();
        let first = String::from_utf8(x.start_args().data.0).unwrap();
        let nonce = first.rsplit_once("r=").unwrap().1.to_owned();
        let server_first = format!("r={nonce}srv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4000000000");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(x.handle(&ret(false, Some(server_first.as_bytes()))));
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("still deriving the key 10 s after i=4000000000: the count is not capped");
        match r {
            Err(SaslError::Mechanism { reason, .. }) => {
                assert!(reason.contains("1000000"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        // The cap itself is still accepted (and the exchange goes on).
        assert_eq!(MAX_SCRAM_ITERATIONS, 1_000_000);
    }

    #[cfg(feature = "sasl")]
    #[test]
    fn short_scram_attributes_are_errors_not_panics() {
        let c = Credentials::new("user", "pencil");
        for msg in [&b""[..], b"r", b"r=abc,s", b"v", b",", b"r=x,,i=1"] {
            let mut x = SaslExchange::start(new_mechanism("SCRAM-SHA-256", &c).unwrap()).unwrap();
            assert!(
                matches!(
                    x.handle(&ret(false, Some(msg))),
                    Err(SaslError::Mechanism { .. })
                ),
                "{msg:?}"
            );
        }
    }
}
