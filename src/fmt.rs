//! `planc fmt`: prints a syntax tree back in one canonical layout, keeping
//! every comment.
//!
//! The layout: four-space indentation, one item per line, one space between
//! tokens, `after a, b` lists, at most one blank line where the source had
//! blank lines, none at the start of a body. A task with no fields has no
//! braces; a task with one short field stays on one line; otherwise each
//! field has its own line. Strings and numbers are printed as written;
//! `"""` blocks are re-indented to their new depth without changing their
//! value. Formatting is idempotent and never changes the compiled plan.

use crate::diagnostic::Diagnostic;
use crate::span::{FileId, Span};
use crate::syntax::{self, ast::*};

/// The widest a one-line task may be.
const MAX_WIDTH: usize = 100;
const INDENT: &str = "    ";

/// Formats a `.plan` source; refuses (with the syntax errors) a file that does
/// not parse cleanly, since there is no tree to print faithfully.
pub fn format(text: &str) -> Result<String, Vec<Diagnostic>> {
    let parsed = syntax::parse(text, FileId(0));
    if !parsed.diagnostics.is_empty() {
        return Err(parsed.diagnostics);
    }
    Ok(format_file(&parsed.file, text))
}

/// Prints a parsed file (without syntax errors) in the canonical layout.
pub fn format_file(file: &File, text: &str) -> String {
    let mut printer = Printer {
        src: text,
        out: String::with_capacity(text.len() + text.len() / 8),
        comments: &file.comments,
        next_comment: 0,
        depth: 0,
        first_in_block: true,
    };
    for item in &file.items {
        match item {
            TopItem::Import(import) => {
                printer.begin(import.span);
                printer.push("import ");
                printer.string(&import.path);
                printer.end(import.span);
            }
            TopItem::Template(template) => printer.template(template),
            TopItem::Plan(plan) => printer.plan(plan),
            TopItem::Role(role) => printer.role(role),
            TopItem::Param(param) => printer.param("param", param),
        }
    }
    printer.rest_of_comments(text.len());
    let mut out = printer.out;
    while out.ends_with("\n\n") {
        out.pop();
    }
    if out == "\n" {
        out.clear();
    }
    out
}

struct Printer<'a> {
    src: &'a str,
    out: String,
    comments: &'a [Span],
    next_comment: usize,
    depth: usize,
    first_in_block: bool,
}

