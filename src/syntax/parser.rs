//! Walks pest's parse tree into the [`ast`](super::ast), collecting comments,
//! keywords and syntax errors on the way.

use pest::iterators::Pair;
use pest::Parser as _;
use std::sync::Arc;

use super::ast::*;
use super::fast::{OpenPlan, Prefix};
use super::grammar::{PlanParser, Rule};
use super::keywords;
use super::keywords::Context;
use super::recover;
use super::{limits, strings};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::{FileId, Span};

/// The result of parsing one file: always a tree, plus what was wrong.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    pub file: File,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses `text` with the grammar alone: the reference reader, which also
/// recovers from mistakes and explains them.
#[cfg(test)]
pub(super) fn parse_with_grammar(text: &str, file: FileId) -> Parsed {
    parse_rest(text, file, Prefix::default())
}

/// Parses the file with the grammar from `prefix.resume` on, after what the
/// fast reader read before it.
/// Reads `text` from `prefix` on with the grammar: what the fast reader
/// read before the first mistake, and the rest explained.
pub(super) fn parse_rest(text: &str, file: FileId, prefix: Prefix) -> Parsed {
    if let Some(diagnostic) = limits::check(text, file) {
        return Parsed {
            file: File::default(),
            diagnostics: vec![diagnostic],
        };
    }
    let Prefix {
        mut items,
        plan,
        mut comments,
        mut keywords,
        resume,
    } = prefix;
    let mut walker = Walker {
        text,
        base: resume,
        file,
        comments: Vec::new(),
        keywords: Keywords::default(),
        unparsed: Vec::new(),
        diagnostics: Vec::new(),
        hidden: 0,
        first_hidden: Span::default(),
    };
    let rule = if plan.is_some() {
        Rule::plan_rest
    } else {
        Rule::file
    };
    match PlanParser::parse(rule, &text[resume..]) {
        Ok(mut pairs) => {
            let root = pairs.next().expect("the rule yields one pair");
            match plan {
                Some(plan) => walker.plan_rest(root, plan, &mut items),
                None => items.extend(walker.file_items(root)),
            }
        }
        // The grammar accepts any text; this is a safety net.
        Err(error) => {
            walker
                .diagnostics
                .push(recover::from_pest_error(&error, file, resume));
            walker.unparsed.push(Span::new(resume, text.len()));
        }
    }
    if walker.hidden > 0 {
        let note = limits::more_errors(walker.hidden, walker.first_hidden, file);
        walker.diagnostics.push(note);
    }
    // Children are walked after their parent's siblings are listed, so the
    // trivia arrive slightly out of order.
    comments.append(&mut walker.comments);
    keywords.append(&mut walker.keywords);
    comments.sort_unstable();
    keywords.sort();
    let mut unparsed = walker.unparsed;
    unparsed.sort_unstable();
    Parsed {
        file: File {
            items,
            comments,
            keywords,
            unparsed,
        },
        diagnostics: walker.diagnostics,
    }
}

