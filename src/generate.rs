//! Generates large, realistic plans for benchmarks and stress tests.
//!
//! Deterministic: the same arguments give the same text. Tasks come in steps
//! of 20; each names one or two recent tasks in `after`, some steps are
//! `sequential`, some wait for the step before, and every task has an
//! assignee and interpolated text, so every stage of the checker does work.

use std::fmt::Write;

/// The source of a plan with `tasks` tasks; with `cycle`, the first task
/// also waits for the last, closing a cycle through the whole plan.
pub fn plan_source(tasks: usize, cycle: bool) -> String {
    let mut out = String::with_capacity(tasks * 80);
    let _ = writeln!(out, "plan generated {{");
    let _ = writeln!(out, "    title \"A generated plan of {tasks} tasks\"");
    let _ = writeln!(out, "    goal \"Finish {{count}} tasks for {{team}}\"");
    let _ = writeln!(out, "    param count: int = {tasks}");
    let _ = writeln!(out, "    param team: string = \"the benchmark\"");
    for role in 0..8 {
        let _ = writeln!(out, "    role r{role} \"Role {role}\"");
    }
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % bound.max(1) as u64) as usize
    };
    let steps = tasks.div_ceil(20);
    let mut task = 0;
    for step in 0..steps {
        let _ = writeln!(out, "    step s{step} \"Stage {step} of {{count}}\" {{");
        if step % 3 == 1 {
            let _ = writeln!(out, "        sequential");
        }
        if step > 0 && step % 5 == 0 {
            let _ = writeln!(out, "        after s{}", step - 1);
        }
        for _ in 0..20.min(tasks - task) {
            let _ = write!(
                out,
                "        task t{task} \"Do part {task} for {{team}}\" {{"
            );
            if cycle && task == 0 {
                let _ = write!(out, " after t{}", tasks - 1);
            } else if task > 0 {
                let a = task - 1 - next(task.min(50));
                let _ = write!(out, " after t{a}");
                if task > 2 && next(3) == 0 {
                    let b = task - 1 - next(task.min(50));
                    if b != a {
                        let _ = write!(out, ", t{b}");
                    }
                }
            }
            let _ = write!(out, " assignee r{}", next(8));
            if next(4) == 0 {
                let _ = write!(out, " reasoning \"Part {task} unblocks later parts\"");
            }
            if next(10) == 0 {
                let _ = write!(out, " retry 2");
            }
            let _ = writeln!(out, " }}");
            task += 1;
        }
        let _ = writeln!(out, "    }}");
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_plans_check_and_cycles_are_found() {
        let text = super::plan_source(300, false);
        let compiled = crate::compile("gen.plan", &text, &Default::default());
        assert!(!compiled.has_errors(), "{:#?}", compiled.diagnostics);
        assert_eq!(compiled.checked.plan.map(|p| p.tasks.len()), Some(300));

        let text = super::plan_source(300, true);
        let compiled = crate::compile("gen.plan", &text, &Default::default());
        assert!(compiled
            .diagnostics
            .iter()
            .any(|d| d.code == crate::diagnostic::Code::Cycle));
    }
}
