//! Generates large, realistic plans for benchmarks and stress tests.
//!
//! Deterministic: the same arguments give the same text. Tasks come in steps
//! of 20: every third step is `sequential`, every fifth waits for the step
//! before; in the others a task comes after one (from the 11th, sometimes
//! two) of the 3rd to 5th tasks before it in its step, or, among a step's
//! first five, after one task of the step before (after the first task, in
//! the first step). Every task has an assignee and interpolated text, so
//! every stage of the checker does work. Like a plan people write, it checks
//! clean: no dependency is implied by another, so it draws no warning (two
//! of the 3rd to 5th tasks before cannot reach one another, as every edge
//! between a step's 6th and later tasks skips at least two tasks).

#[doc(hidden)]
pub mod edits;
pub mod hostile;

use std::fmt::Write;

/// How many cases each property test and fuzz target runs: `default` in a
/// normal run (CI), or the number in `PLANC_FUZZ_CASES` for a long run
/// (`PLANC_FUZZ_CASES=100000 cargo test --workspace`).
pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("PLANC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A small deterministic generator: xorshift64 (13, 7, 17) from `seed`
/// (not 0); each call gives the next number below `bound`, reduced modulo
/// it. `scripts/bench-peers` mirrors it, so its plans are these plans.
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % bound.max(1) as u64) as usize
    }
}

/// The name of a task of a [`plan_source`] text that others wait for: the
/// first one an `after` names in the second half of the text (the
/// language server's benchmark renames it). `None` if no `after` there
/// names a task.
pub fn waited_for_task(text: &str) -> Option<&str> {
    let middle = text.len() / 2;
    let at = middle + text.get(middle..)?.find(" after t")? + " after ".len();
    let len = text[at..]
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(text.len() - at);
    Some(&text[at..at + len])
}

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
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let steps = tasks.div_ceil(20);
    let mut task = 0;
    for step in 0..steps {
        let _ = writeln!(out, "    step s{step} \"Stage {step} of {{count}}\" {{");
        let sequential = step % 3 == 1;
        if sequential {
            let _ = writeln!(out, "        sequential");
        }
        let waits = step > 0 && step % 5 == 0;
        if waits {
            let _ = writeln!(out, "        after s{}", step - 1);
        }
        let first = task;
        for k in 0..20.min(tasks - task) {
            let _ = write!(
                out,
                "        task t{task} \"Do part {task} for {{team}}\" {{"
            );
            if cycle && task == 0 {
                let _ = write!(out, " after t{}", tasks - 1);
            } else if sequential && k > 0 {
                // The step already runs its tasks in order.
            } else if k >= 5 && !sequential {
                // One of the 3rd to 5th tasks before, in this step; from the
                // 11th task on, sometimes two.
                let a = task - 3 - next(3);
                let _ = write!(out, " after t{a}");
                if k >= 10 && next(3) == 0 {
                    let b = task - 3 - next(3);
                    if b != a {
                        let _ = write!(out, ", t{b}");
                    }
                }
            } else if step == 0 && k > 0 {
                // Everything descends from the first task, so the cyclic
                // variant's cycle runs through the whole plan.
                let _ = write!(out, " after t0");
            } else if step > 0 && !waits {
                // One task of the step before.
                let _ = write!(out, " after t{}", first - 1 - next(20));
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

/// The library a [`plan_source_with_reuse`] plan imports, to be written
/// as `lib.plan` beside it: the role its template's tasks are assigned.
pub const REUSE_LIBRARY: &str = "role reviewer \"Reviews changes\"\n";

/// The template a [`plan_source_with_reuse`] plan declares.
const REVIEW_TEMPLATE: &str = "template review(change: string, approvals: int = 2) {
    step review \"Review {change}\" {
        sequential
        task open_pr \"Open a pull request for {change}\" { assignee reviewer }
        task approve \"Get {approvals} approvals for {change}\" { assignee reviewer }
        task merge \"Merge {change}\" { assignee reviewer }
    }
}
";

/// A [`plan_source`] plan of `tasks` tasks that also imports `lib.plan`
/// ([`REUSE_LIBRARY`]) and declares a template (a step of three tasks
/// assigned the imported role), which its plan uses after every 50th step
/// (every 1,000 tasks; once in a plan of fewer), each use after that step.
/// The benchmarks edit the template and the import in it.
pub fn plan_source_with_reuse(tasks: usize) -> String {
    let plan = plan_source(tasks, false);
    let mut out = String::with_capacity(plan.len() + plan.len() / 100 + 512);
    out.push_str("import \"lib.plan\"\n\n");
    out.push_str(REVIEW_TEMPLATE);
    out.push('\n');
    let steps = tasks.div_ceil(20);
    let mut closed = 0;
    for line in plan.split_inclusive('\n') {
        out.push_str(line);
        if line == "    }\n" {
            closed += 1;
            if closed % 50 == 0 || (steps < 50 && closed == 1) {
                let step = closed - 1;
                let _ = writeln!(
                    out,
                    "    use review(change = \"part {step}\") as u{step} {{ after s{step} }}"
                );
            }
        }
    }
    out
}

/// A loader for tests of [`plan_source_with_reuse`]'s plans: reads
/// `lib.plan` as [`REUSE_LIBRARY`] (any other import fails the test).
#[cfg(test)]
pub(crate) struct ReuseLibrary;

#[cfg(test)]
impl crate::modules::Loader for ReuseLibrary {
    fn load(&self, located: &std::path::Path) -> Result<String, crate::modules::ImportError> {
        assert!(located.ends_with("lib.plan"), "{}", located.display());
        Ok(REUSE_LIBRARY.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::ReuseLibrary as Library;

    #[test]
    fn generated_plans_check_and_cycles_are_found() {
        for tasks in [100, 1_000, 5_000] {
            let text = super::plan_source(tasks, false);
            let compiled = crate::compile("gen.plan", &text, &Default::default());
            assert_eq!(compiled.diagnostics, Vec::new(), "{tasks} tasks");
            assert_eq!(compiled.checked.plan.map(|p| p.tasks.len()), Some(tasks));
        }

        // With a template and an import (`lib.plan`, read from a loader).
        for tasks in [100, 2_000] {
            let text = super::plan_source_with_reuse(tasks);
            let loader = Library;
            let compiled = crate::compile_with("gen.plan", &text, &Default::default(), &loader);
            assert_eq!(compiled.diagnostics, Vec::new(), "{tasks} tasks with reuse");
            let uses = tasks.div_ceil(1_000).max(1);
            let planned = compiled.checked.plan.map(|p| p.tasks.len());
            assert_eq!(planned, Some(tasks + 3 * uses));
        }

        let text = super::plan_source(300, true);
        let compiled = crate::compile("gen.plan", &text, &Default::default());
        assert!(compiled
            .diagnostics
            .iter()
            .any(|d| d.code == crate::diagnostic::Code::Cycle));
    }

    #[test]
    fn the_task_waited_for_is_one_others_wait_for() {
        for tasks in [1_000, 10_000, 100_000] {
            let text = super::plan_source(tasks, false);
            let name = super::waited_for_task(&text).expect("an `after` in the second half");
            assert!(text.contains(&format!("task {name} \"")), "{name}");
            let waits = [" ", ",", "\n"]
                .iter()
                .any(|end| text.contains(&format!("after {name}{end}")));
            assert!(waits, "{name}");
        }
    }
}
