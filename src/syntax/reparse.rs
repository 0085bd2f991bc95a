//! Reading a file again after an edit: only the item the edit falls in (a
//! task, a step, another item of a plan or template body) is parsed again,
//! and the spans after it are moved. The result is the tree and the syntax
//! diagnostics [`parse`](super::parse) gives for the new text; where that
//! cannot be bounded, [`reparse`] says so and the caller parses the file.
//!
//! Why a re-read item parses as the whole file would parse it: the grammar
//! is a PEG, so the item's rule at its offset reads the same bytes in the
//! file as in the item's own text, as long as the rule reads the item's text
//! to its end, ends on a closing token (a `}` or a complete last token, then
//! whitespace), and begins with the keyword it began with (the items before
//! it look no further ahead than that keyword). The file's other
//! diagnostics are bounded too: the limits on nesting, on explained text and
//! on the number of syntax errors are checked as the whole-file parse checks
//! them, and the reader gives up where they could differ.

use std::sync::Arc;

use super::ast::*;
use super::limits;
use super::parser::{self, Parsed};
use crate::diagnostic::Diagnostic;
use crate::span::{FileId, Span};

mod header;
mod import;
mod narrowed;
#[cfg(test)]
pub(super) mod tests;

mod added;
mod step_items;
pub(crate) use added::{step_task, StepTask};
pub use header::{header_spans, reparse_header, same_header_shape};
pub use import::reparse_import;
pub(crate) use step_items::{step_items, StepItems};

/// One change of a text: the bytes `start..old_end` of the old text became
/// the bytes `start..new_end` of the new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub old_end: usize,
    pub new_end: usize,
}

impl Edit {
    /// The smallest edit that turns `old` into `new`: what lies between
    /// their common beginning and their common end (on character
    /// boundaries).
    pub fn between(old: &str, new: &str) -> Edit {
        let (a, b) = (old.as_bytes(), new.as_bytes());
        let mut start = common_prefix(a, b);
        // A common suffix may not reach into the common prefix.
        let limit = a.len().min(b.len()) - start;
        let suffix = common_suffix(&a[start..], &b[start..]).min(limit);
        while !old.is_char_boundary(start) {
            start -= 1;
        }
        // `old[old_end..] == new[new_end..]`, so both ends are on a boundary
        // or neither is.
        let (mut old_end, mut new_end) = (a.len() - suffix, b.len() - suffix);
        while !old.is_char_boundary(old_end) {
            old_end += 1;
            new_end += 1;
        }
        Edit {
            start,
            old_end,
            new_end,
        }
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.start == self.old_end && self.start == self.new_end
    }

    /// Where an offset of the old text outside the edited bytes is in the
    /// new text: before the edit it stays, after it it moves.
    pub fn map(&self, offset: usize) -> usize {
        if offset < self.old_end {
            offset
        } else {
            offset + self.new_end - self.old_end
        }
    }

    /// A span of the old text outside the edited bytes, in the new text.
    pub fn map_span(&self, span: Span) -> Span {
        Span::new(self.map(span.start()), self.map(span.end()))
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    // Whole chunks compare with `memcmp`.
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 64;
    let n = a.len().min(b.len());
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[la - i - CHUNK..la - i] == b[lb - i - CHUNK..lb - i] {
        i += CHUNK;
    }
    while i < n && a[la - i - 1] == b[lb - i - 1] {
        i += 1;
    }
    i
}

/// Where the re-read item stands in the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The plan or template, by index in [`File::items`].
    pub top: usize,
    /// The item of its body.
    pub item: usize,
    /// The task of that item, a step, if the re-read item is that task.
    pub task: Option<usize>,
}

