//! One JSON state file as a [`PlanStore`]: [`JsonFileStore`], by URL (its
//! plan id the document's) or by path (`planc run STATE`, `planc mcp
//! STATE`: its one plan, whatever it is called).

use std::path::Path;
use std::sync::Arc;

use crate::document::PlanDocument;
use crate::runner::error::OpError;
use crate::runner::events::Event;
use crate::runner::Runner;

use super::super::plan_store::{
    found, plan_exists, plan_not_found, validate_plan_id, PlanStore, PlanSummary, StoredEvent,
    Subscribers,
};
use super::super::Store;
use super::{init, records, stored};

/// One JSON state file, holding one plan. Opened by URL (`file:PATH`, a
/// path) its plan id is the document's `meta.id`; named as a state file
/// ([`Store::plan`]: `planc run STATE`, `planc mcp STATE`) its one plan
/// answers to the id it was named by. A global position is the event's
/// revision.
#[derive(Debug)]
pub struct JsonFileStore {
    store: Store,
    subscribers: Subscribers,
    /// Whether the file is named by its path rather than by its plan's id:
    /// then its one plan answers to any plan id and keeps its own `meta.id`,
    /// a missing file is a `STATE_IO` error naming it (what `planc run`
    /// has always said), and a new plan is refused as an existing file.
    by_path: bool,
}

impl JsonFileStore {
    /// The store of the state file at `path` (nothing is read yet).
    pub fn new(path: &Path) -> JsonFileStore {
        JsonFileStore {
            store: Store::new(path),
            subscribers: Subscribers::default(),
            by_path: false,
        }
    }

    /// The store of the state file `store` names, by its path (its lock
    /// settings and agent kept).
    pub(super) fn by_path(store: Store) -> JsonFileStore {
        JsonFileStore {
            store,
            subscribers: Subscribers::default(),
            by_path: true,
        }
    }

    /// The state, if it is plan `plan_id`'s.
    fn read(&self, plan_id: &str) -> Result<PlanDocument, OpError> {
        if self.by_path {
            return self.store.load();
        }
        validate_plan_id(plan_id)?;
        if !self.store.exists() {
            return Err(plan_not_found(plan_id));
        }
        let doc = self.store.load()?;
        if doc.meta.id != plan_id {
            return Err(plan_not_found(plan_id));
        }
        Ok(doc)
    }

    /// Whether `doc` is plan `plan_id`'s (any is, by path).
    fn holds(&self, doc: &PlanDocument, plan_id: &str) -> Result<(), OpError> {
        match self.by_path || doc.meta.id == plan_id {
            true => Ok(()),
            false => Err(plan_not_found(plan_id)),
        }
    }
}

impl PlanStore for JsonFileStore {
    fn url(&self) -> String {
        self.store.path().display().to_string()
    }

    fn create(
        &self,
        plan_id: &str,
        mut doc: PlanDocument,
        force: bool,
    ) -> Result<PlanDocument, OpError> {
        if !self.by_path {
            validate_plan_id(plan_id)?;
            if !force && self.store.exists() {
                return Err(plan_exists(plan_id));
            }
            plan_id.clone_into(&mut doc.meta.id);
        }
        let doc = self.store.create(doc, force)?;
        let event = stored(plan_id, init(&doc), |r| r.revision);
        self.subscribers.send(&event);
        Ok(doc)
    }

    fn list(&self) -> Result<Vec<PlanSummary>, OpError> {
        if !self.store.exists() {
            return Ok(Vec::new());
        }
        let doc = self.store.load()?;
        Ok(vec![PlanSummary::of(&doc.meta.id, &doc)])
    }

    fn load(&self, plan_id: &str) -> Result<PlanDocument, OpError> {
        self.read(plan_id)
    }

    fn delete(&self, plan_id: &str) -> Result<(), OpError> {
        self.delete_checked(plan_id, &mut |_| Ok(()))
    }

    fn contains(&self, plan_id: &str) -> Result<bool, OpError> {
        match self.by_path {
            true => Ok(self.store.exists()),
            false => found(self.read(plan_id)),
        }
    }

    fn delete_checked(
        &self,
        plan_id: &str,
        check: &mut dyn FnMut(&PlanDocument) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        if !self.by_path {
            self.read(plan_id)?;
        }
        self.store.delete(|doc| {
            self.holds(doc, plan_id)?;
            check(doc)
        })
    }

    fn transact(
        &self,
        plan_id: &str,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<Option<StoredEvent>, OpError> {
        if !self.by_path {
            self.read(plan_id)?;
        }
        let ((), record) = self.store.transact_logged(op, |runner| {
            self.holds(runner.document(), plan_id)?;
            Ok(((), change(runner)?))
        })?;
        let event = record.map(|record| stored(plan_id, record, |r| r.revision));
        if let Some(event) = &event {
            self.subscribers.send(event);
        }
        Ok(event)
    }

    fn events(
        &self,
        plan_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OpError> {
        self.read(plan_id)?;
        Ok(records(&self.store)?
            .into_iter()
            .filter(|r| r.revision > after_seq)
            .take(limit)
            .map(|r| stored(plan_id, r, |r| r.revision))
            .collect())
    }

    fn feed(&self, after: u64, limit: usize) -> Result<Vec<StoredEvent>, OpError> {
        if !self.store.exists() {
            return Ok(Vec::new());
        }
        let plan_id = self.store.load()?.meta.id;
        self.events(&plan_id, after, limit)
    }

    fn subscribe(&self) -> std::sync::mpsc::Receiver<StoredEvent> {
        self.subscribers.subscribe()
    }
}

impl Store {
    /// This state file as a store of its one plan, named by its path (its
    /// lock settings kept): how `planc run STATE` and `planc mcp STATE`
    /// reach it through [`PlanStore`] (see [`crate::runner::access::StorePlan`]).
    pub fn into_plan_store(self) -> Arc<dyn PlanStore> {
        Arc::new(JsonFileStore::by_path(self))
    }
}
