//! Parameters: types, defaults, `--set` values, and `{param}` interpolation.

use rustc_hash::FxHashMap as HashMap;

use super::scope::{Namespace, Scope};
use super::{Checker, Options};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{ParamValue, SymbolKind, Type, Value};
use crate::span::FileId;
use crate::suggest;
use crate::syntax::ast::{self, Literal, SmolStr, StrPart};

/// Splits a `NAME=VALUE` assignment, as given to `--set`.
pub fn parse_assignment(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!("expected NAME=VALUE, found `{text}`")),
    }
}

/// The type a parameter declares; an unknown type name is reported.
pub(super) fn resolve_type(c: &mut Checker, param: &ast::Param) -> Option<Type> {
    let ty = Type::from_name(&param.ty.name);
    if ty.is_none() {
        let mut diagnostic =
            Diagnostic::new(Code::ParamType, format!("unknown type `{}`", param.ty.name));
        diagnostic = match suggest::closest(&param.ty.name, Type::NAMES) {
            Some(best) => diagnostic
                .label(c.file, param.ty.span, format!("did you mean `{best}`?"))
                .fix(c.file, param.ty.span, best),
            None => diagnostic.label(c.file, param.ty.span, "unknown type"),
        };
        c.diagnostics
            .push(diagnostic.help("a parameter's type is `string`, `int`, `float` or `bool`"));
    }
    ty
}

/// Reports a default whose literal is not of the parameter's type.
pub(super) fn report_default_type(c: &mut Checker, param: &ast::Param, ty: Type, found: &str) {
    let Some(default) = &param.default else {
        return;
    };
    c.diagnostics.push(
        Diagnostic::new(
            Code::ParamType,
            format!(
                "the default of `{}` is {found}, but its type is `{}`",
                param.name.name,
                ty.as_str()
            ),
        )
        .label(c.file, default.span(), format!("not {}", article(ty)))
        .label(c.file, param.ty.span, "type declared here")
        .help(type_help(ty)),
    );
}

struct Decl<'a> {
    ast: &'a ast::Param,
    file: FileId,
    /// Declared in the root plan (so it is reported when unused).
    in_plan: bool,
    def: usize,
    ty: Option<Type>,
    value: Option<Value>,
    /// A problem was already reported, so "missing" would be noise.
    reported: bool,
    used: bool,
}

/// The parameters of a plan and the values they have in this build.
pub(super) struct Params<'a> {
    decls: Vec<Decl<'a>>,
    scope: Scope,
    /// Name → position in `decls`.
    by_name: HashMap<SmolStr, usize>,
}

