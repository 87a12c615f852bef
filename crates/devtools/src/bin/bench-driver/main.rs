//! Runs the tool-call benchmark for several **subjects** side by side and
//! reports medians and ranges over repetitions.
//!
//! ```text
//! bench-driver --fake-cli target/release/fake-claude --reps 5 --out docs/performance.md \
//!   --subject 'rust-sdk|sdk|target/release/bench-sdk' \
//!   --subject 'echo-floor|responder|target/release/echo-responder'
//! ```
//!
//! A subject is `name|kind|command`:
//!
//! * kind `sdk`: the command is an SDK program that starts the CLI itself;
//!   it gets `FAKE_CLAUDE_PATH` (the fake CLI, to use as its CLI path) and
//!   the fake CLI's `FAKE_CLAUDE_SCENARIO`/`FAKE_CLAUDE_PARAMS`, which its CLI
//!   inherits. It must declare an in-process server `bench` with a tool `add`
//!   (`{"a","b","pad"?,"reply_bytes"?}` → text `sum=…` + `reply_bytes` × `x`).
//! * kind `responder`: the fake CLI is started here and spawns the command
//!   itself, talking to it over its stdin/stdout (the echo floor).
//!
//! Either way the fake CLI is the one timing every round trip, and it reads
//! the subject's CPU time and peak RSS from `/proc`. Repetitions interleave
//! the subjects (A B A B …) so that drift in machine load hits all alike.
//! `--params` adds to the `bench` scenario's parameters (e.g. smaller counts).
//!
//! With `--client 'name|cmd'` it also runs the MCP client benchmark
//! ([`clients`]); with `--http-load` and `--scale-server 'name|cmd'` the
//! HTTP scale benchmark ([`scale`]). `--out` writes `docs/performance.md` ([`mod@document`]),
//! `--plot` draws its PNG (feature `plot`). `scripts/bench` runs it all.

mod args;
mod clients;
mod document;
mod machine;
mod plot;
mod run;
mod scale;
mod scale_plot;
mod sdk;
mod stats;
mod table;
mod targets;

use args::parse_args;
use clients::client_bench;
use document::document;
use machine::machine;
use plot::plot;
use scale::scale_bench;
use scale_plot::plot_scale;
use sdk::sdk_bench;
use targets::targets;

fn main() {
    let args = parse_args();
    let machine = machine();
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut errors: Vec<String> = Vec::new();
    let (table, results) = if args.subjects.is_empty() {
        (None, Vec::new())
    } else {
        let (t, r) = sdk_bench(&args, dir.path(), &mut errors);
        (Some(t), r)
    };
    let clients = client_bench(&args, &mut errors);
    let scale = scale_bench(&args, &mut errors);
    let names: Vec<String> = args.scale_servers.iter().map(|s| s.name.clone()).collect();
    let scale_table = scale.as_ref().map(|s| s.table(&names));
    if let Some(t) = &table {
        t.print();
    }
    let target_table = targets(&args, &results, clients.as_ref(), scale.as_ref());
    if let Some(t) = &target_table {
        println!("\n{t}");
    }
    if let Some(c) = &clients {
        c.table.print();
    }
    if let Some(t) = &scale_table {
        t.print();
    }
    for e in &errors {
        println!("error: {}", e.lines().next().unwrap_or(""));
    }
    if let Some(png) = &args.plot
        && !args.subjects.is_empty()
    {
        match plot(png, &args.subjects, &results) {
            Ok(()) => eprintln!("wrote {}", png.display()),
            Err(e) => {
                eprintln!("cannot draw {}: {e}", png.display());
                errors.push(format!("plot: {e}"));
            }
        }
    }

    if let (Some(png), Some(scale)) = (&args.plot, &scale) {
        let png = png.with_file_name("performance-http.png");
        match plot_scale(&png, &names, scale) {
            Ok(()) => eprintln!("wrote {}", png.display()),
            Err(e) => {
                eprintln!("cannot draw {}: {e}", png.display());
                errors.push(format!("plot: {e}"));
            }
        }
    }

    if let Some(out) = &args.out {
        let mut machine = machine;
        machine.push(("load average at end".into(), machine::load_average()));
        let doc = document(
            &args,
            &machine,
            table.as_ref(),
            target_table.as_deref(),
            clients.as_ref().map(|c| &c.table),
            scale.as_ref().zip(scale_table.as_ref()),
            &errors,
        );
        if let Err(e) = std::fs::write(out, doc) {
            eprintln!("cannot write {}: {e}", out.display());
            std::process::exit(1);
        }
        eprintln!("wrote {}", out.display());
    }
}
