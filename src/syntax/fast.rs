//! The fast path of [`parse`](super::parse): a direct reader for files
//! without mistakes.
//!
//! The grammar (`grammar/plan.pest`) defines the language; this reader is an
//! optimisation of it for the common case, with a tenth of the generated
//! parser's instructions. It reads the file in one pass over its bytes and
//! builds the tree the grammar's walker builds, node for node and span for
//! span. At the first thing it is not sure of — anything the grammar would
//! reject or recover from, anything the walker would report — it gives up,
//! and the grammar reads the file from the item where it gave up and
//! explains the mistake. So it never decides what is valid; it only skips
//! work on what the grammar accepts.
//!
//! The tests hold it to the grammar: every example, generated plans, and
//! thousands of random plans and random edits of them must give the
//! identical tree both ways, and the reader must give up exactly when the
//! grammar reports something (`fast/tests.rs`).

mod literals;
mod split;

use super::ast::*;
use super::keywords::is_keyword;
use super::strings::{Piece, StringError};
use crate::span::Span;
pub(super) use split::read_rest;
use split::{guess_item_start, read_tail, Tail, PARALLEL_THRESHOLD};
use std::sync::Arc;

/// Gives up: the grammar reads the file instead.
struct GiveUp;

type Read<T> = Result<T, GiveUp>;

/// What the reader read before it gave up: the grammar reads the file on
/// from `resume`, the start of the item where the reader stopped.
///
/// Everything before `resume` is final: an item the grammar accepts ends
/// where it ends whatever follows it, so the grammar's reading of the rest
/// is its reading of the whole file from that point.
#[derive(Default)]
pub(super) struct Prefix {
    /// Complete top-level items before `resume` (or before the open plan).
    pub items: Vec<TopItem>,
    /// The plan whose body the reader was in, with its complete items.
    pub plan: Option<OpenPlan>,
    pub comments: Vec<Span>,
    pub keywords: Keywords,
    pub resume: usize,
}

/// A plan the reader gave up inside: its header and the items before `resume`.
pub(super) struct OpenPlan {
    pub keyword: Span,
    pub name: Ident,
    pub open: Span,
    pub items: Vec<PlanItem>,
}

/// Reads `text` into the tree the grammar would build; when the file has
/// anything the grammar would report (or anything this reader does not
/// know), what it read up to the item where it gave up.
pub(super) fn read(text: &str) -> Result<File, Box<Prefix>> {
    let guess = (text.len() >= PARALLEL_THRESHOLD && crate::cores::two_cores())
        .then(|| guess_item_start(text))
        .flatten();
    let Some(guess) = guess else {
        return Reader::new(text, text.len()).read_file();
    };
    // The second half on a second thread, from a guess at where an item of
    // the plan's body starts; the first thread takes its items only if it
    // reaches an item of the body starting exactly there.
    std::thread::scope(|scope| {
        let (send, receive) = std::sync::mpsc::channel();
        scope.spawn(move || {
            let _ = send.send(read_tail(text, guess));
        });
        // Room for the second thread's keywords too, appended to these.
        let mut reader = Reader::new(text, text.len());
        reader.tail = Some((guess, receive));
        reader.read_file()
    })
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    comments: Vec<Span>,
    keywords: Keywords,
    /// The pieces of the string being read (kept to reuse its allocation).
    pieces: Vec<(Piece, Span)>,
    errors: Vec<StringError>,
    /// The items of the step and the fields of the task being read, and the
    /// references of the `after` being read: kept here so that each list of
    /// the tree is allocated once, at its final length. (So is the block
    /// of a plain string, below.)
    step_items: Vec<StepItem>,
    fields: Vec<TaskField>,
    refs: Vec<Ident>,
    /// The block of the plain string being read.
    str_bytes: Vec<u8>,
    /// The complete top-level items.
    items: Vec<TopItem>,
    /// Set when the reader gives up inside a plan's body.
    open_plan: Option<OpenPlan>,
    /// Where the item being read starts: where the grammar takes over if
    /// the reader gives up.
    resume: usize,
    /// Where the second thread started, and its answer.
    tail: Option<(usize, std::sync::mpsc::Receiver<Option<Tail>>)>,
}

/// The ASCII bytes of `ident_char`: letters, digits and `_`.
const ASCII_IDENT_CHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 128 {
        table[byte] = (byte as u8).is_ascii_alphanumeric() || byte == b'_' as usize;
        byte += 1;
    }
    table
};

