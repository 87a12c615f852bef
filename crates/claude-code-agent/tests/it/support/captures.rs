//! Loading the recorded CLI transcripts in `tests/fixtures/captures/`
//! (CLI 2.1.332; what they show is written up in `docs/protocol.md`).

use std::path::PathBuf;

use serde_json::Value;

/// Where the captures are: this crate's `tests/fixtures/captures/`.
pub fn captures_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/captures/"
    ))
}

/// One line of a capture.
#[derive(Debug, Clone)]
pub struct Line {
    pub file: String,
    pub seq: u64,
    pub dir: String,
    pub msg: Value,
}

/// Every line of one capture. Panics with a clear message if it is missing.
pub fn capture(name: &str) -> Vec<Line> {
    let path = captures_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read capture {} ({e}); the recorded transcripts are part of the repository",
            path.display()
        )
    });
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{name}: bad capture line ({e}): {l}"));
            Line {
                file: name.to_owned(),
                seq: v["seq"].as_u64().unwrap_or(0),
                dir: v["dir"].as_str().unwrap_or_default().to_owned(),
                msg: v["msg"].clone(),
            }
        })
        .collect()
}

/// Names of all captures. Panics if the folder is missing or nearly empty.
pub fn all_capture_names() -> Vec<String> {
    let dir = captures_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "cannot list {} ({e}); the recorded transcripts are part of the repository",
            dir.display()
        )
    });
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 50,
        "expected the full set of captures in {}, found {}",
        dir.display(),
        names.len()
    );
    names
}

/// Lines in one direction of one capture.
pub fn lines(name: &str, dir: &str) -> Vec<Line> {
    capture(name).into_iter().filter(|l| l.dir == dir).collect()
}

/// `<-cli` lines of all captures.
pub fn all_cli_lines() -> Vec<Line> {
    all_capture_names()
        .iter()
        .flat_map(|n| lines(n, "<-cli"))
        .collect()
}