impl<'a> Params<'a> {
    /// Declares the parameters, checks their types and defaults, and applies
    /// the `--set` values.
    pub(super) fn declare(
        c: &mut Checker,
        params: &[(FileId, &'a ast::Param, bool)],
        options: &Options,
    ) -> Params<'a> {
        let mut scope = Scope::new(Namespace::Params);
        let mut decls = Vec::new();
        let mut by_name = HashMap::default();
        for &(file, param, in_plan) in params {
            c.file = file;
            let def = c.define(SymbolKind::Param, &param.name, param.span);
            if !scope.declare(c, &param.name.name, param.name.span, def, "parameter") {
                continue;
            }
            let ty = resolve_type(c, param);
            let mut reported = ty.is_none();
            let mut value = None;
            if let (Some(ty), Some(default)) = (ty, &param.default) {
                match literal_value(ty, default) {
                    Ok(v) => value = Some(v),
                    Err(found) => {
                        reported = true;
                        report_default_type(c, param, ty, found);
                    }
                }
            }
            by_name.insert(param.name.name.clone(), decls.len());
            decls.push(Decl {
                ast: param,
                file,
                in_plan,
                def,
                ty,
                value,
                reported,
                used: false,
            });
        }
        let mut params = Params {
            decls,
            scope,
            by_name,
        };
        params.apply_overrides(c, options);
        params
    }

    // Inlined into `interpolate` (once per interpolation, 100,000 times at
    // 100,000 tasks), which LLVM does not always choose on its own.
    #[inline]
    fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    fn apply_overrides(&mut self, c: &mut Checker, options: &Options) {
        for (name, text) in &options.params {
            let Some(i) = self.position(name) else {
                let suggestion = c.suggestions.closest(name, self.scope.names());
                let help = match suggestion {
                    Some(best) => format!("did you mean `{best}`?"),
                    None if self.decls.is_empty() => "this plan declares no parameters".to_owned(),
                    None => format!(
                        "the parameters are {}",
                        self.decls
                            .iter()
                            .map(|d| format!("`{}`", d.ast.name.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                c.diagnostics.push(
                    Diagnostic::new(
                        Code::UnknownParam,
                        format!("`--set {name}=…` names no parameter of this plan"),
                    )
                    .help(help),
                );
                continue;
            };
            let decl = &mut self.decls[i];
            let Some(ty) = decl.ty else { continue };
            match ty.parse(text) {
                Some(value) => {
                    decl.value = Some(value);
                    decl.reported = false;
                }
                None => {
                    decl.reported = true;
                    c.diagnostics.push(
                        Diagnostic::new(
                            Code::ParamType,
                            format!("`--set {name}={text}`: `{text}` is not {}", article(ty)),
                        )
                        .label(
                            decl.file,
                            decl.ast.ty.span,
                            format!("`{name}` is declared `{}` here", ty.as_str()),
                        )
                        .help(type_help(ty)),
                    );
                }
            }
        }
    }

    /// The text of a string with every `{param}` replaced by its value; a
    /// parameter without a value stays `{param}`. Labels go to `c.file`.
    pub(super) fn interpolate(&mut self, c: &mut Checker, string: &ast::Str) -> String {
        // One read of the string: its block's length is room enough for
        // its text, and 16 bytes more for each parameter's value, mostly.
        let mut out = String::with_capacity(string.len_hint());
        for part in string.parts() {
            match part {
                StrPart::Text(text) => out.push_str(text),
                StrPart::Param(param) => match self.position(param.name) {
                    Some(i) => {
                        let decl = &mut self.decls[i];
                        decl.used = true;
                        c.reference(decl.def, param.span);
                        match &decl.value {
                            Some(value) => value.write_text(&mut out),
                            None => placeholder(&mut out, param.name),
                        }
                    }
                    None => {
                        let suggestion = c.suggestions.closest(param.name, self.scope.names());
                        // The parameter meant is in use: no "unused" echo for it.
                        if let Some(i) = suggestion.and_then(|best| self.position(best)) {
                            self.decls[i].used = true;
                        }
                        unknown_param(c, param, suggestion);
                        placeholder(&mut out, param.name);
                    }
                },
            }
        }
        out
    }

    /// Reports unused and missing parameters; returns the values.
    pub(super) fn finish(self, c: &mut Checker, options: &Options) -> Vec<ParamValue> {
        for decl in &self.decls {
            c.file = decl.file;
            if let Some(Literal::Str(default)) = &decl.ast.default {
                if let Some(ident) = default.params().next() {
                    c.diagnostics.push(
                        Diagnostic::new(
                            Code::ParamType,
                            format!(
                                "the default of `{}` cannot contain a parameter",
                                decl.ast.name.name
                            ),
                        )
                        .label(
                            c.file,
                            ident.span,
                            "parameters are not expanded in defaults",
                        )
                        .help("write `{{` and `}}` for literal braces"),
                    );
                }
            }
            if !decl.used && decl.in_plan && c.withheld_for(&decl.ast.name.name) {
                c.diagnostics.push(
                    Diagnostic::new(
                        Code::Unused,
                        format!("parameter `{}` is never used", decl.ast.name.name),
                    )
                    .label(c.file, decl.ast.name.span, "unused parameter")
                    .help(format!(
                        "use it in a string as `{{{}}}`, or remove it",
                        decl.ast.name.name
                    )),
                );
            }
            if options.require_params && decl.value.is_none() && !decl.reported {
                c.diagnostics.push(
                    Diagnostic::new(
                        Code::MissingParam,
                        format!("parameter `{}` has no value", decl.ast.name.name),
                    )
                    .label(c.file, decl.ast.name.span, "no default, and not given")
                    .help(format!(
                        "give it with `--set {}=VALUE`, or add a default: `param {}: {} = …`",
                        decl.ast.name.name,
                        decl.ast.name.name,
                        decl.ty.map_or("string", Type::as_str)
                    )),
                );
            }
        }
        self.decls
            .into_iter()
            .map(|d| ParamValue {
                name: d.ast.name.name.to_string(),
                value: d.value,
            })
            .collect()
    }
}

/// Writes `{name}` back, for a parameter without a value.
pub(super) fn placeholder(out: &mut String, name: &str) {
    out.push('{');
    out.push_str(name);
    out.push('}');
}

/// Reports a `{name}` that names no parameter in scope.
pub(super) fn unknown_param(c: &mut Checker, ident: ast::Interp<'_>, suggestion: Option<&str>) {
    // Unparsed text may declare it.
    if !c.withheld_for(ident.name) {
        return;
    }
    let mut diagnostic = Diagnostic::new(
        Code::UnknownParam,
        format!("no parameter named `{}`", ident.name),
    );
    diagnostic = match suggestion {
        Some(best) => diagnostic
            .label(c.file, ident.span, format!("did you mean `{best}`?"))
            .fix(c.file, ident.span, best),
        None => diagnostic.label(c.file, ident.span, "unknown parameter"),
    };
    c.diagnostics.push(diagnostic.help(format!(
        "declare it with `param {}: string`, or write `{{{{{}}}}}` for literal braces",
        ident.name, ident.name
    )));
}

/// The value of a literal as type `ty`, or what the literal is instead.
pub(crate) fn literal_value(ty: Type, literal: &Literal) -> Result<Value, &'static str> {
    match (ty, literal) {
        (Type::String, Literal::Str(s)) => Ok(Value::Str(s.template_text())),
        (Type::Int, Literal::Int(i)) => i.value.map(Value::Int).ok_or("out of range"),
        (Type::Float, Literal::Float { value, .. }) => Ok(Value::Float(*value)),
        (Type::Float, Literal::Int(i)) => i
            .value
            .map(|v| Value::Float(v as f64))
            .ok_or("out of range"),
        (Type::Bool, Literal::Bool { value, .. }) => Ok(Value::Bool(*value)),
        (_, Literal::Str(_)) => Err("a string"),
        (_, Literal::Int(_)) => Err("an int"),
        (_, Literal::Float { .. }) => Err("a float"),
        (_, Literal::Bool { .. }) => Err("a bool"),
    }
}

/// "a `string`", "an `int`".
pub(super) fn article(ty: Type) -> String {
    match ty {
        Type::Int => "an `int`".to_owned(),
        other => format!("a `{}`", other.as_str()),
    }
}

pub(super) fn type_help(ty: Type) -> &'static str {
    match ty {
        Type::String => "a `string` is text in quotes: \"…\"",
        Type::Int => "an `int` is a whole number, like 500 or -3",
        Type::Float => "a `float` is a number, like 0.5 or 3",
        Type::Bool => "a `bool` is `true` or `false`",
    }
}