/// One item of a plan, template or step body read again on its own (see
/// [`reparse`](super::reparse)): the item, and what the walk collected in it.
pub(super) struct ItemParse {
    pub item: PlanItem,
    pub comments: Vec<Span>,
    pub keywords: Keywords,
    pub unparsed: Vec<Span>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads `span` of `text` as one item of the kind `like` is, with the rule the
/// grammar reads that kind with; `None` unless the rule reads the whole span
/// (then the file must be read whole). Spans are the file's.
pub(super) fn parse_item(
    text: &str,
    file: FileId,
    span: Span,
    like: &PlanItem,
) -> Option<ItemParse> {
    let rule = match like {
        PlanItem::Title(_) => Rule::title,
        PlanItem::Goal(_) => Rule::goal,
        PlanItem::Language(_) => Rule::language,
        PlanItem::MaxIterations(_) => Rule::max_iterations,
        PlanItem::TransitionRounds(_) => Rule::transition_rounds,
        PlanItem::FallbackRounds(_) => Rule::fallback_rounds,
        PlanItem::Retry(_) => Rule::retry,
        PlanItem::Param(_) => Rule::param,
        PlanItem::Role(_) => Rule::role,
        PlanItem::Step(_) => Rule::step,
        PlanItem::Task(_) => Rule::task,
        PlanItem::Use(_) => Rule::use_,
    };
    parse_item_with(text, file, span, rule)
}

/// Reads `span` of `text` as one item with `rule`, as [`parse_item`] does.
pub(super) fn parse_item_with(
    text: &str,
    file: FileId,
    span: Span,
    rule: Rule,
) -> Option<ItemParse> {
    let slice = text.get(span.range())?;
    let pair = PlanParser::parse(rule, slice).ok()?.next()?;
    if pair.as_span().end() != slice.len() {
        return None;
    }
    let mut walker = Walker {
        text,
        base: span.start(),
        file,
        comments: Vec::new(),
        keywords: Keywords::default(),
        unparsed: Vec::new(),
        diagnostics: Vec::new(),
        hidden: 0,
        first_hidden: Span::default(),
    };
    let item = walker.plan_item(pair)?;
    if walker.hidden > 0 {
        return None;
    }
    Some(ItemParse {
        item,
        comments: walker.comments,
        keywords: walker.keywords,
        unparsed: walker.unparsed,
        diagnostics: walker.diagnostics,
    })
}

struct Walker<'a> {
    /// The whole file (explanations of bad runs re-parse from it).
    text: &'a str,
    /// Where the text pest read starts in the file: pest's offsets are
    /// relative to it.
    base: usize,
    file: FileId,
    comments: Vec<Span>,
    keywords: Keywords,
    unparsed: Vec<Span>,
    /// At most [`limits::MAX_SYNTAX_ERRORS`]; the rest are only counted.
    diagnostics: Vec<Diagnostic>,
    /// How many diagnostics were over the limit, and where the first was.
    hidden: usize,
    first_hidden: Span,
}

fn is_bad(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::top_bad | Rule::plan_bad | Rule::step_bad | Rule::task_bad
    )
}

/// The first token of a run of bad tokens, as the grammar's `bad_word`
/// ends it (empty if the run starts with a brace, a string or a comma).
fn first_token(run: &str) -> &str {
    let end = run
        .find([' ', '\t', '\r', '\n', '{', '}', '"', '#', ',', '(', ')'])
        .unwrap_or(run.len());
    &run[..end]
}

fn is_keyword(rule: Rule) -> bool {
    keywords::is_token(rule)
}

