//! A short run of a fuzz target as an ordinary test: every kept input
//! (`fuzz/corpus/<target>/`, `fuzz/regressions/<target>/`) through the
//! target, then inputs made from them by mutation with a seeded RNG.
//!
//! The mutations are libFuzzer's simplest: a flipped bit, a byte set,
//! bytes inserted, a range deleted or copied elsewhere, two inputs spliced,
//! a word of the target's dictionary inserted or written over; one to five
//! of them stacked, the result cut at the target's maximum length. The
//! dictionary and that length are the ones `scripts/fuzz` gives libFuzzer.
//! No coverage guides it: it finds what lies a few mutations from a kept
//! input, and libFuzzer (`scripts/fuzz`) does the long runs.
//!
//! `CLAUDE_AGENT_FUZZ_SEED` sets the seed (else a random one),
//! `CLAUDE_AGENT_FUZZ_ITERS` the number of mutated inputs. A failure names
//! the input: the kept file, or a file written under `fuzz/artifacts/`
//! with the seed and the command that reproduces it.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// The environment variable that sets the seed of the random part.
const SEED_VAR: &str = "CLAUDE_AGENT_FUZZ_SEED";
/// The environment variable that sets how many mutated inputs run.
const ITERS_VAR: &str = "CLAUDE_AGENT_FUZZ_ITERS";

/// One target of `fuzz/` and how long its short run is.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The repository's `fuzz/` directory.
    pub fuzz_dir: PathBuf,
    /// The target's name (its file in `fuzz/fuzz_targets/`).
    pub name: &'a str,
    /// Whether `fuzz/regressions/<name>/` must exist and hold inputs (it is
    /// replayed whenever it exists).
    pub regressions: bool,
    /// The mutated inputs to run unless `CLAUDE_AGENT_FUZZ_ITERS` says.
    pub iterations: usize,
}

/// Runs `check` on every kept input of `target`, then on
/// `target.iterations` mutated ones; panics with the failing input's file,
/// the seed and the cause on the first panic of `check`, and when a kept
/// directory is missing or empty. Returns the number of inputs run.
pub fn short_run(target: &Target<'_>, check: impl Fn(&[u8])) -> usize {
    let name = target.name;
    let (max_len, dict) = options(&target.fuzz_dir, name);
    let corpus = kept(&target.fuzz_dir.join("corpus").join(name), true);
    let regressions_dir = target.fuzz_dir.join("regressions").join(name);
    let regressions = kept(&regressions_dir, target.regressions);
    for (path, input) in corpus.iter().chain(&regressions) {
        if let Err(cause) = run(&check, input) {
            panic!(
                "fuzz target {name} failed on the kept input {}: {cause}",
                path.display()
            );
        }
    }

    let seed = env_number(SEED_VAR).unwrap_or_else(|| fastrand::u64(..));
    let iterations = env_number(ITERS_VAR).map_or(target.iterations, |n| n as usize);
    // Printed for a failure, and shown by `cargo test -- --nocapture`.
    println!(
        "fuzz target {name}: {} kept inputs, {iterations} mutated, {SEED_VAR}={seed}",
        corpus.len() + regressions.len()
    );
    let pool: Vec<&[u8]> = corpus
        .iter()
        .chain(&regressions)
        .map(|(_, input)| input.as_slice())
        .collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    for i in 0..iterations {
        let input = mutate(&mut rng, &pool, &dict, max_len);
        if let Err(cause) = run(&check, &input) {
            let file = target
                .fuzz_dir
                .join("artifacts")
                .join(name)
                .join(format!("short-run-{seed}-{i}"));
            let saved = fs::create_dir_all(file.parent().expect("a parent"))
                .and_then(|()| fs::write(&file, &input))
                .map_or_else(
                    |e| format!("could not be written to {}: {e}", file.display()),
                    |()| format!("written to {}", file.display()),
                );
            panic!(
                "fuzz target {name} failed on mutated input {i} of the short run \
                 ({SEED_VAR}={seed} {ITERS_VAR}={} reproduces it); the input ({} bytes) is \
                 {saved} (keep it in {}/): {cause}",
                i + 1,
                input.len(),
                regressions_dir.display()
            );
        }
    }
    pool.len() + iterations
}

/// Runs `check` on `input`, its panic as text.
fn run(check: &impl Fn(&[u8]), input: &[u8]) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| check(input))).map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic without a message".to_owned())
    })
}

