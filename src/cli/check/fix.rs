//! `planc check --fix` and `--diff`: the fixes the language server offers as
//! quick fixes ([`Diagnostic::fix`]), applied round after round until none
//! applies, as `ruff check --fix` does.
//!
//! Every round checks the file again with the texts fixed so far (imports
//! are read through [`FixedImports`], so nothing is written until the end)
//! and applies the fixes that do not clash; a fix that overlaps one applied
//! is offered again, moved, by the next round's check.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use planc::check::Options;
use planc::compile::Compilation;
use planc::diagnostic::Fix;
use planc::modules::{FsLoader, ImportError, Loader};
use planc::read::STDIN_NAME;
use planc::span::FileId;

use crate::cli::input::{ImportArgs, Input};

/// The most rounds of fixes for one file: a fix that makes another
/// possible is applied in the next round, and a chain of them ends here.
pub const MAX_ROUNDS: usize = 8;

/// What fixing one file named on the command line did.
pub struct Fixed {
    /// The check after the last round: what remains.
    pub compilation: Compilation,
    /// The files whose text changed, in the order they first changed.
    pub changed: Vec<ChangedFile>,
    /// How many fixes were applied, over every round and file.
    pub count: usize,
}

/// A file `--fix` changed.
pub struct ChangedFile {
    /// Its name as diagnostics show it.
    pub name: String,
    /// Where it is written: `None` for standard input.
    pub place: Option<PathBuf>,
    /// Its text as read.
    pub before: Arc<str>,
    /// Its text with the fixes.
    pub after: String,
}

/// Fixes `input` (a `.plan` source) and the imported files inside the
/// project root, round after round; changes nothing on disk.
pub fn fix(input: &Input, options: &Options, imports: &ImportArgs) -> Fixed {
    let disk = imports.loader(&input.name);
    // Standard input has no file of its own to change, and no directory
    // whose imports are "its" files: only its own text is fixed.
    let scope = (input.name != STDIN_NAME).then(|| imports.fix_scope(&input.name));
    let mut rounds = Rounds {
        root: Arc::clone(&input.text),
        imports: HashMap::new(),
        changed: Vec::new(),
        count: 0,
    };
    let mut round = 0;
    loop {
        let compilation = {
            let loader = FixedImports {
                disk: &disk,
                fixed: &rounds.imports,
            };
            planc::compile_shared_with(&input.name, Arc::clone(&rounds.root), options, &loader)
        };
        if round == MAX_ROUNDS || !rounds.apply(&compilation, scope.as_ref()) {
            return Fixed {
                compilation,
                changed: rounds.changed,
                count: rounds.count,
            };
        }
        round += 1;
    }
}

/// The texts fixed so far.
struct Rounds {
    root: Arc<str>,
    /// Imported files by where the loader located them.
    imports: HashMap<PathBuf, String>,
    changed: Vec<ChangedFile>,
    count: usize,
}

impl Rounds {
    /// Applies one round of the fixes `compilation` offers; whether any was.
    fn apply(&mut self, compilation: &Compilation, scope: Option<&FsLoader>) -> bool {
        let mut by_file: Vec<(FileId, Vec<&Fix>)> = Vec::new();
        for fix in compilation
            .diagnostics
            .iter()
            .filter_map(|d| d.fix.as_ref())
        {
            match by_file.iter_mut().find(|(file, _)| *file == fix.file) {
                Some((_, fixes)) => fixes.push(fix),
                None => by_file.push((fix.file, vec![fix])),
            }
        }
        let mut applied_any = false;
        for (file, fixes) in by_file {
            let source = compilation.sources.get(file);
            let import = if file == compilation.file {
                None
            } else {
                // An import outside the root (read with
                // `--allow-outside-root`) is not the project's to change.
                match scope.map(|s| s.locate(Path::new(&source.name))) {
                    Some(Ok(located)) => Some(located),
                    _ => continue,
                }
            };
            let (after, applied) = planc::ide::apply_fixes(&source.text, &fixes);
            if applied == 0 {
                continue;
            }
            applied_any = true;
            self.count += applied;
            let place = match &import {
                Some(located) => Some(located.clone()),
                None if source.name == STDIN_NAME => None,
                None => Some(
                    std::fs::canonicalize(&source.name)
                        .unwrap_or_else(|_| PathBuf::from(&source.name)),
                ),
            };
            match &import {
                Some(located) => {
                    self.imports.insert(located.clone(), after.clone());
                }
                None => self.root = Arc::from(after.as_str()),
            }
            self.record(&source.name, place, &source.text, after);
        }
        applied_any
    }

    /// Keeps a file's new text, and its first text when it is new here.
    fn record(&mut self, name: &str, place: Option<PathBuf>, before: &Arc<str>, after: String) {
        match self
            .changed
            .iter_mut()
            .find(|c| c.place == place && c.name == name)
        {
            Some(changed) => changed.after = after,
            None => self.changed.push(ChangedFile {
                name: name.to_owned(),
                place,
                before: Arc::clone(before),
                after,
            }),
        }
    }
}

/// Reads imports from disk, or their fixed text when a round changed them.
struct FixedImports<'a> {
    disk: &'a FsLoader,
    fixed: &'a HashMap<PathBuf, String>,
}

impl Loader for FixedImports<'_> {
    fn locate(&self, path: &Path) -> Result<PathBuf, ImportError> {
        self.disk.locate(path)
    }

    fn load(&self, located: &Path) -> Result<String, ImportError> {
        match self.fixed.get(located) {
            Some(text) => Ok(text.clone()),
            None => self.disk.load(located),
        }
    }
}
