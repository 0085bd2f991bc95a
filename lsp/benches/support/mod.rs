//! What the language server's benchmarks share: the sizes and rows asked
//! for on the command line, and the summary of a run's times.

use std::time::Duration;

/// The plan sizes (task counts) named on the command line, or `default`.
pub fn sizes(default: &[usize]) -> Vec<usize> {
    let asked: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if asked.is_empty() {
        default.to_vec()
    } else {
        asked
    }
}

/// Whether the row named `name` is measured: the words of the command line
/// that are not sizes pick the rows whose names hold one (all if none).
pub fn chosen(name: &str) -> bool {
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a.parse::<usize>().is_err() && !a.starts_with('-'))
        .collect();
    words.is_empty() || words.iter().any(|w| name.contains(w.as_str()))
}

/// The median and the 90th percentile, in milliseconds.
pub fn summary(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let at = |q: f64| {
        let index = ((times.len() as f64 - 1.0) * q).round() as usize;
        times[index].as_secs_f64() * 1e3
    };
    (at(0.5), at(0.9))
}

/// The memory benchmark's round of edits in a generated plan of `tasks`
/// tasks (`text`), each as where it is typed (right after the first
/// occurrence of the first string) and what is typed: a letter in a task's
/// title, in the name of a task others wait for, in a reference to it, a
/// quote, and a new task line (the last typed letter by letter by the
/// benchmark). Each is taken back after it. Shared by `benches/memory.rs`
/// and `examples/memory_parts.rs`.
// Not every bench that includes this module uses it.
#[allow(dead_code)]
pub fn memory_round(text: &str, tasks: usize) -> [(String, String); 5] {
    let waited = planc::generate::waited_for_task(text).expect("a task others wait for");
    let middle = format!("task t{} \"Do", tasks / 2);
    let step = tasks.div_ceil(20) / 2;
    [
        (middle.clone(), "x".to_owned()),
        (format!("task {waited}"), "x".to_owned()),
        (format!("after {waited}"), "x".to_owned()),
        (middle, "\"".to_owned()),
        (
            format!("step s{step} \"Stage {step} of {{count}}\" {{"),
            "\n        task n1 \"New\" { after t3 }".to_owned(),
        ),
    ]
}
