//! When busy-polling pays: an adaptive on/off switch for [`BusyPoll`](super::driver), with
//! time as input (no clock of its own, so it is tested with made-up instants).
//!
//! Spinning saves the wake-up a parked client pays for each reply, but it takes a CPU. On an
//! idle machine with the daemon pinned elsewhere that is free, and sequential calls ran 2.5–3×
//! faster; with the daemon unpinned on a 2-core box the spinner competes with the daemon's
//! own threads, and on the quiet box it doubled the client's CPU per call for no gain
//! (docs/benchmarks.md). Neither can be known in advance, so the policy measures: it runs a
//! window of replies spinning and a window parked, and spins on only if spinning was clearly
//! better — the mean wait per reply (each sample capped at [`CAP`] × the window's median, so
//! one preemption does not decide, while a tail that many replies share still counts) at
//! most [`WIN`] of the parked one, **and** most of the spinning window's replies were caught
//! by a busy-poll read (a spin that runs out before the reply only burns CPU). A tie parks:
//! spinning burns the whole wait in CPU, so it has to buy something. A parked connection
//! (and a new one) starts spinning only after two such verdicts in a row, the second probed
//! at once: a window is a millisecond or two, and when calls in flight were still measured, 11
//! verdicts in 100 said spin by the daemon's noise alone where most windows measured spinning
//! slower (8 in flight, daemon unpinned; docs/decisions.md). A spinning connection stays
//! spinning on one.
//!
//! Spinning is for a lone call. With more than one call in flight the policy neither spins
//! nor measures: forced to spin there, 8 calls in flight ran 0.82× the rate of parking with
//! the daemon unpinned and 1.14–1.19× only with it pinned, and the adaptive probes could not
//! tell the two apart through the daemon's noise (a tie unpinned, rounds either side of
//! busy-poll off as often as two identical clients'; docs/decisions.md, "Busy-poll: a lone
//! call only"). A trick that wins only pinned is not a win.
//!
//! Each parked verdict doubles the replies until the next probe ([`EXPLOIT`] up to
//! [`EXPLOIT_MAX`]), so on a host where spinning never pays the probes' cost fades to
//! nothing; a spinning verdict resets it. While spinning, [`MISSES`] replies in a row that no
//! busy-poll read caught end the spin early (parked, with the back-off) instead of waiting
//! for the next probe.
//!
//! The wait of a reply is measured from the call's write (the caller's, [`sent`](SpinPolicy::sent),
//! or the driver round that saw the call pending) to the round that completed it, for lone
//! calls only.
//!
//! One policy per connection, in the shared state: the caller that writes its own call asks
//! it whether to wake the driver to spin, and the driver reports to it. Over TLS the spin
//! happens below rustls, on the ciphertext socket; the driver passes its decision down
//! through a [`SpinGate`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Replies in the spinning probe window.
const SPIN_WINDOW: usize = 32;
/// Replies in the parked probe window (shorter: parking is the costly side when spinning
/// helps).
const PARK_WINDOW: usize = 16;
/// Replies between probes after a spinning verdict, and after the first parked one.
const EXPLOIT: u32 = 1024;
/// The longest wait between probes (parked verdicts double it up to here).
const EXPLOIT_MAX: u32 = 64 * 1024;
/// Spinning wins only if its mean wait is at most this fraction (numerator, denominator) of
/// the parked one: 90 %.
const WIN: (u128, u128) = (9, 10);
/// Samples are capped at this many times their window's median before the mean.
const CAP: u64 = 4;
/// Replies in a row not caught by spinning that end a spinning stretch.
const MISSES: u32 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Measuring while spinning.
    ProbeSpin,
    /// Measuring while parked.
    ProbePark,
    /// Using the winner for `left` more replies.
    Exploit { spin: bool, left: u32 },
}

