//! The watcher of a test's CLI processes, for [`Harness`](crate::Harness).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Proc;

/// How long processes get to disappear once a test is done with them.
const SETTLE: Duration = Duration::from_secs(10);

fn all_procs() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(Proc::read)
        .collect()
}

/// Every descendant of the test process (zombies included), by `ppid`.
fn descendants() -> Vec<Proc> {
    let me = std::process::id() as i32;
    let procs = all_procs();
    let mut found: BTreeSet<i32> = BTreeSet::from([me]);
    loop {
        let before = found.len();
        for p in &procs {
            if found.contains(&p.ppid) {
                found.insert(p.pid);
            }
        }
        if found.len() == before {
            break;
        }
    }
    procs
        .into_iter()
        .filter(|p| p.pid != me && found.contains(&p.pid))
        .collect()
}

fn environ_has(pid: i32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|kv| kv == entry.as_bytes()))
        .unwrap_or(false)
}

/// Descendants whose environment names `config_dir` (zombies have no
/// environment and are not found here; see [`ProcWatch`]).
///
/// A process's status is read again once its environment matched: the first
/// read may predate its `exec` (and the `setpgid` just before it), when it
/// was still a copy of the test in the test's own process group.
fn ours(config_dir: &str) -> Vec<Proc> {
    let entry = format!("CLAUDE_CONFIG_DIR={config_dir}");
    descendants()
        .into_iter()
        .filter(|p| environ_has(p.pid, &entry))
        .filter_map(|p| Proc::read(p.pid).filter(|now| now.start_time == p.start_time))
        .collect()
}

fn own_group() -> i32 {
    // SAFETY: a plain syscall without arguments.
    unsafe { libc::getpgrp() }
}

/// Records, in a background thread, every process of one test (every 25 ms):
/// a CLI that lives for a few milliseconds is still seen.
pub(crate) struct ProcWatch {
    config_dir: String,
    seen: Arc<Mutex<BTreeMap<i32, Proc>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProcWatch {
    pub(crate) fn start(config_dir: String) -> Self {
        let seen = Arc::new(Mutex::new(BTreeMap::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop, dir) = (seen.clone(), stop.clone(), config_dir.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    record(&seen, &dir);
                    std::thread::sleep(Duration::from_millis(25));
                }
            })
        };
        ProcWatch {
            config_dir,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// The live processes of the test now (recording them too).
    pub(crate) fn live(&self) -> Vec<Proc> {
        record(&self.seen, &self.config_dir);
        ours(&self.config_dir)
            .into_iter()
            .filter(|p| !p.is_dead())
            .collect()
    }

    /// Stops watching and waits for every recorded process to be gone.
    /// Returns whether any process was seen at all.
    ///
    /// # Panics
    ///
    /// When a recorded process shared the test's process group, or when one
    /// of them (or a member of their process groups) is still there after
    /// [`SETTLE`].
    pub(crate) async fn stop_and_check(mut self) -> bool {
        record(&self.seen, &self.config_dir);
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let seen: Vec<Proc> = lock(&self.seen).values().copied().collect();
        let own_group = own_group();
        let shared: Vec<&Proc> = seen.iter().filter(|p| p.pgrp == own_group).collect();
        assert!(
            shared.is_empty(),
            "CLI processes in the test's own process group {own_group}: {shared:?}"
        );
        let deadline = Instant::now() + SETTLE;
        loop {
            let left = leftovers(&seen, &self.config_dir);
            if left.is_empty() {
                return !seen.is_empty();
            }
            if Instant::now() >= deadline {
                panic!("CLI processes left behind after {SETTLE:?}: {left:?} (seen: {seen:?})");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for ProcWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn record(seen: &Mutex<BTreeMap<i32, Proc>>, config_dir: &str) {
    let found = ours(config_dir);
    let mut seen = lock(seen);
    for p in found {
        seen.entry(p.pid).or_insert(p);
    }
}

/// What is left of the processes in `seen`: the same process (pid and start
/// time) still present, live or zombie; any live member of their process
/// groups; any live descendant still naming the config folder.
fn leftovers(seen: &[Proc], config_dir: &str) -> Vec<Proc> {
    let mut left = Vec::new();
    for p in seen {
        if let Some(now) = Proc::read(p.pid)
            && now.start_time == p.start_time
        {
            left.push(now);
        }
    }
    // The test's own group holds the test and its runner: never a leftover.
    let own_group = own_group();
    let groups: BTreeSet<i32> = seen
        .iter()
        .map(|p| p.pgrp)
        .filter(|g| *g != own_group)
        .collect();
    for p in all_procs() {
        if groups.contains(&p.pgrp) && !p.is_dead() && !left.iter().any(|l| l.pid == p.pid) {
            left.push(p);
        }
    }
    for p in ours(config_dir) {
        if !left.iter().any(|l| l.pid == p.pid) {
            left.push(p);
        }
    }
    left
}
