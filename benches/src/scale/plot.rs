//! The growth plot (SVG, plotters): wall time and peak RSS of `list --all` and `domstats`
//! against the domain count, and peak RSS of a process holding idle connections against
//! their count; drawn from this run's figures only.

use std::path::Path;

use plotters::prelude::*;

use super::Res;
use super::growth::{IdleStep, Step};

type Series<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series<'_>],
) -> Res<()> {
    let e = |e: &dyn std::fmt::Display| format!("plot: {e}");
    let (mut xmax, mut ymax) = (1.0f64, 1.0f64);
    for (_, _, pts) in series {
        for &(x, y) in pts {
            xmax = xmax.max(x);
            ymax = ymax.max(y);
        }
    }
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(0f64..xmax * 1.05, 0f64..ymax * 1.1)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|x| e(&x))?;
    for (name, color, pts) in series {
        let c = *color;
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            .map_err(|x| e(&x))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
            .map_err(|x| e(&x))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|x| e(&x))?;
    Ok(())
}

/// Three panels side by side into `path`.
pub(crate) fn draw(path: &Path, growth: &[Step], idle: &[IdleStep]) -> Res<()> {
    const LV: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
    const LV2: RGBColor = RGBColor(0x2c, 0xa0, 0x2c);
    const VIRSH: RGBColor = RGBColor(0xd6, 0x27, 0x28);
    const VIRSH2: RGBColor = RGBColor(0xff, 0x7f, 0x0e);
    let root = SVGBackend::new(path, (1260, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| format!("plot: {e}"))?;
    let panels = root.split_evenly((1, 3));
    let pts = |f: &dyn Fn(&Step) -> f64| -> Vec<(f64, f64)> {
        growth.iter().map(|s| (s.domains as f64, f(s))).collect()
    };
    let mib = |k: u64| k as f64 / 1024.0;
    panel(
        &panels[0],
        "Wall time vs domains",
        "domains",
        "ms",
        &[
            ("lv list --all", LV, pts(&|s| s.lv_list_s * 1e3)),
            ("virsh list --all", VIRSH, pts(&|s| s.virsh_list_s * 1e3)),
            ("lv domstats", LV2, pts(&|s| s.lv_domstats_s * 1e3)),
            ("virsh domstats", VIRSH2, pts(&|s| s.virsh_domstats_s * 1e3)),
        ],
    )?;
    panel(
        &panels[1],
        "Peak RSS vs domains",
        "domains",
        "MiB",
        &[
            ("lv list --all", LV, pts(&|s| mib(s.lv_list_rss_kib))),
            (
                "virsh list --all",
                VIRSH,
                pts(&|s| mib(s.virsh_list_rss_kib)),
            ),
            ("lv domstats", LV2, pts(&|s| mib(s.lv_domstats_rss_kib))),
            (
                "virsh domstats",
                VIRSH2,
                pts(&|s| mib(s.virsh_domstats_rss_kib)),
            ),
        ],
    )?;
    let ipts = |f: &dyn Fn(&IdleStep) -> f64| -> Vec<(f64, f64)> {
        idle.iter().map(|s| (s.conns as f64, f(s))).collect()
    };
    panel(
        &panels[2],
        "Peak RSS vs idle connections (one process)",
        "connections",
        "MiB",
        &[
            ("ours (tokio)", LV, ipts(&|s| mib(s.ours_hwm_kib))),
            ("C library (python)", VIRSH, ipts(&|s| mib(s.c_hwm_kib))),
        ],
    )?;
    root.present().map_err(|e| format!("plot: {e}"))?;
    Ok(())
}