/// A file read again after an edit.
#[derive(Clone, Debug)]
pub struct Reparsed {
    /// The tree and the syntax diagnostics of the new text, as
    /// [`parse`](super::parse) gives them (the diagnostics maybe in another
    /// order).
    pub parsed: Parsed,
    /// The item read again.
    pub place: Place,
    /// The item's span in the old text, and in the new.
    pub old_span: Span,
    pub new_span: Span,
    /// Whether the item differs from the old one in the text of its strings
    /// and comments only: the same names, references, numbers and shape,
    /// and no syntax error in either.
    pub text_only: bool,
    /// Whether the item's tree differs from the old one's at most where it
    /// stands and in the text of its strings, whatever text went unparsed
    /// in it or syntax errors it has, old or new (a word typed where an
    /// item is about to be, say).
    pub same_shape: bool,
}

/// Reads the file again after `edit` turned the old text (whose tree is
/// `old` and syntax diagnostics `old_diagnostics`) into `new_text`; `None`
/// where the edit's effect cannot be bounded to one item (then parse the
/// whole file).
pub fn reparse(
    old: &File,
    old_diagnostics: &[Diagnostic],
    new_text: &str,
    edit: Edit,
    file: FileId,
) -> Option<Reparsed> {
    // Error recovery reaches across items (an item that stops early leaves
    // its error at the next one's first token; an unclosed body swallows
    // what follows; a run of bad tokens joins the next), so an item is read
    // again only where the file's syntax errors, before the edit and after
    // it, all lie inside that item (see `reparse_at`).
    if new_text.len() > limits::MAX_FILE_BYTES {
        return None;
    }
    let within = |span: Span| span.start() < edit.start && edit.old_end < span.end();
    let top = old.items.iter().position(|item| match item {
        TopItem::Plan(plan) => within(plan.span),
        TopItem::Template(template) => within(template.span),
        _ => false,
    })?;
    let items = match &old.items[top] {
        TopItem::Plan(plan) => &plan.items,
        TopItem::Template(template) => &template.items,
        _ => return None,
    };
    let index = items
        .partition_point(|span| span.start() < edit.start)
        .checked_sub(1)?;
    if !within(items.span(index)) {
        return None;
    }
    let item = &items[index];
    // The innermost item first: a task of a step, then the step.
    let mut candidates = Vec::with_capacity(2);
    if let PlanItem::Step(step) = item {
        let tasks = step
            .items
            .partition_point(|i| step_item_span(i).start() < edit.start);
        if let Some(StepItem::Task(task)) = tasks.checked_sub(1).map(|t| &step.items[t]) {
            if within(task.span) {
                candidates.push((Some(tasks - 1), PlanItem::Task(task.clone())));
            }
        }
    }
    candidates.push((None, item.clone()));
    candidates.into_iter().find_map(|(task, like)| {
        let place = Place {
            top,
            item: index,
            task,
        };
        reparse_at(old, old_diagnostics, new_text, edit, file, place, &like)
    })
}

/// Reads the item at `place` (like `like`) again.
fn reparse_at(
    old: &File,
    old_diagnostics: &[Diagnostic],
    new_text: &str,
    edit: Edit,
    file: FileId,
    place: Place,
    like: &PlanItem,
) -> Option<Reparsed> {
    let old_span = item_span(like);
    let new_span = Span::new(old_span.start(), edit.map(old_span.end()));
    let read = read_item(old, new_text, file, old_span, new_span, like)?;
    let (inside_old, diagnostics) =
        syntax_diagnostics(old_diagnostics, old_span, read.diagnostics)?;
    if !diagnostics.is_empty()
        && (diagnostics.len() >= limits::MAX_SYNTAX_ERRORS
            || limits::check_item(new_text, file, new_span, enclosing_braces(place)).is_some())
    {
        return None;
    }
    let same_shape = shape(like) == shape(&read.item);
    let text_only = inside_old == 0
        && diagnostics.is_empty()
        && read.unparsed.is_empty()
        && !has_unparsed(&old.unparsed, old_span)
        && same_shape;
    let file_tree = File {
        items: spliced_items(&old.items, place, edit, read.item)?,
        comments: splice(&old.comments, old_span, read.comments, edit),
        keywords: splice_keywords(&old.keywords, old_span, read.keywords, edit),
        unparsed: splice(&old.unparsed, old_span, read.unparsed, edit),
    };
    if !diagnostics.is_empty()
        && !explained_alike(old, new_text, file, place, &file_tree, &diagnostics)
    {
        return None;
    }
    Some(Reparsed {
        parsed: Parsed {
            file: file_tree,
            diagnostics,
        },
        place,
        old_span,
        new_span,
        text_only,
        same_shape,
    })
}

