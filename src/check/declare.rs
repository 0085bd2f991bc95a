//! The declarations every part of a compilation sees: roles, parameters and
//! templates from the root file and from everything it imports.

use super::params::literal_value;
use super::scope::{Namespace, Scope};
use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{SymbolKind, Type, Value};
use crate::modules::Module;
use crate::span::FileId;
use crate::syntax::ast::{self, SmolStr};
use rustc_hash::FxHashMap;

/// A declared template and what its parameters are.
pub(super) struct TemplateDecl<'a> {
    pub file: FileId,
    pub ast: &'a ast::Template,
    pub def: usize,
    /// Per parameter: its definition, type (if known) and default value.
    pub params: Vec<TemplateParam<'a>>,
    /// Parameter name → index in `params`.
    param_index: FxHashMap<SmolStr, usize>,
    /// Declared in the root file (its unused parameters are reported).
    pub in_root: bool,
    /// How many tasks, steps and instances one `use` of it adds, the
    /// instance itself and those of the templates it uses included
    /// (saturating; a `use` that closes a template cycle counts nothing).
    pub expansion: u64,
}

/// A parameter of a template.
pub(super) struct TemplateParam<'a> {
    pub ast: &'a ast::Param,
    pub def: usize,
    pub ty: Option<Type>,
    pub default: Option<Value>,
}

