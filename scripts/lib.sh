# Shared helpers for the project scripts (bash). Source it after `set -euo pipefail`.

# The repository root (this file lives in scripts/).
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

_CURRENT_STEP=""

# Reports the step that failed when the script exits early (set -e).
_on_exit() {
    local rc=$?
    if [[ $rc -ne 0 && -n "$_CURRENT_STEP" ]]; then
        printf '\n\033[1;31mFAILED: %s (exit %s)\033[0m\n' "$_CURRENT_STEP" "$rc" >&2
    fi
}
trap _on_exit EXIT

# A visible section header.
section() {
    printf '\n\033[1m==> %s\033[0m\n' "$*"
}

# Runs a named step: header, the command, duration. Not in a conditional context, so
# `set -e` stays in force inside step functions; a failure ends the script.
step() {
    local name="$1"
    shift
    _CURRENT_STEP="$name"
    section "$name"
    local start=$SECONDS
    "$@"
    printf '    ok: %s (%ss)\n' "$name" "$((SECONDS - start))"
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