/// How many braces enclose the item at `place`: its plan's or template's,
/// and its step's if it is a task of a step.
fn enclosing_braces(place: Place) -> usize {
    1 + usize::from(place.task.is_some())
}

/// Whether the whole file's parse explains the re-read item's mistakes as
/// the re-read item has them (`diagnostics`, the new tree `tree`): the
/// grammar reads the file from the body item that holds them (where the fast
/// reader gives up) when at most [`limits::MAX_EXPLAINED_BYTES`] follow
/// it; past that, only that item, where [`explain`](super::explain) reads
/// it alone, so it must read as the re-read tree has it.
fn explained_alike(
    old: &File,
    new_text: &str,
    file: FileId,
    place: Place,
    tree: &File,
    diagnostics: &[Diagnostic],
) -> bool {
    let (resume, body_item) = match (&old.items[place.top], &tree.items[place.top]) {
        (TopItem::Plan(old_plan), TopItem::Plan(plan)) => (
            old_plan.items.span(place.item).start(),
            plan.items.get(place.item),
        ),
        (TopItem::Template(template), _) => (template.span.start(), None),
        _ => return false,
    };
    if new_text.len() - resume <= limits::MAX_EXPLAINED_BYTES {
        return true;
    }
    let Some(body_item) = body_item else {
        return false;
    };
    match super::explain::explained_item(new_text, file, resume) {
        Some((read, end)) => {
            end == item_span(body_item).end()
                && read.item == *body_item
                && read.diagnostics == diagnostics
                && read.unparsed == tree.unparsed
        }
        None => false,
    }
}

/// Reads `new_span` of the new text as an item like `like` (which stood at
/// `old_span`); `None` unless the item reads as the whole file would read
/// it: its rule reads it to a closing token, and any text it cannot make
/// out lies inside the item, before the edit and after it.
fn read_item(
    old: &File,
    new_text: &str,
    file: FileId,
    old_span: Span,
    new_span: Span,
    like: &PlanItem,
) -> Option<parser::ItemParse> {
    // A complete last token: what follows may not continue it.
    let next = new_text.as_bytes().get(new_span.end());
    if !matches!(next, None | Some(b' ' | b'\t' | b'\r' | b'\n')) {
        return None;
    }
    let read = parser::parse_item(new_text, file, new_span, like)?;
    let closed = |body: &Option<Body>| body.as_ref().is_none_or(|b| b.close.is_some());
    let ok = match &read.item {
        PlanItem::Step(step) => step.body.close.is_some(),
        PlanItem::Task(task) => closed(&task.body()),
        PlanItem::Use(use_) => closed(&use_.body),
        _ => true,
    };
    // Text the reading could not make out (runs of bad tokens, or the rest
    // of a file a limit stopped): only inside the item, old and new.
    let inside = |outer: Span, s: &Span| outer.start() <= s.start() && s.end() <= outer.end();
    let unparsed_inside = old.unparsed.iter().all(|s| inside(old_span, s))
        && read.unparsed.iter().all(|s| inside(new_span, s));
    (ok && unparsed_inside).then_some(read)
}

