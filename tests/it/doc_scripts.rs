//! The bash script that runs one Markdown block of commands
//! (tests/it/doc_commands.rs): its lines as written, but for the commands
//! that serve, follow or speak MCP, wrapped so the test can start, check and
//! stop them; and, for a `console` block, what each prompt printed, to
//! compare with the output the block shows.

use std::collections::BTreeMap;
use std::path::Path;

use crate::doc_commands::Block;

/// What every script starts with: strict mode, the stop of what it left in
/// the background, where it failed, and the helpers the wrapped commands call.
/// The helpers fail only by `return 1`, so a failure is reported at the line
/// that called them.
const PRELUDE: &str = r#"set -eE -o pipefail
__jobs=()
__stop() {
  local p
  for p in "${__jobs[@]}"; do kill -- -"$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  __jobs=()
}
trap __stop EXIT
trap 'echo "$LINENO" >"$DOCS_SCRATCH/failed-at"' ERR
__started() { __jobs+=("$1"); echo "$1" >>"$DOCS_SCRATCH/jobs"; }
cargo() {
  if [ "${1-}" = run ] && [ "${2-}" = -- ]; then shift 2; planc "$@"; return; fi
  echo "docs: \`cargo $*\` is not run by the tests: mark it <!-- not run ... -->" >&2
  return 127
}
__serve_wait() {
  local i url='' code=''
  for i in $(seq 1 600); do
    url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$DOCS_SCRATCH/serve.err" 2>/dev/null) || true
    if [ -n "$url" ]; then break; fi
    if ! kill -0 "$1" 2>/dev/null; then cat "$DOCS_SCRATCH/serve.err" >&2; echo "docs: the server stopped before it listened" >&2; return 1; fi
    sleep 0.05
  done
  if [ -z "$url" ]; then echo "docs: the server did not listen in 30 s" >&2; return 1; fi
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url/") || true
  if [ -z "$code" ] || [ "$code" = 000 ]; then echo "docs: $url/ does not answer" >&2; return 1; fi
}
__follow_wait() {
  local i
  for i in $(seq 1 600); do
    if [ -s "$DOCS_SCRATCH/follow.out" ]; then
      sleep 0.1; kill -- -"$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true
      cat "$DOCS_SCRATCH/follow.out"; return 0
    fi
    if ! kill -0 "$1" 2>/dev/null; then cat "$DOCS_SCRATCH/follow.err" >&2; echo "docs: it stopped without printing" >&2; return 1; fi
    sleep 0.05
  done
  echo "docs: it printed nothing in 30 s" >&2; return 1
}
__mcp_check() {
  if grep -q '"id":2' "$DOCS_SCRATCH/mcp.out" && grep -q '"tools"' "$DOCS_SCRATCH/mcp.out"; then return 0; fi
  cat "$DOCS_SCRATCH/mcp.out" "$DOCS_SCRATCH/mcp.err" >&2; echo "docs: the MCP server listed no tools" >&2; return 1
}
"#;

/// How a command is run.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// As written.
    Plain,
    /// `planc serve`: in the background, once it listens and answers.
    Serve,
    /// Follows until stopped: until it prints.
    Follow,
    /// `planc mcp`: a host's first requests on standard input.
    Mcp,
}

/// How the command that starts with `line` is run.
fn kind(line: &str) -> Kind {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["planc", "serve", "hash-token", ..] => Kind::Plain,
        ["planc", "serve", ..] => Kind::Serve,
        ["planc", "mcp", ..] => Kind::Mcp,
        ["planc", "run", "watch", ..] if !words.contains(&"--no-follow") => Kind::Follow,
        ["curl", flags @ ..]
            if flags.iter().any(|w| {
                *w == "-N" || w.starts_with('-') && !w.starts_with("--") && w.contains('N')
            }) =>
        {
            Kind::Follow
        }
        _ => Kind::Plain,
    }
}

/// One command of a block: its lines (continued with `\` or a here-document)
/// and, in a console block, the output shown after it.
struct Command {
    lines: Vec<(usize, String)>,
    output: Vec<String>,
}

