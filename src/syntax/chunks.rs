//! Parses a large file in pieces on several threads.
//!
//! The file is cut where a `task` or `step` line begins inside the plan
//! body (found by a lexical scan that skips strings and comments); the head,
//! middle and tail pieces are parsed with the grammar's `chunk_*` rules and
//! walked by the same walker, with offsets shifted to the whole file. The
//! pieces are joined into the tree the sequential parse would build. Any
//! doubt — no clean cut, a piece that does not parse, any diagnostic — and
//! the caller parses the whole file sequentially instead, so results never
//! depend on the split.

use super::limits::code_bytes;

/// Files smaller than this are parsed on one thread.
pub(crate) const PARALLEL_THRESHOLD: usize = 256 << 10;

/// Where to cut `text` into at most `pieces` pieces: offsets of lines that
/// start a `task` or `step` directly inside the only `plan` body.
pub(crate) fn split_points(text: &str, pieces: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut plans = 0;
    let mut body: Option<(usize, usize)> = None;
    let mut candidates = Vec::new();
    let mut line_start = true;
    let mut expect_plan_brace = false;
    for (offset, byte) in code_bytes(text) {
        match byte {
            b'\n' => {
                line_start = true;
                continue;
            }
            b' ' | b'\t' | b'\r' => continue,
            b'{' => {
                if depth == 0 && expect_plan_brace {
                    body = Some((offset + 1, text.len()));
                    expect_plan_brace = false;
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some((start, end)) = body.as_mut() {
                        if *end == text.len() && offset > *start {
                            *end = offset;
                        }
                    }
                }
            }
            b'p' if depth == 0
                && bytes[offset..].starts_with(b"plan")
                && word_ends(bytes, offset + 4) =>
            {
                plans += 1;
                expect_plan_brace = true;
            }
            b't' | b's'
                if line_start && depth == 1 && body.is_some_and(|(_, end)| end == text.len()) =>
            {
                let rest = &bytes[offset..];
                if (rest.starts_with(b"task") || rest.starts_with(b"step"))
                    && word_ends(bytes, offset + 4)
                {
                    candidates.push(offset);
                }
            }
            _ => {}
        }
        line_start = false;
    }
    let Some((start, end)) = body else {
        return Vec::new();
    };
    if plans != 1 || pieces < 2 {
        return Vec::new();
    }
    candidates.retain(|&c| c > start && c < end);
    let mut cuts = Vec::new();
    for i in 1..pieces {
        let target = text.len() * i / pieces;
        let at = candidates.partition_point(|&c| c < target);
        if let Some(&cut) = candidates.get(at) {
            if cuts.last().is_none_or(|&last| cut > last) {
                cuts.push(cut);
            }
        }
    }
    cuts
}

fn word_ends(bytes: &[u8], at: usize) -> bool {
    bytes
        .get(at)
        .is_none_or(|b| b.is_ascii_whitespace() || *b == b'"' || *b == b'{')
}

#[cfg(test)]
mod tests {
    use super::split_points;

    #[test]
    fn cuts_only_at_task_and_step_lines_of_the_plan_body() {
        let text = "template t() {\n  task x \"X\"\n}\nplan p {\n  goal \"g\"\n  task a \"A\"\n  task b \"\"\"\n  task c\n  \"\"\"\n  step s {\n    task d \"D\"\n  }\n  # task e\n  task f \"F\"\n}\n";
        let a = text.find("  task a").unwrap() + 2;
        let s = text.find("  step s").unwrap() + 2;
        let f = text.find("  task f").unwrap() + 2;
        assert_eq!(split_points(text, 2), vec![s]);
        assert_eq!(split_points(text, 4), vec![a, s, f]);
        assert_eq!(
            split_points("plan a {}\nplan b {\n task x \"X\"\n}", 2),
            Vec::<usize>::new()
        );
    }
}
