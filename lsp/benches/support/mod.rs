//! What the language server's benchmarks share: the sizes asked for on the
//! command line, and the summary of a run's times.

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

/// The median and the 90th percentile, in milliseconds.
pub fn summary(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let at = |q: f64| {
        let index = ((times.len() as f64 - 1.0) * q).round() as usize;
        times[index].as_secs_f64() * 1e3
    };
    (at(0.5), at(0.9))
}
