//! Hostile shapes for the checker: many cycles, unknown references,
//! duplicates, misspelt roles and parameters, nested templates, wide fan-in
//! and fan-out, long chains, each well over 2 KB. Each must be checked in
//! time linear in its size: a generous budget of processor time per case
//! guards against the quadratic (or exponential) searches these shapes used
//! to trigger. It is processor time, not wall-clock time, so a loaded
//! machine does not fail a fast case (the wall clock did once, at load 18).
//! The sizes grow with `PLANC_FUZZ_CASES` (up to 8 times the CI size). At
//! most `MAX_PER_CODE` (100) diagnostics of a code are reported; one
//! `planc::limit` note counts the rest.
//!
//! The checked plan then goes to the build targets: a plan of many steps
//! must render in linear time for each (the Plan Tool's plan instance
//! groups tasks by step, and once searched the steps and the groups for
//! every task).

// Tests may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

mod support;

use std::fmt::Write;
use std::time::Duration;

use planc::check::Options;
use planc::diagnostic::{Code, MAX_PER_CODE};
use planc::emit::Target;
use planc::generate::fuzz_cases;
use planc::span::FileId;

/// The processor time one case may take (a debug build): the shapes below
/// took tens of seconds, or ran out of memory, when the checker was
/// quadratic.
const BUDGET: Duration = Duration::from_secs(20);

/// The size of each shape: `n` items in a normal run, up to 8 times as many
/// in a long run (`PLANC_FUZZ_CASES` of 512 or more): the shapes are
/// already far larger than the random cases, and stay inside the file and
/// task limits.
fn size(n: usize) -> usize {
    n * (fuzz_cases(64) as usize / 64).clamp(1, 8)
}

/// How many diagnostics of one code are reported when `n` were found.
fn shown(n: usize) -> usize {
    n.min(MAX_PER_CODE)
}

/// Checks `text` as `planc check` and `planc build` do (the same
/// diagnostics either way), within [`BUDGET`]; returns the codes found.
fn check(name: &str, text: &str) -> Vec<Code> {
    assert!(text.len() > 2048, "{name}: {} bytes", text.len());
    let ((checked, built), used) = support::processor_time(|| {
        let checked = planc::compile(
            "hostile.plan",
            text,
            &Options {
                skip_plan: true,
                skip_references: true,
                ..Options::default()
            },
        );
        let built = planc::compile("hostile.plan", text, &Options::default());
        (checked, built)
    });
    assert!(used < BUDGET, "{name}: {used:?} of processor time");
    assert_eq!(checked.diagnostics, built.diagnostics, "{name}");
    built.diagnostics.iter().map(|d| d.code).collect()
}

fn count(codes: &[Code], code: Code) -> usize {
    codes.iter().filter(|&&c| c == code).count()
}

fn plan(body: &str) -> String {
    format!("plan hostile {{\n    goal \"g\"\n{body}}}\n")
}

#[test]
fn many_two_task_cycles() {
    let n = size(20_000);
    let mut body = String::new();
    for i in 0..n {
        writeln!(body, "    task a{i} \"A\" {{ after b{i} }}").unwrap();
        writeln!(body, "    task b{i} \"B\" {{ after a{i} }}").unwrap();
    }
    let codes = check("cycles", &plan(&body));
    assert_eq!(count(&codes, Code::Cycle), shown(n));
    assert_eq!(count(&codes, Code::Limit), 1);
}

#[test]
fn many_unknown_references_and_roles() {
    let n = size(4_000);
    let mut body = String::new();
    for i in 0..n {
        writeln!(body, "    role r{i}").unwrap();
    }
    for i in 0..n {
        writeln!(body, "    task t{i} \"T\" {{ after x{i} assignee q{i} }}").unwrap();
    }
    let codes = check("unknown", &plan(&body));
    assert_eq!(count(&codes, Code::UnknownRef), shown(n));
    assert_eq!(count(&codes, Code::UnknownRole), shown(n));
    // One note each for the unknown names, the unknown roles and the
    // roles never assigned.
    assert_eq!(count(&codes, Code::Limit), 3);
}

#[test]
fn many_unknown_parameters_of_a_template_with_many_parameters() {
    let n = size(1_500);
    let params: Vec<String> = (0..n).map(|i| format!("p{i}: string = \"v\"")).collect();
    let refs: String = (0..n).map(|i| format!("{{q{i}}}")).collect();
    let args: Vec<String> = (0..n).map(|i| format!("p{i} = \"w\"")).collect();
    let text = format!(
        "template t({}) {{ task a \"{refs}\" }}\n{}",
        params.join(", "),
        plan(&format!("    use t({}) as u\n", args.join(", ")))
    );
    let codes = check("template parameters", &text);
    assert_eq!(count(&codes, Code::UnknownParam), shown(n));
}

#[test]
fn many_duplicates() {
    let n = size(20_000);
    let mut body = String::new();
    for _ in 0..n {
        body.push_str("    task same \"Same\"\n    role same\n");
    }
    let codes = check("duplicates", &plan(&body));
    assert_eq!(count(&codes, Code::Duplicate), shown(2 * (n - 1)));
}

