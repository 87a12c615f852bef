//! Medians and ranges over repetitions, and how numbers are written.

/// Median and range of a sample.
#[derive(Clone, Copy, Default)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

pub fn summarize(mut v: Vec<f64>) -> Option<Summary> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Summary {
        median,
        min: v[0],
        max: v[n - 1],
    })
}

pub fn fmt_num(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

pub fn cell(s: Option<Summary>) -> String {
    match s {
        Some(s) if s.min == s.max => fmt_num(s.median),
        Some(s) => format!(
            "{} ({}–{})",
            fmt_num(s.median),
            fmt_num(s.min),
            fmt_num(s.max)
        ),
        None => "—".into(),
    }
}

pub fn size_label(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// ns → ms between two stamps, when both are set.
pub fn span_ms(from: u64, to: u64) -> Option<f64> {
    (from > 0 && to > 0).then(|| (to as f64 - from as f64) / 1e6)
}