impl<'a> Walker<'a> {
    /// The meaningful children of a pair: comments and keywords are recorded
    /// and left out, and each run of bad tokens becomes one syntax error.
    fn children(&mut self, pair: Pair<'a, Rule>, context: Context) -> Vec<Pair<'a, Rule>> {
        let mut out = Vec::new();
        let mut bad: Option<Span> = None;
        for child in pair.into_inner() {
            let rule = child.as_rule();
            if rule == Rule::COMMENT {
                self.comments.push(self.sp(&child));
                continue;
            }
            if is_keyword(rule) {
                self.keywords.push(self.sp(&child));
                continue;
            }
            if is_bad(rule) {
                // A keyword starts a new run: it is where the next item was meant
                // to begin, so it gets its own explanation. (The grammar ends a
                // bad node at any token a keyword begins, `task:` too; only a
                // whole keyword begins a new run.)
                let span = self.sp(&child);
                let starts_item = keywords::is_keyword(first_token(child.as_str()));
                for inner in child.into_inner() {
                    if inner.as_rule() == Rule::COMMENT {
                        self.comments.push(self.sp(&inner));
                    }
                }
                bad = match bad {
                    Some(run) if starts_item => {
                        self.bad_run(run, context);
                        Some(span)
                    }
                    Some(run) => Some(run.to(span)),
                    None => Some(span),
                };
                continue;
            }
            if let Some(run) = bad.take() {
                self.bad_run(run, context);
            }
            out.push(child);
        }
        if let Some(run) = bad {
            self.bad_run(run, context);
        }
        out
    }

    /// Whether one more diagnostic may be kept; one that may not is only
    /// counted (and not explained: explaining costs a parse).
    fn room(&mut self, at: Span) -> bool {
        if self.diagnostics.len() < limits::MAX_SYNTAX_ERRORS {
            return true;
        }
        if self.hidden == 0 {
            self.first_hidden = at;
        }
        self.hidden += 1;
        false
    }

    fn bad_run(&mut self, run: Span, context: Context) {
        self.unparsed.push(run);
        if self.room(run) {
            let diagnostic = recover::explain(self.text, self.file, run, context);
            self.diagnostics.push(diagnostic);
        }
    }

    fn syntax_error(&mut self, span: Span, message: String, label: &str) {
        if self.room(span) {
            self.diagnostics
                .push(Diagnostic::new(Code::Syntax, message).label(self.file, span, label));
        }
    }

    fn file_items(&mut self, root: Pair<'a, Rule>) -> Vec<TopItem> {
        let children = self.children(root, Context::Top);
        children
            .into_iter()
            .filter_map(|child| self.top_item(child))
            .collect()
    }

    fn top_item(&mut self, child: Pair<'a, Rule>) -> Option<TopItem> {
        Some(match child.as_rule() {
            Rule::import => TopItem::Import(self.import(child)),
            Rule::plan => TopItem::Plan(self.plan(child)),
            Rule::template => TopItem::Template(self.template(child)),
            Rule::role => TopItem::Role(self.role(child)),
            Rule::param => TopItem::Param(self.param(child)),
            _ => return None,
        })
    }

    /// The rest of a plan the fast reader gave up inside (`plan_rest`):
    /// the rest of its body, then the items after it.
    fn plan_rest(&mut self, root: Pair<'a, Rule>, plan: OpenPlan, items: &mut Vec<TopItem>) {
        let OpenPlan {
            keyword,
            name,
            open,
            items: mut plan_items,
        } = plan;
        let mut end = open;
        let mut close = None;
        let mut after = Vec::new();
        for child in self.children(root, Context::Top) {
            if child.as_rule() == Rule::plan_rest_body {
                for item in self.children(child, Context::Plan) {
                    if item.as_rule() == Rule::plan_end {
                        end = self.sp(&item);
                        close = self.body_end(item, open, "plan");
                    } else {
                        plan_items.extend(self.plan_item(item));
                    }
                }
            } else {
                after.push(child);
            }
        }
        items.push(TopItem::Plan(Plan {
            span: keyword.to(end),
            name,
            body: Body { open, close },
            items: plan_items.into(),
        }));
        for child in after {
            items.extend(self.top_item(child));
        }
    }

    fn import(&mut self, pair: Pair<'a, Rule>) -> Import {
        let span = self.sp(&pair);
        let mut children = self.children(pair, Context::Top).into_iter();
        let path = self.string(children.next().expect("import has a path"));
        Import { span, path }
    }

    fn plan(&mut self, pair: Pair<'a, Rule>) -> Plan {
        let span = self.sp(&pair);
        let mut name = None;
        let mut open = Span::default();
        let mut close = None;
        let mut items = Vec::new();
        for child in self.children(pair, Context::Plan) {
            match child.as_rule() {
                Rule::ident => name = Some(self.name(&child, "a plan name")),
                Rule::lbrace => open = self.sp(&child),
                Rule::plan_end => close = self.body_end(child, open, "plan"),
                _ => items.extend(self.plan_item(child)),
            }
        }
        Plan {
            span,
            name: name.expect("plan has a name"),
            body: Body { open, close },
            items: items.into(),
        }
    }

    fn template(&mut self, pair: Pair<'a, Rule>) -> Template {
        let span = self.sp(&pair);
        let mut name = None;
        let mut params = Vec::new();
        let mut open = Span::default();
        let mut close = None;
        let mut items = Vec::new();
        for child in self.children(pair, Context::Template) {
            match child.as_rule() {
                Rule::ident => name = Some(self.name(&child, "a template name")),
                Rule::template_param => params.push(self.param(child)),
                Rule::lbrace => open = self.sp(&child),
                Rule::plan_end => close = self.body_end(child, open, "template"),
                _ => items.extend(self.plan_item(child)),
            }
        }
        Template {
            span,
            name: name.expect("template has a name"),
            params,
            body: Body { open, close },
            items: items.into(),
        }
    }

    /// The closing brace of a body, or a syntax error where it is missing.
    fn body_end(&mut self, end: Pair<'a, Rule>, open: Span, what: &str) -> Option<Span> {
        let span = self.sp(&end);
        if end.into_inner().next().is_none() {
            return Some(span);
        }
        if !self.room(span) {
            return None;
        }
        let found = if span.start() >= self.text.len() {
            "the file ends".to_owned()
        } else {
            let word: String = self.text[span.start()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            format!("`{word}` begins")
        };
        self.diagnostics.push(
            Diagnostic::new(Code::Syntax, format!("this {what}'s `{{` is never closed"))
                .label(self.file, open, "opened here")
                .label(self.file, span, format!("expected `}}` before {found}")),
        );
        None
    }

    fn plan_item(&mut self, pair: Pair<'a, Rule>) -> Option<PlanItem> {
        Some(match pair.as_rule() {
            Rule::title => PlanItem::Title(self.str_field(pair)),
            Rule::goal => PlanItem::Goal(self.str_field(pair)),
            Rule::language => PlanItem::Language(self.str_field(pair)),
            Rule::max_iterations => PlanItem::MaxIterations(self.int_field(pair)),
            Rule::transition_rounds => PlanItem::TransitionRounds(self.int_field(pair)),
            Rule::fallback_rounds => PlanItem::FallbackRounds(self.int_field(pair)),
            Rule::retry => PlanItem::Retry(self.int_field(pair)),
            Rule::param => PlanItem::Param(Box::new(self.param(pair))),
            Rule::role => PlanItem::Role(Box::new(self.role(pair))),
            Rule::step => PlanItem::Step(Arc::new(self.step(pair))),
            Rule::task => PlanItem::Task(Arc::new(self.task(pair))),
            Rule::use_ => PlanItem::Use(Box::new(self.use_(pair))),
            _ => return None,
        })
    }

    fn str_field(&mut self, pair: Pair<'a, Rule>) -> StrField {
        let span = self.sp(&pair);
        let keyword = self.keyword_span(&pair);
        let value = self.children(pair, Context::Plan).into_iter().next();
        StrField {
            span,
            keyword,
            value: self.string(value.expect("field has a string")),
        }
    }

    fn int_field(&mut self, pair: Pair<'a, Rule>) -> IntField {
        let span = self.sp(&pair);
        let keyword = self.keyword_span(&pair);
        let value = self.children(pair, Context::Plan).into_iter().next();
        IntField {
            span,
            keyword,
            value: self.int(value.expect("field has a number")),
        }
    }

    fn param(&mut self, pair: Pair<'a, Rule>) -> Param {
        let span = self.node_span(&pair);
        let mut children = self.children(pair, Context::Plan).into_iter();
        let name = self.name(
            &children.next().expect("param has a name"),
            "a parameter name",
        );
        let ty = self.ident(&children.next().expect("param has a type"));
        let default = children.next().map(|value| self.literal(value));
        Param {
            span,
            name,
            ty,
            default,
        }
    }

    fn literal(&mut self, pair: Pair<'a, Rule>) -> Literal {
        let span = self.sp(&pair);
        match pair.as_rule() {
            Rule::string => Literal::Str(self.string(pair)),
            Rule::int => Literal::Int(self.int(pair)),
            Rule::float => match pair.as_str().parse::<f64>() {
                Ok(value) if value.is_finite() => Literal::Float { span, value },
                _ => {
                    self.syntax_error(
                        span,
                        format!("`{}` is too large for a float", pair.as_str()),
                        "out of range",
                    );
                    Literal::Float { span, value: 0.0 }
                }
            },
            _ => Literal::Bool {
                span,
                value: pair.as_str() == "true",
            },
        }
    }

    fn int(&mut self, pair: Pair<'a, Rule>) -> Int {
        let span = self.sp(&pair);
        let value = pair.as_str().parse::<i64>().ok();
        if value.is_none() {
            self.syntax_error(
                span,
                format!("`{}` does not fit in a 64-bit integer", pair.as_str()),
                "out of range",
            );
        }
        Int { span, value }
    }

    fn role(&mut self, pair: Pair<'a, Rule>) -> Role {
        let span = self.node_span(&pair);
        let mut children = self.children(pair, Context::Plan).into_iter();
        let name = self.name(&children.next().expect("role has a name"), "a role name");
        let description = children.next().map(|s| self.string(s));
        Role {
            span,
            name,
            description,
        }
    }

    fn step(&mut self, pair: Pair<'a, Rule>) -> Step {
        let span = self.sp(&pair);
        let mut name = None;
        let mut title = None;
        let mut open = Span::default();
        let mut close = None;
        let mut items = Vec::new();
        for child in self.children(pair, Context::Step) {
            match child.as_rule() {
                Rule::ident => name = Some(self.name(&child, "a step name")),
                Rule::string => title = Some(self.string(child)),
                Rule::lbrace => open = self.sp(&child),
                Rule::step_end => close = self.body_end(child, open, "step"),
                Rule::after => items.push(StepItem::After(Box::new(self.after(child)))),
                Rule::sequential => {
                    let keyword = self.sp(&child);
                    self.keywords.push(keyword);
                    items.push(StepItem::Sequential(keyword));
                }
                Rule::task => items.push(StepItem::Task(Arc::new(self.task(child)))),
                _ => {}
            }
        }
        Step {
            span,
            name: name.expect("step has a name"),
            title,
            body: Body { open, close },
            items,
        }
    }

    fn task(&mut self, pair: Pair<'a, Rule>) -> Task {
        let span = self.node_span(&pair);
        let mut children = self.children(pair, Context::Plan).into_iter();
        let name = self.name(&children.next().expect("task has a name"), "a task name");
        let title = self.string(children.next().expect("task has a title"));
        let mut body = None;
        let mut fields = Vec::new();
        if let Some(block) = children.next() {
            let mut open = Span::default();
            let mut close = None;
            for child in self.children(block, Context::Task) {
                match child.as_rule() {
                    Rule::lbrace => open = self.sp(&child),
                    Rule::task_end => close = self.body_end(child, open, "task"),
                    _ => fields.extend(self.task_field(child)),
                }
            }
            body = Some(Body { open, close });
        }
        Task::new(span, name, title, body, fields.into())
    }

    fn task_field(&mut self, pair: Pair<'a, Rule>) -> Option<TaskField> {
        let span = self.sp(&pair);
        Some(match pair.as_rule() {
            Rule::after => TaskField::After(self.after(pair)),
            Rule::assignee => {
                let role = self.children(pair, Context::Task).into_iter().next();
                let role = self.ident(&role.expect("assignee names a role"));
                if keywords::is_keyword(&role.name) {
                    if !self.room(role.span) {
                        return None;
                    }
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::Syntax,
                            format!(
                                "expected a role name after `assignee`, found the keyword `{}`",
                                role.name
                            ),
                        )
                        .label(self.file, role.span, "expected a role name")
                        .help("`assignee` names a role declared with `role NAME`"),
                    );
                    return None;
                }
                TaskField::Assignee(Assignee::new(span, role))
            }
            Rule::reasoning => TaskField::Reasoning(Box::new(self.str_field(pair))),
            Rule::description => TaskField::Description(Box::new(self.str_field(pair))),
            Rule::retry => TaskField::Retry(Box::new(self.int_field(pair))),
            Rule::optional => {
                self.keywords.push(span);
                TaskField::Optional(span)
            }
            Rule::priority => {
                let level = self.children(pair, Context::Task).into_iter().next();
                let level = self.ident(&level.expect("priority names a level"));
                TaskField::Priority {
                    span,
                    level: Box::new(level),
                }
            }
            _ => return None,
        })
    }

