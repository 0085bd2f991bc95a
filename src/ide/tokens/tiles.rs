//! The file cut into tiles for semantic tokens: a tile starts at every
//! top item, every item of a plan or template body, and every task of a
//! step, and where the tasks of a step and the items of a body end; it
//! runs to the next tile's start. Every token lies inside one tile (a
//! token belongs to the tile its start is in; [`fresh`] checks the rest),
//! so the file's tokens are its tiles' tokens one after the other, and a
//! tile whose text an edit left as it was, and whose names resolve as
//! they did, has the tokens it had.
//!
//! The tiles come in blocks ([`blocks`]): a body item with the tiles of
//! its tasks (a step), or one tile alone. A block whose text and names are
//! as they were is kept whole without looking at its tiles; only a block
//! made again is cut into its tiles ([`expand`]).
//!
//! The tiles are found from the tree as it was read ([`ast::Items::unmoved`]
//! and how far each item moved), so finding them copies no item.

use super::{name_kind, without_overlaps_into, Literals, Token, TokenKind};
use crate::compile::Compilation;
use crate::span::Span;
use crate::syntax::ast::{self, PlanItem, StepItem, TopItem};

/// What stands at a tile's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Role {
    /// The start of the file, before its first top item.
    Lead,
    /// An import, a template, a plan, a role or a parameter of the file.
    Top,
    /// An item of a plan or template body (a step up to its first task).
    BodyItem,
    /// A task of a step.
    StepTask,
    /// What follows a step's last task.
    StepTail,
    /// What follows a body's last item.
    BodyTail,
    /// The whole file, where it could not be cut (spans out of order, or a
    /// token across a tile's end).
    Whole,
}

/// The node whose literals a tile holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    Nothing,
    /// `file.items[top]`, without its body's items.
    Top(u32),
    /// Item `item` of the body of `file.items[top]` (a step without its tasks).
    Item {
        top: u32,
        item: u32,
    },
    /// Item `task` of the step that is item `item` of `file.items[top]`'s body.
    Task {
        top: u32,
        item: u32,
        task: u32,
    },
}

/// One tile: where it starts, what stands there and whose literals it holds.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tile {
    pub start: u32,
    pub role: Role,
    pub owner: Owner,
}

/// The first tile of each block of a file, in order, or `None` where its
/// spans are out of order. A block is a tile of the file's start, of a top
/// item, of a body item or of what follows a body's last item, with the
/// tiles inside it: a step's tasks and what follows the last
/// ([`expand`]). A block runs to the next one's start; its tiles are not
/// looked at unless it is made again, so a keystroke walks the body items
/// (about 5,000 at 100,000 tasks), not every task.
pub(super) fn blocks(file: &ast::File) -> Option<Vec<Tile>> {
    let mut blocks = Tiles(Vec::with_capacity(file.items.len() + 8));
    blocks.push(0, Role::Lead, Owner::Nothing)?;
    for (t, top) in file.items.iter().enumerate() {
        let t = narrow(t);
        blocks.push(top_span(top).start(), Role::Top, Owner::Top(t))?;
        let items = match top {
            TopItem::Plan(plan) => &plan.items,
            TopItem::Template(template) => &template.items,
            _ => continue,
        };
        let mut body_end = None;
        for i in 0..items.len() {
            let span = items.span(i);
            let owner = Owner::Item {
                top: t,
                item: narrow(i),
            };
            blocks.push(span.start(), Role::BodyItem, owner)?;
            body_end = Some(span.end());
        }
        if let Some(end) = body_end {
            blocks.push(end, Role::BodyTail, Owner::Nothing)?;
        }
    }
    Some(blocks.0)
}

/// The tiles of the block that starts with `block` and runs to `end`: the
/// block's own, then (for a step) a tile per task and one for what follows
/// the last. A tile that would start at `end` holds nothing and is left
/// out (the next block's replaces it). `None` where the spans are out of
/// order.
pub(super) fn expand(file: &ast::File, block: Tile, end: usize) -> Option<Vec<Tile>> {
    let mut tiles = Tiles(vec![block]);
    if let Owner::Item { top, item } = block.owner {
        let items = match file.items.get(top as usize) {
            Some(TopItem::Plan(plan)) => &plan.items,
            Some(TopItem::Template(template)) => &template.items,
            _ => return Some(tiles.0),
        };
        if let Some((PlanItem::Step(step), shift)) = items.unmoved_at(item as usize) {
            tiles.step(step, shift, (top, item))?;
        }
    }
    match tiles.0.last() {
        Some(last) if last.start as usize > end => None,
        Some(last) if tiles.0.len() > 1 && last.start as usize == end => {
            tiles.0.pop();
            Some(tiles.0)
        }
        _ => Some(tiles.0),
    }
}

struct Tiles(Vec<Tile>);

impl Tiles {
    /// Adds a tile; one at the same start as the last replaces it (the
    /// last would hold nothing); `None` if `start` is before the last's.
    fn push(&mut self, start: usize, role: Role, owner: Owner) -> Option<()> {
        let start = u32::try_from(start).ok()?;
        let tile = Tile { start, role, owner };
        match self.0.last_mut() {
            Some(last) if start < last.start => return None,
            Some(last) if start == last.start => *last = tile,
            _ => self.0.push(tile),
        }
        Some(())
    }

