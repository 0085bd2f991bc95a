//! A list of things that stand somewhere in the text (definitions,
//! references), in chunks shared between the compilations of successive
//! texts of a file.
//!
//! After an edit, almost everything the last check found moves with the
//! text: what stands before the edit stays, what stands after it moves by
//! as much as the text grew. Copying the whole list to move it cost every
//! keystroke of a 100,000-task file tens of millions of instructions and
//! 20 MB; a [`Shifted`] list instead keeps its items in chunks of
//! [`CHUNK`], each shared (`Arc`) with an offset its items' spans in the
//! edited file are read with. Moving the list ([`Shifted::moved`]) shares
//! every chunk that lies wholly before the edit or wholly after it (adding
//! to the offset of those after it) and copies only the chunks that reach
//! into the edited item. Changing an item copies its chunk. What items
//! name by index in another list (a reference's definition) is
//! renumbered the same way ([`Shifted::renumber`]): a chunk keeps the
//! renumbering and applies it as its items are read.

use std::sync::Arc;

use crate::span::{FileId, Span};

mod split;

use split::Split;

/// The number of items in each chunk a list is built in (a chunk may grow
/// or shrink by later insertions and removals). The library's tests use
/// small chunks, so that the differential tests cross and share chunks.
pub const CHUNK: usize = if cfg!(test) { 8 } else { 1024 };

/// Something that stands in a file at one or more spans.
pub trait Spanned: Clone {
    /// The file its spans are in.
    fn file(&self) -> FileId;
    /// A span covering every span of it.
    fn extent(&self) -> Span;
    /// The same with every span moved by `map` (`None` if one cannot be).
    fn map_spans(&self, map: &impl Fn(Span) -> Option<Span>) -> Option<Self>;
    /// The index (in another list) it names, if any: a reference's
    /// definition.
    fn named(&self) -> Option<usize> {
        None
    }
    /// The same, naming `index` instead.
    fn naming(&self, _index: usize) -> Self {
        self.clone()
    }
}

/// What a renumbering does to the indices items name: one at or after
/// `from` moves by `by` (none with `by` 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Renumber {
    from: usize,
    by: i64,
}

impl Renumber {
    /// `item` renumbered.
    fn apply<T: Spanned>(self, item: T) -> T {
        match item.named() {
            Some(index) if self.by != 0 && index >= self.from => {
                item.naming((index as i64 + self.by) as usize)
            }
            _ => item,
        }
    }

    /// The index `index` names after the renumbering.
    fn index(self, index: usize) -> usize {
        match index >= self.from {
            true => (index as i64 + self.by) as usize,
            false => index,
        }
    }

    /// This renumbering, then `next`, as one; `None` where one cannot say
    /// both. Exact when `next` starts where this one moved its `from`
    /// (an index before `from` stays before it: with `by` < 0, no item
    /// names an index of `from + by..from`, as [`Shifted::renumber`]
    /// requires).
    fn then(self, next: Renumber) -> Option<Renumber> {
        match self.by {
            0 => Some(next),
            _ if next.from as i64 == self.from as i64 + self.by => Some(Renumber {
                from: self.from,
                by: self.by + next.by,
            }),
            _ => None,
        }
    }
}

/// What an edit does to the spans of the edited file, as a list's chunks
/// can tell wholesale: a span that ends at or before `keep_until` stays,
/// one that starts at or after `shift_from` moves by `by`; the caller's
/// `map` (which must agree) moves the others.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub keep_until: usize,
    pub shift_from: usize,
    pub by: i64,
}

/// What [`Shifted::kept`] does with an item.
pub enum Keep<T> {
    /// Kept as it is.
    Same,
    /// Kept, changed.
    Changed(T),
    /// Left out.
    Dropped,
}

