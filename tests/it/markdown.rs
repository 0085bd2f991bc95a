//! Every tracked Markdown file renders as its author meant: it is parsed with
//! a CommonMark parser (pulldown-cmark, with GitHub's tables) and fails on
//!
//! - a code fence that never closes (it runs to the end of its file or list
//!   item), and a line inside a code block that looks like its closing fence
//!   but carries text (`` ``` text `` closes nothing, so what follows renders
//!   as code);
//! - a fence whose info string is not a known language, commands in a fence
//!   without one (`sh` runs them: tests/it/doc_commands.rs), and `$ ` prompts
//!   in a `text` fence (`console` runs them);
//! - a relative link to a file the repository does not track, and a
//!   `#anchor` (in the same file or another Markdown file) that no heading
//!   makes under GitHub's slug rules, nor an `<a id>`;
//! - a table row with a different number of cells than its header;
//! - a backtick that opens no code span (unbalanced inline code: one swallows
//!   the text up to the next backtick);
//! - an HTML comment that never closes.
//!
//! Each failure names `file:line`. The files are those `git ls-files '*.md'`
//! lists, so a document added by anyone is checked without naming it here.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::process::Command;

use pulldown_cmark::{BrokenLink, CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd};

use crate::support;

/// The info strings a fence may open with (its first word): what GitHub
/// highlights, plus `plan` (planc's own language, as the language server's
/// hovers write it) and `text`. An empty info string is allowed too.
pub(crate) const KNOWN_LANGUAGES: &[&str] = &[
    "bash",
    "c",
    "console",
    "css",
    "diff",
    "dockerfile",
    "dot",
    "ebnf",
    "elisp",
    "emacs-lisp",
    "html",
    "ini",
    "javascript",
    "js",
    "json",
    "jsonc",
    "jsonl",
    "lua",
    "make",
    "markdown",
    "md",
    "mermaid",
    "pest",
    "plan",
    "powershell",
    "py",
    "python",
    "rust",
    "sh",
    "shell",
    "sql",
    "text",
    "toml",
    "ts",
    "typescript",
    "vim",
    "xml",
    "yaml",
    "yml",
];

/// The parser's options: CommonMark and GitHub's extensions.
pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_GFM
}

/// The repository's tracked files (`git ls-files`), as paths from its root.
pub(crate) fn tracked_files() -> Vec<String> {
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(support::root())
        .output()
        .expect("git runs");
    assert!(listed.status.success(), "git ls-files failed");
    listed
        .stdout
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .filter(|name| support::root().join(name).is_file()) // deleted, not yet committed
        .collect()
}

/// Line numbers (from 1) of byte offsets in one text.
pub(crate) struct Lines(Vec<usize>);

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1));
        Lines(starts.collect())
    }

    /// The line holding byte `offset`.
    pub(crate) fn of(&self, offset: usize) -> usize {
        self.0.partition_point(|start| *start <= offset)
    }
}

