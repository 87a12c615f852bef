# Shared helpers for the project scripts (bash). Source it after `set -euo pipefail`.

# The repository root (this file lives in scripts/).
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

_CURRENT_STEP=""

# Reports the step that failed when the script exits early (set -e), and
# ends the background jobs still running with everything they started
# (builds, test binaries, the CLIs they drive), so that a failed run
# leaves nothing behind.
_on_exit() {
    local rc=$? pid
    if [[ $rc -ne 0 && -n "$_CURRENT_STEP" ]]; then
        printf '\n\033[1;31mFAILED: %s (exit %s)\033[0m\n' "$_CURRENT_STEP" "$rc" >&2
    fi
    # Only jobs bash has not reaped: their pids cannot have been reused.
    for pid in $(jobs -p); do
        disown "$pid" 2>/dev/null || true
        _kill_tree "$pid"
    done
}
trap _on_exit EXIT

# Kills $1 and its descendants: each is stopped before its children are
# listed, so none it starts meanwhile escapes (Linux's
# /proc/<pid>/task/<tid>/children).
_kill_tree() {
    local child
    kill -STOP "$1" 2>/dev/null || return 0
    for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
        _kill_tree "$child"
    done
    kill -KILL "$1" 2>/dev/null || true
}

# A visible section header.
section() {
    printf '\n\033[1m==> %s\033[0m\n' "$*"
}

# Sets CHILDREN_CPU to the CPU seconds (user and system) of this shell's
# children that have ended, and ALL_CPU to that with this shell's own:
# bash's `times`, read in this shell (a `$(…)` would read its own). A
# step's commands are waited for and counted; a background job is counted
# by bash when it reaps it, which `step` leaves out (see `background`).
_TIMES_FILE="$(mktemp)"
_children_cpu() {
    local self_user self_sys user sys
    times >"$_TIMES_FILE"
    { read -r self_user self_sys; read -r user sys; } <"$_TIMES_FILE"
    CHILDREN_CPU="$(awk -v u="$user" -v s="$sys" 'function sec(t) { split(t, a, "m"); return a[1] * 60 + a[2] }
        BEGIN { printf "%d\n", sec(u) + sec(s) }')"
    # With this shell's own: what its parent counts when it reaps it.
    ALL_CPU="$(awk -v u="$user" -v s="$sys" -v su="$self_user" -v ss="$self_sys" \
        'function sec(t) { split(t, a, "m"); return a[1] * 60 + a[2] }
        BEGIN { printf "%d\n", sec(u) + sec(s) + sec(su) + sec(ss) }')"
}

# Runs "$@" (a command or a function) as a background job of this shell
# ($! is its pid, for `wait`), named $1 without it: when it ends it writes
# the CPU seconds it took to a file, so that `step` leaves them out of the
# step during which bash reaps it, and `background_cpu` tells them. One still
# running when the script exits is killed, with its descendants.
_BACKGROUND_CPU="$(mktemp -d)"
background() {
    local name="$1"
    shift
    (
        status=0
        "$@" || status=$?
        _children_cpu
        echo "$ALL_CPU" >"$_BACKGROUND_CPU/$name"
        exit "$status"
    ) &
}
# What the background job $1 took, once it ended.
background_cpu() {
    [[ -f "$_BACKGROUND_CPU/$1" ]] && echo "    in the background: $(cat "$_BACKGROUND_CPU/$1")s of CPU"
    return 0
}

# Runs a named step: header, the command, duration. Not in a conditional context, so
# `set -e` stays in force inside step functions; a failure ends the script.
step() {
    local name="$1"
    shift
    _CURRENT_STEP="$name"
    section "$name"
    local start=$SECONDS cpu ended job
    _children_cpu
    cpu=$CHILDREN_CPU
    ended="$(ls "$_BACKGROUND_CPU")"
    "$@"
    _children_cpu
    cpu=$((CHILDREN_CPU - cpu))
    for job in $(ls "$_BACKGROUND_CPU"); do
        grep -qx "$job" <<<"$ended" || cpu=$((cpu - $(cat "$_BACKGROUND_CPU/$job")))
    done
    ((cpu >= 0)) || cpu=0
    printf '    ok: %s (%ss, %ss of CPU)\n' "$name" "$((SECONDS - start))" "$cpu"
    _CURRENT_STEP=""
}

# Checks that a command exists, with a hint if it does not.
require() {
    local cmd="$1" hint="$2"
    if ! command -v "$cmd" >/dev/null 2>&1; then
        printf 'error: %s is required (%s)\n' "$cmd" "$hint" >&2
        exit 1
    fi
}

# Finds or installs the pinned Claude Code CLI (with npm, into
# ${XDG_CACHE_HOME:-~/.cache}/claude-agent-rs/cli-<version>) and exports
# CLAUDE_AGENT_TEST_CLI with its path.
ensure_cli() {
    local path
    path="$("$REPO_ROOT/scripts/install-cli")"
    if [[ -z "$path" || ! -x "$path" ]]; then
        echo "error: install-cli printed no usable path: '$path'" >&2
        return 1
    fi
    export CLAUDE_AGENT_TEST_CLI="$path"
    echo "    CLAUDE_AGENT_TEST_CLI=$CLAUDE_AGENT_TEST_CLI"
    echo "    $("$CLAUDE_AGENT_TEST_CLI" --version)"
}

