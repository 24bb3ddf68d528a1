//! The lifecycle of a reconnecting link: which [`Connection`](super::Connection) generation
//! is live, when to dial the next one, and what a new call may do meanwhile. Sans-io like the
//! rest of the core: time and randomness (for the jitter) are inputs, the dial itself is the
//! driver's.
//!
//! ```text
//!              handle_lost (the live generation died by itself)
//!   Connected ─────────────────────────────────────────────▶ Backoff { attempt: 1, until }
//!       ▲                                                       │ handle_timeout ≥ until
//!       │ handle_connected (dial and handshake done;            ▼
//!       │ the subscriptions are registered again)          Dialing { attempt }
//!       └────────────────────────────────────────────────────── │
//!                       handle_dial_failed: Backoff { attempt + 1 } (or Closed when
//!                       `max_attempts` ran out)
//!   any state ── close (by the application) ──▶ Closed
//! ```
//!
//! Calls in flight when a generation dies end with its [`ConnectionError`] (the core's
//! usual death): they are never replayed, a call may not be idempotent. What a *new* call does
//! while the link is down is [`admit`](Reconnect::admit)'s answer: wait for the redial (up to
//! the call's own deadline) or fail at once, per [`NewCalls`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::ConnectionError;

/// What a call made while the link is down does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NewCalls {
    /// Wait for the redial, up to the call's own deadline (a call without one waits until
    /// the link is back or closed for good).
    #[default]
    Wait,
    /// Fail at once with [`ConnectionError::Reconnecting`].
    FailFast,
}

/// How to redial a lost connection: exponential backoff from `initial` by `multiplier`, up
/// to the ceiling `max`, each delay shortened by a random share of up to `jitter` (so that
/// many clients of one restarted daemon do not redial in step).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReconnectPolicy {
    /// The delay before the first redial.
    pub initial: Duration,
    /// The ceiling of the delay.
    pub max: Duration,
    /// The factor between two delays (at least 1).
    pub multiplier: u32,
    /// The share of each delay drawn at random and taken off it, 0.0 ..= 1.0.
    pub jitter: f64,
    /// Give up (the link closes for good) after this many failed dials; `None`: never.
    pub max_attempts: Option<u32>,
    /// What calls made while the link is down do.
    pub new_calls: NewCalls,
}

impl Default for ReconnectPolicy {
    /// 100 ms, doubling, up to 10 s, with 20 % jitter, forever; new calls wait.
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(10),
            multiplier: 2,
            jitter: 0.2,
            max_attempts: None,
            new_calls: NewCalls::Wait,
        }
    }
}

impl ReconnectPolicy {
    /// The delay before dial `attempt` (from 1), given `random` (any `u64`, uniformly drawn).
    pub fn delay(&self, attempt: u32, random: u64) -> Duration {
        let factor = u64::from(self.multiplier.max(1)).saturating_pow(attempt.saturating_sub(1));
        let base = self
            .initial
            .checked_mul(u32::try_from(factor).unwrap_or(u32::MAX))
            .unwrap_or(self.max)
            .min(self.max);
        // `random` as a share in [0, 1), times the jitter share of the delay.
        #[allow(clippy::cast_precision_loss)]
        let share = (random >> 11) as f64 / (1u64 << 53) as f64;
        base.mul_f64(1.0 - self.jitter.clamp(0.0, 1.0) * share)
    }

    /// Builder: the backoff (first delay, ceiling).
    #[must_use]
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial = initial;
        self.max = max;
        self
    }

    /// Builder: the jitter share (0.0 ..= 1.0).
    #[must_use]
    pub fn jitter(mut self, jitter: f64) -> Self {
        self.jitter = jitter;
        self
    }

    /// Builder: give up after `n` failed dials.
    #[must_use]
    pub fn max_attempts(mut self, n: Option<u32>) -> Self {
        self.max_attempts = n;
        self
    }

    /// Builder: what calls made while the link is down do.
    #[must_use]
    pub fn new_calls(mut self, new_calls: NewCalls) -> Self {
        self.new_calls = new_calls;
        self
    }
}

/// The state of a link, as the application watches it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkState {
    /// A live connection.
    Connected,
    /// The connection was lost; redialling.
    Reconnecting {
        /// Why the last live connection died.
        lost: ConnectionError,
        /// The dial being made or waited for (from 1).
        attempt: u32,
        /// Why the previous dial failed, if one did.
        last_dial_error: Option<Arc<str>>,
    },
    /// Closed for good: by the application, or the policy gave up; the error says which.
    Closed(ConnectionError),
}

