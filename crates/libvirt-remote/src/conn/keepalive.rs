//! Keepalive timing (program `0x6b656570`). Time only enters as arguments.
//!
//! Pings go out after `interval` of silence from the peer (and every `interval` while it
//! stays silent); the link is dead once the peer has been silent for `interval × count`.
//! With virsh's 5 s × 6 that is 30 s. PINGs from the daemon are always answered, whatever
//! this configuration says.

use std::time::{Duration, Instant};

/// Client-side keepalive settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepaliveConfig {
    /// Silence before a ping is sent, and between pings.
    pub interval: Duration,
    /// The link is declared dead after `interval × count` of silence.
    pub count: u32,
}

impl Default for KeepaliveConfig {
    /// virsh's defaults: 5 s × 6.
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(5),
            count: 6,
        }
    }
}

impl KeepaliveConfig {
    /// How long the peer may be silent before the link is dead.
    pub fn dead_after(&self) -> Duration {
        self.interval.saturating_mul(self.count.max(1))
    }
}

/// What the keepalive timer wants done at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeepaliveAction {
    Nothing,
    Ping,
    Dead { silent: Duration },
}

#[derive(Debug)]
pub(crate) struct Keepalive {
    config: Option<KeepaliveConfig>,
    last_rx: Instant,
    last_ping: Option<Instant>,
}

impl Keepalive {
    pub(crate) fn new(config: Option<KeepaliveConfig>, now: Instant) -> Self {
        Self {
            config,
            last_rx: now,
            last_ping: None,
        }
    }

    pub(crate) fn config(&self) -> Option<KeepaliveConfig> {
        self.config
    }

    pub(crate) fn set_config(&mut self, config: Option<KeepaliveConfig>, now: Instant) {
        self.config = config;
        self.last_rx = now;
        self.last_ping = None;
    }

    /// Any packet from the peer proves it alive.
    pub(crate) fn on_receive(&mut self, now: Instant) {
        self.last_rx = self.last_rx.max(now);
        self.last_ping = None;
    }

    pub(crate) fn next_timeout(&self) -> Option<Instant> {
        let c = self.config?;
        // Asked several times per call: without a ping out, the ping is due first
        // (`dead_after` is at least one interval), so one addition does.
        Some(match self.last_ping {
            None => self.last_rx + c.interval,
            Some(ping) => (ping + c.interval).min(self.last_rx + c.dead_after()),
        })
    }

    pub(crate) fn on_timeout(&mut self, now: Instant) -> KeepaliveAction {
        let Some(c) = self.config else {
            return KeepaliveAction::Nothing;
        };
        let silent = now.saturating_duration_since(self.last_rx);
        if silent >= c.dead_after() {
            return KeepaliveAction::Dead { silent };
        }
        if now >= self.last_ping.unwrap_or(self.last_rx) + c.interval {
            self.last_ping = Some(now);
            return KeepaliveAction::Ping;
        }
        KeepaliveAction::Nothing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pings_every_interval_then_dies_at_interval_times_count() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut k = Keepalive::new(
            Some(KeepaliveConfig {
                interval: s(5),
                count: 6,
            }),
            t0,
        );
        assert_eq!(k.next_timeout(), Some(t0 + s(5)));
        assert_eq!(k.on_timeout(t0 + s(4)), KeepaliveAction::Nothing);
        let mut pings = 0;
        for i in 1..6 {
            assert_eq!(
                k.on_timeout(t0 + s(5 * i)),
                KeepaliveAction::Ping,
                "ping {i}"
            );
            pings += 1;
            // Spurious timeouts are no-ops.
            assert_eq!(k.on_timeout(t0 + s(5 * i)), KeepaliveAction::Nothing);
        }
        assert_eq!(pings, 5);
        assert_eq!(k.next_timeout(), Some(t0 + s(30)));
        assert_eq!(
            k.on_timeout(t0 + s(30)),
            KeepaliveAction::Dead { silent: s(30) }
        );
    }

    #[test]
    fn receiving_resets_the_clock() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut k = Keepalive::new(
            Some(KeepaliveConfig {
                interval: s(1),
                count: 2,
            }),
            t0,
        );
        assert_eq!(k.on_timeout(t0 + s(1)), KeepaliveAction::Ping);
        k.on_receive(t0 + s(1));
        assert_eq!(k.next_timeout(), Some(t0 + s(2)));
        assert_eq!(k.on_timeout(t0 + s(2)), KeepaliveAction::Ping);
        assert_eq!(
            k.on_timeout(t0 + s(3)),
            KeepaliveAction::Dead { silent: s(2) }
        );
    }

    #[test]
    fn off_means_no_timer() {
        let t0 = Instant::now();
        let mut k = Keepalive::new(None, t0);
        assert_eq!(k.next_timeout(), None);
        assert_eq!(
            k.on_timeout(t0 + Duration::from_secs(3600)),
            KeepaliveAction::Nothing
        );
    }
}