/// The slug GitHub gives a heading's text: lower case, every character but
/// letters, digits, `_`, `-` and spaces dropped, spaces made `-`.
pub(crate) fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors a Markdown text defines: its headings' slugs (a repeated one
/// numbered `-1`, `-2`, … as GitHub does) and the `id`/`name` of its HTML.
pub(crate) fn anchors(text: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, options()) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let count = seen.entry(base.clone()).or_insert(0);
                anchors.insert(if *count == 0 {
                    base.clone()
                } else {
                    format!("{base}-{count}")
                });
                *count += 1;
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                for attribute in ["id=\"", "name=\""] {
                    for (at, _) in html.match_indices(attribute) {
                        let rest = &html[at + attribute.len()..];
                        anchors.insert(rest.split('"').next().unwrap_or("").to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    anchors
}

/// What a check needs to know about the repository besides the file.
pub(crate) struct Repository {
    /// Tracked files and the directories that hold them, from the root.
    pub(crate) paths: BTreeSet<String>,
    /// The anchors of each tracked Markdown file.
    pub(crate) anchors: BTreeMap<String, BTreeSet<String>>,
}

impl Repository {
    /// The repository this test runs in.
    fn here() -> Repository {
        let mut paths = BTreeSet::new();
        let mut anchors_of = BTreeMap::new();
        for file in tracked_files() {
            let mut dir = file.as_str();
            while let Some((parent, _)) = dir.rsplit_once('/') {
                paths.insert(parent.to_owned());
                dir = parent;
            }
            if file.ends_with(".md") {
                let text = std::fs::read_to_string(support::root().join(&file)).unwrap();
                anchors_of.insert(file.clone(), anchors(&text));
            }
            paths.insert(file);
        }
        Repository {
            paths,
            anchors: anchors_of,
        }
    }
}

/// `a/b/../c` → `a/c`; `None` when it climbs out of the repository.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// Decodes `%20` and the like in a link's path.
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The fault of a link from file `name` to `dest`, if it has one.
fn link_fault(name: &str, dest: &str, own: &BTreeSet<String>, repo: &Repository) -> Option<String> {
    let scheme = dest.split(['/', '#', '?']).next().unwrap_or("");
    if scheme.contains(':') || dest.starts_with("//") {
        return None; // https:, mailto:, …: not this repository's
    }
    let (path, anchor) = match dest.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (dest, None),
    };
    let path = percent_decoded(path.split('?').next().unwrap_or(""));
    let target = if path.is_empty() {
        name.to_owned()
    } else if let Some(from_root) = path.strip_prefix('/') {
        normalise(from_root)?
    } else {
        let dir = name.rsplit_once('/').map_or("", |(dir, _)| dir);
        match normalise(&format!("{dir}/{path}")) {
            Some(target) => target,
            None => return Some(format!("link to `{dest}` leaves the repository")),
        }
    };
    if !target.is_empty() && !repo.paths.contains(&target) {
        return Some(format!("link to `{dest}`: the repository has no {target}"));
    }
    let anchors = if target == name {
        own
    } else {
        repo.anchors.get(&target)?
    };
    let anchor = anchor.filter(|a| !a.is_empty())?;
    (!anchors.contains(anchor) && !anchors.contains(&percent_decoded(anchor)))
        .then(|| format!("link to `{dest}`: {target} has no heading with that anchor"))
}

/// The fence that opens the code block at `start`: its character and length.
fn opening_fence(text: &str, start: usize) -> (char, usize) {
    let line = text[start..].trim_start_matches([' ', '\t']);
    let fence = if line.starts_with('~') { '~' } else { '`' };
    (fence, line.chars().take_while(|c| *c == fence).count())
}

/// What the lines of a fenced code block (its source range) say is wrong,
/// each with its line.
fn fence_faults(
    text: &str,
    range: Range<usize>,
    info: &str,
    lines: &Lines,
) -> Vec<(usize, String)> {
    let mut faults = Vec::new();
    let opened = lines.of(range.start);
    let (fence, length) = opening_fence(text, range.start);
    let is_fence = |line: &str| line.chars().take_while(|c| *c == fence).count() >= length;
    let body: Vec<&str> = text[range.clone()].lines().skip(1).collect();
    let closed = body
        .last()
        .map(|line| line.trim_start_matches([' ', '>', '\t']))
        .is_some_and(|line| is_fence(line) && line.trim_start_matches(fence).trim().is_empty());
    if !closed {
        let end = lines.of(range.end.saturating_sub(1).max(range.start));
        faults.push((
            opened,
            format!("this code fence never closes: it runs to line {end}, the end of its file or list item"),
        ));
    }
    for (i, line) in body.iter().enumerate() {
        let bare = line.trim_start_matches([' ', '>', '\t']);
        let rest = bare.trim_start_matches(fence);
        if is_fence(bare) && !rest.trim().is_empty() {
            faults.push((
                opened + 1 + i,
                format!(
                    "`{}` inside the code block opened at line {opened}: a closing fence holds nothing after it, so this line closes nothing and the text below renders as code",
                    bare.trim_end()
                ),
            ));
        }
    }
    let language = info.split([' ', ',', '{']).next().unwrap_or("");
    if !language.is_empty() && !KNOWN_LANGUAGES.contains(&language) {
        faults.push((
            opened,
            format!("the fence's info string `{info}` is not a known language (tests/it/markdown.rs KNOWN_LANGUAGES)"),
        ));
    }
    let content = &body[..body.len() - usize::from(closed)];
    let command = content.iter().map(|line| line.trim_start()).find(|line| {
        ["planc ", "$ ", "cargo "]
            .iter()
            .any(|c| line.starts_with(c))
    });
    if let (true, Some(command)) = (language.is_empty(), command) {
        faults.push((
            opened,
            format!("commands (`{command}`) in a fence without a language: ```sh runs them in the tests (docs/README.md), ```text shows them as text"),
        ));
    }
    let prompt = content.iter().find(|line| line.starts_with("$ "));
    if let (true, Some(prompt)) = (language == "text", prompt) {
        faults.push((
            opened,
            format!("a prompt (`{prompt}`) in a text fence: ```console runs it and compares what it prints (docs/README.md)"),
        ));
    }
    faults
}

/// The number of cells in one source row of a GitHub table: its unescaped
/// `|` split it (inside code spans too), a leading and a trailing one aside.
fn cells(row: &str) -> usize {
    let row = row.trim().trim_start_matches('>').trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let (mut count, mut escaped, mut trailing) = (1, false, false);
    for c in row.chars() {
        trailing = false;
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '|' => {
                count += 1;
                trailing = true;
            }
            _ => {}
        }
    }
    count - usize::from(trailing)
}