/// The syntax diagnostics of the new text: those of the old item go, the
/// re-read item's (`new`) come; with how many the old item had. `None`
/// where an old syntax error lies outside the item or at its first token.
fn syntax_diagnostics(
    old_diagnostics: &[Diagnostic],
    old_span: Span,
    new: Vec<Diagnostic>,
) -> Option<(usize, Vec<Diagnostic>)> {
    let mut inside_old = 0;
    for d in old_diagnostics {
        // A syntax diagnostic's labels and fix are all in this file.
        let spans = || {
            d.labels
                .iter()
                .map(|l| l.span)
                .chain(d.fix.iter().map(|f| f.span))
        };
        let before = spans().all(|s| s.end() <= old_span.start());
        let after = spans().all(|s| s.start() >= old_span.end());
        // At the item's first token: maybe the item before it stopped there
        // ("found the keyword `step`"), which reading this item again would
        // not say.
        let at_first = spans().any(|s| s.start() == old_span.start());
        let inside = spans().all(|s| old_span.start() <= s.start() && s.end() <= old_span.end());
        // A syntax error in another item: its recovery may reach this one,
        // or this one's the next (an item that stopped early, a run of bad
        // tokens), so the file is read whole. With every error inside the
        // item, old and new, the item is a whole node between clean ones:
        // it begins where it began, its rule reads it to its closing token,
        // and the grammar reads the clean items around it as the fast
        // reader does.
        if before || after || at_first || !inside {
            return None;
        }
        inside_old += 1;
    }
    // Every old error was inside the item: the new item's errors are the
    // file's.
    Some((inside_old, new))
}

/// The old top items with the re-read item in its place at `place`: the
/// items before it as they were, those after it with their spans moved by
/// the edit. The steps and tasks before it are the old tree's own (shared,
/// not copied: no offset of theirs moves); those after it are copied as
/// their spans are moved.
fn spliced_items(
    old: &[TopItem],
    place: Place,
    edit: Edit,
    item: PlanItem,
) -> Option<Vec<TopItem>> {
    let mut items = Vec::with_capacity(old.len());
    items.extend_from_slice(&old[..place.top]);
    // The items after the re-read one are shared, moved by the edit.
    let by = edit.new_end as i64 - edit.old_end as i64;
    let body = |old_items: &Items| -> Option<Items> {
        let new = match place.task {
            None => item.clone(),
            Some(task) => {
                let PlanItem::Step(mut step) = moved(old_items.get(place.item)?, edit) else {
                    return None;
                };
                let PlanItem::Task(new) = item.clone() else {
                    return None;
                };
                std::sync::Arc::make_mut(&mut step).items[task] = StepItem::Task(new);
                PlanItem::Step(step)
            }
        };
        Some(old_items.replaced(place.item, new, by))
    };
    // The plan or template holding the item: its name, parameters and
    // opening brace stand before the edit, its closing brace after it.
    items.push(match &old[place.top] {
        TopItem::Plan(plan) => TopItem::Plan(Plan {
            span: edit.map_span(plan.span),
            name: plan.name.clone(),
            body: moved(&plan.body, edit),
            items: body(&plan.items)?,
        }),
        TopItem::Template(template) => TopItem::Template(Template {
            span: edit.map_span(template.span),
            name: template.name.clone(),
            params: template.params.clone(),
            body: moved(&template.body, edit),
            items: body(&template.items)?,
        }),
        _ => return None,
    });
    items.extend(old[place.top + 1..].iter().map(|i| moved_after(i, edit)));
    Some(items)
}

/// A copy of a top item that stands after the edit, its spans moved; a
/// plan's or template's body items shared, moved when first looked at (an
/// edit in a template before a large plan copies none of its steps).
fn moved_after(item: &TopItem, edit: Edit) -> TopItem {
    let by = edit.new_end as i64 - edit.old_end as i64;
    match item {
        TopItem::Plan(plan) => TopItem::Plan(Plan {
            span: edit.map_span(plan.span),
            name: moved(&plan.name, edit),
            body: moved(&plan.body, edit),
            items: plan.items.moved_by(by),
        }),
        TopItem::Template(template) => TopItem::Template(Template {
            span: edit.map_span(template.span),
            name: moved(&template.name, edit),
            params: moved(&template.params, edit),
            body: moved(&template.body, edit),
            items: template.items.moved_by(by),
        }),
        _ => moved(item, edit),
    }
}

/// A copy of an item with its spans moved `by` bytes.
pub(crate) fn shifted(item: &PlanItem, by: i64) -> PlanItem {
    let mut item = item.clone();
    item.visit(&mut |place| {
        if let At::Span(span) = place {
            *span = span.shifted(by);
        }
    });
    item
}