/// Roles, parameters and templates, by name.
pub(super) struct Declarations<'a> {
    pub roles: Scope,
    /// Roles declared inside the root plan, with their definitions (the only
    /// ones reported when unused: a library's roles are there to be used).
    pub plan_roles: Vec<(FileId, &'a ast::Role, usize)>,
    /// Every declared role, for the plan document.
    pub all_roles: Vec<(FileId, &'a ast::Role)>,
    /// Parameters: the top-level ones of every file, then the root plan's.
    pub params: Vec<(FileId, &'a ast::Param, bool)>,
    pub templates: Vec<TemplateDecl<'a>>,
    /// Template name → index in `templates`.
    template_names: Scope<usize>,
}

impl<'a> Declarations<'a> {
    /// Collects the declarations of `modules` (the root first) and of the
    /// root's plan.
    pub(super) fn collect(
        c: &mut Checker,
        modules: &'a [Module],
        plan: Option<&'a ast::Plan>,
    ) -> Declarations<'a> {
        let mut decls = Declarations {
            roles: Scope::new(Namespace::Roles),
            plan_roles: Vec::new(),
            all_roles: Vec::new(),
            params: Vec::new(),
            templates: Vec::new(),
            template_names: Scope::with_values(Namespace::Templates),
        };
        if let Some(plan) = plan {
            c.file = modules[0].file;
            for item in &plan.items {
                match item {
                    ast::PlanItem::Role(role) => {
                        if let Some(def) = decls.role(c, role) {
                            decls.plan_roles.push((c.file, role, def));
                        }
                    }
                    ast::PlanItem::Param(param) => decls.params.push((c.file, param, true)),
                    _ => {}
                }
            }
        }
        for (index, module) in modules.iter().enumerate() {
            c.file = module.file;
            for item in &module.ast.items {
                match item {
                    ast::TopItem::Role(role) => {
                        decls.role(c, role);
                    }
                    ast::TopItem::Param(param) => decls.params.push((c.file, param, false)),
                    ast::TopItem::Template(template) => decls.template(c, template, index == 0),
                    ast::TopItem::Import(_) | ast::TopItem::Plan(_) => {}
                }
            }
        }
        decls.count_expansions();
        decls
    }

    /// Sets each template's [`expansion`](TemplateDecl::expansion), before
    /// anything is expanded: a depth-first walk over the `use`s (with a stack
    /// of its own, since templates may nest as deep as a file is long).
    fn count_expansions(&mut self) {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let n = self.templates.len();
        let mut state = vec![NEW; n];
        let mut size = vec![0u64; n];
        // Each open template and the index of its next item.
        let mut stack: Vec<(usize, usize)> = Vec::new();
        let open = |t: usize, state: &mut [u8], size: &mut [u64], decls: &Declarations<'_>| {
            state[t] = OPEN;
            size[t] = 1 + own_items(&decls.templates[t].ast.items);
        };
        for root in 0..n {
            if state[root] != NEW {
                continue;
            }
            open(root, &mut state, &mut size, self);
            stack.push((root, 0));
            while let Some(&mut (t, ref mut next)) = stack.last_mut() {
                let items = &self.templates[t].ast.items;
                let used = items
                    .unmoved()
                    .skip(*next)
                    .enumerate()
                    .find_map(|(offset, item)| match item {
                        ast::PlanItem::Use(u) => self
                            .template_named(&u.template.name)
                            .map(|child| (offset, child)),
                        _ => None,
                    });
                let Some((offset, child)) = used else {
                    stack.pop();
                    state[t] = DONE;
                    if let Some(&(parent, _)) = stack.last() {
                        size[parent] = size[parent].saturating_add(size[t]);
                    }
                    continue;
                };
                *next += offset + 1;
                match state[child] {
                    NEW => {
                        open(child, &mut state, &mut size, self);
                        stack.push((child, 0));
                    }
                    DONE => size[t] = size[t].saturating_add(size[child]),
                    // A template cycle: reported when expanded.
                    _ => {}
                }
            }
        }
        for (template, size) in self.templates.iter_mut().zip(size) {
            template.expansion = size;
        }
    }

    /// Declares a role; `None` when the name was taken (that is reported).
    fn role(&mut self, c: &mut Checker, role: &'a ast::Role) -> Option<usize> {
        let def = c.define(SymbolKind::Role, &role.name, role.span);
        if !self
            .roles
            .declare(c, &role.name.name, role.name.span, def, "role")
        {
            return None;
        }
        self.all_roles.push((c.file, role));
        Some(def)
    }

    fn template(&mut self, c: &mut Checker, template: &'a ast::Template, in_root: bool) {
        let def = c.define(SymbolKind::Template, &template.name, template.span);
        let index = self.templates.len();
        if !self.template_names.declare_value(
            c,
            &template.name.name,
            template.name.span,
            def,
            "template",
            index,
        ) {
            return;
        }
        let mut params: Vec<TemplateParam<'_>> = Vec::new();
        let mut param_index: FxHashMap<SmolStr, usize> = FxHashMap::default();
        for param in &template.params {
            let param_def = c.define(SymbolKind::Param, &param.name, param.span);
            if let Some(&first) = param_index.get(&param.name.name) {
                let first = &params[first];
                c.diagnostics.push(
                    Diagnostic::new(
                        Code::Duplicate,
                        format!("the parameter `{}` is declared twice", param.name.name),
                    )
                    .label(c.file, param.name.span, "declared again here")
                    .label(c.file, first.ast.name.span, "first declared here")
                    .help("rename one of the parameters, or remove the second"),
                );
                continue;
            }
            let ty = super::params::resolve_type(c, param);
            let default = match (ty, &param.default) {
                (Some(ty), Some(default)) => match literal_value(ty, default) {
                    Ok(value) => Some(value),
                    Err(found) => {
                        super::params::report_default_type(c, param, ty, found);
                        None
                    }
                },
                _ => None,
            };
            param_index.insert(param.name.name.clone(), params.len());
            params.push(TemplateParam {
                ast: param,
                def: param_def,
                ty,
                default,
            });
        }
        // Roles inside a template are declared once, for every plan that uses it.
        for item in &template.items {
            if let ast::PlanItem::Role(role) = item {
                self.role(c, role);
            }
        }
        self.templates.push(TemplateDecl {
            file: c.file,
            ast: template,
            def,
            params,
            param_index,
            in_root,
            expansion: 0,
        });
    }

    /// The template called `name`, by index.
    pub(super) fn template_named(&self, name: &str) -> Option<usize> {
        self.template_names.find(name).map(|(_, index)| index)
    }

    /// The closest template name, for "did you mean".
    pub(super) fn suggest_template(&self, c: &mut Checker, name: &str) -> Option<&str> {
        c.suggestions.closest(name, self.template_names.names())
    }
}

/// The tasks and steps written in a template body (not those of its `use`s).
fn own_items(items: &ast::Items) -> u64 {
    let mut count = 0u64;
    for item in items.unmoved() {
        match item {
            ast::PlanItem::Task(_) => count += 1,
            ast::PlanItem::Step(step) => {
                count += 1;
                count += step
                    .items
                    .iter()
                    .filter(|i| matches!(i, ast::StepItem::Task(_)))
                    .count() as u64;
            }
            _ => {}
        }
    }
    count
}

impl TemplateDecl<'_> {
    /// The parameter called `name`, by index.
    pub(super) fn param_named(&self, name: &str) -> Option<usize> {
        self.param_index.get(name).copied()
    }

    /// The closest parameter name, for "did you mean".
    pub(super) fn suggest_param<'s>(&'s self, c: &mut Checker, name: &str) -> Option<&'s str> {
        let names = self.params.iter().map(|p| p.ast.name.name.as_str());
        c.suggestions.closest(name, names)
    }
}
