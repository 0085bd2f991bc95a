//! The pest parser generated from `grammar/plan.pest`.

use pest_derive::Parser;

/// The parser for `.plan` files; its rules are `grammar/plan.pest`'s.
#[derive(Parser)]
#[grammar = "../grammar/plan.pest"]
pub struct PlanParser;
