//! What a check keeps for the next check after an edit ([`Reuse`],
//! [`PlanReuse`]), moved with the text, and the pieces the checks of a
//! rename ([`super::rename`]) and of an edited task ([`super::edited`])
//! both make again from it.

use std::sync::{Arc, OnceLock};

use super::graph::{self, Edge};
use super::lower::{unknown_ref, Unresolved};
use super::unparsed::Unparsed;
use super::{in_order, PlanReuse, Reuse};
use crate::diagnostic::Diagnostic;
use crate::ir::{self, SymbolKind, TaskId};
use crate::span::{FileId, Span};
use crate::suggest;
use crate::syntax::ast;

impl Reuse {
    /// What a check kept, moved with the text of an edit that changed
    /// nothing the check sees (`map` moves a span of the old text to the
    /// new one): the graph as it was, the plan's spans moved (or nothing
    /// kept of the plan if one cannot be).
    ///
    /// `from` is where the edit starts: a span that ends before it stays.
    pub(crate) fn moved(
        &self,
        file: FileId,
        map: &impl Fn(Span) -> Option<Span>,
        from: usize,
    ) -> Reuse {
        Reuse {
            graph: self.graph.clone(),
            plan: self
                .plan
                .as_deref()
                .and_then(|plan| plan.moved(file, map, from))
                .map(Arc::new),
            // The instances' values and tasks are as they were.
            instances: self.instances.clone(),
            // No search was made again.
            suggestions_left: self.suggestions_left,
            task_refs: self.task_refs.clone(),
            group_pairs: self.group_pairs,
        }
    }
}

impl PlanReuse {
    fn moved(
        &self,
        file: FileId,
        map: &impl Fn(Span) -> Option<Span>,
        from: usize,
    ) -> Option<PlanReuse> {
        let in_file = |f: FileId, span: Span| match f == file && span.end() > from {
            true => map(span),
            false => Some(span),
        };
        // Copied whole (tens of thousands on a large plan), then those
        // after the edit moved in place.
        let mut edges = self.edges.clone();
        for edge in &mut edges {
            edge.span = in_file(edge.file(), edge.span)?;
        }
        let groups = self
            .groups
            .iter()
            .map(|g| {
                Some(graph::GroupEdge {
                    span: in_file(g.file, g.span)?,
                    ..g.clone()
                })
            })
            .collect::<Option<_>>()?;
        let unresolved = self
            .unresolved
            .iter()
            .map(|u| {
                let mut u = u.clone();
                u.name.span = in_file(u.file, u.name.span)?;
                Some(u)
            })
            .collect::<Option<_>>()?;
        let other = self
            .other
            .iter()
            .map(|d| d.moved(file, map))
            .collect::<Option<_>>()?;
        Some(PlanReuse {
            unresolved,
            tasks_unresolved: self.tasks_unresolved,
            task_references: self.task_references.clone(),
            texts_references: self.texts_references.clone(),
            withheld: self.withheld,
            edges,
            groups,
            other,
            search_names: Arc::clone(&self.search_names),
        })
    }
}

/// A file's definitions ([`ir::Symbols::definitions`]).
pub(super) type Definitions = ir::Shifted<ir::Definition>;

/// Whether two names are the same, told by length and last byte first: a
/// scan of a large plan's names for one (most of the same length, `t41234`
/// and `t41235`) compares the rest of few of them.
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b
}

/// The names "did you mean" searches look among for a plan's unresolved
/// names (the file's tasks' and steps', in the order they were declared),
/// indexed when first needed.
#[derive(Debug, Default)]
pub(super) struct SearchNames(OnceLock<suggest::Index>);

impl SearchNames {
    /// The index of the names among `definitions`, made if it was not.
    fn index(&self, definitions: &Definitions, file: FileId) -> &suggest::Index {
        self.0.get_or_init(|| {
            // Names and kinds only: the definitions as stored.
            let names = definitions.unmoved().filter(|d| searched(d, file));
            suggest::Index::new(names.map(|d| ast::SmolStr::new(d.name())))
        })
    }

    /// The names after `definition` (of `definitions`, before the edit)
    /// is renamed `new`: the index with its name changed, if there is one.
    pub(super) fn renamed(
        &self,
        definitions: &Definitions,
        file: FileId,
        definition: usize,
        new: &ast::SmolStr,
    ) -> SearchNames {
        let renamed = self.0.get().and_then(|index| {
            if definition > definitions.len() {
                return None;
            }
            let before = definitions.unmoved().take(definition);
            let at = before.filter(|d| searched(d, file)).count();
            let mut index = index.clone();
            index.rename(at, new.clone())?;
            Some(index)
        });
        SearchNames(renamed.map(OnceLock::from).unwrap_or_default())
    }
}

/// Whether a "did you mean" for an unresolved name of `file`'s plan looks
/// at the definition.
fn searched(d: &ir::Definition, file: FileId) -> bool {
    matches!(d.kind(), SymbolKind::Task | SymbolKind::Step) && d.file() == file
}

