//! Rows claimed like jobs: edits (by the workers), webhook events (by the
//! dispatcher) and the chunks of encodes run across nodes share one claim, lease and
//! fence. A claim takes a claimable row, counts its attempt up and leases it until
//! `now + $1`; every later write of the claim is fenced on that attempt and on the
//! row still being held, so a claim whose lease ran out (and was taken by another
//! node) changes nothing. Only the columns differ, and a [`Leased`] names them; both
//! databases run the same statements (`{now}` is the database's clock,
//! `crate::db::PG_NOW_MS` or `SQLITE_NOW_MS`).

/// A table whose rows are claimed under a lease, fenced by an attempt counter.
#[derive(Debug, Clone, Copy)]
pub struct Leased {
    pub table: &'static str,
    /// The fencing token: counted up by every claim.
    pub attempt: &'static str,
    /// True for a row of alias `{t}` that may be claimed now: due and unheld, or held
    /// under a lease that ran out.
    pub claimable: &'static str,
    /// True while the row is held by a claim (what a fenced write also requires).
    pub held: &'static str,
}

/// Edits: queued and due, or processing under an expired lease (a lost node's).
pub const EDITS: Leased = Leased {
    table: "edits",
    attempt: "attempt",
    claimable: "(({t}.status = 'queued' AND {t}.run_after <= {now}) \
                OR ({t}.status = 'processing' AND {t}.lease_until < {now}))",
    held: "status = 'processing'",
};

/// Webhook events: pending and due, unleased or under an expired lease.
pub const WEBHOOK_EVENTS: Leased = Leased {
    table: "webhook_events",
    attempt: "attempts",
    claimable: "({t}.state = 'pending' AND {t}.next_at <= {now} \
                AND ({t}.lease_until IS NULL OR {t}.lease_until < {now}))",
    held: "state = 'pending'",
};

/// Chunks of a chunked encode run across nodes: pending, unleased or under an expired
/// lease, of an edit still processing (an edit that ended leaves nothing to claim).
pub const EDIT_CHUNKS: Leased = Leased {
    table: "edit_chunks",
    attempt: "attempts",
    claimable: "({t}.state = 'pending' \
                AND ({t}.lease_until IS NULL OR {t}.lease_until < {now}) \
                AND EXISTS (SELECT 1 FROM edits x WHERE x.id = {t}.edit_id \
                            AND x.status = 'processing'))",
    held: "state = 'pending'",
};

impl Leased {
    /// The claimable condition for alias `t`.
    pub fn claimable(&self, t: &str, now: &str) -> String {
        self.claimable.replace("{t}", t).replace("{now}", now)
    }

    /// Claims the row `which` names (an id placeholder, or a subquery picking one;
    /// checked claimable again, so a row taken meanwhile is not taken twice): counts
    /// the attempt, leases it until `now + $1`, applies `set` (more assignments, may
    /// be empty) and returns `returning`.
    pub fn claim_sql(&self, now: &str, which: &str, set: &str, returning: &str) -> String {
        let (table, attempt) = (self.table, self.attempt);
        let set = if set.is_empty() {
            String::new()
        } else {
            format!(", {set}")
        };
        format!(
            "UPDATE {table} SET {attempt} = {attempt} + 1, lease_until = {now} + $1{set} \
             WHERE id = {which} AND {} RETURNING {returning}",
            self.claimable(table, now)
        )
        .replace("{now}", now)
    }

    /// A write fenced on the claim: `set` (`{now}` is the clock) applied only where
    /// the row's id is `$id`, its attempt `$attempt` and it is still held.
    pub fn fenced_sql(&self, now: &str, set: &str, id: usize, attempt: usize) -> String {
        format!(
            "UPDATE {} SET {} WHERE id = ${id} AND {} = ${attempt} AND {}",
            self.table,
            set.replace("{now}", now),
            self.attempt,
            self.held
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_counts_the_attempt_leases_and_checks_the_row_is_still_claimable() {
        let sql = WEBHOOK_EVENTS.claim_sql("NOW", "$4", "", "id");
        assert!(sql.starts_with("UPDATE webhook_events SET attempts = attempts + 1, lease_until = NOW + $1 WHERE id = $4 AND (webhook_events.state = 'pending'"), "{sql}");
        assert!(sql.ends_with("RETURNING id"), "{sql}");
        assert!(!sql.contains("{now}") && !sql.contains("{t}"), "{sql}");
    }

    #[test]
    fn a_fenced_write_names_the_attempt_and_the_held_state() {
        let sql = EDITS.fenced_sql("NOW", "progress = $1, updated_at = {now}", 2, 3);
        assert_eq!(
            sql,
            "UPDATE edits SET progress = $1, updated_at = NOW WHERE id = $2 AND attempt = $3 AND status = 'processing'"
        );
    }

    #[test]
    fn a_chunk_is_claimable_only_while_its_edit_runs() {
        let sql = EDIT_CHUNKS.claim_sql("NOW", "$3", "claimed_by = $2", "id");
        assert!(sql.starts_with("UPDATE edit_chunks SET attempts = attempts + 1, lease_until = NOW + $1, claimed_by = $2 WHERE id = $3 AND (edit_chunks.state = 'pending'"), "{sql}");
        assert!(
            sql.contains("x.id = edit_chunks.edit_id AND x.status = 'processing'"),
            "{sql}"
        );
        assert!(!sql.contains("{now}") && !sql.contains("{t}"), "{sql}");
    }
}
