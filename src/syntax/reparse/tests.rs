//! Re-reading one item against reading the whole file: the same tree and
//! the same syntax diagnostics after any edit it accepts.

use proptest::prelude::*;

use super::{reparse, Edit, Place};
use crate::diagnostic::Diagnostic;
use crate::generate::edits::Splice;
use crate::span::FileId;
use crate::syntax::{parse, Parsed};

const FILE: FileId = FileId(0);

/// Diagnostics in one order (a re-read item's come in source order; the
/// whole-file walk explains some later than others).
pub(in crate::syntax) fn sorted(diagnostics: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut sorted = diagnostics.to_vec();
    sorted.sort_by(|a, b| {
        let key = |d: &Diagnostic| d.primary().map(|l| (l.span.start(), l.span.end()));
        key(a).cmp(&key(b)).then_with(|| a.message.cmp(&b.message))
    });
    sorted
}

/// Applies `edit` (offsets of `old`, `text` inserted) and checks that a
/// re-read, if accepted, equals a whole parse. Returns the new text, its
/// whole parse, and whether the re-read was accepted.
fn step(
    old: &str,
    parsed: &Parsed,
    start: usize,
    end: usize,
    text: &str,
) -> (String, Parsed, bool) {
    let new = Splice {
        start,
        end,
        insert: text,
    }
    .apply(old);
    let edit = Edit::between(old, &new);
    assert_eq!(&old[..edit.start], &new[..edit.start]);
    assert_eq!(&old[edit.old_end..], &new[edit.new_end..]);
    let whole = parse(&new, FILE);
    let reread = reparse(&parsed.file, &parsed.diagnostics, &new, edit, FILE);
    if let Some(reread) = &reread {
        assert_eq!(
            reread.parsed.file, whole.file,
            "different trees after {edit:?}\n{new}"
        );
        assert_eq!(
            sorted(&reread.parsed.diagnostics),
            sorted(&whole.diagnostics),
            "different diagnostics after {edit:?}\n{new}"
        );
    }
    (new, whole, reread.is_some())
}

const SNIPPETS: &[&str] = &[
    "x",
    "\"",
    "{",
    "}",
    "task",
    "task z \"Z\" { }",
    " after t1",
    "step",
    "# note\n",
    "\n",
    "{count}",
    "\"\"\"",
    "assignee r1",
    " ",
    "t3",
    ",",
    "use",
    "retry 2",
    "\\",
    "é",
    "𝄞",
    "}}",
    "{{",
    "after",
    "task q \"Q\"\n",
    "optional",
    "s1",
    "priority high",
    "-",
    "0",
];

fn base_texts() -> Vec<String> {
    let mut texts = vec![
        crate::generate::plan_source(60, false),
        crate::generate::plan_source(40, true),
    ];
    texts.push(
        "template review(who: string) {\n    role reviewer\n    task read \"Read {who}\" { assignee reviewer }\n    task sign \"Sign\" { after read }\n}\nplan p {\n    goal \"G\"\n    role dev\n    use review(who = \"me\") as r\n    step a \"A\" {\n        task one \"One\" { assignee dev }\n        task two \"Two\"\n    }\n    task three \"Three\" { after a, r.sign }\n}\n"
            .to_owned(),
    );
    texts
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::generate::fuzz_cases(256),
        ..ProptestConfig::default()
    })]

    /// Random insertions, deletions and replacements, one after another:
    /// whatever `reparse` accepts is what `parse` gives.
    #[test]
    fn a_reread_item_equals_a_whole_parse(
        base in 0..3usize,
        edits in proptest::collection::vec((0.0..1.0f64, 0..24usize, 0..SNIPPETS.len() + 1), 1..8),
    ) {
        let mut text = base_texts().swap_remove(base);
        let mut parsed = parse(&text, FILE);
        for (at, len, snippet) in edits {
            let Splice { start, end, insert } =
                Splice::pick(&text, (at * text.len() as f64) as usize, len, SNIPPETS, snippet);
            let (new, whole, _) = step(&text, &parsed, start, end, insert);
            text = new;
            parsed = whole;
        }
    }
}

/// Mistakes typed into a plan with more than
/// [`MAX_EXPLAINED_BYTES`](crate::syntax::MAX_EXPLAINED_BYTES) after it: a
/// body opened and left open (a new task's `{`), closed again, strings.
const OPENED: &[&str] = &[
    "{",
    " {",
    "}",
    "\n        task n1 \"New\" {",
    "\n        task n1 \"New\" { after t3",
    " retry 2",
    "\"",
    "x",
    "sequential",
    " after s1",
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::generate::fuzz_cases(4),
        ..ProptestConfig::default()
    })]

    /// Edits in a plan followed by megabytes (a long comment): where the
    /// whole parse explains the item alone (`syntax::explain`), whatever
    /// `reparse` accepts is what `parse` gives.
    #[test]
    fn a_reread_item_with_megabytes_after_it_equals_a_whole_parse(
        edits in proptest::collection::vec((0.0..1.0f64, 0..4usize, 0..OPENED.len() + 1), 1..4),
    ) {
        let plan = crate::generate::plan_source(40, false);
        let mut text = format!("{plan}# {}\n", "x".repeat(crate::syntax::MAX_EXPLAINED_BYTES));
        let mut parsed = parse(&text, FILE);
        let mut plan_len = plan.len();
        for (at, len, snippet) in edits {
            let Splice { start, end, insert } =
                Splice::pick(&text, (at * plan_len as f64) as usize, len, OPENED, snippet);
            let new = Splice { start, end, insert }.apply(&text);
            plan_len = plan_len + new.len() - text.len();
            let edit = Edit::between(&text, &new);
            let whole = parse(&new, FILE);
            if let Some(reread) = reparse(&parsed.file, &parsed.diagnostics, &new, edit, FILE) {
                prop_assert_eq!(&reread.parsed.file, &whole.file, "tree of\n{}", &new[..plan_len]);
                prop_assert_eq!(
                    sorted(&reread.parsed.diagnostics),
                    sorted(&whole.diagnostics),
                    "diagnostics of\n{}",
                    &new[..plan_len]
                );
            }
            text = new;
            parsed = whole;
        }
    }
}

