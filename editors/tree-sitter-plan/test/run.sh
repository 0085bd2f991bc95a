#!/usr/bin/env bash
# Tests the tree-sitter grammar with the tree-sitter CLI (crates.io's
# tree-sitter-cli: `cargo install --locked tree-sitter-cli`; npm's package
# downloads its binary from GitHub on install). TREE_SITTER names the CLI
# (default: `tree-sitter` on PATH). Checks, in order:
#   - src/ is what `tree-sitter generate` makes of grammar.js (generated into
#     a copy, compared file by file);
#   - `tree-sitter test`: the corpus (test/corpus/*.txt) and the highlight
#     assertions (test/highlight/*.plan, against queries/highlights.scm);
#   - the folds, indents and text objects that queries/*.scm capture in
#     test/queries/sample.plan equal test/queries/*.txt;
#   - every plan that `planc check` accepts among examples/ and editors/
#     parses without an ERROR or MISSING node.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
ts="${TREE_SITTER:-tree-sitter}"
if ! command -v "$ts" >/dev/null; then
    echo "the tree-sitter CLI is missing: cargo install --locked tree-sitter-cli (or set TREE_SITTER)" >&2
    exit 1
fi
cd "$here"
# The CLI's cache of compiled parsers and its configuration, kept out of HOME.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export XDG_CACHE_HOME="$scratch/cache" XDG_CONFIG_HOME="$scratch/config"
quiet() { grep -v -e 'parser directories' -e 'init-config' -e 'configuration file' -e 'language grammars' -e '^$' || true; }

# 1. src/ is up to date.
mkdir "$scratch/generated"
cp grammar.js tree-sitter.json "$scratch/generated/"
(cd "$scratch/generated" && "$ts" generate) 2>&1 | quiet
for file in parser.c grammar.json node-types.json tree_sitter/parser.h tree_sitter/alloc.h tree_sitter/array.h; do
    if ! cmp -s "src/$file" "$scratch/generated/src/$file"; then
        echo "FAIL: src/$file is not what tree-sitter generate makes of grammar.js: run tree-sitter generate" >&2
        exit 1
    fi
done
echo "src/ is generated from grammar.js"

# 2. The corpus and the highlight assertions.
"$ts" test 2>&1 | quiet

# 3. Folds, indents, text objects.
for query in folds indents textobjects; do
    "$ts" query --captures "queries/$query.scm" test/queries/sample.plan 2>/dev/null |
        grep -E '^ +pattern:' | sed 's/, text: .*//' > "$scratch/$query.txt"
    if ! diff -u "test/queries/$query.txt" "$scratch/$query.txt"; then
        echo "FAIL: queries/$query.scm captures differ from test/queries/$query.txt" >&2
        exit 1
    fi
done
echo "folds, indents and text objects as expected"

# 4. The plans planc reads without a syntax error parse cleanly (planc check
#    also reports problems beyond syntax, which do not count here).
plans=()
for file in "$repo"/examples/*.plan "$repo"/examples/lib/*.plan "$repo"/examples/errors/*.plan \
    "$repo"/editors/*/test/*.plan; do
    report="$(planc check --color never "$file" 2>&1 || true)"
    if ! grep -q -E 'planc::(syntax|limit)' <<< "$report"; then
        plans+=("$file")
    fi
done
if ! "$ts" parse --quiet "${plans[@]}" > "$scratch/parse.txt" 2>&1; then
    quiet < "$scratch/parse.txt" >&2
    echo "FAIL: a plan without syntax errors does not parse" >&2
    exit 1
fi
echo "${#plans[@]} plans without syntax errors parse without errors"