/// Gives each task of the plan its dependencies as the graph check reduced
/// them, setting only the lists that changed (of those the report says may
/// have changed, or all), or, when many did, making the plan's list again.
pub(super) fn set_dependencies(plan: &mut ir::Plan, report: &graph::GraphReport) {
    // Setting a list copies its block (of 1,024 tasks) if shared: past
    // this many, making them all again is cheaper.
    const SET_AT_MOST: usize = 64;
    let dependencies = &report.dependencies;
    let ids_of = |index: usize| dependencies.of(index).iter().map(|&d| d as TaskId + 1);
    let all: Box<dyn Iterator<Item = usize>> = match &report.changed {
        Some(changed) => Box::new(changed.iter().map(|&node| node as usize)),
        None => Box::new(0..dependencies.len()),
    };
    let differ = |&index: &usize| {
        !plan
            .dependencies
            .of(index)
            .iter()
            .copied()
            .eq(ids_of(index))
    };
    let changed: Vec<usize> = all.filter(differ).take(SET_AT_MOST + 1).collect();
    if changed.len() > SET_AT_MOST || plan.dependencies.len() != dependencies.len() {
        plan.dependencies = (0..dependencies.len()).map(ids_of).collect();
        return;
    }
    let mut list = Vec::new();
    for index in changed {
        list.clear();
        list.extend(ids_of(index));
        plan.dependencies.set(index, &list);
    }
}

/// The check's diagnostics, in order: those kept (`other`), those of the
/// unresolved names and those of the graph.
pub(super) fn check_diagnostics(
    other: &[Diagnostic],
    unknown: Vec<Diagnostic>,
    graph: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::with_capacity(other.len() + unknown.len() + graph.len());
    diagnostics.extend_from_slice(other);
    diagnostics.extend(unknown);
    diagnostics.extend(graph);
    in_order(&mut diagnostics);
    diagnostics
}

/// A range after a block whose length went from `was` to `is`, moved with
/// it.
pub(super) fn shifted(
    range: &std::ops::Range<usize>,
    is: usize,
    was: usize,
) -> std::ops::Range<usize> {
    (range.start + is - was)..(range.end + is - was)
}

/// The graph's edges after an edit: the old ones moved, those at `gone`
/// (indices, sorted) left out, the new ones (`new`) after the others (the
/// order of single edges changes nothing the checks report but a cycle's
/// labels, and a cycle is checked whole); a group's place among them moved
/// with them.
pub(super) fn edges_after(
    kept: &PlanReuse,
    gone: &[usize],
    map: &impl Fn(Span) -> Option<Span>,
    file: FileId,
    new: Vec<Edge>,
) -> Option<(Vec<Edge>, Vec<graph::GroupEdge>)> {
    let mut edges: Vec<Edge> = Vec::with_capacity(kept.edges.len() + new.len());
    // The runs between those gone, copied, then moved in place.
    let mut from = 0;
    for &until in gone.iter().chain([&kept.edges.len()]) {
        if until >= from {
            edges.extend_from_slice(kept.edges.get(from..until)?);
        }
        from = until + 1;
    }
    for e in edges.iter_mut().filter(|e| e.file() == file) {
        e.span = map(e.span)?;
    }
    edges.extend(new);
    let groups = kept
        .groups
        .iter()
        .map(|g| {
            let span = if g.file == file { map(g.span)? } else { g.span };
            let before = gone.partition_point(|&e| e < g.after_edges);
            Some(graph::GroupEdge {
                span,
                after_edges: g.after_edges - before,
                ..g.clone()
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some((edges, groups))
}

/// The diagnostics of the unresolved names, as the check makes them: those
/// unparsed text mentions left out (no search), the others' "did you mean"
/// searched in order within one budget among the tasks' and steps' names in
/// the order they were declared.
pub(super) fn unknown_diagnostics(
    unresolved: &[Unresolved],
    (definitions, names): (&Definitions, &SearchNames),
    file: FileId,
    unparsed: &Unparsed,
) -> Vec<Diagnostic> {
    let mut budget = suggest::Budget::default();
    unresolved
        .iter()
        .filter(|u| !unparsed.may_name(&u.name.name))
        .map(|u| {
            let best = budget.closest_in(&u.name.name, names.index(definitions, file));
            unknown_ref(u.file, &u.name, "", best)
        })
        .collect()
}

/// The diagnostics kept after an edit (all but those of the unresolved
/// names and of the graph): the old ones moved, those at `gone` (indices,
/// sorted) left out, the new ones (`new`) added.
pub(super) fn other_after(
    kept: &PlanReuse,
    gone: &[usize],
    map: &impl Fn(Span) -> Option<Span>,
    file: FileId,
    new: Vec<Diagnostic>,
) -> Option<Vec<Diagnostic>> {
    let mut other = Vec::with_capacity(kept.other.len() + new.len());
    for (i, d) in kept.other.iter().enumerate() {
        if gone.binary_search(&i).is_err() {
            other.push(d.moved(file, map)?);
        }
    }
    other.extend(new);
    Some(other)
}

/// A string of the plan with its parameters' values (`params`, the plan's),
/// each parameter it names shown to `named` first; `None` if `named` refuses
/// one, or one has no value (the check says what stands there then).
pub(crate) fn interpolated(
    params: &[ir::ParamValue],
    string: &ast::Str,
    mut named: impl FnMut(ast::Interp<'_>) -> Option<()>,
) -> Option<String> {
    let mut out = String::with_capacity(string.len_hint());
    for part in string.parts() {
        match part {
            ast::StrPart::Text(text) => out.push_str(text),
            ast::StrPart::Param(ident) => {
                named(ident)?;
                let param = params.iter().find(|p| p.name.as_str() == ident.name)?;
                param.value.as_ref()?.write_text(&mut out);
            }
        }
    }
    Some(out)
}