/// A list of spanned things in shared chunks (see the module's comment).
#[derive(Clone)]
pub struct Shifted<T> {
    chunks: Vec<Chunk<T>>,
    /// The index after each chunk's last item.
    ends: Vec<usize>,
    /// The file whose items' spans the chunks' offsets move.
    file: Option<FileId>,
}

#[derive(Clone)]
struct Chunk<T> {
    items: Arc<Vec<T>>,
    /// Added to the spans of the items of the list's file (of those after
    /// its split, if it has one).
    by: i64,
    /// Where its items of the list's file part in two that moved apart.
    split: Option<Split>,
    /// What the spans of the items of the list's file cover, as stored
    /// (before `by`): `None` if not known yet, `Some(None)` if none.
    extent: Option<Option<Span>>,
    /// What reading its items does to the indices they name.
    renumber: Renumber,
}

impl<T> Default for Shifted<T> {
    fn default() -> Shifted<T> {
        Shifted {
            chunks: Vec::new(),
            ends: Vec::new(),
            file: None,
        }
    }
}

impl<T: Spanned> Chunk<T> {
    fn new(items: Vec<T>) -> Chunk<T> {
        Chunk {
            items: Arc::new(items),
            by: 0,
            split: None,
            extent: None,
            renumber: Renumber::default(),
        }
    }

    /// Its item as read: moved by the chunk's offset if of `file`, what it
    /// names renumbered.
    fn read(&self, item: &T, file: Option<FileId>) -> T {
        let by = match &self.split {
            None => self.by,
            Some(split) => split.offset(item, self.by),
        };
        self.renumber.apply(read(item, by, file))
    }

    /// The items, as read, to change: its own if not shared and not moved.
    fn items_mut(&mut self, file: Option<FileId>) -> &mut Vec<T> {
        if self.by != 0 || self.renumber.by != 0 || self.split.is_some() {
            let read = self.read_all(file);
            self.items = Arc::new(read);
            self.by = 0;
            self.split = None;
            self.renumber = Renumber::default();
        }
        self.extent = None;
        Arc::make_mut(&mut self.items)
    }

    /// Its items as read, the split looked at once for all of them (a
    /// chunk without one reads them as tightly as before splits were).
    fn read_all(&self, file: Option<FileId>) -> Vec<T> {
        let (by, renumber) = (self.by, self.renumber);
        match self.split {
            None => self
                .items
                .iter()
                .map(|i| renumber.apply(read(i, by, file)))
                .collect(),
            Some(_) => self.items.iter().map(|i| self.read(i, file)).collect(),
        }
    }

    /// What the spans of `file`'s items cover as they stand now (`ours`:
    /// whether `file` is the list's, whose items the offsets move).
    fn extent_now(&self, file: FileId, ours: bool) -> Option<Span> {
        match (&self.split, ours) {
            (Some(split), true) => Some(split.extent(self.by)),
            (_, true) => self.stored_extent(file, true).map(|s| s.shifted(self.by)),
            (_, false) => self.stored_extent(file, false),
        }
    }

    /// The offset an item of `file` is read with (`ours`: whether `file`
    /// is the list's).
    fn offset(&self, item: &T, ours: bool) -> i64 {
        match (&self.split, ours) {
            (_, false) => 0,
            (None, true) => self.by,
            (Some(split), true) => split.offset(item, self.by),
        }
    }

    /// What the spans of `file`'s items cover, as stored (`cached`:
    /// whether the chunk's extent is of `file`'s).
    fn stored_extent(&self, file: FileId, cached: bool) -> Option<Span> {
        if let (Some(extent), true) = (self.extent, cached) {
            return extent;
        }
        self.items
            .iter()
            .filter(|i| i.file() == file)
            .map(Spanned::extent)
            .reduce(|a, b| a.to(b))
    }
}

