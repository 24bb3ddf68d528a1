//! When busy-polling pays: an adaptive on/off switch for [`BusyPoll`](super::driver), with
//! time as input (no clock of its own, so it is tested with made-up instants).
//!
//! Spinning saves the wake-up a parked client pays for each reply, but it takes a CPU. On an
//! idle machine with the daemon pinned elsewhere that is free, and sequential calls ran 2.5–3×
//! faster; with the daemon unpinned on a busy 2-core box the spinner competes with the
//! daemon's own threads and calls ran slower than without it (docs/benchmarks.md). Neither
//! can be known in advance, so the policy measures: it runs a window of replies spinning and
//! a window parked, keeps whichever had the lower median wait per reply, and probes again
//! every [`EXPLOIT`] replies. Spinning also has to catch most replies inside its budget: a
//! spin that mostly runs out before the reply only burns CPU.
//!
//! The wait of a reply is measured from the call's write (the caller's, [`sent`](SpinPolicy::sent),
//! or the driver round that saw the call pending) to the round that completed it; with several
//! calls in flight, the time since the last completion, shared by the calls that round
//! completed.
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
/// helps, and a scripted test asserts that a spinning client rarely sleeps).
const PARK_WINDOW: usize = 16;
/// Replies between probes, in the mode the last probe chose.
const EXPLOIT: u32 = 1024;

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
    /// Median wait per reply of the last spinning window, and whether its replies were
    /// mostly caught by spinning.
    spun: Option<(u64, bool)>,
}

impl Default for SpinPolicy {
    fn default() -> Self {
        Self {
            phase: Phase::ProbeSpin,
            mark: None,
            samples: Vec::with_capacity(SPIN_WINDOW),
            hits: 0,
            spun: None,
        }
    }
}

impl SpinPolicy {
    /// Whether to busy-poll now.
    pub(crate) fn spin(&self) -> bool {
        match self.phase {
            Phase::ProbeSpin => true,
            Phase::ProbePark => false,
            Phase::Exploit { spin, .. } => spin,
        }
    }

    /// A call was written at `now` (by its caller): the wait is measured from here, unless
    /// calls were pending already.
    pub(crate) fn sent(&mut self, now: Instant) {
        self.mark.get_or_insert(now);
    }

    /// One pump at `now`: it completed `completed` calls (`by_spin`: with bytes a busy-poll
    /// read brought in), and calls are `pending` after it.
    pub(crate) fn observe(&mut self, now: Instant, completed: usize, pending: bool, by_spin: bool) {
        let Some(mark) = self.mark else {
            self.mark = pending.then_some(now);
            return;
        };
        if completed == 0 {
            if !pending {
                // Forgotten or timed out: nothing to learn.
                self.mark = None;
            }
            return;
        }
        self.mark = pending.then_some(now);
        let per_reply = now.saturating_duration_since(mark).as_nanos() / completed as u128;
        let per_reply = u64::try_from(per_reply).unwrap_or(u64::MAX);
        for _ in 0..completed {
            self.record(per_reply, by_spin);
        }
    }

    fn record(&mut self, wait_ns: u64, by_spin: bool) {
        match &mut self.phase {
            Phase::Exploit { left, .. } => {
                *left = left.saturating_sub(1);
                if *left == 0 {
                    self.phase = Phase::ProbeSpin;
                }
            }
            Phase::ProbeSpin => {
                self.samples.push(wait_ns);
                self.hits += usize::from(by_spin);
                if self.samples.len() >= SPIN_WINDOW {
                    let caught = self.hits * 2 >= self.samples.len();
                    self.spun = Some((median(&mut self.samples), caught));
                    self.samples.clear();
                    self.hits = 0;
                    self.phase = Phase::ProbePark;
                }
            }
            Phase::ProbePark => {
                self.samples.push(wait_ns);
                if self.samples.len() >= PARK_WINDOW {
                    let parked = median(&mut self.samples);
                    self.samples.clear();
                    let spin = self
                        .spun
                        .is_some_and(|(spun, caught)| caught && spun < parked);
                    tracing::trace!(
                        spun_ns = self.spun.map(|s| s.0),
                        parked_ns = parked,
                        spin,
                        "busy-poll probe"
                    );
                    self.phase = Phase::Exploit {
                        spin,
                        left: EXPLOIT,
                    };
                }
            }
        }
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
    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    /// The reader's spinning caught bytes.
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn us(us: u64) -> Duration {
        Duration::from_micros(us)
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
            p.observe(*t, 0, true, false);
            let spinning = p.spin();
            *t += wait(spinning);
            p.observe(*t, 1, false, spinning && caught);
            *t += us(100);
        }
    }

    #[test]
    fn keeps_spinning_when_spinning_is_faster() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        assert!(p.spin(), "starts by measuring the spinning side");
        feed(
            &mut p,
            &mut t,
            SPIN_WINDOW,
            |s| us(if s { 30 } else { 80 }),
            true,
        );
        assert!(!p.spin(), "then the parked side");
        feed(
            &mut p,
            &mut t,
            PARK_WINDOW,
            |s| us(if s { 30 } else { 80 }),
            true,
        );
        assert!(p.spin(), "spinning won");
        feed(&mut p, &mut t, EXPLOIT as usize - 1, |_| us(30), true);
        assert!(p.spin());
        feed(&mut p, &mut t, 1, |_| us(30), true);
        assert_eq!(
            p.phase,
            Phase::ProbeSpin,
            "probes again after {EXPLOIT} replies"
        );
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
        assert!(!p.spin());
        feed(&mut p, &mut t, EXPLOIT as usize - 1, |_| us(75), true);
        assert!(!p.spin(), "parks until the next probe");

        // As fast, but the replies came after the budget ran out: spinning only burnt CPU.
        let mut p = SpinPolicy::default();
        feed(
            &mut p,
            &mut t,
            SPIN_WINDOW + PARK_WINDOW,
            |s| us(if s { 290 } else { 300 }),
            false,
        );
        assert!(!p.spin());
    }

    #[test]
    fn one_outlier_does_not_decide() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        let mut i = 0;
        feed(
            &mut p,
            &mut t,
            SPIN_WINDOW + PARK_WINDOW,
            |s| {
                i += 1;
                // A 5 ms preemption in the spinning window.
                if i == 3 {
                    us(5000)
                } else {
                    us(if s { 30 } else { 80 })
                }
            },
            true,
        );
        assert!(p.spin());
    }

    #[test]
    fn several_in_flight_share_the_wait_and_forgotten_calls_teach_nothing() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        p.observe(t, 0, true, false);
        t += us(80);
        p.observe(t, 4, true, true);
        assert_eq!(p.samples, vec![20_000; 4]);
        t += us(40);
        p.observe(t, 2, true, true);
        assert_eq!(&p.samples[4..], &[20_000, 20_000]);
        // A call dropped before its reply: no sample, the mark is cleared.
        t += us(1000);
        p.observe(t, 0, false, false);
        assert_eq!(p.mark, None);
        assert_eq!(p.samples.len(), 6);
    }

    #[test]
    fn a_call_written_by_its_caller_is_timed_from_its_write() {
        let mut p = SpinPolicy::default();
        let mut t = Instant::now();
        // The caller wrote it; the driver first runs when the reply is in.
        p.sent(t);
        t += us(70);
        p.observe(t, 1, false, false);
        assert_eq!(p.samples, vec![70_000]);
        // A second write while one is pending keeps the first mark.
        p.sent(t);
        t += us(10);
        p.sent(t);
        t += us(20);
        p.observe(t, 2, false, false);
        assert_eq!(&p.samples[1..], &[15_000, 15_000]);
    }
}