    /// The tiles of a step's tasks and of what follows the last.
    fn step(&mut self, step: &ast::Step, shift: i64, (top, item): (u32, u32)) -> Option<()> {
        let mut tasks_end = None;
        for (k, step_item) in step.items.iter().enumerate() {
            if let StepItem::Task(task) = step_item {
                let span = task.span.shifted(shift);
                let owner = Owner::Task {
                    top,
                    item,
                    task: narrow(k),
                };
                self.push(span.start(), Role::StepTask, owner)?;
                tasks_end = Some(span.end());
            }
        }
        if let Some(end) = tasks_end {
            self.push(end, Role::StepTail, Owner::Nothing)?;
        }
        Some(())
    }
}

fn narrow(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}

fn top_span(item: &TopItem) -> Span {
    match item {
        TopItem::Import(import) => import.span,
        TopItem::Template(template) => template.span,
        TopItem::Plan(plan) => plan.span,
        TopItem::Role(role) => role.span,
        TopItem::Param(param) => param.span,
    }
}

/// A token across a tile's end (or a literal outside its tile): the file
/// is not cut where that happens.
#[derive(Debug)]
pub(super) struct Uncut;

/// Lists a tile's tokens are made in, reused from tile to tile.
#[derive(Default)]
pub(super) struct Scratch {
    tokens: Vec<Token>,
    /// The tile's tokens, sorted and without overlaps.
    pub sorted: Vec<Token>,
}

/// The tokens of the tile `start..end` owned by `owner`, sorted and without
/// overlaps, into `scratch.sorted`: from the file's keywords and comments in
/// it, `symbols` (the names in it, definitions first, in the symbols'
/// order) and the owner's literals.
pub(super) fn fresh(
    compilation: &Compilation,
    (start, end): (usize, usize),
    owner: Owner,
    symbols: &[Token],
    scratch: &mut Scratch,
) -> Result<(), Uncut> {
    let file = super::super::root_syntax(compilation);
    let within = |spans: &[Span]| {
        let from = spans.partition_point(|s| s.start() < start);
        let to = from + spans[from..].partition_point(|s| s.start() < end);
        from..to
    };
    let keywords = {
        let from = file.keywords.partition_point(|s| s.start() < start);
        let to = file.keywords.partition_point(|s| s.start() < end);
        from..to
    };
    let tokens = &mut scratch.tokens;
    tokens.clear();
    let mut push = |span: Span, kind: TokenKind, definition: bool| {
        if !span.is_empty() {
            tokens.push(Token {
                span,
                kind,
                definition,
            });
        }
    };
    for span in file.keywords.slice(keywords) {
        push(span, TokenKind::Keyword, false);
    }
    for &span in &file.comments[within(&file.comments)] {
        push(span, TokenKind::Comment, false);
    }
    for symbol in symbols {
        push(symbol.span, symbol.kind, symbol.definition);
    }
    for (span, kind) in literals(file, owner) {
        if span.start() < start {
            return Err(Uncut);
        }
        push(span, kind, false);
    }
    if tokens
        .iter()
        .any(|t| t.span.end() > end || t.span.start() < start)
    {
        return Err(Uncut);
    }
    without_overlaps_into(tokens, &mut scratch.sorted);
    Ok(())
}

/// The literals `owner` holds (not those of the tiles inside it), where
/// they stand in the text.
fn literals(file: &ast::File, owner: Owner) -> Vec<(Span, TokenKind)> {
    let mut literals = Literals::default();
    let body = |top: u32| match file.items.get(top as usize) {
        Some(TopItem::Plan(plan)) => Some(&plan.items),
        Some(TopItem::Template(template)) => Some(&template.items),
        _ => None,
    };
    let mut shift = 0;
    match owner {
        Owner::Nothing => {}
        Owner::Top(top) => match file.items.get(top as usize) {
            Some(TopItem::Template(template)) => {
                for param in &template.params {
                    literals.param(param);
                }
            }
            Some(TopItem::Plan(_)) | None => {}
            Some(item) => literals.top_item(item),
        },
        Owner::Item { top, item } => {
            if let Some((unmoved, by)) = body(top).and_then(|items| unmoved(items, item)) {
                shift = by;
                match unmoved {
                    PlanItem::Step(step) => {
                        if let Some(title) = &step.title {
                            literals.string(title);
                        }
                    }
                    other => literals.plan_item(other),
                }
            }
        }
        Owner::Task { top, item, task } => {
            if let Some((PlanItem::Step(step), by)) = body(top).and_then(|i| unmoved(i, item)) {
                shift = by;
                if let Some(StepItem::Task(task)) = step.items.get(task as usize) {
                    literals.task(task);
                }
            }
        }
    }
    let mut out = literals.0;
    if shift != 0 {
        for (span, _) in &mut out {
            *span = span.shifted(shift);
        }
    }
    out
}

/// Item `index` of a body as it was read, and how far it moved since.
fn unmoved(items: &ast::Items, index: u32) -> Option<(&PlanItem, i64)> {
    items.unmoved_at(index as usize)
}

/// The token of a definition or a reference: its span and the kind of
/// what it names.
pub(super) fn symbol_token(kind: crate::ir::SymbolKind, span: Span, definition: bool) -> Token {
    Token {
        span,
        kind: name_kind(kind),
        definition,
    }
}
