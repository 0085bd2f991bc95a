//! The writer's connection: a `tokio-postgres` client driven on the
//! writer's own thread (a runtime of its own, one thread), so that a
//! batch's write and its `COMMIT` go out together and come back in one
//! round trip, the write still a prepared statement (`postgres`, the
//! synchronous client the rest of the store uses, waits for each
//! statement's answer before it sends the next).

use postgres::types::ToSql;
use postgres::{Row, SimpleQueryMessage, Statement};
use tokio::runtime::Runtime;
use tokio_postgres::NoTls;

use super::rows::Query;
use super::sql_error;
use crate::runner::error::{ErrorCode, OpError};

/// A connection and the runtime that drives it.
pub(super) struct Pipe {
    runtime: Runtime,
    client: tokio_postgres::Client,
}

impl Pipe {
    /// Connects to `url` (of store `shown`).
    pub(super) fn connect(url: &str, shown: &str) -> Result<Pipe, OpError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                OpError::new(
                    ErrorCode::StateIo,
                    format!("cannot connect to the PostgreSQL store {shown}: {e}"),
                )
            })?;
        let (client, connection) = runtime
            .block_on(tokio_postgres::connect(url, NoTls))
            .map_err(|e| sql_error(shown, "connect", &e))?;
        // Runs while the thread waits on the runtime for a statement;
        // ends when the connection does (the client then says it closed).
        runtime.spawn(async move {
            let _ = connection.await;
        });
        Ok(Pipe { runtime, client })
    }

    /// Whether the connection has closed (it broke).
    pub(super) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    pub(super) fn prepare(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        self.runtime.block_on(self.client.prepare(sql))
    }

    pub(super) fn query(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, postgres::Error> {
        self.runtime.block_on(self.client.query(statement, params))
    }

    pub(super) fn simple_query(
        &mut self,
        sql: &str,
    ) -> Result<Vec<SimpleQueryMessage>, postgres::Error> {
        self.runtime.block_on(self.client.simple_query(sql))
    }

    pub(super) fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
        self.runtime.block_on(self.client.batch_execute(sql))
    }

    /// `statement` (one row) and then `COMMIT`, sent together: the row,
    /// once committed. When the statement fails, the transaction is
    /// aborted and the `COMMIT` behind it rolls it back: its error.
    pub(super) fn query_one_and_commit(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, postgres::Error> {
        let client = &self.client;
        self.runtime.block_on(async {
            // Each is sent when first polled: the statement first.
            let (row, commit) = tokio::join!(
                biased;
                client.query_one(statement, params),
                client.batch_execute("COMMIT"),
            );
            let row = row?;
            commit?;
            Ok(row)
        })
    }
}

impl Query for Pipe {
    fn query_opt(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        self.runtime
            .block_on(self.client.query_opt(statement, params))
    }
}