    fn after(&mut self, pair: Pair<'a, Rule>) -> After {
        let span = self.node_span(&pair);
        let refs = self
            .children(pair, Context::Task)
            .iter()
            .map(|p| self.ident(p))
            .collect();
        After { span, refs }
    }

    fn use_(&mut self, pair: Pair<'a, Rule>) -> Use {
        let span = self.node_span(&pair);
        let mut template = None;
        let mut args = Vec::new();
        let mut prefix = None;
        let mut body = None;
        let mut after = Vec::new();
        for child in self.children(pair, Context::Plan) {
            match child.as_rule() {
                Rule::path => template = Some(self.ident(&child)),
                Rule::use_arg => {
                    let arg_span = self.sp(&child);
                    let mut parts = self.children(child, Context::Plan).into_iter();
                    let name = self.name(
                        &parts.next().expect("argument has a name"),
                        "an argument name",
                    );
                    let value = self.literal(parts.next().expect("argument has a value"));
                    args.push(UseArg {
                        span: arg_span,
                        name,
                        value,
                    });
                }
                Rule::ident => prefix = Some(self.name(&child, "a prefix name")),
                Rule::use_body => {
                    let mut open = Span::default();
                    let mut close = None;
                    for item in self.children(child, Context::Use) {
                        match item.as_rule() {
                            Rule::lbrace => open = self.sp(&item),
                            Rule::task_end => close = self.body_end(item, open, "use"),
                            Rule::after => after.push(self.after(item)),
                            _ => {}
                        }
                    }
                    body = Some(Body { open, close });
                }
                _ => {}
            }
        }
        Use {
            span,
            template: template.expect("use names a template"),
            args,
            prefix: prefix.expect("use has a prefix"),
            body,
            after,
        }
    }