/// `item` as stored in a chunk read with offset `by` in a list of `file`:
/// moved by `by` if of that file (what it names not renumbered).
fn read<T: Spanned>(item: &T, by: i64, file: Option<FileId>) -> T {
    match by {
        0 => item.clone(),
        by if Some(item.file()) == file => item
            .map_spans(&|span| Some(span.shifted(by)))
            .unwrap_or_else(|| item.clone()),
        _ => item.clone(),
    }
}

impl<T: Spanned> Shifted<T> {
    /// The number of items.
    pub fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The chunk holding item `index`, and where in it.
    fn locate(&self, index: usize) -> Option<(usize, usize)> {
        let chunk = self.ends.partition_point(|&end| end <= index);
        let start = match chunk {
            0 => 0,
            c => self.ends[c - 1],
        };
        (chunk < self.chunks.len()).then_some((chunk, index - start))
    }

    /// Item `index`, as it stands now.
    pub fn get(&self, index: usize) -> Option<T> {
        let (chunk, at) = self.locate(index)?;
        let chunk = &self.chunks[chunk];
        Some(chunk.read(chunk.items.get(at)?, self.file))
    }

    /// The items in order, as they stand now.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.iter_from(0)
    }

    /// The items from `index` on, in order.
    pub fn iter_from(&self, index: usize) -> impl Iterator<Item = T> + '_ {
        let (first, at) = self.locate(index).unwrap_or((self.chunks.len(), 0));
        let file = self.file;
        self.chunks[first..]
            .iter()
            .enumerate()
            .flat_map(move |(c, chunk)| {
                let skip = if c == 0 { at } else { 0 };
                chunk.items[skip..].iter().map(move |i| chunk.read(i, file))
            })
    }

    /// The items in order as stored, without copying them: their spans in
    /// the list's file may lie before where they stand now (read those
    /// with [`get`](Self::get) or [`iter`](Self::iter)), and so may the
    /// indices they name in a renumbered list (read those with
    /// [`unmoved_named`](Self::unmoved_named)). For scans that look at
    /// anything but spans and indices (a name, a kind).
    pub fn unmoved(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks.iter().flat_map(|chunk| chunk.items.iter())
    }

    /// The items in order, naming what they name now, their spans as
    /// stored (as [`unmoved`](Self::unmoved)'s): for scans of what
    /// references name (a copy of each, no span moved).
    pub fn unmoved_named(&self) -> impl Iterator<Item = T> + '_ {
        self.chunks.iter().flat_map(|chunk| {
            let renumber = chunk.renumber;
            chunk.items.iter().map(move |i| renumber.apply(i.clone()))
        })
    }

    /// The indices of the items of `file` whose spans, as they stand now,
    /// lie within `span`, in order: the chunks whose items of `file` all
    /// lie outside it are passed over by their extents.
    pub fn within(&self, file: FileId, span: Span) -> Vec<usize> {
        let cached = self.file == Some(file);
        let mut found = Vec::new();
        let mut start = 0;
        for chunk in &self.chunks {
            let reaches = chunk
                .extent_now(file, cached)
                .is_some_and(|now| now.start() <= span.end() && span.start() <= now.end());
            if reaches {
                for (at, item) in chunk.items.iter().enumerate() {
                    let now = item.extent().shifted(chunk.offset(item, cached));
                    let inside = span.start() <= now.start() && now.end() <= span.end();
                    if item.file() == file && inside {
                        found.push(start + at);
                    }
                }
            }
            start += chunk.items.len();
        }
        found
    }

    /// Whether `found` holds for an item, given its index and the index it
    /// names now (the items that name none passed over), in order: the
    /// first it holds for ends the scan. Each chunk's renumbering is looked
    /// at once, not per item.
    pub fn any_named(&self, mut found: impl FnMut(usize, usize) -> bool) -> bool {
        let mut start = 0;
        for chunk in &self.chunks {
            let renumber = chunk.renumber;
            let mut items = chunk.items.iter().enumerate();
            let any = match renumber.by {
                0 => items.any(|(at, i)| i.named().is_some_and(|n| found(start + at, n))),
                _ => items.any(|(at, i)| {
                    i.named()
                        .is_some_and(|n| found(start + at, renumber.index(n)))
                }),
            };
            if any {
                return true;
            }
            start += chunk.items.len();
        }
        false
    }

    /// The items `range`, in order.
    pub fn range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = T> + '_ {
        self.iter_from(range.start).take(range.len())
    }

    /// The index of the first item of `range` for which `pred` is false,
    /// the items of `range` being those for which it is true first.
    pub fn partition_point(
        &self,
        range: std::ops::Range<usize>,
        pred: impl Fn(&T) -> bool,
    ) -> usize {
        let (mut low, mut high) = (range.start, range.end.min(self.len()));
        while low < high {
            let middle = low + (high - low) / 2;
            match self.get(middle).is_some_and(|item| pred(&item)) {
                true => low = middle + 1,
                false => high = middle,
            }
        }
        low
    }

    /// Adds an item at the end.
    pub fn push(&mut self, item: T) {
        let file = self.file;
        match self.chunks.last_mut() {
            Some(last) if last.items.len() < CHUNK => last.items_mut(file).push(item),
            _ => {
                self.chunks.push(Chunk::new(Vec::with_capacity(CHUNK)));
                self.ends.push(self.len());
                if let Some(last) = self.chunks.last_mut() {
                    last.items_mut(file).push(item);
                }
            }
        }
        if let Some(end) = self.ends.last_mut() {
            *end += 1;
        }
    }

    /// Replaces item `index` (copying its chunk if shared).
    pub fn set(&mut self, index: usize, item: T) -> Option<()> {
        let (chunk, at) = self.locate(index)?;
        let file = self.file;
        *self.chunks[chunk].items_mut(file).get_mut(at)? = item;
        Some(())
    }

    /// Puts `items` before item `index` (or at the end), in order.
    pub fn insert(&mut self, index: usize, items: Vec<T>) {
        if items.is_empty() {
            return;
        }
        let Some((chunk, at)) = self.locate(index).or_else(|| {
            let last = self.chunks.len().checked_sub(1)?;
            Some((last, self.chunks[last].items.len()))
        }) else {
            items.into_iter().for_each(|item| self.push(item));
            return;
        };
        let file = self.file;
        let list = self.chunks[chunk].items_mut(file);
        list.splice(at..at, items);
        self.split_if_long(chunk);
        self.count();
    }

    /// Leaves out the items at `indices` (sorted, each once), copying only
    /// the chunks that held them.
    pub fn remove(&mut self, indices: &[usize]) {
        let mut gone = indices.iter().peekable();
        let file = self.file;
        let mut start = 0;
        for (chunk, &end) in self.chunks.iter_mut().zip(&self.ends) {
            if gone.peek().is_some_and(|&&i| i < end) {
                let mut index = start;
                chunk.items_mut(file).retain(|_| {
                    let keep = gone.next_if(|&&i| i == index).is_none();
                    index += 1;
                    keep
                });
            }
            start = end;
        }
        self.chunks.retain(|c| !c.items.is_empty());
        self.count();
    }

    /// Puts `items` in place of the items `range`, copying only the chunks
    /// that held them.
    pub fn replace(&mut self, range: std::ops::Range<usize>, items: Vec<T>) {
        let within = self
            .locate(range.start)
            .filter(|&(chunk, at)| at + range.len() <= self.chunks[chunk].items.len());
        let Some((chunk, at)) = within else {
            let gone: Vec<usize> = range.clone().collect();
            self.remove(&gone);
            self.insert(range.start, items);
            return;
        };
        // Most often a few items of one chunk: that chunk alone is copied,
        // the chunks' ends after it moved.
        let grown = items.len() as i64 - range.len() as i64;
        let file = self.file;
        let list = self.chunks[chunk].items_mut(file);
        list.splice(at..at + range.len(), items);
        if list.is_empty() || list.len() > 2 * CHUNK {
            self.split_if_long(chunk);
            self.chunks.retain(|c| !c.items.is_empty());
            self.count();
            return;
        }
        for end in &mut self.ends[chunk..] {
            *end = (*end as i64 + grown) as usize;
        }
    }

    /// Every item naming an index at or after `from` names it plus `by`
    /// from now on (the list they name grew by `by` before `from`), no
    /// chunk copied: each keeps the renumbering (see [`Renumber::then`]).
    /// With `by` < 0 the indices `from + by..from` are gone: the items that
    /// name one of them (read as they are: renumbering leaves them) must be
    /// left out or replaced before the list is renumbered again.
    pub fn renumber(&mut self, from: usize, by: i64) {
        let next = Renumber { from, by };
        let file = self.file;
        for chunk in &mut self.chunks {
            chunk.renumber = match chunk.renumber.then(next) {
                Some(both) => both,
                None => {
                    // Read as it stands first (a copy of the chunk).
                    chunk.items_mut(file);
                    next
                }
            };
        }
    }

    /// Splits a chunk grown past twice [`CHUNK`] in two.
    fn split_if_long(&mut self, chunk: usize) {
        if self.chunks[chunk].items.len() <= 2 * CHUNK {
            return;
        }
        let file = self.file;
        let tail = self.chunks[chunk].items_mut(file).split_off(CHUNK);
        self.chunks.insert(chunk + 1, Chunk::new(tail));
    }

    /// The number of chunks.
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// How many of the chunks are shared with `other` (the same
    /// allocation).
    pub fn chunks_shared_with(&self, other: &Shifted<T>) -> usize {
        let theirs: std::collections::HashSet<*const Vec<T>> =
            other.chunks.iter().map(|c| Arc::as_ptr(&c.items)).collect();
        self.chunks
            .iter()
            .filter(|c| theirs.contains(&Arc::as_ptr(&c.items)))
            .count()
    }

    /// Counts the chunks' ends again.
    fn count(&mut self) {
        let mut end = 0;
        self.ends.clear();
        for chunk in &self.chunks {
            end += chunk.items.len();
            self.ends.push(end);
        }
    }

    /// The list with each item (as it stands, with its index) kept as it
    /// is, changed or left out by `keep`: the chunks whose items it all
    /// keeps as they are shared, the others copied. `None` where `keep`
    /// gives `None`.
    pub fn kept(&self, mut keep: impl FnMut(usize, &T) -> Option<Keep<T>>) -> Option<Shifted<T>> {
        let file = self.file;
        let mut chunks = Vec::with_capacity(self.chunks.len());
        let mut start = 0;
        for chunk in &self.chunks {
            let mut copied: Option<Vec<T>> = None;
            for (at, item) in chunk.items.iter().enumerate() {
                let now = chunk.read(item, file);
                match (keep(start + at, &now)?, &mut copied) {
                    (Keep::Same, None) => {}
                    (Keep::Same, Some(copied)) => copied.push(now),
                    (keep, copied) => {
                        let copied = copied.get_or_insert_with(|| {
                            let before = chunk.items[..at].iter();
                            let mut items = Vec::with_capacity(chunk.items.len());
                            items.extend(before.map(|i| chunk.read(i, file)));
                            items
                        });
                        if let Keep::Changed(item) = keep {
                            copied.push(item);
                        }
                    }
                }
            }
            start += chunk.items.len();
            match copied {
                None => chunks.push(chunk.clone()),
                Some(items) if items.is_empty() => {}
                Some(items) => chunks.push(Chunk::new(items)),
            }
        }
        let mut list = Shifted {
            chunks,
            ends: Vec::new(),
            file,
        };
        list.count();
        Some(list)
    }

    /// The list after an edit of `file`: the chunks whose items of `file`
    /// all lie before the edit's window, or all after it, shared (those
    /// after moved by `window.by`); the others copied with their items'
    /// spans moved by `map`. `None` where `map` gives `None`.
    pub fn moved(
        &self,
        file: FileId,
        window: Window,
        map: &impl Fn(Span) -> Option<Span>,
    ) -> Option<Shifted<T>> {
        let moved_before = |c: &Chunk<T>| c.by != 0 || c.split.is_some();
        if self.file.is_some_and(|f| f != file) && self.chunks.iter().any(moved_before) {
            // Moved for another file before (not met: a compilation's edits
            // are of its root file): read every item as it stands first.
            let flat: Shifted<T> = self.iter().collect();
            return flat.moved(file, window, map);
        }
        let cached = self.file == Some(file);
        let mut chunks = Vec::with_capacity(self.chunks.len());
        for chunk in &self.chunks {
            let shared = match chunk.split {
                // (A list with a split chunk is of `file`: see above.)
                Some(split) => chunk.split_moved(split, window),
                None => {
                    let stored = chunk.stored_extent(file, cached);
                    match stored.map(|s| s.shifted(chunk.by)) {
                        None => Some(Chunk {
                            extent: Some(None),
                            ..chunk.clone()
                        }),
                        Some(now) if now.end() <= window.keep_until => Some(Chunk {
                            extent: Some(stored),
                            ..chunk.clone()
                        }),
                        Some(now) if now.start() >= window.shift_from => Some(Chunk {
                            items: Arc::clone(&chunk.items),
                            by: chunk.by + window.by,
                            split: None,
                            extent: Some(stored),
                            renumber: chunk.renumber,
                        }),
                        Some(_) => chunk.parted(file, window),
                    }
                }
            };
            let moved = match shared {
                Some(shared) => shared,
                None => {
                    // The items the window tells need no `map` (which
                    // agrees with it): those before it stay, those after it
                    // move by its offset.
                    let mut items = chunk.read_all(Some(file));
                    let shift = |span: Span| Some(span.shifted(window.by));
                    for item in items.iter_mut().filter(|i| i.file() == file) {
                        let now = item.extent();
                        if now.end() <= window.keep_until {
                            continue;
                        }
                        *item = match now.start() >= window.shift_from {
                            true => item.map_spans(&shift)?,
                            false => item.map_spans(map)?,
                        };
                    }
                    let mut copied = Chunk::new(items);
                    copied.extent = Some(copied.stored_extent(file, false));
                    copied
                }
            };
            chunks.push(moved);
        }
        Some(Shifted {
            chunks,
            ends: self.ends.clone(),
            file: Some(file),
        })
    }
}

