//! Template instances: binding `use` arguments to a template's parameters,
//! and interpolating the template's strings with them.

use super::declare::{Declarations, TemplateDecl, TemplateParam};
use super::params::{article, literal_value, placeholder, type_help, unknown_param};
use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Type, Value};
use crate::syntax::ast::{self, Literal, StrPart};

/// The parameter values of one template instance.
pub(super) struct TemplateEnv {
    pub template: usize,
    /// Per template parameter; `None` when checking a template on its own.
    pub values: Vec<Option<Value>>,
}

impl TemplateEnv {
    /// An instance with no values: a template checked on its own.
    pub(super) fn unbound(decls: &Declarations<'_>, template: usize) -> TemplateEnv {
        TemplateEnv {
            template,
            values: vec![None; decls.templates[template].params.len()],
        }
    }

    /// Binds the arguments of `use_` (in the checker's current file).
    /// `outer` interpolates string arguments in the scope of the `use`.
    pub(super) fn bind(
        c: &mut Checker,
        decls: &Declarations<'_>,
        template: usize,
        use_: &ast::Use,
        outer: &mut dyn FnMut(&mut Checker, &ast::Str) -> String,
    ) -> TemplateEnv {
        let decl = &decls.templates[template];
        let mut values: Vec<Option<Value>> = vec![None; decl.params.len()];
        let mut given: Vec<Option<&ast::UseArg>> = vec![None; decl.params.len()];
        let mut misspelt = vec![false; decl.params.len()];
        for arg in &use_.args {
            let Some(i) = decl.param_named(&arg.name.name) else {
                // The parameter meant is given, misspelt: no "missing" echo for it.
                if let Some(meant) = unknown_argument(c, decl, arg) {
                    misspelt[meant] = true;
                }
                continue;
            };
            if let Some(first) = given[i] {
                c.diagnostics.push(
                    Diagnostic::new(
                        Code::TemplateArg,
                        format!("argument `{}` is given twice", arg.name.name),
                    )
                    .label(c.file, arg.name.span, "given again here")
                    .label(c.file, first.name.span, "first given here"),
                );
                continue;
            }
            given[i] = Some(arg);
            values[i] = argument_value(c, decl, i, arg, outer);
        }
        for (i, param) in decl.params.iter().enumerate() {
            if given[i].is_some() || misspelt[i] {
                continue;
            }
            match &param.default {
                Some(default) => values[i] = Some(default.clone()),
                None if param.ast.default.is_none() => missing_argument(c, decl, param, use_),
                None => {}
            }
        }
        TemplateEnv { template, values }
    }

    /// A template string with its parameters' values (labels in the
    /// checker's current file, the template's).
    pub(super) fn interpolate(
        &self,
        c: &mut Checker,
        decls: &Declarations<'_>,
        used: &mut [Vec<bool>],
        string: &ast::Str,
    ) -> String {
        let decl = &decls.templates[self.template];
        let mut out = String::with_capacity(string.len_hint());
        for part in string.parts() {
            match part {
                StrPart::Text(text) => out.push_str(text),
                StrPart::Param(ident) => match decl.param_named(ident.name) {
                    Some(i) => {
                        used[self.template][i] = true;
                        c.reference(decl.params[i].def, ident.span);
                        match &self.values[i] {
                            Some(value) => value.write_text(&mut out),
                            None => placeholder(&mut out, ident.name),
                        }
                    }
                    None if !c.first_unknown(c.file, ident.span) => {
                        placeholder(&mut out, ident.name);
                    }
                    None => {
                        let suggestion = decl.suggest_param(c, ident.name);
                        if let Some(i) = suggestion.and_then(|best| decl.param_named(best)) {
                            used[self.template][i] = true;
                        }
                        unknown_param(c, ident, suggestion);
                        placeholder(&mut out, ident.name);
                    }
                },
            }
        }
        out
    }
}

/// Reports an argument the template has no parameter for; returns the
/// parameter it is likely a misspelling of.
fn unknown_argument(c: &mut Checker, decl: &TemplateDecl<'_>, arg: &ast::UseArg) -> Option<usize> {
    let suggestion = decl.suggest_param(c, &arg.name.name);
    let meant = suggestion.and_then(|best| decl.param_named(best));
    let mut diagnostic = Diagnostic::new(
        Code::TemplateArg,
        format!(
            "template `{}` has no parameter `{}`",
            decl.ast.name.name, arg.name.name
        ),
    );
    diagnostic = match suggestion {
        Some(best) => diagnostic
            .label(c.file, arg.name.span, format!("did you mean `{best}`?"))
            .fix(c.file, arg.name.span, best),
        None => diagnostic.label(c.file, arg.name.span, "unknown argument"),
    };
    c.diagnostics
        .push(diagnostic.label(decl.file, decl.ast.name.span, "template declared here"));
    meant
}

/// The value of `arg`, given for parameter `i` (`None`, reported, when it
/// is not of the parameter's type; `None` too when the type is unknown).
fn argument_value(
    c: &mut Checker,
    decl: &TemplateDecl<'_>,
    i: usize,
    arg: &ast::UseArg,
    outer: &mut dyn FnMut(&mut Checker, &ast::Str) -> String,
) -> Option<Value> {
    let ty = decl.params[i].ty?;
    let value = match (&arg.value, ty) {
        // A string argument is interpolated where the `use` stands,
        // so plan parameters flow into templates.
        (Literal::Str(s), Type::String) => Ok(Value::Str(outer(c, s))),
        (literal, ty) => literal_value(ty, literal),
    };
    match value {
        Ok(value) => Some(value),
        Err(found) => {
            c.diagnostics.push(
                Diagnostic::new(
                    Code::ParamType,
                    format!(
                        "argument `{}` of `{}` is {found}, but its type is `{}`",
                        arg.name.name,
                        decl.ast.name.name,
                        ty.as_str()
                    ),
                )
                .label(c.file, arg.value.span(), format!("not {}", article(ty)))
                .label(decl.file, decl.params[i].ast.ty.span, "type declared here")
                .help(type_help(ty)),
            );
            None
        }
    }
}

/// Reports a parameter without a default that `use_` gives no argument for.
fn missing_argument(
    c: &mut Checker,
    decl: &TemplateDecl<'_>,
    param: &TemplateParam<'_>,
    use_: &ast::Use,
) {
    c.diagnostics.push(
        Diagnostic::new(
            Code::TemplateArg,
            format!(
                "missing argument `{}` for template `{}`",
                param.ast.name.name, decl.ast.name.name
            ),
        )
        .label(
            c.file,
            use_.template.span,
            format!("`{}` has no default", param.ast.name.name),
        )
        .label(decl.file, param.ast.name.span, "parameter declared here")
        .help(format!(
            "add `{} = …` to the arguments",
            param.ast.name.name
        )),
    );
}