/// The here-document terminator a line opens, if any (`<<EOF`, `<<-'EOF'`).
fn heredoc(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-').trim_start();
    if rest.starts_with('<') {
        return None; // a here-string
    }
    let word: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// The commands of a block.
fn commands(block: &Block) -> Vec<Command> {
    let mut commands: Vec<Command> = Vec::new();
    let mut lines = block.lines.iter();
    while let Some((at, line)) = lines.next() {
        let command = if block.console {
            match line.strip_prefix("$ ") {
                Some(command) => command,
                None => {
                    if let Some(last) = commands.last_mut() {
                        last.output.push(line.clone());
                    }
                    continue;
                }
            }
        } else {
            line.as_str()
        };
        let mut own = vec![(*at, command.to_owned())];
        if let Some(terminator) = heredoc(command) {
            for (at, next) in lines.by_ref() {
                own.push((*at, next.clone()));
                if next.trim() == terminator {
                    break;
                }
            }
        } else {
            let mut last = command;
            while last.trim_end().ends_with('\\') {
                let Some((at, next)) = lines.next() else {
                    break;
                };
                own.push((*at, next.clone()));
                last = next.as_str();
            }
        }
        commands.push(Command {
            lines: own,
            output: Vec::new(),
        });
    }
    commands
}

/// A block's script and what the test needs to read its results.
pub(crate) struct Script {
    /// The bash script.
    pub(crate) text: String,
    /// For each line of the script, the Markdown line it comes from (0: the prelude).
    pub(crate) lines: Vec<usize>,
    /// The block's fence line.
    pub(crate) first_line: usize,
    /// The commands it runs.
    pub(crate) commands: usize,
    /// Whether it starts a server.
    pub(crate) serves: bool,
    /// Each command's text, by its first Markdown line.
    sources: BTreeMap<usize, String>,
    /// For a console block: each prompt's line, its number and the output shown.
    expected: Vec<(usize, usize, Vec<String>)>,
}

impl Script {
    /// Appends `text` (one or more lines) as coming from Markdown line `at`.
    fn push(&mut self, text: &str, at: usize) {
        if text.is_empty() {
            self.text.push('\n');
            self.lines.push(at);
        }
        for line in text.lines() {
            self.text.push_str(line);
            self.text.push('\n');
            self.lines.push(at);
        }
    }

    /// The command at or before Markdown line `line`.
    pub(crate) fn command_at(&self, line: usize) -> &str {
        self.sources
            .range(..=line)
            .next_back()
            .map_or("the block", |(_, c)| c.as_str())
    }

    /// The console outputs that differ from the ones shown, each `LINE: what`.
    pub(crate) fn compare_outputs(&self, scratch: &Path) -> Vec<String> {
        let mut faults = Vec::new();
        for (line, n, shown) in &self.expected {
            let printed =
                std::fs::read_to_string(scratch.join(format!("out.{n}"))).unwrap_or_default();
            let status = std::fs::read_to_string(scratch.join(format!("status.{n}"))).ok();
            let printed: Vec<&str> = printed.lines().collect();
            let command = self.command_at(*line);
            if shown.is_empty() {
                if let Some(status) = status {
                    faults.push(format!(
                        "{line}: `{command}` failed (exit {}):\n{}",
                        status.trim(),
                        printed.join("\n")
                    ));
                }
            } else if !matches(shown, &printed) {
                faults.push(format!(
                    "{line}: `{command}` printed\n{}\nwhere the docs show\n{}",
                    printed.join("\n"),
                    shown.join("\n")
                ));
            }
        }
        faults
    }
}

/// Whether printed lines match the shown ones: `...` (or `…`) alone stands
/// for any lines, `…` in a line for any text; trailing blanks do not count.
fn matches(shown: &[String], printed: &[&str]) -> bool {
    let shown_end = shown
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let printed_end = printed
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    lines_match(&shown[..shown_end], &printed[..printed_end])
}

fn lines_match(shown: &[String], printed: &[&str]) -> bool {
    match shown.split_first() {
        None => printed.is_empty(),
        Some((first, rest)) if matches!(first.trim(), "..." | "…") => {
            (0..=printed.len()).any(|skip| lines_match(rest, &printed[skip..]))
        }
        Some((first, rest)) => printed
            .split_first()
            .is_some_and(|(line, more)| line_matches(first, line) && lines_match(rest, more)),
    }
}

/// One shown line against one printed line; `…` stands for any text.
fn line_matches(shown: &str, printed: &str) -> bool {
    let (shown, printed) = (shown.trim_end(), printed.trim_end());
    let pieces: Vec<&str> = shown.split('…').collect();
    let [first, middle @ .., last] = pieces.as_slice() else {
        return shown == printed;
    };
    let Some(mut rest) = printed.strip_prefix(first) else {
        return false;
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The wrapping of one command of kind `kind` (`BODY` stands for its lines),
/// in a console block saving its output as number `n`.
fn wrapping(kind: Kind, console: bool, n: usize) -> (&'static str, String) {
    match kind {
        Kind::Serve => ("__stop\nset -m\n{", "} >\"$DOCS_SCRATCH/serve.out\" 2>\"$DOCS_SCRATCH/serve.err\" &\n__p=$!; set +m; __started \"$__p\"\n__serve_wait \"$__p\"".to_owned()),
        Kind::Follow => ("set -m\n{", "} >\"$DOCS_SCRATCH/follow.out\" 2>\"$DOCS_SCRATCH/follow.err\" &\n__p=$!; set +m; __started \"$__p\"\n__follow_wait \"$__p\"".to_owned()),
        Kind::Mcp => ("{", "} <\"$DOCS_SCRATCH/mcp-session\" >\"$DOCS_SCRATCH/mcp.out\" 2>\"$DOCS_SCRATCH/mcp.err\"\n__mcp_check".to_owned()),
        Kind::Plain if console => ("{", format!("}} >\"$DOCS_SCRATCH/out.{n}\" 2>&1 || echo \"$?\" >\"$DOCS_SCRATCH/status.{n}\"")),
        Kind::Plain => ("", String::new()),
    }
}

/// The script that runs `block`'s commands, its lines not run left out.
pub(crate) fn script(block: &Block) -> Script {
    let mut script = Script {
        text: String::new(),
        lines: Vec::new(),
        first_line: block.line,
        commands: 0,
        serves: false,
        sources: BTreeMap::new(),
        expected: Vec::new(),
    };
    script.push(PRELUDE, 0);
    for (n, command) in commands(block).into_iter().enumerate() {
        let (at, first) = &command.lines[0];
        let text: Vec<&str> = command.lines.iter().map(|(_, l)| l.as_str()).collect();
        let code = first.split('#').next().unwrap_or("").trim();
        if code.is_empty() && command.lines.len() == 1 {
            continue; // a blank or a comment
        }
        if block
            .skip
            .iter()
            .any(|(prefix, _)| first.starts_with(prefix.as_str()))
        {
            script.push(":", *at);
            continue;
        }
        script.commands += 1;
        script.sources.insert(*at, text.join("\n"));
        let kind = kind(first);
        script.serves |= kind == Kind::Serve;
        let (before, after) = wrapping(kind, block.console, n);
        if !before.is_empty() {
            script.push(before, *at);
        }
        for (line, text) in &command.lines {
            script.push(text, *line);
        }
        if !after.is_empty() {
            script.push(&after, *at);
        }
        if block.console && kind == Kind::Plain {
            script.expected.push((*at, n, command.output));
        }
    }
    script
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn commands_are_sorted_by_how_they_run() {
        assert_eq!(kind("planc serve --listen 0.0.0.0:7411"), Kind::Serve);
        assert_eq!(kind("planc serve hash-token"), Kind::Plain);
        assert_eq!(kind("planc run watch jd.json"), Kind::Follow);
        assert_eq!(kind("planc run watch jd.json --no-follow"), Kind::Plain);
        assert_eq!(kind("curl -sN http://x/events"), Kind::Follow);
        assert_eq!(kind("curl -s --data-binary @x http://x"), Kind::Plain);
        assert_eq!(kind("planc mcp jd.json --dialect tasks"), Kind::Mcp);
    }

    #[test]
    fn shown_output_matches_with_ellipses() {
        let shown = |s: &str| s.lines().map(str::to_owned).collect::<Vec<_>>();
        assert!(matches(&shown("a\n...\nd\n"), &["a", "b", "c", "d"]));
        assert!(matches(&shown("task 1 … done"), &["task 1 (open) done  "]));
        assert!(!matches(&shown("a\nb"), &["a", "c"]));
        assert!(!matches(&shown("a"), &["a", "b"]));
    }

    #[test]
    fn continued_lines_and_here_documents_are_one_command() {
        let block = Block {
            line: 1,
            console: false,
            lines: [
                "planc check \\",
                "  a.plan",
                "cat > x.plan <<'EOF'",
                "plan x {",
                "EOF",
                "planc fmt x.plan",
            ]
            .iter()
            .enumerate()
            .map(|(i, l)| (i + 2, (*l).to_owned()))
            .collect(),
            not_run: None,
            skip: Vec::new(),
        };
        let lines: Vec<Vec<usize>> = commands(&block)
            .iter()
            .map(|c| c.lines.iter().map(|(at, _)| *at).collect())
            .collect();
        assert_eq!(lines, [vec![2, 3], vec![4, 5, 6], vec![7]]);
    }
}