/// One chunk of a [`Shifted`] list, held apart from the list: its items
/// as stored and the offset they are read with. Two lists (of successive
/// texts) hold the same chunk when they share its allocation
/// ([`ChunkRef::same`]); its items then are the same, each moved by the
/// difference of the two offsets (and naming what they name, as both
/// lists renumber it alike).
#[derive(Clone)]
pub struct ChunkRef<T> {
    items: Arc<Vec<T>>,
    by: i64,
    /// Where its items part in two read with different offsets.
    split: Option<Split>,
    /// What reading its items does to the indices they name.
    renumber: Renumber,
    /// The list's file, whose items' spans `by` moves.
    file: Option<FileId>,
    /// The chunk's cached extent, as stored (see [`Chunk::extent`]).
    extent: Option<Option<Span>>,
}

impl<T: Spanned> ChunkRef<T> {
    /// Whether `other` is this chunk (the same allocation), wherever each
    /// list reads it from.
    pub fn same(&self, other: &ChunkRef<T>) -> bool {
        Arc::ptr_eq(&self.items, &other.items)
            && self.renumber == other.renumber
            && self.split == other.split
    }

    /// How far the spans of its items of `file` moved since they were
    /// stored (those after its split, if it has one: two lists hold it as
    /// the same chunk only with the same split, the part before it moved
    /// alike).
    pub fn by(&self, file: FileId) -> i64 {
        match self.file == Some(file) {
            true => self.by,
            false => 0,
        }
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The items as stored (spans not moved, indices they name not
    /// renumbered): for what is neither.
    pub fn unmoved(&self) -> &[T] {
        &self.items
    }

    /// The items as they stand now.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        let (renumber, split) = (self.renumber, self.split);
        self.items.iter().map(move |item| {
            let by = split.map_or(self.by, |split| split.offset(item, self.by));
            renumber.apply(read(item, by, self.file))
        })
    }

    /// What the spans of its items of `file` cover as they stand now
    /// (`None`: it has none).
    pub fn extent(&self, file: FileId) -> Option<Span> {
        let cached = self.file == Some(file);
        if let (Some(split), true) = (self.split, cached) {
            return Some(split.extent(self.by));
        }
        let stored = match (self.extent, cached) {
            (Some(extent), true) => extent,
            _ => self
                .items
                .iter()
                .filter(|i| i.file() == file)
                .map(Spanned::extent)
                .reduce(|a, b| a.to(b)),
        };
        stored.map(|s| s.shifted(self.by(file)))
    }
}

impl<T: Spanned> Shifted<T> {
    /// Its chunks, held (each an `Arc` shared with the list), in order.
    pub fn chunk_refs(&self) -> Vec<ChunkRef<T>> {
        self.chunks
            .iter()
            .map(|chunk| ChunkRef {
                items: Arc::clone(&chunk.items),
                by: chunk.by,
                split: chunk.split,
                renumber: chunk.renumber,
                file: self.file,
                extent: chunk.extent,
            })
            .collect()
    }
}

impl<'a, T: Spanned> IntoIterator for &'a Shifted<T> {
    type Item = T;
    type IntoIter = Box<dyn Iterator<Item = T> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl<T: Spanned> FromIterator<T> for Shifted<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Shifted<T> {
        let mut list = Shifted::default();
        items.into_iter().for_each(|item| list.push(item));
        list
    }
}

impl<T: Spanned> Extend<T> for Shifted<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        items.into_iter().for_each(|item| self.push(item));
    }
}

