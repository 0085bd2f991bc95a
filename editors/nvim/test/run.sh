#!/usr/bin/env bash
# Opens a broken plan in headless Neovim with planc's setup and checks the
# diagnostics `planc lsp` sends. Installs Debian's neovim where missing.
# PLANC_LSP_CMD overrides the server command (default: `planc lsp` on PATH).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if ! command -v nvim >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null
    else
        echo "nvim is missing: install Neovim (Debian: apt-get install neovim)" >&2
        exit 1
    fi
fi

# --clean: no user configuration or plugins, only what the test loads.
# `-c luafile` rather than `-l`, which Neovim 0.7 (Debian 12) lacks.
timeout 60 nvim --headless --clean -n -u NONE -c "luafile $here/diagnostics.lua"
# Neovim prints without a final newline; end the summary line.
echo
