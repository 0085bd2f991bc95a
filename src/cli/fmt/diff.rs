//! The diff `planc fmt --check` prints: linear in the file, bounded in size.
//!
//! A line diff costs (lines compared) × (lines that differ): 50,000 changed
//! lines took seconds, a 48 MB file minutes. The lines both versions start
//! and end with are set aside first (one pass); what lies between is diffed
//! whole when it is at most [`MAX_DIFF_LINES`] lines on each side, and
//! otherwise only its first [`MAX_DIFF_LINES`] lines are, with a last line
//! that says how many more differ.

use std::fmt::Write;

/// The most lines of the changed part of a file (from its first line that
/// formatting changes to its last) that `fmt --check` compares and shows.
pub const MAX_DIFF_LINES: usize = 1_000;

/// The unified diff (2 lines of context) from `old` to `new`, the file
/// called `name`; cut after [`MAX_DIFF_LINES`] changed lines, with a line
/// that counts the rest.
pub fn unified(old: &str, new: &str, name: &str) -> String {
    unified_as(old, new, name, "formatted")
}

/// The unified diff from `old` to `new` as [`unified`] makes it, the new
/// side named `name (what)` (`formatted`, `fixed`).
pub fn unified_as(old: &str, new: &str, name: &str, what: &str) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = old_lines
        .iter()
        .zip(&new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = old_lines[prefix..]
        .iter()
        .rev()
        .zip(new_lines[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let changed = (old_lines.len() - prefix - suffix).max(new_lines.len() - prefix - suffix);
    let formatted = format!("{name} ({what})");
    let diff = |old: &str, new: &str| {
        similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(2)
            .header(name, &formatted)
            .to_string()
    };
    if changed <= MAX_DIFF_LINES {
        return diff(old, new);
    }
    // Both versions cut at the same line: the diff of what comes before it
    // sets the common lines aside again and compares the first
    // `MAX_DIFF_LINES` changed lines only.
    let cut = prefix + MAX_DIFF_LINES;
    let bytes = |lines: &[&str]| lines.iter().take(cut).map(|line| line.len()).sum::<usize>();
    let mut out = diff(&old[..bytes(&old_lines)], &new[..bytes(&new_lines)]);
    let _ = writeln!(
        out,
        "… {} more lines differ after line {cut} (the diff stops after {MAX_DIFF_LINES} changed lines; `planc fmt` formats them all)",
        changed - MAX_DIFF_LINES
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_change_is_the_whole_diff() {
        let out = unified("a\nb\nc\n", "a\nB\nc\n", "f.plan");
        assert_eq!(
            out,
            "--- f.plan\n+++ f.plan (formatted)\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
    }

    #[test]
    fn a_million_changed_lines_are_cut_and_counted() {
        let old: String = (0..1_000_000).map(|i| format!("t{i}\n")).collect();
        let new: String = (0..1_000_000).map(|i| format!("    t{i}\n")).collect();
        let out = unified(&old, &new, "f.plan");
        assert_eq!(out.lines().count(), 3 + 2 * MAX_DIFF_LINES + 1);
        assert!(out.contains("\n-t999\n"), "{}", &out[..200]);
        assert!(!out.contains("\n-t1000\n"));
        assert!(out.ends_with(
            "… 999000 more lines differ after line 1000 (the diff stops after 1000 changed lines; `planc fmt` formats them all)\n"
        ));
    }
}
