//! The chunks of chunked encodes run across nodes (`--chunk-across-nodes`): one row
//! per chunk, claimed like an edit by the one claim, lease and fence of `db::lease`
//! (the `attempts` counter is the fencing token), so a lost node loses only the
//! chunks it held, and a chunk finished by a claim that lost its lease is never used.
//! Both databases run the same statements; PostgreSQL also announces new and finished
//! chunks on `CHUNKS_CHANNEL`, so idle nodes claim and the edit's node joins at once.

use super::lease;
use crate::db::channels::CHUNKS_CHANNEL;
use crate::db::clock::{PG_NOW_MS, SQLITE_NOW_MS};
use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};

/// One encode's chunks: the edit, which of its encodes (`step`) and the digest of
/// the source and recipes (`plan`).
#[derive(Debug, Clone, Copy)]
pub struct ChunkSet<'a> {
    pub edit_id: &'a str,
    pub org_id: &'a str,
    pub step: &'a str,
    pub plan: &'a str,
}

impl ChunkSet<'_> {
    /// The id of chunk `idx`: the same on every attempt at the edit.
    pub fn chunk_id(&self, idx: usize) -> String {
        format!("{}/{}/{}/{idx}", self.edit_id, self.step, self.plan)
    }
}

/// A claimed chunk: what to encode, and the attempt that fences its writes.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ChunkClaim {
    pub id: String,
    pub edit_id: String,
    pub org_id: String,
    pub step: String,
    pub plan: String,
    pub idx: i32,
    /// The chunk's recipe (JSON, see `queue::chunk_claims`).
    pub spec: String,
    /// This claim's number, from 1.
    pub attempts: i32,
}

/// Where one chunk of a set stands.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ChunkState {
    pub idx: i32,
    /// `pending`, `done`, `failed` or `dropped`.
    pub state: String,
    pub output_key: Option<String>,
    pub error: Option<String>,
    pub attempts: i32,
}

/// The one value a fenced write of a chunk sets.
enum Value<'a> {
    Int(i64),
    Text(&'a str),
}

const CLAIM_RETURNING: &str = "id, edit_id, org_id, step, plan, idx, spec, attempts";

impl Db {
    fn now_and_lock(&self) -> (&'static str, &'static str) {
        match self {
            Db::Sqlite(_) => (SQLITE_NOW_MS, ""),
            Db::Postgres(_) => (PG_NOW_MS, "FOR UPDATE SKIP LOCKED"),
        }
    }