impl<T: Spanned> From<Vec<T>> for Shifted<T> {
    /// The items, moved into chunks (no check per item).
    fn from(items: Vec<T>) -> Shifted<T> {
        let mut list = Shifted::default();
        let mut items = items.into_iter();
        loop {
            let chunk: Vec<T> = items.by_ref().take(CHUNK).collect();
            if chunk.is_empty() {
                break;
            }
            list.ends.push(list.len() + chunk.len());
            list.chunks.push(Chunk::new(chunk));
        }
        list
    }
}

impl<T: Spanned + PartialEq> PartialEq for Shifted<T> {
    fn eq(&self, other: &Shifted<T>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Spanned + std::fmt::Debug> std::fmt::Debug for Shifted<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Spanned for super::Definition {
    fn file(&self) -> FileId {
        super::Definition::file(self)
    }

    fn extent(&self) -> Span {
        self.span().to(self.full_span())
    }

    fn map_spans(&self, map: &impl Fn(Span) -> Option<Span>) -> Option<Self> {
        Some(self.at(map(self.span())?, map(self.full_span())?))
    }
}

impl Spanned for super::Reference {
    fn file(&self) -> FileId {
        self.file
    }

    fn extent(&self) -> Span {
        self.span
    }

    fn map_spans(&self, map: &impl Fn(Span) -> Option<Span>) -> Option<Self> {
        Some(super::Reference {
            span: map(self.span)?,
            ..*self
        })
    }

    fn named(&self) -> Option<usize> {
        Some(self.definition as usize)
    }

    fn naming(&self, index: usize) -> Self {
        super::Reference {
            definition: index as u32,
            ..*self
        }
    }
}

#[cfg(test)]
mod tests;
