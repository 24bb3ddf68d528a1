//! Busy-poll on against off, in many short interleaved rounds, beside an A/A control.
//!
//! A median of a few runs on a 2-vCPU VM moves ±10 % with the daemon's own pace (its threads
//! hand calls between them, and how often they do changes through a run). "Busy-poll is never
//! slower than off" is then a question about distributions: per round, busy-poll on ÷ off
//! next to off ÷ off (the same client run twice). A round where on ÷ off falls below 0.95 is a
//! finding only if it happens more often than it does between two identical clients.

use std::fmt::Write as _;

use super::Res;
use super::bench::{Bench, Client};
use super::stats::{f1, median};

/// A round counts as "slower" below this ratio.
const SLOWER: f64 = 0.95;

/// One schedule and mode: per round, the two ratios and the client CPU per call.
#[derive(Default)]
struct Rounds {
    on_off: Vec<f64>,
    off_off: Vec<f64>,
    cpu_on: Vec<f64>,
    cpu_off: Vec<f64>,
}

/// The `q`-quantile (nearest rank) of `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let rank = (q * s.len() as f64).ceil().max(1.0) as usize;
    s[rank.min(s.len()) - 1]
}

/// "median (p10–p90, min)".
fn dist(v: &[f64]) -> String {
    format!(
        "{:.3} ({:.3}–{:.3}, min {:.3})",
        median(v),
        quantile(v, 0.1),
        quantile(v, 0.9),
        quantile(v, 0.0)
    )
}

fn slower(v: &[f64]) -> usize {
    v.iter().filter(|&&r| r < SLOWER).count()
}

impl Bench {
    pub(super) fn busy_poll_rounds(&mut self) -> Res<()> {
        let rounds = self.o.busy_poll_rounds;
        let _ = writeln!(
            self.report,
            "\n### Busy-poll on ÷ off, {rounds} interleaved rounds, beside off ÷ off (A/A)\n\n\
             Each round runs ours with busy-poll on, off, and off again, in a rotating order. \
             Ratios are calls/s per round: median (p10–p90, min); \"< {SLOWER}\": rounds \
             below it.\n\n\
             | schedule | mode | on ÷ off | off ÷ off (A/A) | rounds < {SLOWER}: on ÷ off / \
             A/A | client CPU µs/call on / off (start-up included) |\n|---|---|---|---|---|---|"
        );
        for (sched, cpus) in self.schedules() {
            self.pin_daemon(&cpus)?;
            for (mode, conc) in [("sequential", 1), ("concurrent", self.o.threads)] {
                let n = self.o.busy_poll_calls * if conc == 1 { 1 } else { 2 };
                let order = [Client::Ours, Client::OursNoSpin, Client::OursNoSpin];
                let mut r = Rounds::default();
                for round in 0..rounds {
                    let mut rate = [0.0; 3];
                    let mut cpu = [0.0; 3];
                    for k in 0..order.len() {
                        let i = (k + round) % order.len();
                        let (calls_s, sample) = self.calls_once(order[i], n, conc)?;
                        rate[i] = calls_s;
                        cpu[i] = sample.cpu / n as f64 * 1e6;
                    }
                    r.on_off.push(rate[0] / rate[1]);
                    r.off_off.push(rate[2] / rate[1]);
                    r.cpu_on.push(cpu[0]);
                    r.cpu_off.push(cpu[1]);
                }
                eprintln!(
                    "   busy-poll rounds, {sched} {mode} x{conc}: on ÷ off {}, off ÷ off {}",
                    dist(&r.on_off),
                    dist(&r.off_off)
                );
                let _ = writeln!(
                    self.report,
                    "| {sched} | {mode} ({conc}) | {} | {} | {} / {} of {rounds} | {} / {} |",
                    dist(&r.on_off),
                    dist(&r.off_off),
                    slower(&r.on_off),
                    slower(&r.off_off),
                    f1(median(&r.cpu_on)),
                    f1(median(&r.cpu_off)),
                );
                let met = median(&r.on_off) >= 1.0 && slower(&r.on_off) <= slower(&r.off_off);
                self.target(
                    format!(
                        "busy-poll rounds, {mode}, {sched}: median on ÷ off ≥ 1.0 and no more \
                         rounds < {SLOWER} than A/A"
                    ),
                    format!(
                        "{:.3}×, {} vs {} of {rounds}",
                        median(&r.on_off),
                        slower(&r.on_off),
                        slower(&r.off_off)
                    ),
                    met,
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let v = [5.0, 1.0, 4.0, 2.0, 3.0, f64::NAN];
        for (q, want) in [(0.0, 1.0), (0.1, 1.0), (0.5, 3.0), (0.9, 5.0)] {
            assert!((quantile(&v, q) - want).abs() < 1e-12, "quantile {q}");
        }
        assert_eq!(slower(&[0.94, 0.95, 1.2]), 1);
    }
}
