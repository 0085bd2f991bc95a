//! A [`Shifted`] list against a plain list given the same edits: moved by
//! random edits of its file (some chunks shared, some copied), items
//! inserted, removed and replaced.

use proptest::prelude::*;

use super::*;
use crate::ir::Reference;

fn reference(definition: usize, file: u32, start: usize, len: usize) -> Reference {
    Reference {
        definition: definition as u32,
        file: FileId(file),
        span: Span::new(start, start + len),
    }
}

/// What one step does to both lists.
#[derive(Clone, Debug)]
enum Step {
    /// Text `at..at + removed` of file 0 replaced by `inserted` bytes: spans
    /// inside the replaced text refuse to move.
    Edit {
        at: usize,
        removed: usize,
        inserted: usize,
    },
    Insert(usize, usize),
    Remove(Vec<usize>),
    Set(usize, usize),
    /// The items naming `from + by..from` (`by` < 0) left out, then those
    /// naming `from` or after renumbered by `by`.
    Renumber(usize, i64),
    Replace(usize, usize, usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..400usize, 0..6usize, 0..9usize).prop_map(|(at, removed, inserted)| Step::Edit {
            at,
            removed,
            inserted
        }),
        (0..80usize, 1..20usize).prop_map(|(at, n)| Step::Insert(at, n)),
        proptest::collection::vec(0..80usize, 0..12).prop_map(Step::Remove),
        (0..80usize, 0..400usize).prop_map(|(at, start)| Step::Set(at, start)),
        (0..70usize, -3..4i64).prop_map(|(from, by)| Step::Renumber(from, by)),
        (0..80usize, 0..4usize, 0..4usize).prop_map(|(at, n, m)| Step::Replace(at, n, m)),
    ]
}

/// The edit's map of a span (as a recompile's mover maps them: before it
/// stays, after it moves, inside it none).
fn map(at: usize, removed: usize, inserted: usize) -> impl Fn(Span) -> Option<Span> {
    move |span: Span| {
        if span.end() <= at {
            Some(span)
        } else if span.start() >= at + removed {
            Some(span.shifted(inserted as i64 - removed as i64))
        } else {
            None
        }
    }
}

proptest! {
    #[test]
    fn a_shifted_list_reads_as_a_plain_list_given_the_same_edits(
        starts in proptest::collection::vec((0..400usize, 0..3u32), 0..60),
        steps in proptest::collection::vec(step(), 0..12),
        ordered in any::<bool>(),
    ) {
        // In the order of the text, or not (an instance's references: in
        // the template, among the plan's).
        let mut sorted = starts;
        if ordered {
            sorted.sort_unstable();
        }
        let mut plain: Vec<Reference> = sorted
            .iter()
            .enumerate()
            .map(|(i, &(start, file))| reference(i, u32::from(file == 2), start, 2))
            .collect();
        let mut list: Shifted<Reference> = plain.iter().copied().collect();
        let file = FileId(0);
        for step in steps {
            match step {
                Step::Edit { at, removed, inserted } => {
                    let map = map(at, removed, inserted);
                    let moved_plain: Option<Vec<Reference>> = plain
                        .iter()
                        .map(|r| match r.file == file {
                            true => r.map_spans(&map),
                            false => Some(*r),
                        })
                        .collect();
                    let window = Window {
                        keep_until: at,
                        shift_from: at + removed,
                        by: inserted as i64 - removed as i64,
                    };
                    let moved = list.moved(file, window, &map);
                    prop_assert_eq!(moved.is_some(), moved_plain.is_some());
                    if let (Some(moved), Some(moved_plain)) = (moved, moved_plain) {
                        list = moved;
                        plain = moved_plain;
                    }
                }
                Step::Insert(at, n) => {
                    let at = at.min(plain.len());
                    let new: Vec<Reference> = (0..n).map(|i| reference(1000 + i, 0, 500 + i, 1)).collect();
                    plain.splice(at..at, new.clone());
                    list.insert(at, new);
                }
                Step::Remove(mut indices) => {
                    indices.retain(|&i| i < plain.len());
                    indices.sort_unstable();
                    indices.dedup();
                    for &i in indices.iter().rev() {
                        plain.remove(i);
                    }
                    list.remove(&indices);
                }
                Step::Renumber(from, by) => {
                    let from = from.max(by.unsigned_abs() as usize);
                    let gone = (from as i64 + by.min(0)) as usize..from;
                    let indices: Vec<usize> = (0..plain.len())
                        .filter(|&i| gone.contains(&(plain[i].definition as usize)))
                        .collect();
                    plain.retain(|r| !gone.contains(&(r.definition as usize)));
                    list.remove(&indices);
                    for r in &mut plain {
                        if r.definition as usize >= from {
                            r.definition = (r.definition as i64 + by) as u32;
                        }
                    }
                    list.renumber(from, by);
                }
                Step::Replace(at, n, m) => {
                    let at = at.min(plain.len());
                    let end = (at + n).min(plain.len());
                    let new: Vec<Reference> = (0..m).map(|i| reference(3000 + i, 0, 600 + i, 1)).collect();
                    plain.splice(at..end, new.clone());
                    list.replace(at..end, new);
                }
                Step::Set(at, start) => {
                    if at < plain.len() {
                        plain[at] = reference(2000, 0, start, 3);
                        prop_assert_eq!(list.set(at, plain[at]), Some(()));
                    }
                }
            }
            prop_assert_eq!(list.len(), plain.len());
            prop_assert_eq!(list.unmoved_named().map(|r| r.definition).collect::<Vec<_>>(), plain.iter().map(|r| r.definition).collect::<Vec<_>>());
            prop_assert_eq!(list.iter().collect::<Vec<_>>(), plain.clone());
            for (i, r) in plain.iter().enumerate() {
                prop_assert_eq!(list.get(i), Some(*r));
            }
            prop_assert_eq!(list.range(2..5).collect::<Vec<_>>(), plain.get(2..5.min(plain.len())).unwrap_or(&[]).to_vec());
            for span in [Span::new(0, 50), Span::new(100, 260), Span::new(390, 700)] {
                let inside = |r: &Reference| r.file == file && span.start() <= r.span.start() && r.span.end() <= span.end();
                let expected: Vec<usize> = (0..plain.len()).filter(|&i| inside(&plain[i])).collect();
                prop_assert_eq!(list.within(file, span), expected);
            }
            let mut named = Vec::new();
            let found = list.any_named(|i, n| {
                named.push((i, n));
                false
            });
            prop_assert!(!found);
            prop_assert_eq!(named, plain.iter().enumerate().map(|(i, r)| (i, r.definition as usize)).collect::<Vec<_>>());
            let third = plain.len() / 3;
            let mut seen = 0;
            let found = list.any_named(|_, _| {
                seen += 1;
                seen > third
            });
            prop_assert_eq!((found, seen), (third < plain.len(), (third + 1).min(plain.len())));
        }
    }
}

