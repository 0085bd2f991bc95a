"""Checks the committed tree-sitter parser without the tree-sitter CLI.

CI cannot build the CLI in its time, so this runs what run.sh's CLI checks
need only the parser for, through the `tree-sitter` Python bindings (PyPI,
test/requirements.txt) and a C compiler (`CC`, default `cc`):

- the corpus: each case of test/corpus/*.txt parses to its tree;
- the highlight assertions of test/highlight/*.plan hold for
  queries/highlights.scm (the innermost node's capture wins; on one node the
  last pattern, as in Helix, Neovim and the tree-sitter CLI);
- queries/{folds,indents,textobjects}.scm capture in test/queries/sample.plan
  what test/queries/*.txt (written by `tree-sitter query --captures`) lists;
- every plan among examples/ and editors/*/test/ that `planc check` reads
  without a syntax error parses without an ERROR or MISSING node (so a
  language change that the grammar misses fails here).

That src/ is what grammar.js generates needs the CLI: run.sh checks it.
"""

import ctypes
import glob
import os
import re
import subprocess
import sys
import tempfile

import warnings

import tree_sitter

# Language(int) is how a parser compiled here is loaded (no binding module).
warnings.filterwarnings("ignore", category=DeprecationWarning)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(HERE))


def load_language(build_dir):
    """Compiles src/parser.c into a shared library and loads its language."""
    library = os.path.join(build_dir, "plan.so")
    subprocess.run(
        [os.environ.get("CC", "cc"), "-O0", "-shared", "-fPIC", "-I", os.path.join(HERE, "src"),
         os.path.join(HERE, "src", "parser.c"), "-o", library],
        check=True,
    )
    loaded = ctypes.cdll.LoadLibrary(library)
    loaded.tree_sitter_plan.restype = ctypes.c_void_p
    return tree_sitter.Language(loaded.tree_sitter_plan())


def corpus_cases(path):
    """(name, source, expected tree) of each case of a corpus file."""
    text = open(path, encoding="utf-8").read()
    parts = re.split(r"^={3,}\n(.*)\n={3,}\n", text, flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2]):
        source, expected = re.split(r"^-{3,}\n", body, maxsplit=1, flags=re.M)
        yield name, source.strip("\n") + "\n", " ".join(expected.split())


def check_corpus(parser):
    """Each corpus case parses to its expected tree."""
    count = 0
    for path in sorted(glob.glob(os.path.join(HERE, "test", "corpus", "*.txt"))):
        for name, source, expected in corpus_cases(path):
            tree = " ".join(str(parser.parse(source.encode()).root_node).split())
            if tree != expected:
                fail(f"corpus {os.path.basename(path)}: {name}:\n got  {tree}\n want {expected}")
            count += 1
    return count


def captures(language, query_name, tree):
    """(pattern index, capture name, node) of each capture of a query."""
    source = open(os.path.join(HERE, "queries", query_name + ".scm"), encoding="utf-8").read()
    cursor = tree_sitter.QueryCursor(tree_sitter.Query(language, source))
    for pattern, found in cursor.matches(tree.root_node):
        for name, nodes in found.items():
            for node in nodes:
                yield pattern, name, node


def assertions(tree, source):
    """(row, column, capture name) of each `# ^ name` or `# <- name` comment.

    A caret points at its own column on the nearest line above that is not
    an assertion; `<-` at the column where the comment starts. Only comments
    count: such a line inside a string is its text.
    """
    lines = source.decode().split("\n")
    target = 0
    for row, line in enumerate(lines):
        match = re.match(r"^(\s*)#(\s*)(\^|<-)\s*(\S+)", line)
        if not match:
            target = row
            continue
        hash_column = len(match.group(1))
        if tree.root_node.descendant_for_point_range((row, hash_column), (row, hash_column)).type != "comment":
            continue  # inside a string: text, not an assertion (as for the CLI)
        if match.group(3) == "<-":
            column = len(match.group(1))
        else:
            column = line.index("^")
        yield target, len(line[:column].encode()), match.group(4)


def check_highlights(parser, language):
    """The highlight assertions hold."""
    count = 0
    for path in sorted(glob.glob(os.path.join(HERE, "test", "highlight", "*.plan"))):
        source = open(path, "rb").read()
        tree = parser.parse(source)
        found = list(captures(language, "highlights", tree))
        for row, column, expected in assertions(tree, source):
            covering = [
                (node.end_byte - node.start_byte, -pattern, name)
                for pattern, name, node in found
                if node.start_point <= (row, column) < node.end_point
            ]
            actual = min(covering)[2] if covering else None
            if actual != expected:
                fail(f"{os.path.basename(path)}:{row + 1}:{column + 1}: {actual}, not {expected}")
            count += 1
    return count


def check_queries(parser, language):
    """Folds, indents and text objects capture what test/queries/*.txt lists."""
    source = open(os.path.join(HERE, "test", "queries", "sample.plan"), "rb").read()
    tree = parser.parse(source)
    line = re.compile(r"capture: \d+ - ([\w.]+), start: \((\d+), (\d+)\), end: \((\d+), (\d+)\)")
    for query in ("folds", "indents", "textobjects"):
        listed = open(os.path.join(HERE, "test", "queries", query + ".txt"), encoding="utf-8").read()
        want = sorted(
            (m[1], (int(m[2]), int(m[3])), (int(m[4]), int(m[5]))) for m in line.finditer(listed)
        )
        got = sorted(
            (name, tuple(node.start_point), tuple(node.end_point))
            for _, name, node in captures(language, query, tree)
        )
        if got != want:
            fail(f"queries/{query}.scm:\n got  {got}\n want {want}")


def check_plans(parser):
    """The plans planc reads without a syntax error parse without errors."""
    paths = [
        *glob.glob(os.path.join(REPO, "examples", "*.plan")),
        *glob.glob(os.path.join(REPO, "examples", "*", "*.plan")),
        *glob.glob(os.path.join(REPO, "editors", "*", "test", "*.plan")),
    ]
    count = 0
    for path in sorted(paths):
        report = subprocess.run(["planc", "check", "--color", "never", path],
                                capture_output=True, text=True)
        if re.search(r"planc::(syntax|limit)", report.stdout + report.stderr):
            continue
        root = parser.parse(open(path, "rb").read()).root_node
        if root.has_error:
            fail(f"{os.path.relpath(path, REPO)}: planc reads it, the grammar does not:\n {root}")
        count += 1
    return count


def fail(message):
    """Stops the check, saying why."""
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    """Runs every check and prints what passed."""
    with tempfile.TemporaryDirectory() as build_dir:
        language = load_language(build_dir)
        parser = tree_sitter.Parser(language)
        cases = check_corpus(parser)
        highlighted = check_highlights(parser, language)
        check_queries(parser, language)
        plans = check_plans(parser)
    print(f"tree-sitter-plan: {cases} corpus cases, {highlighted} highlight assertions, "
          f"folds, indents and text objects, {plans} plans: ok")


if __name__ == "__main__":
    main()