#[test]
fn a_keystroke_in_a_title_rereads_that_task_as_text() {
    let text = crate::generate::plan_source(200, false);
    let parsed = parse(&text, FILE);
    let at = text.find("task t100 \"").expect("t100") + "task t100 \"".len();
    let new = format!("{}x{}", &text[..at], &text[at..]);
    let reread = reparse(
        &parsed.file,
        &parsed.diagnostics,
        &new,
        Edit::between(&text, &new),
        FILE,
    )
    .expect("re-read");
    assert!(reread.text_only);
    assert!(reread.place.task.is_some(), "{:?}", reread.place);
    assert_eq!(reread.parsed.file, parse(&new, FILE).file);
}

#[test]
fn an_unclosed_string_rereads_its_step_and_mending_it_too() {
    // The mistake stays inside its step (a one-line string ends at the
    // line's end, and the step's `}` closes it), so the step is read again,
    // with the mistake, and read again once mended; both equal a whole parse.
    let text = crate::generate::plan_source(200, false);
    let parsed = parse(&text, FILE);
    let at = text.find("task t100 \"").expect("t100") + "task t100 \"Do".len();
    let (new, whole, accepted) = step(&text, &parsed, at, at, "\"");
    assert!(accepted, "the step is re-read");
    assert!(!whole.diagnostics.is_empty());
    let reread = reparse(
        &parsed.file,
        &parsed.diagnostics,
        &new,
        Edit::between(&text, &new),
        FILE,
    )
    .expect("re-read");
    assert!(!reread.text_only);
    assert_eq!(reread.place.task, None);
    // Mended: the step reads clean again.
    let (_, mended, accepted) = step(&new, &whole, at, at + 1, "");
    assert!(accepted, "the mended step is re-read");
    assert!(mended.diagnostics.is_empty());
    // A mistake in another step: an edit here reads the file whole.
    let other = new.find("task t150 \"").expect("t150") + "task t150 \"D".len();
    let (_, _, accepted) = step(&new, &whole, other, other, "x");
    assert!(
        !accepted,
        "an edit beside a mistake elsewhere is read whole"
    );
}

#[test]
fn a_renamed_task_is_not_text_only_and_an_edit_across_items_is_refused() {
    let text = crate::generate::plan_source(200, false);
    let parsed = parse(&text, FILE);
    let at = text.find("task t100 ").expect("t100") + "task t1".len();
    let new = format!("{}x{}", &text[..at], &text[at..]);
    let reread = reparse(
        &parsed.file,
        &parsed.diagnostics,
        &new,
        Edit::between(&text, &new),
        FILE,
    )
    .expect("re-read");
    assert!(!reread.text_only);
    // From one step into the next: the plan would be read again.
    let from = text.find("task t19 ").expect("t19");
    let to = text.find("task t21 ").expect("t21");
    let new = format!("{}{}", &text[..from], &text[to..]);
    let edit = Edit::between(&text, &new);
    assert!(reparse(&parsed.file, &parsed.diagnostics, &new, edit, FILE).is_none());
    let _ = Place {
        top: 0,
        item: 0,
        task: None,
    };
}

#[test]
fn the_edit_between_two_texts_is_the_smallest_on_char_boundaries() {
    assert_eq!(
        Edit::between("abcdef", "abXdef"),
        Edit {
            start: 2,
            old_end: 3,
            new_end: 3
        }
    );
    assert_eq!(
        Edit::between("aaaa", "aaaaa"),
        Edit {
            start: 4,
            old_end: 4,
            new_end: 5
        }
    );
    // é and è share their first byte.
    assert_eq!(
        Edit::between("xéy", "xèy"),
        Edit {
            start: 1,
            old_end: 3,
            new_end: 3
        }
    );
    let long = "a".repeat(200);
    let new = format!("{}b{}", &long[..130], &long[130..]);
    let edit = Edit::between(&long, &new);
    assert_eq!(edit.old_end - edit.start, 0);
    assert_eq!(edit.new_end - edit.start, 1);
    assert!(Edit::between("same", "same").is_empty());
}

#[test]
fn random_edits_all_equal_a_whole_parse_and_some_are_reread() {
    let mut next = crate::generate::xorshift(0x5EED);
    let (mut accepted, mut total) = (0, 0);
    for base in base_texts() {
        let (mut text, mut parsed) = (base.clone(), parse(&base, FILE));
        for n in 0..150 {
            if n % 5 == 0 {
                (text, parsed) = (base.clone(), parse(&base, FILE));
            }
            let Splice { start, end, insert } = Splice::pick(
                &text,
                next(text.len()),
                next(12),
                SNIPPETS,
                next(SNIPPETS.len() + 1),
            );
            let (new, whole, reread) = step(&text, &parsed, start, end, insert);
            (text, parsed) = (new, whole);
            accepted += usize::from(reread);
            total += 1;
        }
    }
    // Many of the snippets are braces and quotes that unbalance an item, and
    // a file with a syntax error is read whole; others cross items or land
    // between them. Still, edits of a clean file are re-read.
    assert!(accepted * 50 > total, "{accepted} of {total} re-read");
}
