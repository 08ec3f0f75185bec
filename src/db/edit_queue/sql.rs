//! The queue's SQL, written once over `db::lease`'s template: the fair claim, the
//! claim by id and the fenced writes, with the macros that run them on either pool.

use crate::db::lease;

/// SQL counting the edits of `e.org_id` in `e.lane` (the candidate row of a claim) that
/// run now on the claiming node (placeholder `node`): processing under a live lease.
/// Per lane, so an organization's cheap image edits never wait behind its own long
/// videos; per node, because the cap is a share of this node's workers, and a
/// cluster of N nodes gives one organization N shares.
pub(super) fn running_of_org(now_sql: &str, node: &str) -> String {
    format!(
        "(SELECT COUNT(*) FROM edits r WHERE r.org_id = e.org_id AND r.lane = e.lane \
          AND r.claimed_by = {node} AND r.status = 'processing' AND r.lease_until >= {now_sql})"
    )
}

/// The claim statement of both databases, with `$1` the lease in milliseconds, `$2`
/// the per-organization cap and `$3` the node; `lock` is what the inner `SELECT` adds
/// on PostgreSQL (`FOR UPDATE SKIP LOCKED`). Leases and due times by the database's
/// clock (`now_sql`, see `crate::db::PG_NOW_MS`); the claim itself is the one every
/// leased row shares (`db::lease`).
pub(super) fn claim_sql(now_sql: &str, lock: &str) -> String {
    let candidate = format!("({})", candidate_sql(now_sql, lock));
    lease::EDITS.claim_sql(now_sql, &candidate, CLAIM_SET, CLAIM_RETURNING)
}

/// The id of the edit a claim takes (same placeholders as [`claim_sql`]): claimable
/// (queued and due, or processing under an expired lease), of an organization under
/// its cap on this node, the organization holding fewest first. Within an
/// organization, image-only edits go first: they are short, and the CPU stage classes
/// the work by its measured cost once the sources are in.
pub(super) fn candidate_sql(now_sql: &str, lock: &str) -> String {
    let running = running_of_org(now_sql, "$3");
    format!(
        "SELECT e.id FROM edits e
          WHERE {} AND {running} < $2
          ORDER BY {running}, CASE WHEN e.lane = 'fast' THEN 0 ELSE 1 END,
                   e.run_after, e.created_at
          LIMIT 1 {lock}",
        lease::EDITS.claimable("e", now_sql)
    )
}

/// The claim of the one edit `$4` if it is still claimable (same placeholders as
/// [`claim_sql`] otherwise): SQLite picks the candidate with a read, which never
/// waits for nor holds up its single writer, then takes it with this cheap write.
pub(super) fn claim_by_id_sql(now_sql: &str) -> String {
    lease::EDITS.claim_sql(now_sql, "$4", CLAIM_SET, CLAIM_RETURNING)
}

/// What a claim of an edit sets besides the attempt and the lease.
pub(super) const CLAIM_SET: &str = "status = 'processing', updated_at = {now}, claimed_by = $3";

pub(super) const CLAIM_RETURNING: &str = "id, org_id, attempt, failures, handbacks, request, plan";

/// The fenced `UPDATE` of [`JobQueue::fenced`], with `$1, $2, …` placeholders: `set`
/// uses the first `binds`, then come `id` and `attempt`. `{now}` in `set` and
/// `updated_at` read the database's clock (`now_sql`).
pub(super) fn fenced_sql(set: &str, binds: usize, now_sql: &str) -> String {
    let set = format!("{set}, updated_at = {{now}}");
    lease::EDITS.fenced_sql(now_sql, &set, binds + 1, binds + 2)
}

/// Runs a fenced `UPDATE` (from [`fenced_sql`]) on `$pool` with `$binds` and the
/// claim `$job`; a macro because the two databases' query types differ. Evaluates to
/// `Ok(true)` when the row was changed.
macro_rules! run_fenced {
    ($pool:expr, $sql:expr, $binds:expr, $job:expr) => {{
        let mut query = sqlx::query($sql);
        for bind in $binds {
            query = match bind {
                Bind::Int(v) => query.bind(v),
                Bind::Real(v) => query.bind(v),
                Bind::Text(v) => query.bind(v),
            };
        }
        let done = query
            .bind($job.id.as_str())
            .bind($job.attempt as i64)
            .execute($pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }};
}
pub(crate) use run_fenced;

/// Runs the claim statement of [`claim_sql`] (placeholders already in the database's
/// spelling) on `$pool`; a macro for the same reason as [`run_fenced`].
macro_rules! run_claim {
    ($pool:expr, $sql:expr, $lease:expr, $fairness:expr) => {{
        let row: Option<StoredClaim> = sqlx::query_as($sql)
            .bind($lease.as_millis() as i64)
            .bind(i64::from($fairness.per_org_cap))
            .bind($fairness.node)
            .fetch_optional($pool)
            .await?;
        row.map(Claim::try_from).transpose()
    }};
}
pub(crate) use run_claim;