/// What a new call may do now ([`Reconnect::admit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Go ahead on the live connection.
    Go,
    /// Wait for the link to come back (up to the call's own deadline).
    Wait,
    /// Fail with this error.
    Fail(ConnectionError),
}

/// What the link does now.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    Connected,
    Backoff { attempt: u32, until: Instant },
    Dialing { attempt: u32 },
    Closed(ConnectionError),
}

/// The reconnect state machine (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct Reconnect {
    policy: ReconnectPolicy,
    phase: Phase,
    /// Why the last live generation died, and when.
    lost: Option<(ConnectionError, Instant)>,
    last_dial_error: Option<Arc<str>>,
    /// Live generations so far (the first dial's included).
    generation: u64,
}

impl Reconnect {
    /// A link whose first connection is live.
    pub fn new(policy: ReconnectPolicy) -> Self {
        Self {
            policy,
            phase: Phase::Connected,
            lost: None,
            last_dial_error: None,
            generation: 1,
        }
    }

    /// The policy.
    pub fn policy(&self) -> &ReconnectPolicy {
        &self.policy
    }

    /// The state, for the application.
    pub fn state(&self) -> LinkState {
        let lost = || {
            self.lost
                .as_ref()
                .map_or_else(|| ConnectionError::PeerClosed, |(e, _)| e.clone())
        };
        match &self.phase {
            Phase::Connected => LinkState::Connected,
            Phase::Backoff { attempt, .. } | Phase::Dialing { attempt } => {
                LinkState::Reconnecting {
                    lost: lost(),
                    attempt: *attempt,
                    last_dial_error: self.last_dial_error.clone(),
                }
            }
            Phase::Closed(e) => LinkState::Closed(e.clone()),
        }
    }

    /// Live generations so far: 1 for the first connection, one more per redial.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Why and when the last live generation died (`None` before any loss).
    pub fn lost(&self) -> Option<&(ConnectionError, Instant)> {
        self.lost.as_ref()
    }

    /// True while the link is down and will be redialled.
    pub fn is_reconnecting(&self) -> bool {
        matches!(self.phase, Phase::Backoff { .. } | Phase::Dialing { .. })
    }

