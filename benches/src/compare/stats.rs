//! Medians, spreads and the number formats of the report.

/// One MB (10^6 bytes), the report's unit.
pub(crate) const MB: f64 = 1e6;

pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        f64::midpoint(s[n / 2 - 1], s[n / 2])
    }
}

pub(crate) fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .filter(|x| !x.is_nan())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// `1,234` style.
pub(crate) fn thousands(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    let s = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 { format!("-{out}") } else { out }
}

/// "median (min–max)" with `fmt` for each number.
pub(crate) fn spread(v: &[f64], fmt: impl Fn(f64) -> String) -> String {
    let (lo, hi) = min_max(v);
    if v.len() < 2 {
        return fmt(median(v));
    }
    format!("{} ({}–{})", fmt(median(v)), fmt(lo), fmt(hi))
}

/// One decimal, `n/a` when not a number.
pub(crate) fn f1(x: f64) -> String {
    decimals(x, 1)
}

/// Two decimals, `n/a` when not a number.
pub(crate) fn f2(x: f64) -> String {
    decimals(x, 2)
}

fn decimals(x: f64, places: usize) -> String {
    if x.is_finite() {
        format!("{x:.places$}")
    } else {
        "n/a".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(thousands(1_234_567.4), "1,234,567");
        assert_eq!(thousands(-999.0), "-999");
        assert_eq!(thousands(f64::NAN), "n/a");
        assert_eq!(spread(&[3.0, 1.0, 2.0], f1), "2.0 (1.0–3.0)");
        assert_eq!(spread(&[4.0], f2), "4.00");
        assert!((median(&[1.0, 4.0, f64::NAN]) - 2.5).abs() < 1e-12);
    }
}