/// The bytes trivia can start with: whitespace, `#` and the first byte of
/// the byte order mark.
const TRIVIA_START: [bool; 256] = super::limits::byte_set(b" \n\t\r#\xEF");

/// `text` as a `SmolStr`: names and short runs of text are copied byte by
/// byte into it, which is quicker for a few bytes than the general copy.
fn short_str(text: &str) -> SmolStr {
    if text.len() <= 23 {
        SmolStr::new_inline(text)
    } else {
        SmolStr::new(text)
    }
}

/// `XID_START | "_"` of the grammar's `ident_start`.
pub(super) fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || (!c.is_ascii() && pest::unicode::XID_START(c))
}

/// `XID_CONTINUE` of the grammar's `ident_char`.
pub(super) fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || (!c.is_ascii() && pest::unicode::XID_CONTINUE(c))
}

impl<'a> Reader<'a> {
    /// A reader of `text` that expects to read about `bytes` of it.
    fn new(text: &'a str, bytes: usize) -> Reader<'a> {
        Reader {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            comments: Vec::new(),
            // A keyword every 20 bytes or so (the generated plans have one
            // every 20): the list is not grown, and copied, again and again.
            keywords: Keywords::with_capacity(bytes / 20),
            pieces: Vec::new(),
            errors: Vec::new(),
            step_items: Vec::new(),
            fields: Vec::new(),
            refs: Vec::new(),
            str_bytes: Vec::new(),
            items: Vec::new(),
            open_plan: None,
            resume: 0,
            tail: None,
        }
    }

    fn read_file(mut self) -> Result<File, Box<Prefix>> {
        match self.file() {
            Ok(()) => Ok(File {
                items: self.items,
                comments: self.comments,
                keywords: self.keywords,
                unparsed: Vec::new(),
            }),
            Err(GiveUp) => {
                let resume = self.resume;
                self.comments.retain(|c| c.start() < resume);
                self.keywords.retain(|k| k.start() < resume);
                Err(Box::new(Prefix {
                    items: self.items,
                    plan: self.open_plan,
                    comments: self.comments,
                    keywords: self.keywords,
                    resume,
                }))
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn char_at(&self, at: usize) -> Option<char> {
        self.text.get(at..)?.chars().next()
    }

    fn eat(&mut self, byte: u8) -> Read<Span> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(Span::new(self.pos - 1, self.pos))
        } else {
            Err(GiveUp)
        }
    }

    /// Whitespace and comments (the grammar's implicit `WHITESPACE` and
    /// `COMMENT`); comments are recorded.
    ///
    /// Inlined for the common cases, one space or none before a token; the
    /// rest is [`trivia_run`](Self::trivia_run).
    #[inline(always)]
    fn trivia(&mut self) {
        let starts = |at: usize| {
            self.bytes
                .get(at)
                .is_some_and(|&b| TRIVIA_START[b as usize])
        };
        if !starts(self.pos) {
            return;
        }
        if self.bytes[self.pos] == b' ' && !starts(self.pos + 1) {
            self.pos += 1;
            return;
        }
        self.trivia_run();
    }

    #[inline(never)]
    fn trivia_run(&mut self) {
        loop {
            let rest = &self.bytes[self.pos..];
            self.pos += rest
                .iter()
                .position(|&b| !matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
                .unwrap_or(rest.len());
            match self.peek() {
                // U+FEFF, the byte order mark.
                Some(0xEF) if self.bytes[self.pos..].starts_with(b"\xEF\xBB\xBF") => self.pos += 3,
                Some(b'#') => {
                    let start = self.pos;
                    // `!NEWLINE ~ ANY`: a comment ends before `\n` or `\r`.
                    let rest = &self.bytes[start..];
                    let len = rest
                        .iter()
                        .position(|&b| b == b'\n' || b == b'\r')
                        .unwrap_or(rest.len());
                    self.pos += len;
                    self.comments.push(Span::new(start, self.pos));
                }
                _ => return,
            }
        }
    }

    /// The end of `ident_char*` from `from`: inlined for ASCII names, the
    /// rest is [`unicode_ident_chars`](Self::unicode_ident_chars).
    #[inline(always)]
    fn ident_chars(&self, from: usize) -> usize {
        let mut at = from;
        while self
            .bytes
            .get(at)
            .is_some_and(|&b| ASCII_IDENT_CHAR[b as usize])
        {
            at += 1;
        }
        if self.bytes.get(at).is_some_and(|b| !b.is_ascii()) {
            return self.unicode_ident_chars(at);
        }
        at
    }

    #[inline(never)]
    fn unicode_ident_chars(&self, from: usize) -> usize {
        let mut at = from;
        loop {
            // ASCII name characters, by far the most common, by table.
            let rest = &self.bytes[at..];
            at += rest
                .iter()
                .position(|&b| !ASCII_IDENT_CHAR[b as usize])
                .unwrap_or(rest.len());
            match self.bytes.get(at) {
                Some(byte) if !byte.is_ascii() => match self.char_at(at) {
                    Some(c) if ident_char(c) => at += c.len_utf8(),
                    _ => return at,
                },
                _ => return at,
            }
        }
    }

    /// `ident_start ~ ident_char*` at the position, if one starts there.
    #[inline(always)]
    fn word(&mut self) -> Option<Span> {
        let start = self.pos;
        let first = match self.peek()? {
            byte if byte.is_ascii() => byte as char,
            _ => self.char_at(start)?,
        };
        if !ident_start(first) {
            return None;
        }
        self.pos = self.ident_chars(start + first.len_utf8());
        Some(Span::new(start, self.pos))
    }

    fn text_of(&self, span: Span) -> &str {
        &self.text[span.range()]
    }

    fn ident(&self, span: Span) -> Ident {
        Ident {
            name: short_str(self.text_of(span)),
            span,
        }
    }

    /// A name at a declaration: not a keyword (the walker reports those).
    /// The grammar's `ident`: any word, keywords too.
    fn word_ident(&mut self) -> Read<Ident> {
        self.trivia();
        let span = self.word().ok_or(GiveUp)?;
        Ok(self.ident(span))
    }

    fn name(&mut self) -> Read<Ident> {
        self.trivia();
        let span = self.word().ok_or(GiveUp)?;
        if is_keyword(self.text_of(span)) {
            return Err(GiveUp);
        }
        Ok(self.ident(span))
    }

    /// The grammar's `path`: a name or a dotted path whose first part is not
    /// a keyword.
    fn path(&mut self) -> Read<Ident> {
        self.trivia();
        let first = self.word().ok_or(GiveUp)?;
        if is_keyword(self.text_of(first)) {
            return Err(GiveUp);
        }
        let mut end = first.end();
        while self.peek() == Some(b'.') {
            self.pos += 1;
            match self.word() {
                Some(part) => end = part.end(),
                None => {
                    self.pos = end;
                    break;
                }
            }
        }
        Ok(self.ident(Span::new(first.start(), end)))
    }

    /// The next word, recorded as a keyword: the caller gives up unless it
    /// is one that may stand there.
    fn keyword(&mut self) -> Read<(Span, &'a str)> {
        self.trivia();
        let span = self.word().ok_or(GiveUp)?;
        self.keywords.push(span);
        Ok((span, &self.text[span.range()]))
    }

    /// Skips trivia and tells whether `byte` comes next.
    fn next_is(&mut self, byte: u8) -> bool {
        self.trivia();
        self.peek() == Some(byte)
    }

    fn file(&mut self) -> Read<()> {
        loop {
            self.trivia();
            self.resume = self.pos;
            if self.pos == self.bytes.len() {
                return Ok(());
            }
            let (keyword, word) = self.keyword()?;
            let item = match word {
                "import" => {
                    let path = self.string()?;
                    TopItem::Import(Import {
                        span: keyword.to(path.span),
                        path,
                    })
                }
                "plan" => TopItem::Plan(self.plan(keyword)?),
                "template" => TopItem::Template(self.template(keyword)?),
                "role" => TopItem::Role(self.role(keyword)?),
                "param" => TopItem::Param(self.param(keyword.start())?),
                _ => return Err(GiveUp),
            };
            self.items.push(item);
        }
    }

    fn plan(&mut self, keyword: Span) -> Read<Plan> {
        let name = self.name()?;
        self.trivia();
        let open = self.eat(b'{')?;
        let mut items = Vec::new();
        while !self.next_is(b'}') {
            // A plan body is where large files spend their bytes: if an
            // item in it is wrong, the grammar takes over from that item.
            let item_start = self.pos;
            if let Some(mut tail) = self.take_tail(item_start) {
                items.append(&mut tail.items);
                self.comments.append(&mut tail.comments);
                self.keywords.append(&mut tail.keywords);
                self.pos = tail.end;
                continue;
            }
            let item = self
                .keyword()
                .and_then(|(keyword, word)| self.plan_item(keyword, word));
            match item {
                Ok(item) => items.push(item),
                Err(GiveUp) => {
                    self.resume = item_start;
                    self.open_plan = Some(OpenPlan {
                        keyword,
                        name,
                        open,
                        items,
                    });
                    return Err(GiveUp);
                }
            }
        }
        let close = self.eat(b'}')?;
        Ok(Plan {
            span: keyword.to(close),
            name,
            body: Body {
                open,
                close: Some(close),
            },
            items: items.into(),
        })
    }

    fn template(&mut self, keyword: Span) -> Read<Template> {
        let name = self.name()?;
        let params = self.parenthesised(|reader| {
            let name = reader.name()?;
            reader.param_rest(name.span.start(), name)
        })?;
        self.trivia();
        let open = self.eat(b'{')?;
        let mut items = Vec::new();
        while !self.next_is(b'}') {
            let (keyword, word) = self.keyword()?;
            if !matches!(word, "role" | "step" | "task" | "use") {
                return Err(GiveUp);
            }
            items.push(self.plan_item(keyword, word)?);
        }
        let close = self.eat(b'}')?;
        Ok(Template {
            span: keyword.to(close),
            name,
            params,
            body: Body {
                open,
                close: Some(close),
            },
            items: items.into(),
        })
    }

    /// `( item, item, … )` with an optional trailing comma: the grammar's
    /// `"(" ~ (item ~ ("," ~ item)* ~ ","?)? ~ ")"`.
    fn parenthesised<T>(&mut self, mut item: impl FnMut(&mut Self) -> Read<T>) -> Read<Vec<T>> {
        self.trivia();
        self.eat(b'(')?;
        let mut items = Vec::new();
        while !self.next_is(b')') {
            items.push(item(self)?);
            if !self.next_is(b',') {
                break;
            }
            self.pos += 1;
        }
        self.trivia();
        self.eat(b')')?;
        Ok(items)
    }

    fn plan_item(&mut self, keyword: Span, word: &str) -> Read<PlanItem> {
        Ok(match word {
            "task" => PlanItem::Task(Arc::new(self.task(keyword)?)),
            "step" => PlanItem::Step(Arc::new(self.step(keyword)?)),
            "param" => PlanItem::Param(Box::new(self.param(keyword.start())?)),
            "role" => PlanItem::Role(Box::new(self.role(keyword)?)),
            "title" => PlanItem::Title(self.str_field(keyword)?),
            "goal" => PlanItem::Goal(self.str_field(keyword)?),
            "language" => PlanItem::Language(self.str_field(keyword)?),
            "max_iterations" => PlanItem::MaxIterations(self.int_field(keyword)?),
            "transition_rounds" => PlanItem::TransitionRounds(self.int_field(keyword)?),
            "fallback_rounds" => PlanItem::FallbackRounds(self.int_field(keyword)?),
            "retry" => PlanItem::Retry(self.int_field(keyword)?),
            "use" => PlanItem::Use(Box::new(self.use_(keyword)?)),
            _ => return Err(GiveUp),
        })
    }

    fn str_field(&mut self, keyword: Span) -> Read<StrField> {
        let value = self.string()?;
        Ok(StrField {
            span: keyword.to(value.span),
            keyword,
            value,
        })
    }

    fn int_field(&mut self, keyword: Span) -> Read<IntField> {
        self.trivia();
        let value = match self.literal()? {
            Literal::Int(int) => int,
            _ => return Err(GiveUp),
        };
        Ok(IntField {
            span: keyword.to(value.span),
            keyword,
            value,
        })
    }

    /// `param NAME: TYPE [= DEFAULT]`, from after the keyword.
    fn param(&mut self, start: usize) -> Read<Param> {
        let name = self.name()?;
        self.param_rest(start, name)
    }

    /// `: TYPE [= DEFAULT]` of a parameter (or a template's parameter).
    fn param_rest(&mut self, start: usize, name: Ident) -> Read<Param> {
        self.trivia();
        self.eat(b':')?;
        self.trivia();
        // `type_name = @{ ident_char+ }`.
        let from = self.pos;
        self.pos = self.ident_chars(from);
        if self.pos == from {
            return Err(GiveUp);
        }
        let ty = self.ident(Span::new(from, self.pos));
        let mut end = ty.span.end();
        let default = if self.next_is(b'=') {
            self.pos += 1;
            self.trivia();
            let literal = self.literal()?;
            end = literal.span().end();
            Some(literal)
        } else {
            None
        };
        Ok(Param {
            span: Span::new(start, end),
            name,
            ty,
            default,
        })
    }

    /// A string if one comes next (a role's description, a step's title).
    fn optional_string(&mut self) -> Read<Option<Str>> {
        if self.next_is(b'"') {
            self.string().map(Some)
        } else {
            Ok(None)
        }
    }

    fn role(&mut self, keyword: Span) -> Read<Role> {
        let name = self.name()?;
        let description = self.optional_string()?;
        let end = description.as_ref().map_or(name.span, |d| d.span);
        Ok(Role {
            span: keyword.to(end),
            name,
            description,
        })
    }

    fn step(&mut self, keyword: Span) -> Read<Step> {
        let name = self.name()?;
        let title = self.optional_string()?;
        self.trivia();
        let open = self.eat(b'{')?;
        let mark = self.step_items.len();
        while !self.next_is(b'}') {
            let (keyword, word) = self.keyword()?;
            let item = match word {
                "task" => StepItem::Task(Arc::new(self.task(keyword)?)),
                "after" => StepItem::After(Box::new(self.after(keyword)?)),
                "sequential" => StepItem::Sequential(keyword),
                _ => return Err(GiveUp),
            };
            self.step_items.push(item);
        }
        let items = self.step_items.drain(mark..).collect();
        let close = self.eat(b'}')?;
        Ok(Step {
            span: keyword.to(close),
            name,
            title,
            body: Body {
                open,
                close: Some(close),
            },
            items,
        })
    }

    fn task(&mut self, keyword: Span) -> Read<Task> {
        let name = self.name()?;
        let title = self.string()?;
        let mut span = keyword.to(title.span);
        let mut body = None;
        let mut fields = Box::default();
        if self.next_is(b'{') {
            let open = self.eat(b'{')?;
            let mark = self.fields.len();
            while !self.next_is(b'}') {
                let (keyword, word) = self.keyword()?;
                let field = match word {
                    "after" => TaskField::After(self.after(keyword)?),
                    "assignee" => {
                        let role = self.name()?;
                        TaskField::Assignee(Assignee::new(keyword.to(role.span), role))
                    }
                    "reasoning" => TaskField::Reasoning(Box::new(self.str_field(keyword)?)),
                    "description" => TaskField::Description(Box::new(self.str_field(keyword)?)),
                    "retry" => TaskField::Retry(Box::new(self.int_field(keyword)?)),
                    "optional" => TaskField::Optional(keyword),
                    "priority" => {
                        let level = self.word_ident()?;
                        TaskField::Priority {
                            span: keyword.to(level.span),
                            level: Box::new(level),
                        }
                    }
                    _ => return Err(GiveUp),
                };
                self.fields.push(field);
            }
            fields = self.fields.drain(mark..).collect();
            let close = self.eat(b'}')?;
            span = span.to(close);
            body = Some(Body {
                open,
                close: Some(close),
            });
        }
        Ok(Task::new(span, name, title, body, fields))
    }

    fn after(&mut self, keyword: Span) -> Read<After> {
        let mark = self.refs.len();
        let first = self.path()?;
        self.refs.push(first);
        while self.next_is(b',') {
            self.pos += 1;
            let next = self.path()?;
            self.refs.push(next);
        }
        let refs: Box<[Ident]> = self.refs.drain(mark..).collect();
        let last = refs.last().map_or(keyword, |r| r.span);
        Ok(After {
            span: keyword.to(last),
            refs,
        })
    }

    fn use_(&mut self, keyword: Span) -> Read<Use> {
        let template = self.path()?;
        let args = self.parenthesised(|reader| {
            let name = reader.name()?;
            reader.trivia();
            reader.eat(b'=')?;
            reader.trivia();
            let value = reader.literal()?;
            Ok(UseArg {
                span: name.span.to(value.span()),
                name,
                value,
            })
        })?;
        let (_, word) = self.keyword()?;
        if word != "as" {
            return Err(GiveUp);
        }
        let prefix = self.name()?;
        let mut span = keyword.to(prefix.span);
        let mut body = None;
        let mut after = Vec::new();
        if self.next_is(b'{') {
            let open = self.eat(b'{')?;
            while !self.next_is(b'}') {
                let (keyword, word) = self.keyword()?;
                if word != "after" {
                    return Err(GiveUp);
                }
                after.push(self.after(keyword)?);
            }
            let close = self.eat(b'}')?;
            span = span.to(close);
            body = Some(Body {
                open,
                close: Some(close),
            });
        }
        Ok(Use {
            span,
            template,
            args,
            prefix,
            body,
            after,
        })
    }
}

#[cfg(test)]
mod tests;