impl Printer<'_> {
    fn push(&mut self, text: &str) {
        self.out.push_str(text);
    }

    fn indent(&mut self) {
        for _ in 0..self.depth {
            self.out.push_str(INDENT);
        }
    }

    fn text(&self, span: Span) -> &str {
        &self.src[span.range()]
    }

    /// Whether the source has a blank line just before `pos`.
    fn blank_before(&self, pos: usize) -> bool {
        let before = &self.src[..pos];
        let trimmed = before.trim_end_matches([' ', '\t', '\r', '\n']);
        before[trimmed.len()..].matches('\n').count() >= 2 && !trimmed.is_empty()
    }

    fn separate(&mut self, pos: usize) {
        if !self.first_in_block && self.blank_before(pos) && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }

    /// Emits the comments before `pos` on lines of their own, then starts a line.
    fn leading_comments(&mut self, pos: usize) {
        while let Some(&comment) = self.comments.get(self.next_comment) {
            if comment.start() >= pos {
                break;
            }
            self.next_comment += 1;
            self.separate(comment.start());
            self.indent();
            let text = self.text(comment).trim_end().to_owned();
            self.push(&text);
            self.out.push('\n');
            self.first_in_block = false;
        }
    }

    /// Starts an item: its leading comments, a kept blank line, the indentation.
    fn begin(&mut self, span: Span) {
        self.leading_comments(span.start());
        self.separate(span.start());
        self.indent();
        self.first_in_block = false;
    }

    /// Ends an item's line, keeping a comment that followed it on its line.
    fn end(&mut self, span: Span) {
        if let Some(&comment) = self.comments.get(self.next_comment) {
            let between = &self.src[span.end().min(comment.start())..comment.start()];
            if comment.start() >= span.end() && between.trim().is_empty() && !between.contains('\n')
            {
                self.next_comment += 1;
                self.push("  ");
                let text = self.text(comment).trim_end().to_owned();
                self.push(&text);
            }
        }
        self.out.push('\n');
    }

    /// Whether any comment lies inside `span`.
    fn has_comment_inside(&self, span: Span) -> bool {
        self.comments[self.next_comment..]
            .iter()
            .take_while(|c| c.start() < span.end())
            .any(|c| c.start() > span.start())
    }

    fn open_block(&mut self) {
        self.push(" {\n");
        self.depth += 1;
        self.first_in_block = true;
    }

    fn close_block(&mut self, body: &Body, span: Span) {
        let close = body.close.map_or(span.end(), |c| c.start());
        self.leading_comments(close);
        self.depth -= 1;
        self.indent();
        self.push("}");
        self.first_in_block = false;
    }

    fn rest_of_comments(&mut self, end: usize) {
        self.leading_comments(end);
    }

    fn plan(&mut self, plan: &Plan) {
        self.begin(plan.span);
        self.push("plan ");
        self.push(&plan.name.name);
        if plan.items.is_empty() && !self.has_comment_inside(plan.span) {
            self.push(" {}");
            self.end(plan.span);
            return;
        }
        self.open_block();
        for item in &plan.items {
            self.plan_item(item);
        }
        self.close_block(&plan.body, plan.span);
        self.end(plan.span);
    }

    fn template(&mut self, template: &Template) {
        self.begin(template.span);
        self.push("template ");
        self.push(&template.name.name);
        self.push("(");
        for (i, param) in template.params.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.param_text(param);
        }
        self.push(")");
        if template.items.is_empty() && !self.has_comment_inside(template.span) {
            self.push(" {}");
            self.end(template.span);
            return;
        }
        self.open_block();
        for item in &template.items {
            self.plan_item(item);
        }
        self.close_block(&template.body, template.span);
        self.end(template.span);
    }

    /// A plan-level `KEYWORD N`.
    fn int_item(&mut self, keyword: &str, f: &crate::syntax::ast::IntField) {
        self.begin(f.span);
        self.push(keyword);
        let value = self.text(f.value.span).to_owned();
        self.push(&value);
        self.end(f.span);
    }

    fn plan_item(&mut self, item: &PlanItem) {
        match item {
            PlanItem::Title(f) => self.str_field("title", f),
            PlanItem::Goal(f) => self.str_field("goal", f),
            PlanItem::Language(f) => self.str_field("language", f),
            PlanItem::MaxIterations(f) => self.int_item("max_iterations ", f),
            PlanItem::TransitionRounds(f) => self.int_item("transition_rounds ", f),
            PlanItem::FallbackRounds(f) => self.int_item("fallback_rounds ", f),
            PlanItem::Retry(f) => self.int_item("retry ", f),
            PlanItem::Param(p) => self.param("param", p),
            PlanItem::Role(r) => self.role(r),
            PlanItem::Step(s) => self.step(s),
            PlanItem::Task(t) => self.task(t),
            PlanItem::Use(u) => self.use_(u),
        }
    }

    fn str_field(&mut self, keyword: &str, field: &StrField) {
        self.begin(field.span);
        self.push(keyword);
        self.push(" ");
        self.string(&field.value);
        self.end(field.span);
    }

    fn param_text(&mut self, param: &Param) {
        self.push(&param.name.name);
        self.push(": ");
        self.push(&param.ty.name);
        if let Some(default) = &param.default {
            self.push(" = ");
            self.literal(default);
        }
    }

    fn param(&mut self, keyword: &str, param: &Param) {
        self.begin(param.span);
        self.push(keyword);
        self.push(" ");
        self.param_text(param);
        self.end(param.span);
    }

    fn literal(&mut self, literal: &Literal) {
        match literal {
            Literal::Str(s) => self.string(s),
            other => {
                let text = self.text(other.span()).to_owned();
                self.push(&text);
            }
        }
    }

    fn role(&mut self, role: &Role) {
        self.begin(role.span);
        self.push("role ");
        self.push(&role.name.name);
        if let Some(description) = &role.description {
            self.push(" ");
            self.string(description);
        }
        self.end(role.span);
    }

    fn step(&mut self, step: &Step) {
        self.begin(step.span);
        self.push("step ");
        self.push(&step.name.name);
        if let Some(title) = &step.title {
            self.push(" ");
            self.string(title);
        }
        if step.items.is_empty() && !self.has_comment_inside(step.span) {
            self.push(" {}");
            self.end(step.span);
            return;
        }
        self.open_block();
        for item in &step.items {
            match item {
                StepItem::After(after) => self.after(after),
                StepItem::Sequential(span) => {
                    self.begin(*span);
                    self.push("sequential");
                    self.end(*span);
                }
                StepItem::Task(task) => self.task(task),
            }
        }
        self.close_block(&step.body, step.span);
        self.end(step.span);
    }

    fn after(&mut self, after: &After) {
        self.begin(after.span);
        self.after_text(after);
        self.end(after.span);
    }

    fn after_text(&mut self, after: &After) {
        self.push("after ");
        for (i, reference) in after.refs.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.push(&reference.name);
        }
    }

    fn task(&mut self, task: &Task) {
        self.begin(task.span);
        self.push("task ");
        self.push(&task.name.name);
        self.push(" ");
        self.string(&task.title);
        let Some(body) = &task.body() else {
            self.end(task.span);
            return;
        };
        if task.fields.is_empty() && !self.has_comment_inside(task.span) {
            self.end(task.span);
            return;
        }
        if let [field] = &task.fields[..] {
            if !self.has_comment_inside(task.span) {
                let line_start = self.out.rfind('\n').map_or(0, |i| i + 1);
                let mut one_line = Printer {
                    src: self.src,
                    out: String::new(),
                    comments: &[],
                    next_comment: 0,
                    depth: 0,
                    first_in_block: true,
                };
                one_line.task_field_text(field);
                let width =
                    self.out[line_start..].chars().count() + one_line.out.chars().count() + 6;
                if !one_line.out.contains('\n') && width <= MAX_WIDTH {
                    self.push(" { ");
                    self.push(&one_line.out);
                    self.push(" }");
                    self.end(task.span);
                    return;
                }
            }
        }
        self.open_block();
        for field in &task.fields {
            self.begin(field.span());
            self.task_field_text(field);
            self.end(field.span());
        }
        self.close_block(body, task.span);
        self.end(task.span);
    }

    fn task_field_text(&mut self, field: &TaskField) {
        match field {
            TaskField::After(after) => self.after_text(after),
            TaskField::Assignee(a) => {
                self.push("assignee ");
                self.push(a.name());
            }
            TaskField::Reasoning(f) => {
                self.push("reasoning ");
                self.string(&f.value);
            }
            TaskField::Description(f) => {
                self.push("description ");
                self.string(&f.value);
            }
            TaskField::Retry(f) => {
                self.push("retry ");
                let value = self.text(f.value.span).to_owned();
                self.push(&value);
            }
            TaskField::Optional(_) => self.push("optional"),
            TaskField::Priority { level, .. } => {
                self.push("priority ");
                self.push(&level.name);
            }
        }
    }

    fn use_(&mut self, use_: &Use) {
        self.begin(use_.span);
        self.push("use ");
        self.push(&use_.template.name);
        self.push("(");
        for (i, arg) in use_.args.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.push(&arg.name.name);
            self.push(" = ");
            self.literal(&arg.value);
        }
        self.push(") as ");
        self.push(&use_.prefix.name);
        if let Some(body) = &use_.body {
            if use_.after.is_empty() && !self.has_comment_inside(use_.span) {
                self.end(use_.span);
                return;
            }
            self.open_block();
            for after in &use_.after {
                self.after(after);
            }
            self.close_block(body, use_.span);
        }
        self.end(use_.span);
    }

    /// A string as written; a `"""` block re-indented one level deeper than
    /// its line, with the same value.
    fn string(&mut self, string: &Str) {
        let raw = self.text(string.span).to_owned();
        if !string.triple() {
            self.push(&raw);
            return;
        }
        let content = &raw[3..raw.len() - 3];
        let content = content.replace("\r\n", "\n");
        let mut lines = content.split('\n');
        let first = lines.next().unwrap_or("");
        let rest: Vec<&str> = lines.collect();
        self.push("\"\"\"");
        if !first.trim().is_empty() || rest.is_empty() {
            self.push(first);
        }
        if rest.is_empty() {
            self.push("\"\"\"");
            return;
        }
        let last_dropped = rest.last().is_some_and(|l| l.trim().is_empty());
        let counted = if last_dropped {
            &rest[..rest.len() - 1]
        } else {
            &rest[..]
        };
        let leading = |line: &str| line.len() - line.trim_start_matches([' ', '\t']).len();
        let indent = counted
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| leading(l))
            .min()
            .unwrap_or(0);
        let line_indent = INDENT.repeat(self.depth);
        let content_indent = INDENT.repeat(self.depth + 1);
        for line in counted {
            let value = &line[leading(line).min(indent)..];
            self.out.push('\n');
            if !value.is_empty() {
                self.push(&content_indent);
                self.push(value);
            }
        }
        if last_dropped {
            self.out.push('\n');
            self.push(&line_indent);
        }
        self.push("\"\"\"");
    }
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn lays_out_a_messy_plan_canonically() {
        let messy = "plan   p{goal \"g\"   # the goal\n\n\n  task a \"A\"{}\ntask b \"B\" {after a  assignee r}\n role r\n   task c \"C\" { after a,b\n retry 2 }}";
        let expected = "plan p {\n    goal \"g\"  # the goal\n\n    task a \"A\"\n    task b \"B\" {\n        after a\n        assignee r\n    }\n    role r\n    task c \"C\" {\n        after a, b\n        retry 2\n    }\n}\n";
        assert_eq!(format(messy).ok().as_deref(), Some(expected));
        assert_eq!(format(expected).ok().as_deref(), Some(expected));
    }

    #[test]
    fn reindents_triple_strings_without_changing_them() {
        let source = "plan p {\n goal \"g\"\n task a \"A\" {\n  description \"\"\"\n        one\n          two\n\n        three\n   \"\"\"\n }\n}\n";
        let formatted = format(source).expect("formats");
        assert!(formatted.contains("        description \"\"\"\n            one\n              two\n\n            three\n        \"\"\"\n"), "{formatted}");
        let value = |text: &str| {
            let compiled = crate::compile("p.plan", text, &Default::default());
            compiled
                .checked
                .plan
                .map(|p| p.tasks[0].description().map(str::to_owned))
        };
        assert_eq!(value(source), value(&formatted));
    }

    #[test]
    fn refuses_files_with_syntax_errors() {
        assert!(format("plan p { task }").is_err());
    }
}
