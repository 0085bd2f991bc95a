//! The spans of a file's keywords, 4 bytes each.

use crate::span::Span;

/// The spans of a file's keywords, in source order: 4 bytes a keyword (a
/// large plan has one every 20 bytes or so), where a [`Span`] takes 8.
///
/// A keyword is kept as where it starts (26 bits: planc reads files of at
/// most 64 MiB) and its length (6 bits: the longest keyword has 17 bytes),
/// in that order, so the numbers sort as the spans do. A keyword past what
/// that holds (in a file over the limit, refused) is not kept.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Keywords(Vec<u32>);

const LEN_BITS: u32 = 6;
const LEN_MASK: u32 = (1 << LEN_BITS) - 1;

fn packed(span: Span) -> Option<u32> {
    let start = u32::try_from(span.start()).ok()?;
    let len = u32::try_from(span.len()).ok()?;
    (start < 1 << (32 - LEN_BITS) && len <= LEN_MASK).then_some(start << LEN_BITS | len)
}

fn unpacked(keyword: u32) -> Span {
    let start = (keyword >> LEN_BITS) as usize;
    Span::new(start, start + (keyword & LEN_MASK) as usize)
}

impl Keywords {
    /// No keywords, with room for `capacity`.
    pub fn with_capacity(capacity: usize) -> Keywords {
        Keywords(Vec::with_capacity(capacity))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds the keyword at `span`, after those there are.
    pub fn push(&mut self, span: Span) {
        self.0.extend(packed(span));
    }

    /// Keyword `index`.
    pub fn get(&self, index: usize) -> Option<Span> {
        self.0.get(index).copied().map(unpacked)
    }

    /// The keywords, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Span> + ExactSizeIterator + '_ {
        self.0.iter().copied().map(unpacked)
    }

    /// Keywords `range`, in order.
    pub fn slice(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl DoubleEndedIterator<Item = Span> + ExactSizeIterator + '_ {
        self.0[range].iter().copied().map(unpacked)
    }

    /// The number of keywords before the first whose span makes `pred`
    /// false (`pred` true for a first part of them).
    pub fn partition_point(&self, mut pred: impl FnMut(Span) -> bool) -> usize {
        self.0.partition_point(|&k| pred(unpacked(k)))
    }

    /// Keeps the keywords whose span makes `keep` true.
    pub fn retain(&mut self, mut keep: impl FnMut(Span) -> bool) {
        self.0.retain(|&k| keep(unpacked(k)));
    }

    /// Moves the keywords of `other` after these.
    pub fn append(&mut self, other: &mut Keywords) {
        self.0.append(&mut other.0);
    }

    /// Puts the keywords in source order.
    pub fn sort(&mut self) {
        self.0.sort_unstable();
    }

    /// These keywords with those of `range` replaced by `new` (sorted
    /// here), and `map` applied to those after them.
    pub fn spliced(
        &self,
        range: std::ops::Range<usize>,
        mut new: Keywords,
        map: impl Fn(Span) -> Span,
    ) -> Keywords {
        new.sort();
        let mut out = Vec::with_capacity(self.len() - range.len() + new.len());
        out.extend_from_slice(&self.0[..range.start]);
        out.append(&mut new.0);
        let after = self.0[range.end..].iter().map(|&k| map(unpacked(k)));
        out.extend(after.filter_map(packed));
        Keywords(out)
    }
}

impl FromIterator<Span> for Keywords {
    fn from_iter<I: IntoIterator<Item = Span>>(spans: I) -> Keywords {
        let mut keywords = Keywords::default();
        keywords.extend(spans);
        keywords
    }
}

impl Extend<Span> for Keywords {
    fn extend<I: IntoIterator<Item = Span>>(&mut self, spans: I) {
        self.0.extend(spans.into_iter().filter_map(packed));
    }
}

impl From<Vec<Span>> for Keywords {
    fn from(spans: Vec<Span>) -> Keywords {
        let mut keywords = Keywords::with_capacity(spans.len());
        keywords.extend(spans);
        keywords
    }
}

impl IntoIterator for Keywords {
    type Item = Span;
    type IntoIter = std::iter::Map<std::vec::IntoIter<u32>, fn(u32) -> Span>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().map(unpacked as fn(u32) -> Span)
    }
}

impl std::fmt::Debug for Keywords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_read_back_as_written_and_sort_as_their_spans() {
        let spans = [
            Span::new(40, 44),
            Span::new(0, 4),
            Span::new(5, 22),
            Span::new(5, 9),
        ];
        let mut keywords: Keywords = spans.into_iter().collect();
        assert_eq!(keywords.iter().collect::<Vec<_>>(), spans);
        keywords.sort();
        let mut sorted = spans;
        sorted.sort_unstable();
        assert_eq!(keywords.iter().collect::<Vec<_>>(), sorted);
        assert_eq!(keywords.partition_point(|k| k.start() < 5), 1);
        // The last offset a 64 MiB file has, and the one past it.
        let last = Span::new((64 << 20) - 8, (64 << 20) - 1);
        let past: Keywords = [last, Span::new(64 << 20, (64 << 20) + 4)]
            .into_iter()
            .collect();
        assert_eq!(past.iter().collect::<Vec<_>>(), [last]);
    }
}
