//! The plan documents the paged reads (`task_pages.rs`) last read, kept
//! between reads: a 100,000-task document costs a debug server most of a
//! second to read, a window of it should cost milliseconds.
//!
//! A kept document is used only while it is the plan as it is: no event
//! past its revision, and the plan's creation still the one it was read
//! after (a plan started over or created again has a new first event).
//! Both are two one-row reads of the plan's events, on every store (so a
//! change made by another server on the same PostgreSQL database is seen
//! too). A single state file repeats its events' positions when its plan
//! is started over, so nothing is kept for it. Nor is anything kept for a
//! plan whose committed state the store keeps in memory (SQLite's kept
//! runner, [`PlanStore::read_kept_plan`], which waits for queued changes to be
//! committed and makes the runner when it has none): the reads answer from
//! that, so a 100,000-task plan is held once, not twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::document::PlanDocument;
use crate::runner::{KeptPlan, OpError, PlanStore};

/// How many plans' documents are kept at once.
const KEPT_PLANS: usize = 4;

/// The documents kept, by plan id.
#[derive(Debug, Default)]
pub struct DocCache {
    plans: Mutex<HashMap<String, Kept>>,
    /// One lock a plan, held while its document is checked and read: the
    /// reads a page makes at once (summary, window, held tasks) read a
    /// changed document once, not once each.
    reading: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Counts reads, to forget the least recently used.
    clock: Mutex<u64>,
}

/// One plan's document and what it was read after.
#[derive(Debug)]
struct Kept {
    /// The position of the plan's first event when it was read.
    created: u64,
    doc: Arc<PlanDocument>,
    /// The read that last used it.
    used: u64,
}

impl DocCache {
    /// Plan `plan_id`'s document as it is now (`PLAN_NOT_FOUND` when there
    /// is none): the kept one when no change came since, else read again.
    pub fn read(&self, store: &dyn PlanStore, plan_id: &str) -> Result<Arc<PlanDocument>, OpError> {
        if !keeps(store) {
            return store.load(plan_id).map(Arc::new);
        }
        let turn = {
            let mut reading = self.reading.lock().unwrap_or_else(|e| e.into_inner());
            if reading.len() >= 64 {
                // Only the plans read at this moment keep a lock.
                reading.retain(|_, turn| Arc::strong_count(turn) > 1);
            }
            Arc::clone(reading.entry(plan_id.to_owned()).or_default())
        };
        let _turn = turn.lock().unwrap_or_else(|e| e.into_inner());
        let created = store
            .events(plan_id, 0, 1)?
            .first()
            .map_or(0, |event| event.position);
        let now = self.tick();
        let kept = self.lock().get_mut(plan_id).and_then(|kept| {
            kept.used = now;
            (kept.created == created).then(|| Arc::clone(&kept.doc))
        });
        if let Some(doc) = kept {
            if store.events(plan_id, doc.state.revision, 1)?.is_empty() {
                return Ok(doc);
            }
        }
        let doc = Arc::new(store.load(plan_id)?);
        let mut plans = self.lock();
        plans.insert(
            plan_id.to_owned(),
            Kept {
                created,
                doc: Arc::clone(&doc),
                used: now,
            },
        );
        while plans.len() > KEPT_PLANS {
            let oldest = plans
                .iter()
                .min_by_key(|(_, kept)| kept.used)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(id) => plans.remove(&id),
                None => break,
            };
        }
        Ok(doc)
    }

    /// `kept` of plan `plan_id` as the store keeps it in memory ([`KeptPlan`]:
    /// its indexes answer a page or the summary without a pass over the
    /// tasks; no document is kept here then), else `plain` of
    /// [`DocCache::read`]'s document.
    pub fn answer_kept<T>(
        &self,
        store: &dyn PlanStore,
        plan_id: &str,
        kept: impl FnOnce(&KeptPlan<'_>) -> T,
        plain: impl FnOnce(&PlanDocument) -> T,
    ) -> Result<T, OpError> {
        let mut kept = Some(kept);
        let mut answered = None;
        if store.read_kept_plan(plan_id, &mut |plan| {
            answered = kept.take().map(|kept| kept(plan));
        })? {
            if let Some(answered) = answered {
                self.lock().remove(plan_id);
                return Ok(answered);
            }
        }
        Ok(plain(self.read(store, plan_id)?.as_ref()))
    }

    /// Forgets plan `plan_id` (deleted).
    pub fn forget(&self, plan_id: &str) {
        self.lock().remove(plan_id);
        self.reading
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(plan_id);
    }

    fn tick(&self) -> u64 {
        let mut clock = self.clock.lock().unwrap_or_else(|e| e.into_inner());
        *clock += 1;
        *clock
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Kept>> {
        self.plans.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether documents of `store` are kept: not for a single state file,
/// whose positions repeat.
fn keeps(store: &dyn PlanStore) -> bool {
    let url = store.url();
    url.starts_with("sqlite:") || url.starts_with("postgres") || url.starts_with("dir:")
}
