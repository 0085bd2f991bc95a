#!/usr/bin/env bash
# Tests planc-mode (editors/emacs/planc-mode.el) in `emacs --batch`: the file
# byte-compiles without a warning, then the ERT tests of planc-mode-tests.el
# (highlighting, indentation, formatting with `planc fmt -`, registration
# with Eglot and lsp-mode, and `planc lsp` driven by Eglot: diagnostics,
# hover, definition, completion, rename, formatting). Installs Debian's
# emacs-nox, elpa-eglot (Eglot for Emacs 28) and elpa-lsp-mode where Emacs or
# Eglot is missing. `planc` and `planc-lsp` must be on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

# Whether Emacs finds Eglot: built in from Emacs 29, a Debian package before.
have_eglot() {
    command -v emacs >/dev/null &&
        emacs --batch -Q --eval '(progn (require (quote package))
            (add-to-list (quote package-directory-list) "/usr/share/emacs/site-lisp/elpa")
            (package-initialize)
            (unless (locate-library "eglot") (kill-emacs 1)))' 2>/dev/null
}
if ! have_eglot; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emacs-nox elpa-eglot elpa-lsp-mode >/dev/null
    else
        echo "Emacs with Eglot is missing (Debian: apt-get install emacs-nox elpa-eglot elpa-lsp-mode)" >&2
        exit 1
    fi
fi

# Byte-compiled in a directory of its own, so no .elc is left beside the source.
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
cp "$here/../planc-mode.el" "$build/"
emacs --batch -Q --eval '(setq byte-compile-error-on-warn t)' \
    -f batch-byte-compile "$build/planc-mode.el"

# HOME of its own: Eglot and package.el write nothing into the user's.
HOME="$build" timeout 120 emacs --batch -Q -l "$here/planc-mode-tests.el" \
    -f ert-run-tests-batch-and-exit
