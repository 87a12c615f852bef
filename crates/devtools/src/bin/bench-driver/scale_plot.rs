//! The HTTP scale benchmark's plot (feature `plot`): calls/s, p99, peak RSS
//! and the open rate beside N idle sessions, per server, against N.

use std::path::Path;

use crate::scale::Scale;

#[cfg(feature = "plot")]
pub fn plot_scale(path: &Path, names: &[String], scale: &Scale) -> Result<(), String> {
    use plotters::prelude::*;

    crate::plot::register_font()?;
    let colors = [
        RGBColor(66, 133, 244),
        RGBColor(234, 67, 53),
        RGBColor(52, 168, 83),
        RGBColor(251, 188, 5),
    ];
    let counts: Vec<usize> = scale.steps.keys().copied().collect();
    let root = BitMapBackend::new(path, (1400, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (title, body) = root.split_vertically(50);
    title
        .titled(
            "Streamable HTTP servers against live sessions (one pinned core each, 64 calls in flight)",
            ("sans-serif", 22),
        )
        .map_err(|e| e.to_string())?;
    let panels = body.split_evenly((2, 2));
    let metrics: [(&str, &str, bool); 4] = [
        ("calls/s (higher is better)", "calls_per_s", false),
        (
            "p99 latency, ms (log scale, lower is better)",
            "p99_us",
            true,
        ),
        ("peak RSS, MB (log scale, lower is better)", "hwm_kb", true),
        (
            "sessions opened/s beside N idle ones (higher is better)",
            "idle_open_rate",
            false,
        ),
    ];
    let scale_of = |key: &str, v: f64| match key {
        "p99_us" => v / 1e3,
        "hwm_kb" => v / 1024.0,
        _ => v,
    };
    let label = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < counts.len() {
            format!("{} sessions", counts[i as usize])
        } else {
            String::new()
        }
    };
    for (panel, (caption, key, log)) in panels.iter().zip(metrics) {
        // Per server: (x, value) for each count it has.
        let series: Vec<Vec<(f64, f64)>> = (0..names.len())
            .map(|s| {
                scale
                    .steps
                    .values()
                    .enumerate()
                    .filter_map(|(i, step)| {
                        let v = step.get(s)?.as_ref()?.get(key)?.as_f64()?;
                        (v > 0.0).then(|| (i as f64, scale_of(key, v)))
                    })
                    .collect()
            })
            .collect();
        let all = series.iter().flatten().map(|p| p.1);
        let hi = all.clone().fold(1e-3, f64::max);
        let lo = all.fold(f64::MAX, f64::min).min(hi);
        let x = -0.3..(counts.len() as f64 - 0.7);
        let mut builder = ChartBuilder::on(panel);
        builder
            .caption(caption, ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(35)
            .y_label_area_size(70);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart.map_err(|e| e.to_string())?;
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .x_labels(counts.len() * 2)
                    .x_label_formatter(&label)
                    .y_label_formatter(&|y| crate::stats::fmt_num(*y))
                    .label_style(("sans-serif", 14))
                    .draw()
                    .map_err(|e| e.to_string())?;
                for (s, points) in series.iter().enumerate() {
                    let c = colors[s % colors.len()];
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            points.clone(),
                            c.stroke_width(3),
                        )))
                        .map_err(|e| e.to_string())?
                        .label(names[s].clone())
                        .legend(move |(x, y)| {
                            Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled())
                        });
                    chart
                        .draw_series(points.iter().map(|p| Circle::new(*p, 4, c.filled())))
                        .map_err(|e| e.to_string())?;
                }
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 14))
                    .draw()
                    .map_err(|e| e.to_string())?;
            }};
        }
        if log {
            draw!(builder.build_cartesian_2d(x, ((lo / 2.0).max(1e-3)..hi * 2.0).log_scale()));
        } else {
            draw!(builder.build_cartesian_2d(x, 0.0..hi * 1.15));
        }
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(not(feature = "plot"))]
pub fn plot_scale(_: &Path, _: &[String], _: &Scale) -> Result<(), String> {
    Err("bench-driver was built without the `plot` feature".into())
}