    fn string(&mut self, pair: Pair<'a, Rule>) -> Str {
        let span = self.sp(&pair);
        if span.len() > limits::MAX_STRING_BYTES && self.room(span) {
            self.diagnostics.push(
                Diagnostic::new(
                    Code::Limit,
                    format!(
                        "this string is {} bytes; a string may be at most {} bytes",
                        span.len(),
                        limits::MAX_STRING_BYTES
                    ),
                )
                .label(
                    self.file,
                    Span::new(span.start(), span.start() + 1),
                    "string starts here",
                )
                .help("keep long material in files the agent reads, and name the file in the plan"),
            );
        }
        let mut errors = Vec::new();
        let cooked = strings::cook(pair, self.base, &mut errors);
        for error in errors {
            self.syntax_error(error.span, error.message, "invalid escape");
        }
        cooked
    }
}

/// A name at a declaration or an assignee: keywords are not names.
impl Walker<'_> {
    fn name(&mut self, pair: &Pair<'_, Rule>, what: &str) -> Ident {
        let name = self.ident(pair);
        if keywords::is_keyword(&name.name) && self.room(name.span) {
            self.diagnostics.push(
                Diagnostic::new(
                    Code::Syntax,
                    format!("expected {what}, found the keyword `{}`", name.name),
                )
                .label(
                    self.file,
                    name.span,
                    format!("`{}` is a keyword", name.name),
                )
                .help("keywords cannot be used as names; pick another name"),
            );
        }
        name
    }
}

