//! The tokens kept per tile against the whole file's, after random edits.

use proptest::prelude::*;

use super::{semantic_tokens, EncodedToken, TokenStore};
use crate::compile::Compilation;
use crate::generate::edits::Splice;
use crate::line_index::LineIndex;
use crate::syntax::Edit;

/// The whole file's tokens ([`semantic_tokens`]) encoded as the protocol
/// does, each position looked up alone.
fn expected(compilation: &Compilation) -> Vec<EncodedToken> {
    let text = &*compilation.sources.get(compilation.file).text;
    let lines = LineIndex::new(text);
    let mut out = Vec::new();
    let mut last = (0, 0);
    for token in semantic_tokens(compilation) {
        let mut from = token.span.start();
        while from < token.span.end() {
            let line_end = text[from..token.span.end()]
                .find('\n')
                .map_or(token.span.end(), |i| from + i);
            let piece = text[from..line_end].trim_end_matches('\r');
            if !piece.is_empty() {
                let at = lines.line_col_utf16(text, from);
                let (line, col) = (at.line as u32, at.col as u32);
                let delta_line = line - last.0;
                out.push(EncodedToken {
                    delta_line,
                    delta_start: if delta_line == 0 { col - last.1 } else { col },
                    length: piece.encode_utf16().count() as u32,
                    kind: token.kind,
                    definition: token.definition,
                });
                last = (line, col);
            }
            from = line_end + 1;
        }
    }
    out
}

/// Each token's absolute line and column.
fn absolute(tokens: &[EncodedToken]) -> Vec<(u32, u32, EncodedToken)> {
    let mut at = (0, 0);
    tokens
        .iter()
        .map(|t| {
            at = match t.delta_line {
                0 => (at.0, at.1 + t.delta_start),
                n => (at.0 + n, t.delta_start),
            };
            (
                at.0,
                at.1,
                EncodedToken {
                    delta_line: 0,
                    delta_start: 0,
                    ..*t
                },
            )
        })
        .collect()
}

fn compile(text: &str) -> Compilation {
    crate::compile::compile("t.plan", text, &crate::check::Options::default())
}

const SNIPPETS: &[&str] = &[
    "x",
    "\"",
    "{",
    "}",
    "t1",
    " after t5",
    " after t59",
    ", t3",
    " after s2",
    "{count}",
    "{team}",
    "# note\n",
    "\n",
    "task extra \"Extra\" { after t2 }\n",
    "task t4 \"Again\"\n",
    "sequential\n",
    "retry 3",
    "é𝄞",
    " ",
    "step",
    "task",
    "t",
    "\"\"\"\n  many {team}\n  lines\n  \"\"\"",
    "description \"D {nope}\" ",
    "use review(who = \"x\") as q\n",
];

fn base(index: usize) -> String {
    match index {
        0 => crate::generate::plan_source(30, false),
        _ => concat!(
            "# lead\ntemplate review(who: string, n: int = 2) {\n    role reviewer\n",
            "    task read \"Read {who}\" { assignee reviewer }\n    task sign \"Sign\" { after read }\n}\n",
            "plan p {\n    goal \"G {n}\"\n    param n: int = 3\n    role dev \"Dev\"\n",
            "    use review(who = \"me\") as r\n    step a \"A\" {\n        task one \"One {n}\" { assignee dev }\n",
            "        # between\n        task two \"Two\"\n        after r\n    }\n",
            "    task three \"Three\" { after a, r.sign reasoning \"Why {n}\" }\n",
            "    step b \"B\" { task x1 \"X\" task x2 \"Y {n}\" { after x1, one } } task x3 \"Z\"\n}\n# trail\n",
        )
        .to_owned(),
    }
}

/// Letters typed and taken back, as a user types: most such edits are
/// compiled incrementally, so the compilations share most of their names'
/// chunks and the store tells the changed names from them.
const TYPED: &[&str] = &["x", "e", "1", "_"];

/// Where a user types in a name or a title: the end of the first word
/// (not empty, of ASCII letters, digits and `_`) after `at` that follows
/// `task `, `step `, `after `, `, ` or a quote.
fn word_end(text: &str, at: usize) -> Option<usize> {
    let word = |start: usize| {
        let len = text[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len() - start);
        (len > 0).then_some(start + len)
    };
    let from = crate::generate::edits::floor_char_boundary(text, at);
    ["task ", "step ", "after ", ", ", "\""]
        .iter()
        .filter_map(|p| {
            let start = from + text[from..].find(p)? + p.len();
            word(start)
        })
        .min()
}