/// The rows of a table (its source range) whose number of cells is not the header's.
fn table_faults(
    text: &str,
    range: Range<usize>,
    header: usize,
    lines: &Lines,
) -> Vec<(usize, String)> {
    let first = lines.of(range.start);
    text[range]
        .lines()
        .enumerate()
        .filter(|(_, row)| !row.trim().is_empty())
        .filter_map(|(i, row)| {
            let found = cells(row);
            (found != header).then(|| {
                (
                    first + i,
                    format!("this table row has {found} cells, its header {header} (a `|` inside code needs `\\|`)"),
                )
            })
        })
        .collect()
}

/// Where rendered text (its source range) holds a backtick that no `\`
/// escapes: one that opened no code span.
fn stray_backtick(text: &str, range: Range<usize>) -> Option<usize> {
    let bytes = text.as_bytes();
    range
        .into_iter()
        .find(|&i| bytes[i] == b'`' && (i == 0 || bytes[i - 1] != b'\\'))
}

/// Every fault of one Markdown file, each as `LINE: what`, in line order.
pub(crate) fn faults(name: &str, text: &str, repo: &Repository) -> Vec<String> {
    let lines = Lines::new(text);
    let own = anchors(text);
    let mut faults: Vec<(usize, String)> = Vec::new();
    let mut undefined: Vec<(usize, String)> = Vec::new();
    let mut callback = |link: BrokenLink<'_>| {
        if link.link_type == LinkType::Reference {
            undefined.push((link.span.start, link.reference.to_string()));
        }
        None
    };
    let parser = Parser::new_with_broken_link_callback(text, options(), Some(&mut callback));
    let mut in_code_block = false;
    for (event, range) in parser.into_offset_iter() {
        let line = lines.of(range.start);
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                in_code_block = true;
                if let CodeBlockKind::Fenced(info) = kind {
                    faults.extend(fence_faults(text, range, &info, &lines));
                }
            }
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                faults.extend(link_fault(name, &dest_url, &own, repo).map(|f| (line, f)));
            }
            Event::Start(Tag::Table(alignments)) => {
                faults.extend(table_faults(text, range, alignments.len(), &lines));
            }
            Event::Text(_) if !in_code_block => {
                if let Some(at) = stray_backtick(text, range) {
                    faults.push((lines.of(at), "a backtick that opens no code span (unbalanced inline code: one missing, or `\\` inside code, which escapes nothing there, pairs the others wrongly)".to_owned()));
                }
            }
            Event::Html(html) if html.trim_start().starts_with("<!--") && !html.contains("-->") => {
                faults.push((
                    line,
                    "an HTML comment that never closes hides the rest of the file".to_owned(),
                ));
            }
            _ => {}
        }
    }
    for (offset, reference) in undefined {
        faults.push((
            lines.of(offset),
            format!("the link reference `[{reference}]` is defined nowhere"),
        ));
    }
    faults.sort();
    faults.dedup();
    faults
        .into_iter()
        .map(|(line, fault)| format!("{line}: {fault}"))
        .collect()
}

#[test]
fn every_tracked_markdown_file_renders_as_meant() {
    let repo = Repository::here();
    let mut all = Vec::new();
    for name in repo.anchors.keys() {
        let text = std::fs::read_to_string(support::root().join(name)).unwrap();
        all.extend(
            faults(name, &text, &repo)
                .into_iter()
                .map(|f| format!("{name}:{f}")),
        );
    }
    assert!(
        all.is_empty(),
        "{} Markdown faults:\n{}",
        all.len(),
        all.join("\n")
    );
    assert!(repo.anchors.contains_key("README.md") && repo.anchors.len() > 10);
}

#[cfg(test)]
mod unit {
    use super::*;

    fn repo() -> Repository {
        Repository {
            paths: [
                "docs",
                "docs/runner.md",
                "docs/agents.md",
                "examples",
                "examples/a.plan",
            ]
            .map(str::to_owned)
            .into(),
            anchors: [
                (
                    "docs/runner.md".to_owned(),
                    ["ownership-and-takeovers".to_owned()].into(),
                ),
                ("docs/agents.md".to_owned(), BTreeSet::new()),
            ]
            .into(),
        }
    }

