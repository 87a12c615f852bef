//! The plot of `docs/performance.png` (feature `plot`: plotters).

use std::path::Path;

#[cfg(feature = "plot")]
use claude_code_agent_fake_cli::report::PhaseReport;

use crate::args::Subject;
use crate::run::Rep;
#[cfg(feature = "plot")]
use crate::stats::{fmt_num, summarize};

/// Registers a system TTF as `sans-serif`: no fonts are built into
/// plotters without its `ttf` feature (which needs fontconfig).
#[cfg(feature = "plot")]
pub fn register_font() -> Result<(), String> {
    use plotters::style::FontStyle;
    let font = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    ]
    .iter()
    .find_map(|p| std::fs::read(p).ok())
    .ok_or("no TTF font found (install fonts-dejavu-core)")?;
    plotters::style::register_font("sans-serif", FontStyle::Normal, Box::leak(font.into()))
        .map_err(|_| "the font could not be loaded".to_owned())
}

/// Draws throughput (serial and pipelined calls/s) and p99 latency per
/// subject, medians with min–max bars, into a PNG.
#[cfg(feature = "plot")]
pub fn plot(path: &Path, subjects: &[Subject], results: &[Vec<Rep>]) -> Result<(), String> {
    use plotters::prelude::*;

    register_font()?;

    let get = |rs: &[Rep], phase: &str, f: fn(&PhaseReport) -> f64| {
        summarize(
            rs.iter()
                .filter_map(|r| {
                    r.report
                        .phases
                        .iter()
                        .find(|p| p.name == phase && p.ok())
                        .map(f)
                })
                .collect(),
        )
    };
    // Medians written above the bars.
    let value_style = TextStyle::from(("sans-serif", 13).into_font()).pos(
        plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Bottom,
        ),
    );
    let series: [(&str, RGBColor); 2] = [
        ("serial", RGBColor(66, 133, 244)),
        ("pipelined", RGBColor(234, 67, 53)),
    ];
    let n = subjects.len() as f64;
    let root = BitMapBackend::new(path, (1400, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (title, body) = root.split_vertically(50);
    title
        .titled(
            "In-process MCP tools/call through the CLI's control channel (fake CLI, medians, bars: min–max)",
            ("sans-serif", 22),
        )
        .map_err(|e| e.to_string())?;
    let (left, right) = body.split_horizontally(700);
    let names: Vec<String> = subjects.iter().map(|s| s.name.clone()).collect();
    let label = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
            names[i as usize].clone()
        } else {
            String::new()
        }
    };

    // Throughput, linear.
    let mut top: f64 = 1.0;
    for rs in results {
        for (ph, _) in &series {
            if let Some(s) = get(rs, ph, |p| p.calls_per_s) {
                top = top.max(s.max);
            }
        }
    }
    let mut chart = ChartBuilder::on(&left)
        .caption("throughput, calls/s (higher is better)", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..n - 0.5, 0.0..top * 1.3)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(subjects.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;
    for (k, (ph, color)) in series.iter().enumerate() {
        let mut bars = Vec::new();
        let mut whiskers = Vec::new();
        let mut labels = Vec::new();
        for (i, rs) in results.iter().enumerate() {
            if let Some(s) = get(rs, ph, |p| p.calls_per_s) {
                let x = i as f64 - 0.2 + 0.4 * k as f64;
                bars.push(Rectangle::new(
                    [(x - 0.17, 0.0), (x + 0.17, s.median)],
                    color.filled(),
                ));
                whiskers.push(PathElement::new(
                    vec![(x, s.min), (x, s.max)],
                    BLACK.stroke_width(2),
                ));
                labels.push(Text::new(
                    fmt_num(s.median),
                    (x, s.max.max(s.median)),
                    value_style.clone(),
                ));
            }
        }
        let legend = if *ph == "serial" {
            "serial".to_owned()
        } else {
            "64 in flight".to_owned()
        };
        let c = *color;
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(legend)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled()));
        chart.draw_series(whiskers).map_err(|e| e.to_string())?;
        chart.draw_series(labels).map_err(|e| e.to_string())?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperMiddle)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;

    // p99 latency, log scale.
    let (mut lo, mut hi) = (f64::MAX, 1.0f64);
    for rs in results {
        for (ph, _) in &series {
            if let Some(s) = get(rs, ph, |p| p.p99_us) {
                lo = lo.min(s.min);
                hi = hi.max(s.max);
            }
        }
    }
    let lo = (lo.min(hi) / 2.0).max(0.1);
    let mut chart = ChartBuilder::on(&right)
        .caption(
            "p99 latency, µs (log scale, lower is better)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..n - 0.5, (lo..hi * 3.0).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(subjects.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;
    for (k, (ph, color)) in series.iter().enumerate() {
        let mut bars = Vec::new();
        let mut whiskers = Vec::new();
        let mut labels = Vec::new();
        for (i, rs) in results.iter().enumerate() {
            if let Some(s) = get(rs, ph, |p| p.p99_us) {
                let x = i as f64 - 0.2 + 0.4 * k as f64;
                bars.push(Rectangle::new(
                    [(x - 0.17, lo), (x + 0.17, s.median)],
                    color.filled(),
                ));
                whiskers.push(PathElement::new(
                    vec![(x, s.min), (x, s.max)],
                    BLACK.stroke_width(2),
                ));
                labels.push(Text::new(
                    fmt_num(s.median),
                    (x, s.max.max(s.median)),
                    value_style.clone(),
                ));
            }
        }
        chart.draw_series(bars).map_err(|e| e.to_string())?;
        chart.draw_series(whiskers).map_err(|e| e.to_string())?;
        chart.draw_series(labels).map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(not(feature = "plot"))]
pub fn plot(_: &Path, _: &[Subject], _: &[Vec<Rep>]) -> Result<(), String> {
    Err("bench-driver was built without the `plot` feature".into())
}