#[test]
fn many_redundant_dependencies_of_one_task() {
    let n = size(5_000);
    let mut body = String::from("    task a0 \"A\"\n");
    for i in 1..n {
        writeln!(body, "    task a{i} \"A\" {{ after a{} }}", i - 1).unwrap();
    }
    let all: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    writeln!(body, "    task z \"Z\" {{ after {} }}", all.join(", ")).unwrap();
    let codes = check("redundant", &plan(&body));
    assert!(count(&codes, Code::RedundantDependency) > 0);
}

#[test]
fn nested_templates_are_refused_not_expanded() {
    // Each level uses the one below five times, and the plan uses the top
    // one: billions of tasks if expanded. Padding makes the input large.
    let levels = 14;
    let mut text = String::from("template t0() { task a \"A\" }\n");
    for level in 1..levels {
        let uses: Vec<String> = (0..5)
            .map(|k| format!("use t{}() as u{k}", level - 1))
            .collect();
        writeln!(text, "template t{level}() {{ {} }}", uses.join(" ")).unwrap();
    }
    writeln!(text, "# {}", "padding ".repeat(300)).unwrap();
    text.push_str(&plan(&format!("    use t{}() as top\n", levels - 1)));
    let codes = check("nested templates", &text);
    assert_eq!(codes, [Code::Limit]);
    // The same templates with no plan, each checked on its own.
    let library = text.split("plan hostile").next().unwrap_or_default();
    let codes = check("nested templates, unused", library);
    assert!(count(&codes, Code::Limit) > 0);
    assert_eq!(count(&codes, Code::Limit), codes.len());
}

#[test]
fn wide_fan_in_fan_out_and_long_chains() {
    let n = size(50_000);
    let mut body = String::from("    task root \"Root\"\n");
    for i in 0..n {
        writeln!(body, "    task f{i} \"F\" {{ after root }}").unwrap();
    }
    let all: Vec<String> = (0..n).map(|i| format!("f{i}")).collect();
    writeln!(
        body,
        "    task sink \"Sink\" {{ after {} }}",
        all.join(", ")
    )
    .unwrap();
    writeln!(body, "    task c0 \"C\" {{ after sink }}").unwrap();
    for i in 1..n {
        writeln!(body, "    task c{i} \"C\" {{ after c{} }}", i - 1).unwrap();
    }
    let codes = check("fan", &plan(&body));
    assert_eq!(codes, []);
}

#[test]
fn a_syntax_error_among_many_mistakes() {
    let n = size(4_000);
    let mut body = String::from("    task = \"broken\" { after hidden }\n");
    for i in 0..n {
        writeln!(body, "    task a{i} \"A\" {{ after b{i}, missing{i} }}").unwrap();
        writeln!(body, "    task b{i} \"B\" {{ after a{i}, hidden }}").unwrap();
    }
    let codes = check("syntax", &plan(&body));
    assert_eq!(count(&codes, Code::Syntax), 1);
    assert_eq!(count(&codes, Code::Cycle), shown(n));
    // `hidden` is named in the text that did not parse: not reported.
    assert_eq!(count(&codes, Code::UnknownRef), shown(n));
}

#[test]
fn a_json_document_with_many_cycles() {
    // 100,000 cycles take seconds in a release build (most of it reading
    // the JSON); a debug build is checked with fewer.
    let n = size(20_000);
    let mut text = String::from("{\"meta\": {\"goal\": \"g\"}, \"tasks\": [\n");
    for i in 0..n {
        let (a, b) = (2 * i + 1, 2 * i + 2);
        let comma = if i + 1 == n { "" } else { "," };
        writeln!(
            text,
            "{{\"id\": {a}, \"name\": \"a\", \"status\": \"pending\", \"dependencies\": [{b}]}},\n\
             {{\"id\": {b}, \"name\": \"b\", \"status\": \"pending\", \"dependencies\": [{a}]}}{comma}"
        )
        .unwrap();
    }
    text.push_str("]}\n");
    let ((_, diagnostics), used) =
        support::processor_time(|| planc::document::load_json(&text, FileId(0), "hostile"));
    assert!(used < BUDGET, "{used:?} of processor time");
    let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(count(&codes, Code::Cycle), shown(n));
    assert_eq!(count(&codes, Code::Limit), 1);
}

#[test]
fn a_step_after_a_large_step_is_bounded() {
    // Two steps of n tasks, one after the other: every task of the second
    // waits for every task of the first, n² dependencies a plan document
    // lists one by one. Past the limit the `after` is refused, before any
    // pair is made.
    let n = size(10_000);
    let mut body = String::new();
    for step in ["first", "second"] {
        writeln!(body, "    step {step} {{").unwrap();
        if step == "second" {
            body.push_str("        after first\n");
        }
        for i in 0..n {
            writeln!(body, "        task {step}{i} \"T\"").unwrap();
        }
        body.push_str("    }\n");
    }
    let codes = check("step after step", &plan(&body));
    assert_eq!(codes, [Code::Limit]);
}

