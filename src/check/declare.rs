//! The declarations every part of a compilation sees: roles, parameters and
//! templates from the root file and from everything it imports.

use super::params::literal_value;
use super::scope::{Namespace, Scope};
use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{SymbolKind, Type, Value};
use crate::modules::Module;
use crate::span::FileId;
use crate::suggest;
use crate::syntax::ast;

/// A declared template and what its parameters are.
pub(super) struct TemplateDecl<'a> {
    pub file: FileId,
    pub ast: &'a ast::Template,
    pub def: usize,
    /// Per parameter: its definition, type (if known) and default value.
    pub params: Vec<TemplateParam<'a>>,
    /// Declared in the root file (its unused parameters are reported).
    pub in_root: bool,
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
    template_names: Scope,
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
            template_names: Scope::new(Namespace::Templates),
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
        decls
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
        if !self
            .template_names
            .declare(c, &template.name.name, template.name.span, def, "template")
        {
            return;
        }
        let mut params: Vec<TemplateParam> = Vec::new();
        for param in &template.params {
            let param_def = c.define(SymbolKind::Param, &param.name, param.span);
            if let Some(first) = params.iter().find(|p| p.ast.name.name == param.name.name) {
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
            in_root,
        });
    }

    /// The template called `name`, by index.
    pub(super) fn template_named(&self, name: &str) -> Option<usize> {
        let def = self.template_names.lookup(name)?;
        self.templates.iter().position(|t| t.def == def)
    }

    /// The closest template name, for "did you mean".
    pub(super) fn suggest_template(&self, name: &str) -> Option<&str> {
        suggest::closest(name, self.template_names.names())
    }
}