/// After each of `edits` (where, how many bytes replaced, by which of
/// `snippets` or nothing), the store made from the last one's gives the
/// whole file's tokens; its delta from the last one, applied to the last
/// one's tokens, gives them too; and a range's tokens are a run of them
/// holding every token on the range's lines.
fn kept_tokens_are_the_whole_files(
    which: usize,
    snippets: &[&str],
    edits: Vec<(f64, usize, usize)>,
    range: (f64, usize),
) -> Result<(), TestCaseError> {
    let mut text = base(which);
    let mut compilation = compile(&text);
    let mut store = TokenStore::build(&compilation, &LineIndex::new(&text), None);
    let mut sent = store.encode(&text, &LineIndex::new(&text));
    prop_assert_eq!(&sent, &expected(&compilation));
    for (at, len, snippet) in edits {
        let at = (at * text.len() as f64) as usize;
        let splice = match snippets == TYPED {
            // A letter typed at the end of a word, or its last taken back.
            true => match (word_end(&text, at), snippet < TYPED.len()) {
                (Some(end), true) => Splice::pick(&text, end, 0, snippets, snippet),
                (Some(end), false) => Splice::pick(&text, end - 1, 1, snippets, snippet),
                (None, _) => continue,
            },
            false => Splice::pick(&text, at, len, snippets, snippet),
        };
        let new = splice.apply(&text);
        let edit = Edit::between(&text, &new);
        compilation = compilation.recompile(new.as_str().into());
        let lines = LineIndex::new(&new);
        let next = TokenStore::build(&compilation, &lines, Some((&store, edit)));
        let tokens = next.encode(&new, &lines);
        prop_assert_eq!(&tokens, &expected(&compilation), "{}", new);
        if let Some(delta) = next.delta(&store, &new, &lines) {
            sent.splice(delta.start..delta.start + delta.deleted, delta.tokens);
        }
        prop_assert_eq!(&sent, &tokens);
        store = next;
        text = new;
    }
    let lines = LineIndex::new(&text);
    let first = (range.0 * lines.line_count() as f64) as usize;
    let (start, end) = (lines.line_start(first), lines.line_start(first + range.1));
    let got = absolute(&store.encode_range(&text, &lines, start, end));
    let alone = TokenStore::of_range(&compilation, &lines, start, end)
        .map(|alone| absolute(&alone.encode_range(&text, &lines, start, end)));
    prop_assert!(alone.is_none_or(|alone| alone == got));
    let all = absolute(&sent);
    prop_assert!(got.is_empty() || all.windows(got.len()).any(|w| w == got.as_slice()));
    let on_lines =
        |t: &&(u32, u32, EncodedToken)| (first..first + range.1).contains(&(t.0 as usize));
    let want: Vec<_> = all.iter().filter(on_lines).collect();
    prop_assert_eq!(got.iter().filter(on_lines).collect::<Vec<_>>(), want);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::generate::fuzz_cases(48),
        ..ProptestConfig::default()
    })]

    /// Random edits: syntax errors, `"""` strings, wide characters,
    /// templates, lines added and removed.
    #[test]
    fn kept_tokens_after_edits_are_the_whole_files(
        which in 0..2usize,
        edits in proptest::collection::vec((0.0..1.0f64, 0..12usize, 0..SNIPPETS.len() + 1), 1..8),
        range in (0.0..1.0f64, 0..6usize),
    ) {
        kept_tokens_are_the_whole_files(which, SNIPPETS, edits, range)?;
    }

    /// Letters typed and taken back at the end of names and titles' first
    /// words (names renamed, references left dangling and found again).
    #[test]
    fn kept_tokens_after_typing_are_the_whole_files(
        which in 0..2usize,
        edits in proptest::collection::vec((0.0..1.0f64, 0..2usize, 0..TYPED.len() + 1), 1..12),
        range in (0.0..1.0f64, 0..6usize),
    ) {
        kept_tokens_are_the_whole_files(which, TYPED, edits, range)?;
    }
}

#[test]
fn a_letter_in_a_title_makes_one_tile_again() {
    let text = crate::generate::plan_source(400, false);
    let at = text
        .find("task t200 \"Do")
        .map(|i| i + "task t200 \"Do".len());
    let new = format!("{}x{}", &text[..at.unwrap()], &text[at.unwrap()..]);
    let old = compile(&text);
    let store = TokenStore::build(&old, &LineIndex::new(&text), None);
    let compilation = old.recompile(new.as_str().into());
    let lines = LineIndex::new(&new);
    let next = TokenStore::build(
        &compilation,
        &lines,
        Some((&store, Edit::between(&text, &new))),
    );
    assert_eq!(next.tiles(), store.tiles());
    assert_eq!(next.shared_with(&store), store.tiles() - 1);
    // Every block but the step holding the task is kept whole (one `Arc`).
    let whole = |store: &TokenStore| {
        let tiles = store
            .blocks
            .iter()
            .map(|b| std::sync::Arc::as_ptr(&b.tiles));
        tiles.collect::<std::collections::HashSet<_>>()
    };
    let (old_blocks, new_blocks) = (whole(&store), whole(&next));
    assert_eq!(new_blocks.len(), store.blocks.len());
    assert_eq!(
        new_blocks.intersection(&old_blocks).count(),
        store.blocks.len() - 1
    );
    let delta = next.delta(&store, &new, &lines).expect("a change");
    // The title's token, and the one after it (counted from it).
    assert_eq!(
        (delta.deleted, delta.tokens.len()),
        (delta.tokens.len(), delta.tokens.len())
    );
    assert!(delta.tokens.len() <= 12, "{delta:?}");
}

#[test]
fn a_rename_makes_again_the_tiles_that_name_it() {
    let text = crate::generate::plan_source(400, false);
    let waited = crate::generate::waited_for_task(&text)
        .expect("a task")
        .to_owned();
    let at = text
        .find(&format!("task {waited} "))
        .expect("its definition")
        + 5
        + waited.len();
    let new = format!("{}x{}", &text[..at], &text[at..]);
    let old = compile(&text);
    let store = TokenStore::build(&old, &LineIndex::new(&text), None);
    let compilation = old.recompile(new.as_str().into());
    let lines = LineIndex::new(&new);
    let next = TokenStore::build(
        &compilation,
        &lines,
        Some((&store, Edit::between(&text, &new))),
    );
    let naming = text.matches(&format!("after {waited}")).count()
        + text.matches(&format!(", {waited} ")).count();
    let made = next.tiles() - next.shared_with(&store);
    assert!(
        made >= 2 && made <= naming + 1,
        "{made} tiles made again, {naming} name it"
    );
    assert_eq!(next.encode(&new, &lines), expected(&compilation));
}