#[test]
fn a_step_after_a_step_lists_every_pair_within_the_limit() {
    let n = 300;
    let mut body = String::new();
    for step in ["first", "second"] {
        writeln!(body, "    step {step} {{").unwrap();
        if step == "second" {
            body.push_str("        after first\n");
        }
        for i in 0..n {
            writeln!(body, "        task {step}{i} \"T\"").unwrap();
        }
        body.push_str("    }\n");
    }
    let text = plan(&body);
    let built = planc::compile("steps.plan", &text, &Options::default());
    assert_eq!(built.diagnostics, []);
    let document = built.document().expect("a plan document");
    let pairs: usize = document.tasks.iter().map(|t| t.dependencies.len()).sum();
    assert_eq!(pairs, n * n);
}

/// Files that name themselves by their path: `big*.plan` are 20 MiB of
/// comments each.
struct Generated;

impl planc::modules::Loader for Generated {
    fn load(&self, _: &std::path::Path) -> Result<String, planc::modules::ImportError> {
        Ok("# padding\n".repeat(2 << 20))
    }
}

#[test]
fn imports_past_the_input_limit_are_refused() {
    // Each file is under the 64 MiB file limit; together they are not.
    let text =
        "import \"big1.plan\"\nimport \"big2.plan\"\nimport \"big3.plan\"\nimport \"big4.plan\"\n\
                plan p {\n    goal \"g\"\n    task a \"A\"\n}\n";
    let compilation = planc::compile_with("main.plan", text, &Options::default(), &Generated);
    let messages: Vec<(Code, &str)> = compilation
        .diagnostics
        .iter()
        .map(|d| (d.code, d.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        [(
            Code::Limit,
            "cannot import `big4.plan`: the plan and its imports would be more than 67108864 bytes"
        )]
    );
    assert_eq!(compilation.modules.len(), 4);
}

#[test]
fn tasks_after_large_steps_are_bounded() {
    // Ten steps of n tasks, and n tasks each waiting for all ten steps: a
    // task's `after` naming a step makes one dependency per task of it, so
    // these would be 10 n² of them. They count towards the same limit as a
    // step's `after`: the first over is refused, and nothing past it is made.
    let n = size(1_000);
    let mut body = String::new();
    for s in 0..10 {
        writeln!(body, "    step s{s} {{").unwrap();
        for i in 0..n {
            writeln!(body, "        task s{s}_{i} \"T\"").unwrap();
        }
        body.push_str("    }\n");
    }
    let steps: Vec<String> = (0..10).map(|s| format!("s{s}")).collect();
    for i in 0..n {
        writeln!(body, "    task t{i} \"T\" {{ after {} }}", steps.join(", ")).unwrap();
    }
    let text = plan(&body);
    let codes = check("tasks after steps", &text);
    assert_eq!(codes, [Code::Limit]);
    let checked = planc::compile("hostile.plan", &text, &Options::default());
    let limit = &checked.checked.diagnostics[0];
    assert!(
        limit.message.contains("would make 1 × ")
            && limit.labels[0].message == format!("this task would wait for each of {n}"),
        "{limit:?}"
    );
}

#[test]
fn a_name_repeated_in_after_is_one_dependency() {
    // `after a,a,…`: two bytes a reference. Each task's first repeat is one
    // warning; no repeat makes an edge (each made one, 40 bytes, and at
    // 20 MB the list outgrew the memory bound).
    let n = size(2_000);
    let mut body = String::from("    task a \"A\"\n");
    for i in 0..n {
        write!(body, "    task t{i} \"T\" {{ after a").unwrap();
        body.push_str(&",a".repeat(100));
        body.push_str(" }\n");
    }
    let codes = check("repeated names", &plan(&body));
    assert_eq!(count(&codes, Code::RedundantDependency), shown(n));
    assert_eq!(count(&codes, Code::Limit), 1);
    assert_eq!(codes.len(), shown(n) + 1);
    let built = planc::compile("hostile.plan", &plan(&body), &Options::default());
    let plan = built.checked.plan.expect("a plan");
    assert!((1..plan.tasks.len()).all(|i| plan.dependencies.of(i) == [1]));
}

#[test]
fn many_steps_render_in_linear_time_for_every_target() {
    // Each target renders this plan in about a second (a debug build); the
    // Plan Tool took 40 seconds when its grouping was quadratic.
    let n = size(40_000);
    let mut body = String::new();
    for i in 0..n {
        writeln!(body, "    step s{i} {{ task t{i} \"T\" }}").unwrap();
        // Tasks outside any step: the `(plan)` step of the Plan Tool.
        if i % 64 == 0 {
            writeln!(body, "    task loose{i} \"L\"").unwrap();
        }
    }
    let compiled = planc::compile("hostile.plan", &plan(&body), &Options::default());
    assert_eq!(compiled.diagnostics, []);
    let document = compiled.document().expect("a plan");
    for (name, target) in Target::ALL {
        let (rendered, used) = support::processor_time(|| planc::emit::render(&document, target));
        assert!(used < BUDGET, "{name}: {used:?} of processor time");
        assert!(rendered.len() > n, "{name}: {} bytes", rendered.len());
    }
}