#[test]
fn moving_shares_the_chunks_the_edit_does_not_reach() {
    let list: Shifted<Reference> = (0..4 * CHUNK).map(|i| reference(i, 0, 10 * i, 2)).collect();
    let shared = |moved: &Shifted<Reference>| -> Vec<bool> {
        let pairs = list.chunks.iter().zip(&moved.chunks);
        pairs
            .map(|(a, b)| Arc::ptr_eq(&a.items, &b.items))
            .collect()
    };
    // Three bytes typed inside the second chunk's first item: that chunk
    // is copied.
    let inside = 10 * CHUNK + 1;
    let window = Window {
        keep_until: inside,
        shift_from: inside,
        by: 3,
    };
    let grown = |span: Span| {
        let start = span.start() + if span.start() < inside { 0 } else { 3 };
        Some(Span::new(start, span.end() + 3))
    };
    let map_inside = |span: Span| map(inside, 0, 3)(span).or_else(|| grown(span));
    let moved = list.moved(FileId(0), window, &map_inside).expect("moved");
    assert_eq!(shared(&moved), [true, false, true, true]);
    assert_eq!(
        moved.get(CHUNK).map(|r| r.span),
        Some(Span::new(10 * CHUNK, 10 * CHUNK + 5))
    );
    // Typed at that item's end instead: between two items, none reaching
    // into the edit, so the chunk is shared (its items after the edit
    // moved, its first not).
    let at = 10 * CHUNK + 2;
    let window = Window {
        keep_until: at,
        shift_from: at,
        by: 3,
    };
    let moved = list
        .moved(FileId(0), window, &map(at, 0, 3))
        .expect("moved");
    assert_eq!(shared(&moved), [true, true, true, true]);
    assert_eq!(
        moved.get(CHUNK).map(|r| r.span),
        Some(Span::new(10 * CHUNK, 10 * CHUNK + 2))
    );
    assert_eq!(
        moved.get(CHUNK + 1).map(|r| r.span),
        Some(Span::new(10 * CHUNK + 13, 10 * CHUNK + 15))
    );
    assert_eq!(
        moved.get(3 * CHUNK).map(|r| r.span.start()),
        Some(30 * CHUNK + 3)
    );
}
