//! The items of a plan or template body, which an edit moves without copying.

use std::ops::Index;
use std::sync::OnceLock;

use super::PlanItem;
use crate::span::Span;

/// The items of a plan or template body, in source order.
///
/// After an edit, the items that follow it are the old tree's own, shared,
/// with how far the edit moved them: a keystroke copies none of the steps
/// and tasks after it. An item is moved (copied with its spans moved) the
/// first time it is looked at, and kept. Everything but
/// [`Items::unmoved`] gives the items as they stand in the text.
#[derive(Clone, Default)]
pub struct Items {
    slots: Vec<Slot>,
}

#[derive(Clone)]
struct Slot {
    /// The item as it was read, maybe from an older text.
    item: PlanItem,
    /// How far the text moved the item since it was read.
    shift: i64,
    /// The item moved, made when first asked for (never when `shift` is 0).
    moved: OnceLock<Box<PlanItem>>,
}

impl Slot {
    fn new(item: PlanItem) -> Slot {
        Slot {
            item,
            shift: 0,
            moved: OnceLock::new(),
        }
    }

    fn get(&self) -> &PlanItem {
        if self.shift == 0 {
            return &self.item;
        }
        self.moved
            .get_or_init(|| Box::new(crate::syntax::reparse::shifted(&self.item, self.shift)))
    }

    /// The same item, moved `by` bytes further (without copying it).
    fn moved_by(&self, by: i64) -> Slot {
        match self.moved.get() {
            // Already moved once: start from that copy.
            Some(moved) => Slot {
                item: (**moved).clone(),
                shift: by,
                moved: OnceLock::new(),
            },
            None => Slot {
                item: self.item.clone(),
                shift: self.shift + by,
                moved: OnceLock::new(),
            },
        }
    }
}

impl Items {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&PlanItem> {
        self.slots.get(index).map(Slot::get)
    }

    pub fn first(&self) -> Option<&PlanItem> {
        self.get(0)
    }

    pub fn last(&self) -> Option<&PlanItem> {
        self.len().checked_sub(1).and_then(|last| self.get(last))
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter(self.slots.iter())
    }

    /// The span of an item as it stands in the text (without moving it).
    pub fn span(&self, index: usize) -> Span {
        let slot = &self.slots[index];
        crate::syntax::reparse::item_span(&slot.item).shifted(slot.shift)
    }

    /// The number of items before the first whose span makes `pred` false
    /// (`pred` true for a first part of the items, as the spans are in
    /// order), without moving any.
    pub fn partition_point(&self, mut pred: impl FnMut(Span) -> bool) -> usize {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = low + (high - low) / 2;
            if pred(self.span(middle)) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    }

    /// The items as they were read, for what reads no span of theirs (which
    /// kind each is, what names and strings it holds): an item after an edit
    /// is given with the spans of the text it was read from.
    pub fn unmoved(&self) -> impl ExactSizeIterator<Item = &PlanItem> + Clone {
        self.slots.iter().map(|slot| &slot.item)
    }

    /// Item `index` as it was read, and how far the text moved it since:
    /// for what moves the spans it reads itself (semantic tokens), copying
    /// nothing.
    pub(crate) fn unmoved_at(&self, index: usize) -> Option<(&PlanItem, i64)> {
        self.slots.get(index).map(|slot| (&slot.item, slot.shift))
    }

    /// These items, all moved `by` bytes, shared, not copied (each is
    /// moved when first looked at).
    pub(crate) fn moved_by(&self, by: i64) -> Items {
        Items {
            slots: self.slots.iter().map(|slot| slot.moved_by(by)).collect(),
        }
    }

    /// These items with `item` in place of the one at `index`, and those
    /// after it moved `by` bytes; the others are shared, not copied.
    pub(crate) fn replaced(&self, index: usize, item: PlanItem, by: i64) -> Items {
        let mut slots = Vec::with_capacity(self.slots.len());
        slots.extend_from_slice(&self.slots[..index]);
        slots.push(Slot::new(item));
        slots.extend(self.slots[index + 1..].iter().map(|slot| slot.moved_by(by)));
        Items { slots }
    }
}

impl From<Vec<PlanItem>> for Items {
    fn from(items: Vec<PlanItem>) -> Items {
        items.into_iter().collect()
    }
}

impl FromIterator<PlanItem> for Items {
    fn from_iter<I: IntoIterator<Item = PlanItem>>(items: I) -> Items {
        Items {
            slots: items.into_iter().map(Slot::new).collect(),
        }
    }
}

impl Index<usize> for Items {
    type Output = PlanItem;

    fn index(&self, index: usize) -> &PlanItem {
        self.slots[index].get()
    }
}

impl<'a> IntoIterator for &'a Items {
    type Item = &'a PlanItem;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The items of a body as they stand in the text.
#[derive(Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, Slot>);

impl<'a> Iterator for Iter<'a> {
    type Item = &'a PlanItem;

    fn next(&mut self) -> Option<&'a PlanItem> {
        self.0.next().map(Slot::get)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(Slot::get)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl PartialEq for Items {
    fn eq(&self, other: &Items) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for Items {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::FileId;
    use crate::syntax::ast::TopItem;
    use crate::syntax::reparse::item_span;

    fn items(text: &str) -> Items {
        let parsed = crate::syntax::parse(text, FileId(0));
        match parsed.file.items.into_iter().next() {
            Some(TopItem::Plan(plan)) => plan.items,
            _ => panic!("a plan"),
        }
    }

    /// Every item's span as `Items::span` gives it, as the moved item has
    /// it, and as `partition_point` finds it.
    fn assert_in_place(items: &Items, text: &str) {
        for i in 0..items.len() {
            assert_eq!(items.span(i), item_span(&items[i]), "item {i}");
            let start = items.span(i).start();
            assert_eq!(items.partition_point(|s| s.start() < start), i);
            let at = &text[items.span(i).range()];
            assert!(
                ["task", "step", "goal"].iter().any(|k| at.starts_with(k)),
                "{at}"
            );
        }
    }

    #[test]
    fn items_after_a_replaced_one_move_when_looked_at_and_not_before() {
        let text = "plan p {\n  goal \"G\"\n  task a \"A\"\n  step s \"S\" {\n    task b \"B\"\n  }\n  task c \"C\"\n}\n";
        let old = items(text);
        // `task a "A"` becomes `task a "AAA"`: the items after it move by 2.
        let longer = text.replace("\"A\"", "\"AAA\"");
        let edited = items(&longer);
        let moved = old.replaced(1, edited[1].clone(), 2);
        assert_eq!(moved, edited);
        assert_in_place(&moved, &longer);
        // As read, the items after it have the old text's spans.
        let unmoved: Vec<Span> = moved.unmoved().map(item_span).collect();
        assert_eq!(unmoved[2], old.span(2));
        // Moved back (the edit taken back): the old items, as they were.
        let back = moved.replaced(1, old[1].clone(), -2);
        assert_eq!(back, old);
        assert_in_place(&back, text);
        // A moved copy once made is where the next move starts from.
        let again = moved.replaced(1, edited[1].clone(), 0);
        assert_eq!(again, edited);
        assert_eq!(again.unmoved().map(item_span).nth(2), Some(edited.span(2)));
    }
}