    /// True once closed for good.
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed(_))
    }

    /// What a call made now may do.
    pub fn admit(&self) -> Admission {
        match &self.phase {
            Phase::Connected => Admission::Go,
            Phase::Closed(e) => Admission::Fail(e.clone()),
            _ => match self.policy.new_calls {
                NewCalls::Wait => Admission::Wait,
                NewCalls::FailFast => Admission::Fail(self.reconnecting_error()),
            },
        }
    }

    /// The error of a call refused while reconnecting.
    pub fn reconnecting_error(&self) -> ConnectionError {
        let (lost, attempt) = match &self.phase {
            Phase::Backoff { attempt, .. } | Phase::Dialing { attempt } => {
                (self.lost.as_ref().map(|(e, _)| e.clone()), *attempt)
            }
            _ => (None, 0),
        };
        ConnectionError::Reconnecting {
            lost: Box::new(lost.unwrap_or(ConnectionError::PeerClosed)),
            attempt,
        }
    }

    /// The live generation died by itself (`error`) at `now`: wait before the first redial.
    /// `random` draws the jitter. Ignored unless connected (a generation dying during its own
    /// handshake is a failed dial: [`handle_dial_failed`](Self::handle_dial_failed)), and for
    /// a local close, which closes the link ([`close`](Self::close)).
    pub fn handle_lost(&mut self, now: Instant, error: ConnectionError, random: u64) {
        if self.phase != Phase::Connected {
            return;
        }
        if matches!(error, ConnectionError::LocallyClosed { .. }) {
            self.phase = Phase::Closed(error);
            return;
        }
        self.lost = Some((error, now));
        self.last_dial_error = None;
        self.phase = Phase::Backoff {
            attempt: 1,
            until: now + self.policy.delay(1, random),
        };
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due (while backing off).
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.phase {
            Phase::Backoff { until, .. } => Some(until),
            _ => None,
        }
    }

    /// Time passed: returns the attempt to dial now, if the backoff is over.
    pub fn handle_timeout(&mut self, now: Instant) -> Option<u32> {
        match self.phase {
            Phase::Backoff { attempt, until } if now >= until => {
                self.phase = Phase::Dialing { attempt };
                Some(attempt)
            }
            _ => None,
        }
    }

    /// The dial (or its handshake) failed at `now`, saying `why`: wait and try again, or close
    /// for good when the policy's attempts ran out.
    pub fn handle_dial_failed(&mut self, now: Instant, why: impl Into<Arc<str>>, random: u64) {
        let Phase::Dialing { attempt } = self.phase else {
            return;
        };
        let why = why.into();
        if self.policy.max_attempts.is_some_and(|max| attempt >= max) {
            self.phase = Phase::Closed(ConnectionError::locally_closed(format!(
                "gave up reconnecting after {attempt} attempts; last: {why}"
            )));
            return;
        }
        self.last_dial_error = Some(why);
        let attempt = attempt + 1;
        self.phase = Phase::Backoff {
            attempt,
            until: now + self.policy.delay(attempt, random),
        };
    }

    /// The dial and its handshake succeeded: the new generation is live.
    pub fn handle_connected(&mut self) {
        if let Phase::Dialing { .. } = self.phase {
            self.phase = Phase::Connected;
            self.last_dial_error = None;
            self.generation += 1;
        }
    }

    /// The application closed the link (`error`: why). Returns whether this closed it.
    pub fn close(&mut self, error: ConnectionError) -> bool {
        if self.is_closed() {
            return false;
        }
        self.phase = Phase::Closed(error);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> ReconnectPolicy {
        ReconnectPolicy::default()
            .backoff(Duration::from_millis(100), Duration::from_secs(1))
            .jitter(0.5)
    }

    #[test]
    fn backoff_doubles_to_the_ceiling_and_jitter_only_shortens() {
        let p = policy();
        assert_eq!(p.delay(1, 0), Duration::from_millis(100));
        assert_eq!(p.delay(2, 0), Duration::from_millis(200));
        assert_eq!(p.delay(4, 0), Duration::from_millis(800));
        assert_eq!(p.delay(5, 0), Duration::from_secs(1));
        assert_eq!(p.delay(500, 0), Duration::from_secs(1));
        let low = p.delay(5, u64::MAX);
        assert!(low >= Duration::from_millis(500) && low < Duration::from_secs(1));
    }

    #[test]
    fn lost_backoff_dial_fail_dial_connected() {
        let t0 = Instant::now();
        let mut r = Reconnect::new(policy().jitter(0.0));
        assert_eq!(r.admit(), Admission::Go);
        r.handle_lost(t0, ConnectionError::PeerClosed, 0);
        assert_eq!(r.admit(), Admission::Wait);
        assert_eq!(r.poll_timeout(), Some(t0 + Duration::from_millis(100)));
        assert_eq!(r.handle_timeout(t0), None);
        assert_eq!(r.handle_timeout(t0 + Duration::from_millis(100)), Some(1));
        r.handle_dial_failed(t0 + Duration::from_millis(100), "refused", 0);
        assert!(matches!(
            r.state(),
            LinkState::Reconnecting { attempt: 2, ref last_dial_error, .. }
                if last_dial_error.as_deref() == Some("refused")
        ));
        assert_eq!(r.poll_timeout(), Some(t0 + Duration::from_millis(300)));
        assert_eq!(r.handle_timeout(t0 + Duration::from_millis(300)), Some(2));
        r.handle_connected();
        assert_eq!(r.state(), LinkState::Connected);
        assert_eq!(r.generation(), 2);
    }

    #[test]
    fn fail_fast_and_give_up_and_close() {
        let t0 = Instant::now();
        let mut r = Reconnect::new(policy().new_calls(NewCalls::FailFast).max_attempts(Some(1)));
        r.handle_lost(t0, ConnectionError::PeerClosed, 7);
        assert!(matches!(
            r.admit(),
            Admission::Fail(ConnectionError::Reconnecting { attempt: 1, .. })
        ));
        let at = r.poll_timeout().unwrap();
        assert_eq!(r.handle_timeout(at), Some(1));
        r.handle_dial_failed(at, "refused", 7);
        assert!(r.is_closed());
        assert!(matches!(
            r.admit(),
            Admission::Fail(ConnectionError::LocallyClosed { .. })
        ));
        assert!(!r.close(ConnectionError::locally_closed("again")));
    }

    #[test]
    fn a_local_close_is_not_a_loss() {
        let mut r = Reconnect::new(policy());
        r.handle_lost(Instant::now(), ConnectionError::locally_closed("app"), 0);
        assert!(r.is_closed());
        assert_eq!(r.poll_timeout(), None);
    }
}
