//! The JSON line: every sample of the run, typed, written by `serde_json`. Field names and
//! nesting are the report's format (docs/benchmarks-compare.md); numbers keep 4 decimals,
//! and what is not a number is `null`.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// A figure: rounded to 4 decimals; `null` when not finite.
#[derive(Debug, Clone, Copy)]
pub(super) struct Num(pub f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.serialize_f64((self.0 * 1e4).round() / 1e4)
        } else {
            s.serialize_none()
        }
    }
}

/// Figures of the runs, in run order.
pub(super) fn nums(v: &[f64]) -> Vec<Num> {
    v.iter().copied().map(Num).collect()
}

/// A JSON object whose keys are data (`sequential`, `upload_ours`, …), in insertion order.
#[derive(Debug)]
pub(super) struct Ordered<T>(pub Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T: Serialize> Serialize for Ordered<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The whole line.
#[derive(Debug, serde::Serialize)]
pub(super) struct Report<'a> {
    pub date: &'a str,
    pub load_start: &'a str,
    pub load_end: &'a str,
    pub tree: &'a str,
    pub pool_on_tmpfs: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<&'a Calls>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfers: Option<&'a Transfers>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_sink: Option<&'a [Slow]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<&'a super::counts::Counts>,
    pub targets: &'a [Target],
}

/// `calls`: `n` and one object per mode (`sequential`, `concurrent`).
#[derive(Debug, serde::Serialize)]
pub(super) struct Calls {
    pub n: usize,
    #[serde(flatten)]
    pub modes: Ordered<CallsMode>,
}

/// One calls mode; per-run figures, ours and the C library's.
#[derive(Debug, serde::Serialize)]
pub(super) struct CallsMode {
    pub concurrency: usize,
    pub ours_calls_s: Vec<Num>,
    pub c_calls_s: Vec<Num>,
    pub ours_client_cpu_us: Vec<Num>,
    pub c_client_cpu_us: Vec<Num>,
    pub ours_daemon_cpu_us: Vec<Num>,
    pub c_daemon_cpu_us: Vec<Num>,
    pub ours_box_busy_pct: Vec<Num>,
    pub c_box_busy_pct: Vec<Num>,
    pub ratio_ours_c: Num,
    /// Further per-run series (`floor_calls_s`, `ours_csw_per_call`, …).
    #[serde(flatten)]
    pub more: Ordered<Vec<Num>>,
}

/// `transfers`: `mib` and one object per `<op>_<client>`.
#[derive(Debug, serde::Serialize)]
pub(super) struct Transfers {
    pub mib: u64,
    #[serde(flatten)]
    pub runs: Ordered<TransferRuns>,
}

/// One client's transfers of one direction; per-run figures and its fixed cost.
#[derive(Debug, serde::Serialize)]
pub(super) struct TransferRuns {
    pub net_mb_s: Vec<Num>,
    pub gross_mb_s: Vec<Num>,
    pub cpu_s: Vec<Num>,
    pub rss_mib: Vec<Num>,
    pub daemon_cpu_s: Vec<Num>,
    pub box_busy_pct: Vec<Num>,
    pub fixed_wall_s: Num,
    pub fixed_cpu_s: Num,
    pub fixed_rss_mib: Num,
}

/// One client's slow-sink download: `[seconds, VmRSS KiB, VmHWM KiB]` samples.
#[derive(Debug, serde::Serialize)]
pub(super) struct Slow {
    pub client: String,
    pub samples: Vec<(Num, u64, u64)>,
    pub sink_bytes: u64,
    pub capped: bool,
}

/// A target, what was measured, and whether it was met (`null`: not judged).
#[derive(Debug, serde::Serialize)]
#[allow(clippy::struct_field_names)] // `target` is the JSON field's name
pub(super) struct Target {
    pub target: String,
    pub measured: String,
    pub met: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_keeps_its_fields_order_and_number_format() {
        let calls = Calls {
            n: 2,
            modes: Ordered(vec![(
                "sequential".into(),
                CallsMode {
                    concurrency: 1,
                    ours_calls_s: nums(&[33_000.123_456, f64::NAN]),
                    c_calls_s: nums(&[10.0]),
                    ours_client_cpu_us: vec![],
                    c_client_cpu_us: vec![],
                    ours_daemon_cpu_us: vec![],
                    c_daemon_cpu_us: vec![],
                    ours_box_busy_pct: vec![],
                    c_box_busy_pct: vec![],
                    ratio_ours_c: Num(3.3),
                    more: Ordered::default(),
                },
            )]),
        };
        let slow = [Slow {
            client: "ours \"lv\"".into(),
            samples: vec![(Num(0.5), 10, 12)],
            sink_bytes: 7,
            capped: false,
        }];
        let targets = [Target {
            target: "t".into(),
            measured: "1.0×".into(),
            met: None,
        }];
        let line = serde_json::to_string(&Report {
            date: "d",
            load_start: "1 2 3",
            load_end: "4 5 6",
            tree: "abc",
            pool_on_tmpfs: true,
            calls: Some(&calls),
            transfers: None,
            slow_sink: Some(&slow),
            counts: None,
            targets: &targets,
        })
        .unwrap();
        assert_eq!(
            line,
            "{\"date\":\"d\",\"load_start\":\"1 2 3\",\"load_end\":\"4 5 6\",\"tree\":\"abc\",\
             \"pool_on_tmpfs\":true,\"calls\":{\"n\":2,\"sequential\":{\"concurrency\":1,\
             \"ours_calls_s\":[33000.1235,null],\"c_calls_s\":[10.0],\"ours_client_cpu_us\":[],\
             \"c_client_cpu_us\":[],\"ours_daemon_cpu_us\":[],\"c_daemon_cpu_us\":[],\
             \"ours_box_busy_pct\":[],\"c_box_busy_pct\":[],\"ratio_ours_c\":3.3}},\
             \"slow_sink\":[{\"client\":\"ours \\\"lv\\\"\",\"samples\":[[0.5,10,12]],\
             \"sink_bytes\":7,\"capped\":false}],\"targets\":[{\"target\":\"t\",\
             \"measured\":\"1.0×\",\"met\":null}]}"
        );
    }
}