/// The adaptive switch. The driver asks [`spin`](Self::spin) before each busy-poll read and
/// reports every pump with [`observe`](Self::observe).
#[derive(Debug)]
pub(crate) struct SpinPolicy {
    phase: Phase,
    /// Calls have been pending since this instant (the wait being measured).
    mark: Option<Instant>,
    /// Wait per reply of the current window, ns.
    samples: Vec<u64>,
    /// Replies of the spinning window that a busy-poll read brought in.
    hits: usize,
    /// Mean wait per reply of the last spinning window, and whether its replies were
    /// mostly caught by spinning.
    spun: Option<(u64, bool)>,
    /// Replies of the next parked stretch ([`EXPLOIT`] doubled per parked verdict in a row).
    backoff: u32,
    /// Replies in a row of the current spinning stretch that spinning did not catch.
    missed: u32,
    /// The last verdict was to spin: spinning already, or a first win from parked that the
    /// probe now running confirms. The next spinning verdict then spins.
    last_won: bool,
}

impl Default for SpinPolicy {
    fn default() -> Self {
        Self {
            phase: Phase::ProbeSpin,
            mark: None,
            samples: Vec::with_capacity(SPIN_WINDOW),
            hits: 0,
            spun: None,
            backoff: EXPLOIT,
            missed: 0,
            last_won: false,
        }
    }
}

impl SpinPolicy {
    /// Whether to busy-poll now, with `pending` calls awaiting replies. Calls in flight
    /// together always are (the driver then gives the CPU away between reads:
    /// [`yields`](Self::yields)); a lone call as the probes decide.
    pub(crate) fn spin(&self, pending: usize) -> bool {
        if pending != 1 {
            return Self::yields(pending);
        }
        match self.phase {
            Phase::ProbeSpin => true,
            Phase::ProbePark => false,
            Phase::Exploit { spin, .. } => spin,
        }
    }

    /// Whether a spin yields the CPU between reads (`sched_yield`): with calls in flight
    /// together. A reply that finds the client's CPU idle costs the daemon a wake-up inside
    /// its `write()` (on a VM an IPI and a VM exit); a client that stays runnable spares it
    /// that, and by yielding leaves the CPU to any thread of the daemon that wants it
    /// (docs/decisions.md, "Calls in flight: spin, yielding the CPU").
    pub(crate) fn yields(pending: usize) -> bool {
        pending > 1
    }

    /// A call was written at `now` (by its caller): the wait is measured from here, unless
    /// calls were pending already.
    pub(crate) fn sent(&mut self, now: Instant) {
        self.mark.get_or_insert(now);
    }

    /// One pump at `now`: it completed `completed` calls (`by_spin`: with bytes a busy-poll
    /// read brought in), and `pending` calls await replies after it. Calls that were in flight
    /// together are not measured (nor spun for): the wait starts over with the next lone call.
    pub(crate) fn observe(
        &mut self,
        now: Instant,
        completed: usize,
        pending: usize,
        by_spin: bool,
    ) {
        if completed + pending > 1 {
            self.mark = None;
            return;
        }
        if completed == 0 {
            if pending == 0 {
                // Forgotten or timed out: nothing to learn.
                self.mark = None;
            } else {
                // The lone call's wait runs from its write, or from the first round that saw it.
                self.mark.get_or_insert(now);
            }
            return;
        }
        // The lone call completed (nothing else pending, by the check above).
        let Some(mark) = self.mark.take() else {
            return;
        };
        let wait = now.saturating_duration_since(mark).as_nanos();
        self.record(u64::try_from(wait).unwrap_or(u64::MAX), by_spin);
    }