impl Walker<'_> {
    /// A pair's span in the file.
    fn sp(&self, pair: &Pair<'_, Rule>) -> Span {
        let span = pair.as_span();
        Span::new(self.base + span.start(), self.base + span.end())
    }

    /// A node's span without the whitespace and comments pest takes in when a
    /// rule ends with an optional or repeated part (`param x: int` followed by
    /// a comment): it ends where its last meaningful child ends.
    fn node_span(&self, pair: &Pair<'_, Rule>) -> Span {
        let start = pair.as_span().start();
        let end = pair
            .clone()
            .into_inner()
            .filter(|p| p.as_rule() != Rule::COMMENT)
            .map(|p| p.as_span().end())
            .max()
            .unwrap_or_else(|| pair.as_span().end());
        Span::new(self.base + start, self.base + end)
    }

    fn ident(&self, pair: &Pair<'_, Rule>) -> Ident {
        Ident {
            name: SmolStr::new(pair.as_str()),
            span: self.sp(pair),
        }
    }

    /// The span of the keyword a field starts with.
    fn keyword_span(&self, pair: &Pair<'_, Rule>) -> Span {
        pair.clone()
            .into_inner()
            .find(|p| is_keyword(p.as_rule()))
            .map(|p| self.sp(&p))
            .unwrap_or_default()
    }
}