    fn check(text: &str) -> Vec<String> {
        faults("docs/agents.md", text, &repo())
    }

    /// docs/agents.md before the fix: a ```text block without its closing
    /// fence, closed only by the next block's fence.
    #[test]
    fn a_fence_left_open_is_found() {
        let text = "# Agents\n\n- **Retries.** retry.\n\n```text\nagent-a: startNextTask\n## Dialects\n\nprose\n\n```text dialect=planc\nstartNextTask {}\n```\n\n## After\n";
        assert_eq!(
            check(text),
            ["11: `\u{60}``text dialect=planc` inside the code block opened at line 5: a closing fence holds nothing after it, so this line closes nothing and the text below renders as code"]
        );
        assert_eq!(
            check("# A\n\n```sh\nplanc run init x\n"),
            ["3: this code fence never closes: it runs to line 4, the end of its file or list item"]
        );
    }

    /// docs/runner.md before the fix: text after a closing fence.
    #[test]
    fn text_after_a_closing_fence_is_found() {
        let text = "# Runner\n\n```json\n{\"kind\":\"tool\"}\n``` Expired leases are recorded in the\nrecord of the next change.\n\n## The library\n\n```rust\nuse planc;\n```\n";
        let found = check(text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("5: `\u{60}`` Expired leases are recorded in the` inside the code block opened at line 3"), "{found:?}");
        assert!(
            found[1].starts_with("10: `\u{60}``rust` inside"),
            "{found:?}"
        );
    }

    #[test]
    fn unknown_languages_and_bare_commands_are_found() {
        assert_eq!(
            check("```sh\nplanc check\n```\n\n```jsn\n{}\n```\n\n```\nplanc run next x\n```\n\n```\nplan a {}\n```\n\n```text\n$ planc --version\n```\n"),
            [
                "5: the fence's info string `jsn` is not a known language (tests/it/markdown.rs KNOWN_LANGUAGES)",
                "9: commands (`planc run next x`) in a fence without a language: ```sh runs them in the tests (docs/README.md), ```text shows them as text",
                "17: a prompt (`$ planc --version`) in a text fence: ```console runs it and compares what it prints (docs/README.md)",
            ]
        );
    }

    #[test]
    fn links_to_missing_files_and_anchors_are_found() {
        let text = "# Agents\n\n## Two words, `code`!\n\n[a](runner.md#ownership-and-takeovers) [b](runner.md#nowhere) [c](../examples/a.plan) [d](../examples/b.plan) [e](#two-words-code) [f](#agents-1) [g](https://x.org/y.md) [h](../examples/) [i][nowhere]\n";
        assert_eq!(
            check(text),
            [
                "5: link to `#agents-1`: docs/agents.md has no heading with that anchor",
                "5: link to `../examples/b.plan`: the repository has no examples/b.plan",
                "5: link to `runner.md#nowhere`: docs/runner.md has no heading with that anchor",
                "5: the link reference `[nowhere]` is defined nowhere",
            ]
        );
    }

    #[test]
    fn slugs_follow_github() {
        assert_eq!(
            slug("Plans in a store (`--store`)"),
            "plans-in-a-store---store"
        );
        assert_eq!(slug("Docs: README & CI — 1.0"), "docs-readme--ci--10");
        assert_eq!(slug("中文 标题"), "中文-标题");
        let anchors = anchors("# A\n\n## A\n\n<a id=\"here\"></a>\n");
        assert_eq!(anchors, ["a", "a-1", "here"].map(str::to_owned).into());
    }

    #[test]
    fn ragged_tables_and_unbalanced_code_are_found() {
        let text = "| a | b |\n|---|---|\n| `x\\|y` | z |\n| `p|q` | r |\n| s |\n\nOne `two three\nfour` five ` six.\n\n<!-- open\n";
        assert_eq!(
            check(text),
            [
                "4: a backtick that opens no code span (unbalanced inline code: one missing, or `\\` inside code, which escapes nothing there, pairs the others wrongly)",
                "4: this table row has 3 cells, its header 2 (a `|` inside code needs `\\|`)",
                "5: this table row has 1 cells, its header 2 (a `|` inside code needs `\\|`)",
                "8: a backtick that opens no code span (unbalanced inline code: one missing, or `\\` inside code, which escapes nothing there, pairs the others wrongly)",
                "10: an HTML comment that never closes hides the rest of the file",
            ]
        );
        assert_eq!(cells("|a|b|"), 2);
        assert_eq!(cells("a | b"), 2);
        assert_eq!(cells("| a \\| b |"), 1);
    }
}