    fn record(&mut self, wait_ns: u64, by_spin: bool) {
        match self.phase {
            Phase::Exploit { spin, left } => {
                let left = left.saturating_sub(1);
                self.phase = Phase::Exploit { spin, left };
                if spin {
                    self.missed = if by_spin { 0 } else { self.missed + 1 };
                    if self.missed >= MISSES {
                        tracing::trace!(
                            missed = self.missed,
                            "busy-poll: spinning stopped catching replies"
                        );
                        self.park();
                        return;
                    }
                }
                if left == 0 {
                    self.phase = Phase::ProbeSpin;
                }
            }
            Phase::ProbeSpin => {
                self.samples.push(wait_ns);
                self.hits += usize::from(by_spin);
                if self.samples.len() >= SPIN_WINDOW {
                    let caught = self.hits * 2 >= self.samples.len();
                    self.spun = Some((capped_mean(&mut self.samples), caught));
                    self.samples.clear();
                    self.hits = 0;
                    self.phase = Phase::ProbePark;
                }
            }
            Phase::ProbePark => {
                self.samples.push(wait_ns);
                if self.samples.len() >= PARK_WINDOW {
                    let parked = capped_mean(&mut self.samples);
                    self.samples.clear();
                    let spin = self.spun.is_some_and(|(spun, caught)| {
                        caught && u128::from(spun) * WIN.1 <= u128::from(parked) * WIN.0
                    });
                    tracing::trace!(
                        spun_ns = self.spun.map(|s| s.0),
                        parked_ns = parked,
                        spin,
                        next_park = self.backoff,
                        "busy-poll probe"
                    );
                    if spin && !self.last_won {
                        // From parked: probe again at once, spin only if it wins again.
                        self.last_won = true;
                        self.phase = Phase::ProbeSpin;
                    } else if spin {
                        self.backoff = EXPLOIT;
                        self.missed = 0;
                        self.phase = Phase::Exploit {
                            spin: true,
                            left: EXPLOIT,
                        };
                    } else {
                        self.park();
                    }
                }
            }
        }
    }

    /// The current spinning window's counts: (replies caught by spinning, replies).
    #[cfg(test)]
    pub(crate) fn probe_counts(&self) -> (usize, usize) {
        (self.hits, self.samples.len())
    }

    /// Park until the next probe, and wait twice as long before the one after.
    fn park(&mut self) {
        self.missed = 0;
        self.last_won = false;
        self.phase = Phase::Exploit {
            spin: false,
            left: self.backoff,
        };
        self.backoff = self.backoff.saturating_mul(2).min(EXPLOIT_MAX);
    }
}

/// The driver's spin decision, shared with a reader that spins below another layer (the TCP
/// socket under a TLS session, `tls::SpinTcp`): the driver opens the gate while a reply is due,
/// the policy says spin and the budget lasts; the reader reports bytes its spinning caught.
#[derive(Debug, Default)]
pub(crate) struct SpinGate {
    open: AtomicBool,
    hit: AtomicBool,
}

impl SpinGate {
    /// Set by the driver before each read.
    pub(crate) fn set(&self, open: bool) {
        self.open.store(open, Ordering::Relaxed);
    }

