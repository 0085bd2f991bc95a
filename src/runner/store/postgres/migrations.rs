//! The PostgreSQL store's schema: its versions and the migrations between
//! them, run once under an advisory lock when a store is opened.

use postgres::{Client, Transaction};
use serde_json::json;

use super::{sql_error, SCHEMA_VERSION};
use crate::document::PlanDocument;
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::store::database::summary_json;

/// The key of the advisory lock migrations take.
const MIGRATION_LOCK: i64 = 0x0070_6c61_6e63;

type Migration = fn(&mut Transaction<'_>) -> Result<(), postgres::Error>;

/// The migrations, in order: each takes the schema from the version before
/// it to its own.
const MIGRATIONS: [(i32, Migration); 7] = [
    (1, migrate_to_1),
    (2, migrate_to_2),
    (3, migrate_to_3),
    (4, migrate_to_4),
    (5, super::rows::migrate_to_5),
    (6, super::rows::migrate_to_6),
    (7, super::rows::migrate_to_7),
];

/// Version 1: plans and their events.
fn migrate_to_1(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.batch_execute(
        "CREATE TABLE plans (
             plan_id  TEXT PRIMARY KEY,
             revision BIGINT NOT NULL,
             doc      TEXT NOT NULL
         );
         CREATE TABLE events (
             plan_id TEXT NOT NULL,
             seq     BIGINT NOT NULL,
             tx      xid8 NOT NULL DEFAULT pg_current_xact_id(),
             record  TEXT NOT NULL,
             PRIMARY KEY (plan_id, seq)
         );
         CREATE UNIQUE INDEX events_tx ON events (tx);",
    )
}

/// Version 2: each plan's summary beside its document, so that listing the
/// plans reads no document.
fn migrate_to_2(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.batch_execute("ALTER TABLE plans ADD COLUMN summary TEXT NOT NULL DEFAULT '{}'")?;
    let rows = tx.query("SELECT plan_id, doc FROM plans", &[])?;
    for row in rows {
        let (plan_id, doc): (String, String) = (row.get(0), row.get(1));
        // A document that does not parse keeps the empty summary; reading
        // the plan says what is wrong with it.
        if let Ok(doc) = serde_json::from_str::<PlanDocument>(&doc) {
            tx.execute(
                "UPDATE plans SET summary = $1 WHERE plan_id = $2",
                &[&summary_json(&plan_id, &doc), &plan_id],
            )?;
        }
    }
    Ok(())
}

/// Version 3: many events per transaction (a batch of changes): each
/// event's position is a column of its own, `pos`, its transaction's id
/// times [`PER_TRANSACTION`](super::PER_TRANSACTION) plus its place in the transaction. The events
/// written before keep their position (their transaction's id, smaller
/// than any new one), so a client resuming from one misses nothing.
fn migrate_to_3(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.batch_execute(
        "ALTER TABLE events ADD COLUMN pos BIGINT;
         UPDATE events SET pos = tx::text::bigint;
         ALTER TABLE events ALTER COLUMN pos SET NOT NULL;
         ALTER TABLE events DROP COLUMN tx;
         CREATE UNIQUE INDEX events_pos ON events (pos);",
    )
}

/// Version 4: plan documents (tens of kilobytes, rewritten by every
/// change) compressed with lz4 rather than pglz, which costs PostgreSQL
/// several times the CPU; where the server was built without lz4 (or
/// predates per-column compression) they stay as they were.
fn migrate_to_4(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.batch_execute(
        "DO $$ BEGIN
             EXECUTE 'ALTER TABLE plans ALTER COLUMN doc SET COMPRESSION lz4';
         EXCEPTION WHEN feature_not_supported OR syntax_error THEN NULL;
         END $$",
    )
}

/// Brings the schema up to [`SCHEMA_VERSION`], in one transaction under an
/// advisory lock (two servers starting at once migrate once).
pub(super) fn migrate(client: &mut Client, shown: &str) -> Result<(), OpError> {
    let write = |e: postgres::Error| sql_error(shown, "write", &e);
    let mut tx = client.transaction().map_err(write)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(write)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        .map_err(write)?;
    let version: Option<i32> = tx
        .query_one("SELECT MAX(version) FROM schema_version", &[])
        .map_err(write)?
        .get(0);
    let version = version.unwrap_or(0);
    if version > SCHEMA_VERSION {
        return Err(OpError::new(
            ErrorCode::InvalidState,
            format!(
                "{shown} has schema version {version}, made by a newer planc; this planc \
                 knows versions up to {SCHEMA_VERSION}: upgrade planc to use it"
            ),
        )
        .with(json!({
            "store": shown,
            "schema_version": version,
            "supported": SCHEMA_VERSION,
        })));
    }
    for (to, migration) in MIGRATIONS {
        if to > version {
            migration(&mut tx).map_err(write)?;
        }
    }
    if version < SCHEMA_VERSION {
        tx.execute("DELETE FROM schema_version", &[])
            .map_err(write)?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES ($1)",
            &[&SCHEMA_VERSION],
        )
        .map_err(write)?;
    }
    tx.commit().map_err(write)
}