/// A copy of a node with its spans moved by the edit.
fn moved<T: Visit + Clone>(node: &T, edit: Edit) -> T {
    let mut node = node.clone();
    node.visit(&mut |at| {
        if let At::Span(span) = at {
            *span = edit.map_span(*span);
        }
    });
    node
}

/// Whether a run of unparsed text lies in `span`.
fn has_unparsed(unparsed: &[Span], span: Span) -> bool {
    let first = unparsed.partition_point(|s| s.start() < span.start());
    unparsed.get(first).is_some_and(|s| s.start() < span.end())
}

/// A sorted list of spans with those in `old` replaced by `new` (sorted),
/// and those after it moved.
fn splice(spans: &[Span], old: Span, mut new: Vec<Span>, edit: Edit) -> Vec<Span> {
    let first = spans.partition_point(|s| s.start() < old.start());
    let last = spans.partition_point(|s| s.start() < old.end());
    new.sort_unstable();
    let mut out = Vec::with_capacity(spans.len() - (last - first) + new.len());
    out.extend_from_slice(&spans[..first]);
    out.extend(new);
    out.extend(spans[last..].iter().map(|&s| edit.map_span(s)));
    out
}

/// [`splice`] of a file's keywords.
fn splice_keywords(keywords: &Keywords, old: Span, new: Keywords, edit: Edit) -> Keywords {
    let first = keywords.partition_point(|s| s.start() < old.start());
    let last = keywords.partition_point(|s| s.start() < old.end());
    keywords.spliced(first..last, new, |s| edit.map_span(s))
}

/// An item with every span and every string's text taken out: two items
/// with the same shape differ only in where they stand and in the text of
/// their strings.
fn shape(item: &PlanItem) -> PlanItem {
    let mut item = item.clone();
    item.visit(&mut |at| erased(at, false));
    item
}

/// Whether two tasks differ at most in their own name and their spans.
pub(crate) fn same_but_name(a: &Task, b: &Task) -> bool {
    let nameless = |task: &Task| {
        let mut task = task.clone();
        task.name = Ident {
            name: SmolStr::default(),
            span: Span::default(),
        };
        shape(&PlanItem::Task(std::sync::Arc::new(task)))
    };
    nameless(a) == nameless(b)
}

/// Whether two steps differ at most in their own name and their spans
/// (their titles' and tasks' text the same).
pub(crate) fn same_step_but_name(a: &Step, b: &Step) -> bool {
    let nameless = |step: &Step| {
        let mut item = PlanItem::Step(Arc::new(Step {
            name: Ident {
                name: SmolStr::default(),
                span: Span::default(),
            },
            ..step.clone()
        }));
        item.visit(&mut |at| erased(at, true));
        item
    };
    a.items.len() == b.items.len() && nameless(a) == nameless(b)
}

/// The one task an edit changed, as it was and as it is, when the item
/// read again is that task, or a step in which nothing else changed (its
/// name, title, `after`s, `sequential` and other tasks the same but where
/// they stand): `(old, new)`. In a step, the edit lies in the task or
/// between its end and the next item of the step (a body opened or closed
/// after it, a field typed at the end of a body left open).
pub(crate) fn edited_task(
    old: &PlanItem,
    new: &PlanItem,
    edit: Edit,
) -> Option<(Arc<Task>, Arc<Task>)> {
    let (old_step, new_step) = match (old, new) {
        (PlanItem::Task(old), PlanItem::Task(new)) => return Some((old.clone(), new.clone())),
        (PlanItem::Step(old), PlanItem::Step(new)) => (old, new),
        _ => return None,
    };
    // The last item of the step to start at or before the edit, and where
    // the next one (or the step's closing brace) starts.
    let at = old_step
        .items
        .partition_point(|item| step_item_span(item).start() <= edit.start)
        .checked_sub(1)?;
    let next = match old_step.items.get(at + 1) {
        Some(item) => step_item_span(item).start(),
        None => old_step.body.close?.start(),
    };
    if edit.old_end > next {
        return None;
    }
    let (StepItem::Task(old_task), Some(StepItem::Task(new_task))) =
        (&old_step.items[at], new_step.items.get(at))
    else {
        return None;
    };
    // The steps without the task, their spans and texts left out, but not
    // the text of their strings.
    let without = |step: &Step| {
        let mut step = step.clone();
        step.items.remove(at);
        let mut item = PlanItem::Step(Arc::new(step));
        item.visit(&mut |at| erased(at, true));
        item
    };
    let same =
        old_step.items.len() == new_step.items.len() && without(old_step) == without(new_step);
    same.then(|| (old_task.clone(), new_task.clone()))
}