    /// Whether the reader should spin on an empty socket now.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    /// The reader's spinning caught bytes.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    pub(crate) fn hit(&self) {
        self.hit.store(true, Ordering::Relaxed);
    }

    /// Whether the last read's bytes were caught by spinning (and forget it).
    pub(crate) fn take_hit(&self) -> bool {
        self.hit.swap(false, Ordering::Relaxed)
    }
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// The mean of `v` with each sample capped at [`CAP`] × the median.
fn capped_mean(v: &mut [u64]) -> u64 {
    let cap = median(v).saturating_mul(CAP);
    let sum: u128 = v.iter().map(|&x| u128::from(x.min(cap))).sum();
    u64::try_from(sum / v.len().max(1) as u128).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn us(us: u64) -> Duration {
        Duration::from_micros(us)
    }

    /// The phase right after a verdict: a whole stretch of `spin` ahead.
    fn fresh_stretch(spin: bool) -> Phase {
        Phase::Exploit {
            spin,
            left: EXPLOIT,
        }
    }

    /// Feed `n` sequential replies, each taking `wait(spinning)` and caught by spinning
    /// when `caught`.
    fn feed(
        p: &mut SpinPolicy,
        t: &mut Instant,
        n: usize,
        mut wait: impl FnMut(bool) -> Duration,
        caught: bool,
    ) {
        for _ in 0..n {
            p.observe(*t, 0, 1, false);
            let spinning = p.spin(1);
            *t += wait(spinning);
            p.observe(*t, 1, 0, spinning && caught);
            *t += us(100);
        }
    }

    #[test]
    fn keeps_spinning_when_spinning_is_faster() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        assert!(p.spin(1), "starts by measuring the spinning side");
        feed(
            &mut p,
            &mut t,
            SPIN_WINDOW,
            |s| us(if s { 30 } else { 80 }),
            true,
        );
        assert!(!p.spin(1), "then the parked side");
        feed(
            &mut p,
            &mut t,
            PARK_WINDOW,
            |s| us(if s { 30 } else { 80 }),
            true,
        );
        assert_eq!(
            p.phase,
            Phase::ProbeSpin,
            "one win from parked: probes again"
        );
        probe(&mut p, &mut t, 30, 80);
        assert_eq!(p.phase, fresh_stretch(true), "spinning won twice in a row");
        feed(&mut p, &mut t, EXPLOIT as usize - 1, |_| us(30), true);
        assert!(p.spin(1));
        feed(&mut p, &mut t, 1, |_| us(30), true);
        assert_eq!(
            p.phase,
            Phase::ProbeSpin,
            "probes again after {EXPLOIT} replies"
        );
        probe(&mut p, &mut t, 30, 80);
        assert_eq!(
            p.phase,
            fresh_stretch(true),
            "spinning already: one winning probe keeps it"
        );
    }

    /// With calls in flight a probe window is about a millisecond of the daemon's noise: a
    /// parked connection does not start spinning on one window that happened to be faster.
    #[test]
    fn from_parked_one_winning_probe_is_not_enough() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        probe(&mut p, &mut t, 30, 80);
        assert_eq!(p.phase, Phase::ProbeSpin, "confirming at once");
        probe(&mut p, &mut t, 80, 80);
        assert_eq!(
            p.phase,
            fresh_stretch(false),
            "the confirming probe lost: parked"
        );
        feed(&mut p, &mut t, EXPLOIT as usize, |_| us(80), false);
        probe(&mut p, &mut t, 30, 80);
        assert_eq!(
            p.phase,
            Phase::ProbeSpin,
            "after a parked stretch, a win needs confirming again"
        );
        probe(&mut p, &mut t, 30, 80);
        assert!(matches!(p.phase, Phase::Exploit { spin: true, .. }));
    }

    #[test]
    fn parks_when_spinning_is_slower_or_misses() {
        // Slower while spinning (the spinner takes the daemon's CPU).
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        feed(
            &mut p,
            &mut t,
            SPIN_WINDOW + PARK_WINDOW,
            |s| us(if s { 95 } else { 75 }),
            true,
        );
        assert!(!p.spin(1));
        feed(&mut p, &mut t, EXPLOIT as usize - 1, |_| us(75), true);
        assert!(!p.spin(1), "parks until the next probe");

        // As fast, but the replies came after the budget ran out: spinning only burnt CPU.
        let mut p = SpinPolicy::default();
        feed(
            &mut p,
            &mut t,
            SPIN_WINDOW + PARK_WINDOW,
            |s| us(if s { 290 } else { 300 }),
            false,
        );
        assert!(!p.spin(1));
    }

    #[test]
    fn one_outlier_does_not_decide() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        probe_by(&mut p, &mut t, |s, i| {
            // A 5 ms preemption in the spinning window.
            if i == 3 {
                us(5000)
            } else {
                us(if s { 30 } else { 80 })
            }
        });
        assert_eq!(p.phase, Phase::ProbeSpin, "won, confirming");
        probe(&mut p, &mut t, 30, 80);
        assert!(matches!(p.phase, Phase::Exploit { spin: true, .. }));
    }

    #[test]
    fn calls_in_flight_together_are_spun_for_yielding_and_not_measured() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        assert!(p.spin(1), "a lone call: the first probe spins");
        assert!(!SpinPolicy::yields(1), "a lone call's spin keeps the CPU");
        p.phase = Phase::ProbePark;
        assert!(
            p.spin(2) && p.spin(8) && SpinPolicy::yields(2) && SpinPolicy::yields(8),
            "with calls in flight together the driver spins, yielding, whatever the phase"
        );
        assert!(!p.spin(0), "nothing pending: nothing to spin for");
        p.phase = Phase::ProbeSpin;
        p.observe(t, 0, 8, false);
        t += us(80);
        p.observe(t, 4, 4, true);
        t += us(40);
        p.observe(t, 3, 1, true);
        t += us(40);
        // The last one alone: its wait began while others were in flight, so it is not
        // measured either.
        p.observe(t, 1, 0, true);
        assert!(
            p.samples.is_empty(),
            "replies of calls in flight together were measured: {:?}",
            p.samples
        );
        assert_eq!(p.phase, Phase::ProbeSpin, "and the probe is where it was");
        // The next lone call is.
        p.sent(t);
        t += us(70);
        p.observe(t, 1, 0, true);
        assert_eq!(p.samples, vec![70_000]);
    }

    #[test]
    fn a_call_written_by_its_caller_is_timed_from_its_write() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        // The caller wrote it; the driver first runs when the reply is in.
        p.sent(t);
        t += us(70);
        p.observe(t, 1, 0, false);
        assert_eq!(p.samples, vec![70_000]);
        // A call dropped before its reply: no sample, the mark is cleared.
        p.sent(t);
        t += us(1000);
        p.observe(t, 0, 0, false);
        assert_eq!(p.mark, None);
        assert_eq!(p.samples.len(), 1);
    }

    /// Probe once with replies taking `spin_us` spinning (caught) and `park_us` parked.
    fn probe(p: &mut SpinPolicy, t: &mut Instant, spin_us: u64, park_us: u64) {
        probe_by(p, t, |s, _| us(if s { spin_us } else { park_us }));
    }

    /// Probe once (both windows, every reply caught by spinning), the `i`-th reply (from 1)
    /// taking `wait(spinning, i)`.
    fn probe_by(
        p: &mut SpinPolicy,
        t: &mut Instant,
        mut wait: impl FnMut(bool, usize) -> Duration,
    ) {
        let mut i = 0;
        feed(
            p,
            t,
            SPIN_WINDOW + PARK_WINDOW,
            |s| {
                i += 1;
                wait(s, i)
            },
            true,
        );
    }

    #[test]
    fn a_tie_parks() {
        // Spinning 6 % faster: not worth a CPU for the whole wait.
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        probe(&mut p, &mut t, 30, 32);
        assert!(!p.spin(1), "spinning must win by more than 10 %");
    }

    #[test]
    fn a_tail_that_many_spinning_replies_share_counts() {
        // The spinning median is better (30 vs 50 µs), but a quarter of the spinning replies
        // wait 150 µs (the spinner took the daemon's CPU): the mean says park.
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        probe_by(&mut p, &mut t, |s, i| {
            us(match (s, i % 4) {
                (true, 0) => 150,
                (true, _) => 30,
                (false, _) => 50,
            })
        });
        assert!(
            !p.spin(1),
            "a tail in a quarter of the spinning replies must count"
        );
    }

    #[test]
    fn parked_verdicts_back_off_and_a_spinning_one_resets() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        let mut expect = EXPLOIT;
        for _ in 0..10 {
            probe(&mut p, &mut t, 80, 80);
            assert_eq!(
                p.phase,
                Phase::Exploit {
                    spin: false,
                    left: expect
                }
            );
            feed(&mut p, &mut t, expect as usize, |_| us(80), false);
            assert_eq!(p.phase, Phase::ProbeSpin, "probes after {expect} replies");
            expect = (expect * 2).min(EXPLOIT_MAX);
        }
        assert_eq!(expect, EXPLOIT_MAX, "capped");
        probe(&mut p, &mut t, 30, 80);
        probe(&mut p, &mut t, 30, 80);
        assert_eq!(
            p.phase,
            Phase::Exploit {
                spin: true,
                left: EXPLOIT
            }
        );
        assert_eq!(p.backoff, EXPLOIT, "a spinning verdict resets the back-off");
    }

    #[test]
    fn replies_that_spinning_misses_end_the_spinning_stretch() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        probe(&mut p, &mut t, 30, 80);
        probe(&mut p, &mut t, 30, 80);
        assert!(matches!(p.phase, Phase::Exploit { spin: true, .. }));
        // The daemon slows down: replies come after the budget, read after parking.
        feed(&mut p, &mut t, MISSES as usize - 1, |_| us(300), false);
        assert!(p.spin(1), "a few misses are not enough");
        feed(&mut p, &mut t, 1, |_| us(30), true);
        feed(&mut p, &mut t, MISSES as usize - 1, |_| us(300), false);
        assert!(p.spin(1), "a caught reply restarts the count");
        feed(&mut p, &mut t, 1, |_| us(300), false);
        assert!(!p.spin(1), "{MISSES} misses in a row park");
        assert!(matches!(p.phase, Phase::Exploit { spin: false, .. }));
    }
}
