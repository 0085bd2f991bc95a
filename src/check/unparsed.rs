//! What syntax errors may hide from the checker: the text of a run that did
//! not parse could declare or use any name written in it. A diagnostic that
//! could be an echo of such a run is not reported; every other one is.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::modules::Module;
use crate::span::{FileId, SourceMap, Span};

/// The unparsed runs of every file of a compilation, and the words in them.
#[derive(Debug, Default)]
pub(super) struct Unparsed {
    /// Every word of unparsed text (letters, digits and `_`), of any file:
    /// a run in a library may hold a template or role a plan names.
    words: FxHashSet<Box<str>>,
    /// Per file: its unparsed runs, in source order.
    runs: FxHashMap<FileId, Vec<Span>>,
}

impl Unparsed {
    /// Gathers the runs the parser recorded in each module's tree.
    pub(super) fn of(modules: &[Module], sources: &SourceMap) -> Unparsed {
        Unparsed::of_runs(
            modules.iter().map(|m| (m.file, m.ast.unparsed.as_slice())),
            sources,
        )
    }

    /// Gathers the runs of each file (`(file, its runs in source order)`).
    pub(super) fn of_runs<'a>(
        files: impl IntoIterator<Item = (FileId, &'a [Span])>,
        sources: &SourceMap,
    ) -> Unparsed {
        let mut unparsed = Unparsed::default();
        for (file, runs) in files.into_iter().filter(|(_, runs)| !runs.is_empty()) {
            let text = &sources.get(file).text;
            for run in runs {
                let Some(run_text) = text.get(run.start()..run.end()) else {
                    continue;
                };
                for word in run_text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                    if !word.is_empty() && !unparsed.words.contains(word) {
                        unparsed.words.insert(word.into());
                    }
                }
            }
            unparsed.runs.insert(file, runs.to_vec());
        }
        unparsed
    }

    /// Whether no text went unparsed.
    pub(super) fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Whether `name` (or, for `a.b`, one of its parts) is written in
    /// unparsed text, where it may be declared or used.
    pub(super) fn may_name(&self, name: &str) -> bool {
        !self.words.is_empty() && name.split('.').any(|part| self.words.contains(part))
    }

    /// Whether unparsed text stands inside `span` of `file` (a plan's or a
    /// step's body, say), where an item may be missing.
    pub(super) fn within(&self, file: FileId, span: Span) -> bool {
        let Some(runs) = self.runs.get(&file) else {
            return false;
        };
        let first_ending_after = runs.partition_point(|run| run.end() <= span.start());
        runs.get(first_ending_after)
            .is_some_and(|run| run.start() < span.end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile;

    #[test]
    fn words_and_runs_of_unparsed_text_are_found() {
        let text = "plan p {\n  goal \"g\"\n  task a \"A\" { after b.c 7 }\n  step s { }\n}\n";
        let compilation = compile("t.plan", text, &Default::default());
        let unparsed = Unparsed::of(&compilation.modules, &compilation.sources);
        let run = compilation.modules[0].ast.unparsed[0];
        assert!(unparsed.within(compilation.file, Span::new(0, text.len())));
        assert!(unparsed.within(compilation.file, run));
        assert!(!unparsed.within(compilation.file, Span::new(0, run.start())));
        assert!(!unparsed.within(compilation.file, Span::new(run.end(), text.len())));
        assert!(!unparsed.within(FileId(7), run));
        let words = &text[run.start()..run.end()];
        assert!(words.contains('7'), "{words:?}");
        assert!(unparsed.may_name("7"));
        assert!(unparsed.may_name("x.7"));
        assert!(!unparsed.may_name("p"));
    }
}