/// The span of an item of a plan or template body.
pub(crate) fn item_span(item: &PlanItem) -> Span {
    match item {
        PlanItem::Title(f) | PlanItem::Goal(f) | PlanItem::Language(f) => f.span,
        PlanItem::MaxIterations(f)
        | PlanItem::TransitionRounds(f)
        | PlanItem::FallbackRounds(f)
        | PlanItem::Retry(f) => f.span,
        PlanItem::Param(p) => p.span,
        PlanItem::Role(r) => r.span,
        PlanItem::Step(s) => s.span,
        PlanItem::Task(t) => t.span,
        PlanItem::Use(u) => u.span,
    }
}

fn step_item_span(item: &StepItem) -> Span {
    match item {
        StepItem::After(a) => a.span,
        StepItem::Sequential(span) => *span,
        StepItem::Task(t) => t.span,
    }
}

/// A place in the tree a visit reaches.
enum At<'a> {
    Span(&'a mut Span),
    /// A string, after its span and its parameters' (for what compares
    /// strings by their text: [`erased`]).
    Str(&'a mut Str),
}

/// Leaves a place's span out (and a string's parameters' places, and,
/// unless `keep_text`, its text): two items erased alike are equal when
/// they say the same, wherever they stand.
fn erased(at: At<'_>, keep_text: bool) {
    match at {
        At::Span(span) => *span = Span::default(),
        At::Str(string) => *string = string.erased(keep_text),
    }
}

/// Visits every span and every string text of a node.
trait Visit {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F);
}

impl<T: Visit + Clone> Visit for std::sync::Arc<T> {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        std::sync::Arc::make_mut(self).visit(f);
    }
}

impl Visit for Span {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        f(At::Span(self));
    }
}

impl<T: Visit> Visit for Option<T> {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        if let Some(inner) = self {
            inner.visit(f);
        }
    }
}

impl<T: Visit> Visit for Vec<T> {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        for inner in self {
            inner.visit(f);
        }
    }
}

impl<T: Visit> Visit for [T] {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        for inner in self {
            inner.visit(f);
        }
    }
}

impl Visit for Items {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        let mut items: Vec<PlanItem> = self.iter().cloned().collect();
        items.visit(f);
        *self = items.into();
    }
}

impl Visit for Ident {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
    }
}

impl Visit for Str {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        // The parameters' spans follow the string's (they are kept from its
        // start): visited as copies, for what collects the spans.
        for param in self.params() {
            let mut span = param.span;
            span.visit(f);
        }
        f(At::Str(self));
    }
}

impl Visit for StrField {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.keyword.visit(f);
        self.value.visit(f);
    }
}

impl Visit for Int {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
    }
}

impl Visit for IntField {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.keyword.visit(f);
        self.value.visit(f);
    }
}

impl Visit for Literal {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        match self {
            Literal::Str(s) => s.visit(f),
            Literal::Int(i) => i.visit(f),
            Literal::Float { span, .. } | Literal::Bool { span, .. } => span.visit(f),
        }
    }
}

impl Visit for Param {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.name.visit(f);
        self.ty.visit(f);
        self.default.visit(f);
    }
}

impl Visit for Role {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.name.visit(f);
        self.description.visit(f);
    }
}

