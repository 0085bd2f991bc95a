//! The protocol handlers: each converts positions, asks `planc::ide`, and
//! converts the answer back.
//!
//! Compiling runs off the async executor, on the server's compile threads
//! (`compile_threads`), one compile per document at a time (see [`compile`]); the handlers never wait
//! on a lock held across a compile. Requests read the finished analyses:
//!
//! - hover, definition and references answer from the latest finished
//!   analysis at once, even while a newer text is compiling (their answers
//!   are for the moment the user asks; in a large file being edited they may
//!   be one edit behind);
//! - completion, rename, formatting, code actions, the outline, semantic
//!   tokens and folding wait (asynchronously) for the analysis of the text as
//!   it is when they arrive, since the client applies their edits to that text
//!   or keeps their answer until the next change.
//!
//! Every request waits for the first analysis of a document just opened.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use planc::ide;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::compaction;
use crate::convert;
use crate::documents::{Analysis, Documents, Job, Next};
use crate::tokens;

/// The language server's state: the client to notify and the open documents.
pub struct Backend {
    shared: Arc<Shared>,
}

/// What the handlers and the compiles share.
struct Shared {
    client: Client,
    /// Held only to read or change the map and the texts, never across a
    /// compile or an `.await`.
    documents: Mutex<Documents>,
    /// Held while deciding whether diagnostics are current and sending them,
    /// so that they reach the client in the order of the texts.
    publishing: tokio::sync::Mutex<()>,
    /// Whether the client sent `shutdown`.
    shut_down: Arc<AtomicBool>,
    /// The semantic tokens last sent for each document, for delta requests.
    tokens: tokens::Sent,
}

impl Shared {
    fn documents(&self) -> MutexGuard<'_, Documents> {
        // A panic while holding the lock cannot leave the map half-updated in
        // a way that matters more than stopping would, so keep serving.
        self.documents
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Backend {
    /// A server that talks to `client`.
    pub fn new(client: Client) -> Backend {
        Backend {
            shared: Arc::new(Shared {
                client,
                documents: Mutex::new(Documents::default()),
                publishing: tokio::sync::Mutex::new(()),
                shut_down: Arc::new(AtomicBool::new(false)),
                tokens: tokens::Sent::default(),
            }),
        }
    }

    /// Set once the client has sent `shutdown` (the exit code depends on it).
    pub fn shut_down(&self) -> Arc<AtomicBool> {
        self.shared.shut_down.clone()
    }

    fn documents(&self) -> MutexGuard<'_, Documents> {
        self.shared.documents()
    }

    /// The latest finished analysis of a document, without waiting for a
    /// compile under way (a document just opened waits for its first).
    async fn latest(&self, uri: &Uri) -> Option<Arc<Analysis>> {
        let (mut analyses, _) = self.documents().watch(uri)?;
        let analyses = analyses.wait_for(|a| a.settled.is_some()).await.ok()?;
        analyses.latest.clone().filter(|analysis| !analysis.json)
    }

    /// The analysis of the document's text as it is now (or of a newer one).
    async fn current(&self, uri: &Uri) -> Option<Arc<Analysis>> {
        let (mut analyses, revision) = self.documents().watch(uri)?;
        let analyses = analyses
            .wait_for(|a| a.settled.is_some_and(|settled| settled >= revision))
            .await
            .ok()?;
        analyses
            .latest
            .clone()
            .filter(|analysis| analysis.revision >= revision && !analysis.json)
    }

    fn start(&self, job: Job) {
        let (shared, runtime) = (self.shared.clone(), tokio::runtime::Handle::current());
        crate::compile_threads::run(move || compile(&shared, job, &runtime));
    }
}

