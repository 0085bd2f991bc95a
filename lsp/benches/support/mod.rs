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