impl Visit for Body {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.open.visit(f);
        self.close.visit(f);
    }
}

impl Visit for After {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.refs.visit(f);
    }
}

impl Visit for TaskField {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        match self {
            TaskField::After(a) => a.visit(f),
            TaskField::Assignee(a) => {
                // The role's span is the field's end: visited (as a copy)
                // for what collects the spans, and moved with the field's.
                let mut role = a.role().span;
                a.span.visit(f);
                role.visit(f);
            }
            TaskField::Reasoning(s) | TaskField::Description(s) => s.visit(f),
            TaskField::Retry(i) => i.visit(f),
            TaskField::Optional(span) => span.visit(f),
            TaskField::Priority { span, level } => {
                span.visit(f);
                level.visit(f);
            }
        }
    }
}

impl Visit for Task {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.name.visit(f);
        self.title.visit(f);
        let mut body = self.body();
        body.visit(f);
        self.set_body(body);
        self.fields.visit(f);
    }
}

impl Visit for StepItem {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        match self {
            StepItem::After(a) => a.visit(f),
            StepItem::Sequential(span) => span.visit(f),
            StepItem::Task(t) => t.visit(f),
        }
    }
}

impl Visit for Step {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.name.visit(f);
        self.title.visit(f);
        self.body.visit(f);
        self.items.visit(f);
    }
}

impl Visit for UseArg {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.name.visit(f);
        self.value.visit(f);
    }
}

impl Visit for Use {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.template.visit(f);
        self.args.visit(f);
        self.prefix.visit(f);
        self.body.visit(f);
        self.after.visit(f);
    }
}

impl Visit for PlanItem {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        match self {
            PlanItem::Title(s) | PlanItem::Goal(s) | PlanItem::Language(s) => s.visit(f),
            PlanItem::MaxIterations(i)
            | PlanItem::TransitionRounds(i)
            | PlanItem::FallbackRounds(i)
            | PlanItem::Retry(i) => i.visit(f),
            PlanItem::Param(p) => p.visit(f),
            PlanItem::Role(r) => r.visit(f),
            PlanItem::Step(s) => s.visit(f),
            PlanItem::Task(t) => t.visit(f),
            PlanItem::Use(u) => u.visit(f),
        }
    }
}

impl Visit for Import {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.path.visit(f);
    }
}

impl Visit for Plan {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.name.visit(f);
        self.body.visit(f);
        self.items.visit(f);
    }
}

impl Visit for Template {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        self.span.visit(f);
        self.name.visit(f);
        self.params.visit(f);
        self.body.visit(f);
        self.items.visit(f);
    }
}

impl Visit for TopItem {
    fn visit<F: FnMut(At<'_>)>(&mut self, f: &mut F) {
        match self {
            TopItem::Import(i) => i.visit(f),
            TopItem::Template(t) => t.visit(f),
            TopItem::Plan(p) => p.visit(f),
            TopItem::Role(r) => r.visit(f),
            TopItem::Param(p) => p.visit(f),
        }
    }
}

/// The item at `place` of a tree (a task of a step as a [`PlanItem::Task`]).
pub(crate) fn item_at(file: &File, place: Place) -> Option<PlanItem> {
    let items = match file.items.get(place.top)? {
        TopItem::Plan(plan) => &plan.items,
        TopItem::Template(template) => &template.items,
        _ => return None,
    };
    let item = items.get(place.item)?;
    match (place.task, item) {
        (None, item) => Some(item.clone()),
        (Some(task), PlanItem::Step(step)) => match step.items.get(task)? {
            StepItem::Task(task) => Some(PlanItem::Task(task.clone())),
            _ => None,
        },
        (Some(_), _) => None,
    }
}

/// Every span of an item, in one fixed order: two items of the same shape
/// give their corresponding spans at the same positions.
pub(crate) fn spans(item: &PlanItem) -> Vec<Span> {
    let mut item = item.clone();
    let mut out = Vec::new();
    item.visit(&mut |at| {
        if let At::Span(span) = at {
            out.push(*span);
        }
    });
    out
}