/// Compiles a document on a compile thread (`compile_threads`), then its newest text for as long
/// as changes came during the compile (so a burst of keystrokes costs two
/// compiles, not one each), and publishes the diagnostics of the text that
/// is current when its compile ends; the diagnostics of a text changed
/// meanwhile are dropped.
///
/// All of it runs on the compile thread, publishing included: a keystroke
/// passes from the thread that reads the messages to this one and back to
/// the output, with no stop on the runtime's worker between.
fn compile(shared: &Arc<Shared>, mut job: Job, runtime: &tokio::runtime::Handle) {
    loop {
        let (uri, opening, version, revision) =
            (job.uri.clone(), job.opening, job.version, job.revision);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || job.run()));
        // Keystrokes keep their pages (`memory::purge_at_once`).
        crate::memory::purge_as_before();
        let (analysis, diagnostics) = match run {
            Ok((analysis, diagnostics)) => (Some(analysis), diagnostics),
            Err(_) => {
                #[allow(
                    clippy::print_stderr,
                    reason = "a language server's standard error is its log"
                )]
                {
                    eprintln!("planc-lsp: compiling {} failed", uri.as_str());
                }
                (None, Vec::new())
            }
        };
        let publishing = shared.publishing.blocking_lock();
        let (next, replaced) = shared
            .documents()
            .finished((&uri, opening), revision, analysis);
        match next {
            Next::Publish => {
                compact_when_idle(shared, uri.clone(), revision, runtime);
                runtime.block_on(shared.client.publish_diagnostics(
                    uri,
                    diagnostics,
                    Some(version),
                ));
                drop(publishing);
                // After the diagnostics are out: a large plan's tree and
                // plan take milliseconds to free, and their pages are given
                // back to the system once the document is quiet (or the
                // server's memory grows with the edits: `memory`).
                drop(replaced);
                crate::memory::give_back_when_quiet(runtime);
                return;
            }
            Next::Compile(newer) => {
                drop(publishing);
                // Not in the way of the newer text's compile.
                if let Some(replaced) = replaced {
                    runtime.spawn_blocking(move || drop(replaced));
                }
                job = newer;
            }
            Next::Stop => return,
        }
    }
}

/// Compiles the document whole again on a thread of its own if its text
/// is still that of `revision` after [`compaction::IDLE`] and that is worth
/// it (`compaction`).
fn compact_when_idle(
    shared: &Arc<Shared>,
    uri: Uri,
    revision: u64,
    runtime: &tokio::runtime::Handle,
) {
    let shared = Arc::clone(shared);
    runtime.spawn(async move {
        tokio::time::sleep(compaction::IDLE).await;
        let Some(compaction) = shared.documents().compaction(&uri, revision) else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("planc-compact".to_owned())
            .spawn(move || compact(&shared, compaction));
        if let Err(error) = spawned {
            #[allow(
                clippy::print_stderr,
                reason = "a language server's standard error is its log"
            )]
            {
                eprintln!("planc-lsp: cannot start a thread to compile on: {error}");
            }
        }
    });
}

/// The whole compile of an idle document (`compaction`), its analysis put
/// in place if the document did not change meanwhile, and the memory of
/// the one it replaces (or its own) given back.
fn compact(shared: &Shared, compaction: compaction::Compaction) {
    compaction::behind_keystrokes();
    // Its pages from memory given back, and the old analysis's given back
    // at once, not among leftovers of pages freed and taken again.
    crate::memory::purge_at_once();
    // In a heap of its own (`memory::apart`): its analysis in pages that
    // hold nothing else, not in the holes of pages the analysis it replaces
    // holds blocks in.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::memory::apart(|| compaction.run())
    }));
    let unused = shared
        .documents()
        .compacted(&compaction, run.ok().map(Arc::new));
    // The replaced analysis, whose last holder is `compaction` (unless a
    // request still reads it), freed here.
    drop(unused);
    drop(compaction);
    crate::memory::give_back();
    crate::compile_threads::give_back_idle();
    crate::memory::purge_as_before();
}