# The SDK's optional features, on for lints, docs and tests so that every line
# is checked (the MCP crate has its HTTP ones on by default). scripts/test's
# steps, scripts/check-packages and scripts/test-cli-range build with these
# in the dev profile and the same target directory, so that they share the
# dependencies' artifacts.
FEATURES="claude-code-agent/http-client,claude-code-agent/http-server,claude-code-agent/oauth-client,claude-code-agent/oauth-server,claude-code-agent/redis,claude-code-agent/rmcp,claude-code-agent/jsonschema,claude-code-agent-testkit/cassette,claude-code-agent-testkit/otlp,claude-code-agent/opentelemetry"

# The crates published to crates.io, in dependency order.
PUBLISHED_CRATES=(claude-code-agent-mcp claude-code-agent claude-code-agent-testkit)

# Cargo's target directory, absolute.
target_dir() {
    local target="${CARGO_TARGET_DIR:-target}"
    [[ "$target" == /* ]] || target="$REPO_ROOT/$target"
    echo "$target"
}

# `crate/feature` for every feature in the `[features]` table of a manifest
# (argument: the crate's directory name under crates/ (or $3) of the
# workspace at $2, default the repository), but `default` and the internal
# `__*` ones.
features_of() {
    awk -v crate="$1" '
        /^\[/ { in_features = ($0 == "[features]"); next }
        in_features && match($0, /^[A-Za-z0-9_-]+[ \t]*=/) {
            name = substr($0, 1, RLENGTH - 1)
            sub(/[ \t]+$/, "", name)
            if (name != "default" && name !~ /^_/) print crate "/" name
        }' "${2:-$REPO_ROOT}/${3:-crates}/$1/Cargo.toml"
}

# Writes the rustdoc JSON of the published crates of the workspace at $1
# (their folders under crates/, or $3) into the directory $2 (<crate>.json),
# with every feature of theirs on but the
# internal ones, as scripts/test's docs step builds them (the whole workspace,
# the same features, so the dependencies it checked are reused). Rustdoc JSON
# is an unstable output: rustdoc on a stable toolchain writes it when
# RUSTC_BOOTSTRAP=1 is set, here for rustdoc alone (a wrapper as RUSTDOC), as
# setting it for cargo would change every dependency's fingerprint and rebuild
# them all (and once more for the next plain build). Items hidden from the
# docs (`#[doc(hidden)]`) are not in the JSON.
published_rustdoc_json() {
    local root="$1" out="$2" crates="${3:-crates}" target crate features=() feature
    target="$(target_dir)"
    mkdir -p "$out"
    for crate in "${PUBLISHED_CRATES[@]}"; do
        [[ -f "$root/$crates/$crate/Cargo.toml" ]] || continue
        while IFS= read -r feature; do features+=("$feature"); done < <(features_of "$crate" "$root" "$crates")
    done
    # Cargo cannot tell whether JSON output is up to date (it looks for the
    # HTML's index.html) and runs rustdoc every time: the JSON of this
    # repository's tree is kept, with the features it was built with, and
    # taken again while no file of the tree is newer (scripts/api-check
    # builds it, scripts/semver-check takes it).
    local kept="$target/rustdoc-json" stamp
    stamp="$kept/built-with"
    if [[ "$root" -ef "$REPO_ROOT" && -f "$stamp" && "$(cat "$stamp")" == "${features[*]}" ]] &&
        [[ -z "$(find "$REPO_ROOT" \( -path "$REPO_ROOT/.git" -o -path "$target" \
            -o -path "$REPO_ROOT/target" \) -prune -o -type f -newer "$stamp" -print -quit)" ]]; then
        echo "    rustdoc JSON of $root: unchanged since it was built"
        for crate in "${PUBLISHED_CRATES[@]}"; do cp "$kept/$crate.json" "$out/$crate.json"; done
        return
    fi
    # Stamped with the time the build starts: a file changed while it runs is newer.
    if [[ "$root" -ef "$REPO_ROOT" ]]; then
        mkdir -p "$kept"
        rm -f "$stamp"
        echo "${features[*]}" >"$stamp.new"
    fi
    printf '#!/bin/sh\nRUSTC_BOOTSTRAP=1 exec %s "$@"\n' "${RUSTDOC:-rustdoc}" >"$out/rustdoc"
    chmod +x "$out/rustdoc"
    echo "    rustdoc JSON of $root, features: $(IFS=,; echo "${features[*]}")"
    (cd "$root" && RUSTDOC="$out/rustdoc" RUSTDOCFLAGS="-Z unstable-options --output-format json" \
        CARGO_TARGET_DIR="$target" cargo doc --quiet --workspace --lib --no-deps \
        --features "$(IFS=,; echo "${features[*]}")")
    for crate in "${PUBLISHED_CRATES[@]}"; do
        if [[ -f "$root/$crates/$crate/Cargo.toml" ]]; then
            cp "$target/doc/${crate//-/_}.json" "$out/$crate.json"
        fi
    done
    if [[ "$root" -ef "$REPO_ROOT" ]]; then
        for crate in "${PUBLISHED_CRATES[@]}"; do cp "$out/$crate.json" "$kept/$crate.json"; done
        mv "$stamp.new" "$stamp"
    fi
}