    /// Adds the chunks of `set` (`specs` in order) unless they are there already: a
    /// chunk finished by an earlier attempt at the edit stays done (it is reused), a
    /// failed or dropped one is pending again, and the chunks of another plan of the
    /// same encode (the source changed, or a node of another size planned it) go.
    /// `slots`: how many slots the chunks were planned for (see [`Db::planned_slots`]).
    pub async fn add_chunks(
        &self,
        set: ChunkSet<'_>,
        specs: &[String],
        slots: usize,
    ) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            let mut tx = pool.begin().await?;
            sqlx::query(&sql(
                "DELETE FROM edit_chunks WHERE edit_id = $1 AND step = $2 AND plan <> $3",
            ))
            .bind(set.edit_id)
            .bind(set.step)
            .bind(set.plan)
            .execute(&mut *tx)
            .await?;
            let now = crate::db::clock::unix_ms(std::time::SystemTime::now());
            for (idx, spec) in specs.iter().enumerate() {
                sqlx::query(&sql(
                    "INSERT INTO edit_chunks (id, edit_id, org_id, step, plan, idx, spec, created_at, slots) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                     ON CONFLICT (id) DO UPDATE SET state = 'pending', error = NULL \
                     WHERE edit_chunks.state IN ('failed', 'dropped')",
                ))
                .bind(set.chunk_id(idx))
                .bind(set.edit_id)
                .bind(set.org_id)
                .bind(set.step)
                .bind(set.plan)
                .bind(idx as i32)
                .bind(spec)
                .bind(now)
                .bind(slots as i64)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        });
        self.announce_chunks().await
    }

    /// The organization whose chunk is claimed next, if any is claimable: of those
    /// with claimable chunks, the one running fewest chunks in the cluster, then the
    /// one whose chunk waits longest (as edits are claimed, organization holding
    /// fewest first). A node waits for a CPU slot in that organization's turn before
    /// it claims.
    pub async fn next_chunk_org(&self) -> Result<Option<String>, DbError> {
        let (now, _) = self.now_and_lock();
        let text = format!(
            "SELECT c.org_id FROM edit_chunks c WHERE {} \
             ORDER BY (SELECT COUNT(*) FROM edit_chunks r WHERE r.org_id = c.org_id \
                       AND r.state = 'pending' AND r.lease_until >= {now}), \
                      c.created_at, c.idx DESC LIMIT 1",
            lease::EDIT_CHUNKS.claimable("c", now)
        );
        Ok(with_pool!(self, |pool, _sql| {
            sqlx::query_scalar(&text).fetch_optional(pool).await?
        }))
    }

    /// Claims the oldest claimable chunk of `org` (any organization's when `None`),
    /// or of `only` set, for `lease_ms` on behalf of `node`; `None` when there is none.
    /// Within an encode the last chunk goes first, as on one node: a chunk decodes the
    /// source from the keyframe before its cut, so the later it starts the longer it
    /// takes.
    pub async fn claim_chunk(
        &self,
        lease_ms: i64,
        node: &str,
        org: Option<&str>,
        only: Option<ChunkSet<'_>>,
    ) -> Result<Option<ChunkClaim>, DbError> {
        let (now, lock) = self.now_and_lock();
        let chunks = lease::EDIT_CHUNKS;
        // $1 the lease, $2 the node, then the filter's values.
        let (filter, values): (&str, Vec<&str>) = match (only, org) {
            (Some(s), _) => (
                " AND c.edit_id = $3 AND c.step = $4 AND c.plan = $5",
                vec![s.edit_id, s.step, s.plan],
            ),
            (None, Some(org)) => (" AND c.org_id = $3", vec![org]),
            (None, None) => ("", vec![]),
        };
        let oldest = format!(
            "(SELECT c.id FROM edit_chunks c WHERE {}{filter} \
              ORDER BY c.created_at, c.idx DESC LIMIT 1 {lock})",
            chunks.claimable("c", now)
        );
        let claim = chunks.claim_sql(now, &oldest, "claimed_by = $2", CLAIM_RETURNING);
        Ok(with_pool!(self, |pool, sql| {
            let text = sql(&claim);
            let mut query = sqlx::query_as(&text).bind(lease_ms).bind(node);
            for value in values {
                query = query.bind(value);
            }
            query.fetch_optional(pool).await?
        }))
    }

    /// Extends the lease of a chunk claim; false when the claim is no longer current.
    pub async fn renew_chunk(&self, claim: &ChunkClaim, lease_ms: i64) -> Result<bool, DbError> {
        let set = "lease_until = {now} + $1";
        self.fenced_chunk(claim, set, Some(Value::Int(lease_ms)))
            .await
    }

    /// Records that `claim` stored its chunk under `output_key` (a key naming its
    /// attempt); false, and nothing recorded, when the claim lost its lease meanwhile.
    pub async fn finish_chunk(
        &self,
        claim: &ChunkClaim,
        output_key: &str,
    ) -> Result<bool, DbError> {
        let set = "state = 'done', output_key = $1, error = NULL, lease_until = NULL";
        let done = self
            .fenced_chunk(claim, set, Some(Value::Text(output_key)))
            .await?;
        self.announce_chunks().await?;
        Ok(done)
    }

    /// Records that `claim` failed with `error` (the edit's node encodes in one
    /// process instead); false when the claim is no longer current.
    pub async fn fail_chunk(&self, claim: &ChunkClaim, error: &str) -> Result<bool, DbError> {
        let set = "state = 'failed', error = $1, lease_until = NULL";
        let done = self
            .fenced_chunk(claim, set, Some(Value::Text(error)))
            .await?;
        self.announce_chunks().await?;
        Ok(done)
    }

    /// Hands `claim` back unfinished (its node is stopping): claimable again at once.
    pub async fn release_chunk(&self, claim: &ChunkClaim) -> Result<bool, DbError> {
        let done = self.fenced_chunk(claim, "lease_until = NULL", None).await?;
        self.announce_chunks().await?;
        Ok(done)
    }

    /// `set` (with `$1` bound to `value` when given) on `claim`'s row, fenced.
    async fn fenced_chunk(
        &self,
        claim: &ChunkClaim,
        set: &str,
        value: Option<Value<'_>>,
    ) -> Result<bool, DbError> {
        let (now, _) = self.now_and_lock();
        let n = usize::from(value.is_some());
        let text = lease::EDIT_CHUNKS.fenced_sql(now, set, n + 1, n + 2);
        let changed = with_pool!(self, |pool, sql| {
            let text = sql(&text);
            let mut query = sqlx::query(&text);
            query = match value {
                Some(Value::Int(v)) => query.bind(v),
                Some(Value::Text(v)) => query.bind(v),
                None => query,
            };
            query
                .bind(&claim.id)
                .bind(claim.attempts)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(changed == 1)
    }

    /// Where each chunk of `set` stands, by index.
    pub async fn chunk_states(&self, set: ChunkSet<'_>) -> Result<Vec<ChunkState>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT idx, state, output_key, error, attempts FROM edit_chunks \
                 WHERE edit_id = $1 AND step = $2 AND plan = $3 ORDER BY idx",
            ))
            .bind(set.edit_id)
            .bind(set.step)
            .bind(set.plan)
            .fetch_all(pool)
            .await?
        }))
    }

    /// Gives up the pending chunks of `set` (its encode runs in one process instead):
    /// nobody claims them any more.
    pub async fn drop_chunks(&self, set: ChunkSet<'_>) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "UPDATE edit_chunks SET state = 'dropped', lease_until = NULL \
                 WHERE edit_id = $1 AND step = $2 AND plan = $3 AND state = 'pending'",
            ))
            .bind(set.edit_id)
            .bind(set.step)
            .bind(set.plan)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Marks the chunks of `edit_id` as forgotten once its scratch objects are deleted:
    /// pending ones dropped, no output key left. The rows stay, as the record of which
    /// node ran what how many times, until the edit is deleted.
    pub async fn forget_chunks(&self, edit_id: &str) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "UPDATE edit_chunks SET lease_until = NULL, output_key = NULL, \
                 state = CASE WHEN state = 'pending' THEN 'dropped' ELSE state END \
                 WHERE edit_id = $1",
            ))
            .bind(edit_id)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Up to `limit` ended edits (done, failed or canceled) whose chunks were not
    /// forgotten: their node stopped between the end and the clean-up, or the edit was
    /// canceled while queued between two attempts.
    pub async fn ended_edits_with_chunks(&self, limit: u32) -> Result<Vec<String>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_scalar(&sql(
                "SELECT DISTINCT c.edit_id FROM edit_chunks c JOIN edits e ON e.id = c.edit_id \
                 WHERE e.status IN ('done', 'failed', 'canceled') \
                 AND (c.state = 'pending' OR c.output_key IS NOT NULL) LIMIT $1",
            ))
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?
        }))
    }

    /// Wakes every node's chunk workers and waiting joins (PostgreSQL; on SQLite the
    /// one node polls).
    async fn announce_chunks(&self) -> Result<(), DbError> {
        if let Db::Postgres(pool) = self {
            sqlx::query("SELECT pg_notify($1, '')")
                .bind(CHUNKS_CHANNEL)
                .execute(pool)
                .await?;
        }
        Ok(())
    }
}