/// The capabilities announced in `initialize`.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["{".to_owned(), ",".to_owned()]),
            ..Default::default()
        }),
        document_symbol_provider: Some(OneOf::Left(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: convert::TOKEN_TYPES.to_vec(),
                    token_modifiers: convert::TOKEN_MODIFIERS.to_vec(),
                },
                // A request after an edit names the last answer's result
                // id and gets the tokens that changed (`tokens`).
                full: Some(SemanticTokensFullOptions::Delta { delta: Some(true) }),
                // Editors ask for the lines on screen first: a range's
                // tokens are converted and sent alone.
                range: Some(true),
                work_done_progress_options: Default::default(),
            },
        )),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..Default::default()
        })),
        ..Default::default()
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
        Ok(InitializeResult {
            capabilities: capabilities(),
            server_info: Some(ServerInfo {
                name: "planc-lsp".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            // Positions are UTF-16, the protocol's default.
            offset_encoding: None,
        })
    }

    async fn shutdown(&self) -> Result<()> {
        self.shared.shut_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let text = crate::large_texts::put_back(document.text);
        let job = self.documents().open(document.uri, document.version, text);
        self.start(job);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        // The text changes before the first `.await` (there is none), so
        // changes apply in the order they arrive.
        let document = params.text_document;
        let mut changes = params.content_changes;
        for change in &mut changes {
            change.text = crate::large_texts::put_back(std::mem::take(&mut change.text));
        }
        let job = self
            .documents()
            .change(&document.uri, document.version, changes);
        if let Some(job) = job {
            self.start(job);
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.documents().close(&uri);
        self.shared.tokens.forget(&uri);
        // After any diagnostics a compile is sending for it.
        let _publishing = self.shared.publishing.lock().await;
        self.shared
            .client
            .publish_diagnostics(uri, Vec::new(), None)
            .await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let position = params.text_document_position_params;
        let Some(analysis) = self.latest(&position.text_document.uri).await else {
            return Ok(None);
        };
        let offset = convert::offset_in(&analysis, position.position);
        Ok(
            ide::hover(&analysis.compilation, offset).map(|hover| Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: hover.markdown,
                }),
                range: Some(convert::range(&analysis, hover.location.span)),
            }),
        )
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let position = params.text_document_position_params;
        let Some(analysis) = self.latest(&position.text_document.uri).await else {
            return Ok(None);
        };
        let offset = convert::offset_in(&analysis, position.position);
        Ok(ide::definition(&analysis.compilation, offset)
            .and_then(|location| convert::location(&analysis, location))
            .map(GotoDefinitionResponse::Scalar))
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let position = params.text_document_position;
        let Some(analysis) = self.latest(&position.text_document.uri).await else {
            return Ok(None);
        };
        let offset = convert::offset_in(&analysis, position.position);
        let locations = ide::references(
            &analysis.compilation,
            offset,
            params.context.include_declaration,
        );
        Ok(Some(
            locations
                .into_iter()
                .filter_map(|l| convert::location(&analysis, l))
                .collect(),
        ))
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        let Some(analysis) = self.current(&params.text_document.uri).await else {
            return Ok(None);
        };
        let offset = convert::offset_in(&analysis, params.position);
        match ide::prepare_rename(&analysis.compilation, offset) {
            Some((location, name)) => Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
                range: convert::range(&analysis, location.span),
                placeholder: name,
            })),
            None => Err(Error::invalid_params(
                ide::RenameError::NoSymbol.to_string(),
            )),
        }
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let position = params.text_document_position;
        let Some(analysis) = self.current(&position.text_document.uri).await else {
            return Ok(None);
        };
        let offset = convert::offset_in(&analysis, position.position);
        match ide::rename(&analysis.compilation, offset, &params.new_name) {
            Ok(edits) => Ok(Some(convert::workspace_edit(&analysis, &edits))),
            Err(error) => Err(Error::invalid_params(error.to_string())),
        }
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let position = params.text_document_position;
        let Some(analysis) = self.current(&position.text_document.uri).await else {
            return Ok(None);
        };
        let offset = convert::offset_in(&analysis, position.position);
        let (proposals, cut) =
            ide::completions_capped(&analysis.compilation, offset, ide::MAX_COMPLETIONS);
        let items: Vec<CompletionItem> = proposals
            .into_iter()
            .map(|c| convert::completion(&analysis, c))
            .collect();
        Ok(Some(match cut {
            false => CompletionResponse::Array(items),
            // The editor asks again as the word grows.
            true => CompletionResponse::List(CompletionList {
                is_incomplete: true,
                items,
            }),
        }))
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let Some(analysis) = self.current(&params.text_document.uri).await else {
            return Ok(None);
        };
        let symbols = ide::document_symbols(&analysis.compilation)
            .into_iter()
            .map(|s| convert::document_symbol(&analysis, s))
            .collect();
        Ok(Some(DocumentSymbolResponse::Nested(symbols)))
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let uri = params.text_document.uri;
        let Some(analysis) = self.current(&uri).await else {
            return Ok(None);
        };
        let store = tokens::store(&analysis);
        if crate::raw_answers::enabled() {
            // Written as JSON text: a placeholder in the result id's place.
            let json = tokens::whole_json(&analysis, &store);
            let id = self.shared.tokens.record(&uri, store);
            let placeholder = crate::raw_answers::later(format!(r#""{id}","data":{json}"#));
            // Its making and writing free megabytes on this thread and the
            // runtime's worker: given back once quiet.
            crate::memory::give_back_when_quiet(&tokio::runtime::Handle::current());
            return Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
                result_id: Some(placeholder),
                data: Vec::new(),
            })));
        }
        let data = tokens::whole(&analysis, &store);
        let id = self.shared.tokens.record(&uri, store);
        Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
            result_id: Some(id),
            data,
        })))
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri;
        let Some(analysis) = self.current(&uri).await else {
            return Ok(None);
        };
        let store = tokens::store(&analysis);
        let sent = self.shared.tokens.sent(&uri, &params.previous_result_id);
        let edits = sent.map(|sent| tokens::edits(&analysis, &sent, &store));
        let data = edits.is_none().then(|| tokens::whole(&analysis, &store));
        let id = Some(self.shared.tokens.record(&uri, store));
        Ok(Some(match (edits, data) {
            (Some(edits), _) => SemanticTokensFullDeltaResult::TokensDelta(SemanticTokensDelta {
                result_id: id,
                edits,
            }),
            // Not the last answer's id: the tokens whole.
            (None, data) => SemanticTokensFullDeltaResult::Tokens(SemanticTokens {
                result_id: id,
                data: data.unwrap_or_default(),
            }),
        }))
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        let Some(analysis) = self.current(&params.text_document.uri).await else {
            return Ok(None);
        };
        let start = convert::offset_in(&analysis, params.range.start);
        let end = convert::offset_in(&analysis, params.range.end);
        Ok(Some(SemanticTokensRangeResult::Tokens(SemanticTokens {
            result_id: None,
            data: tokens::range(&analysis, start, end),
        })))
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        let Some(analysis) = self.current(&params.text_document.uri).await else {
            return Ok(None);
        };
        let folds = ide::folding_ranges(&analysis.compilation);
        Ok(Some(
            folds
                .into_iter()
                .filter_map(|f| convert::folding_range(&analysis, f))
                .collect(),
        ))
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        let Some(analysis) = self.current(&params.text_document.uri).await else {
            return Ok(None);
        };
        // The same formatter as `planc fmt`, as the few edits that change
        // the text (cursors and undo outside them stay); a file with syntax
        // errors is left as it is (its diagnostics say why).
        let Some(edits) = ide::formatting(&analysis.compilation) else {
            return Ok(None);
        };
        Ok(Some(
            edits
                .into_iter()
                .map(|edit| TextEdit::new(convert::range(&analysis, edit.span), edit.new_text))
                .collect(),
        ))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let Some(analysis) = self.current(&params.text_document.uri).await else {
            return Ok(None);
        };
        let range = convert::span(&analysis, params.range);
        let actions = ide::quick_fixes(&analysis.compilation, range)
            .into_iter()
            .map(|fix| {
                let diagnostic = convert::diagnostic(
                    &analysis,
                    &analysis.compilation.diagnostics[fix.diagnostic],
                );
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: fix.title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic]),
                    edit: Some(convert::workspace_edit(&analysis, &[fix.edit])),
                    is_preferred: Some(true),
                    ..Default::default()
                })
            })
            .collect();
        Ok(Some(actions))
    }
}