/// The files of `dir`, sorted by name, with their contents; panics if
/// `dir` is missing or empty while `required`.
fn kept(dir: &Path, required: bool) -> Vec<(PathBuf, Vec<u8>)> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => panic!("the fuzz inputs {} cannot be read: {e}", dir.display()),
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        !(required && files.is_empty()),
        "no fuzz inputs in {}: they are fixtures of the tests",
        dir.display()
    );
    files
        .into_iter()
        .map(|p| {
            let bytes = fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect()
}

/// A decimal (or `0x` hexadecimal) number from the environment.
fn env_number(var: &str) -> Option<u64> {
    let text = std::env::var(var).ok()?;
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{var}={text}: not a number: {e}")))
}

/// The maximum input length and the dictionary's words that `scripts/fuzz`
/// gives libFuzzer for `name` (its `options`: `-max_len=N`,
/// `-dict=dict/F`).
fn options(fuzz_dir: &Path, name: &str) -> (usize, Vec<Vec<u8>>) {
    let script_path = fuzz_dir.join("../scripts/fuzz");
    let script = fs::read_to_string(&script_path)
        .unwrap_or_else(|e| panic!("{}: {e}", script_path.display()));
    let prefix = format!("{name}) echo \"");
    let line = script
        .lines()
        .find_map(|l| l.trim().strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("scripts/fuzz gives no options for the target {name}"));
    let mut max_len = None;
    let mut dict = Vec::new();
    for option in line.split(['"', ' ']) {
        if let Some(n) = option.strip_prefix("-max_len=") {
            max_len = Some(n.parse().expect("-max_len is a number"));
        } else if let Some(file) = option.strip_prefix("-dict=") {
            let path = fuzz_dir.join(file);
            let text =
                fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            dict = dictionary(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    let max_len =
        max_len.unwrap_or_else(|| panic!("scripts/fuzz gives no -max_len for the target {name}"));
    (max_len, dict)
}

/// The words of a libFuzzer dictionary: one `"…"` (or `name="…"`) a line,
/// `#` comments; `\\`, `\"` and `\xHH` escapes.
fn dictionary(text: &str) -> Result<Vec<Vec<u8>>, String> {
    let mut words = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let quoted = line
            .find('"')
            .map(|at| &line[at..])
            .filter(|q| q.len() >= 2 && q.ends_with('"'))
            .ok_or_else(|| format!("line {}: no quoted word", n + 1))?;
        let inner = &quoted.as_bytes()[1..quoted.len() - 1];
        let mut word = Vec::new();
        let mut i = 0;
        while i < inner.len() {
            match (inner[i], inner.get(i + 1)) {
                (b'\\', Some(b'\\' | b'"')) => {
                    word.push(inner[i + 1]);
                    i += 2;
                }
                (b'\\', Some(b'x')) => {
                    let hex = inner
                        .get(i + 2..i + 4)
                        .and_then(|h| std::str::from_utf8(h).ok())
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                        .ok_or_else(|| format!("line {}: a bad \\x escape", n + 1))?;
                    word.push(hex);
                    i += 4;
                }
                (b, _) => {
                    word.push(b);
                    i += 1;
                }
            }
        }
        words.push(word);
    }
    Ok(words)
}

/// Bytes that often matter to a decoder.
const INTERESTING: &[u8] = b"\0\x01\x7f\x80\xff\n\r\t \"\\{}[]:,0-e.";

/// A new input: a kept one with one to five mutations, at most `max_len`
/// bytes.
fn mutate(rng: &mut fastrand::Rng, pool: &[&[u8]], dict: &[Vec<u8>], max_len: usize) -> Vec<u8> {
    let mut data = pool[rng.usize(..pool.len())].to_vec();
    for _ in 0..rng.usize(1..=5) {
        let len = data.len();
        match rng.u8(..8) {
            0 if len > 0 => {
                let at = rng.usize(..len);
                data[at] ^= 1 << rng.u8(..8);
            }
            1 if len > 0 => {
                let at = rng.usize(..len);
                data[at] = if rng.bool() {
                    INTERESTING[rng.usize(..INTERESTING.len())]
                } else {
                    rng.u8(..)
                };
            }
            2 => {
                let at = rng.usize(..=len);
                let bytes: Vec<u8> = (0..rng.usize(1..=8)).map(|_| rng.u8(..)).collect();
                data.splice(at..at, bytes);
            }
            3 if len > 0 => {
                let at = rng.usize(..len);
                let end = at + rng.usize(1..=(len - at).min(len / 4 + 1));
                data.drain(at..end);
            }
            4 if len > 0 => {
                let from = rng.usize(..len);
                let part = data[from..from + rng.usize(1..=(len - from).min(64))].to_vec();
                let at = rng.usize(..=len);
                data.splice(at..at, part);
            }
            5 => {
                let other = pool[rng.usize(..pool.len())];
                data.truncate(rng.usize(..=len));
                data.extend_from_slice(&other[rng.usize(..=other.len())..]);
            }
            6 | 7 if !dict.is_empty() => {
                let word = &dict[rng.usize(..dict.len())];
                let at = rng.usize(..=len);
                let end = if rng.bool() {
                    at
                } else {
                    (at + word.len()).min(len)
                };
                data.splice(at..end, word.iter().copied());
            }
            _ => {
                let at = rng.usize(..=len);
                data.insert(at, INTERESTING[rng.usize(..INTERESTING.len())]);
            }
        }
    }
    data.truncate(max_len);
    data
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    #[test]
    fn dictionaries_read_as_libfuzzer_reads_them() {
        let text = "# a comment\n\n\"data:\"\nkw1=\"a\\\"b\"\n\"\\\\ud800\"\n\"\\x00\\xff\"\n";
        assert_eq!(
            dictionary(text).unwrap(),
            [
                b"data:".to_vec(),
                b"a\"b".to_vec(),
                b"\\ud800".to_vec(),
                vec![0, 0xff]
            ]
        );
        assert!(dictionary("no quotes\n").is_err());
        assert!(dictionary("\"\\xZZ\"\n").is_err());
    }

    #[test]
    fn mutations_stay_under_the_cap_and_follow_the_seed() {
        let pool: [&[u8]; 3] = [b"{\"a\":1}", b"", b"data: x\n\n"];
        let dict = vec![b"retry:".to_vec()];
        let run = |seed| {
            let mut rng = fastrand::Rng::with_seed(seed);
            (0..500)
                .map(|_| mutate(&mut rng, &pool, &dict, 16))
                .collect::<Vec<_>>()
        };
        let first = run(7);
        assert_eq!(first, run(7));
        assert_ne!(first, run(8));
        assert!(first.iter().all(|m| m.len() <= 16));
        assert!(first.iter().any(|m| !pool.contains(&m.as_slice())));
        let mut text = String::new();
        for m in &first {
            let _ = write!(text, "{}", String::from_utf8_lossy(m));
        }
        assert!(text.contains("retry:"), "the dictionary is used");
    }
}
