//! The claim of chunk rows (`--chunk-across-nodes`) on both databases: leased,
//! counted, fenced on the attempt, claimable only while their edit runs.

use mediaedit::config::Role;
use mediaedit::db::{ChunkSet, Db};

use crate::backends::Backend;
use crate::helpers::*;

on_both_backends!(
    a_chunk_claim_is_leased_fenced_and_taken_again_only_once_its_lease_runs_out,
    the_cluster_slots_are_those_of_the_nodes_seen_lately,
);

async fn execute(db: &Db, sql: &str, id: &str) {
    match db {
        Db::Sqlite(pool) => {
            let sql = sql.replace('$', "?");
            sqlx::query(&sql).bind(id).execute(pool).await.unwrap();
        }
        Db::Postgres(pool) => {
            sqlx::query(sql).bind(id).execute(pool).await.unwrap();
        }
    }
}

async fn a_chunk_claim_is_leased_fenced_and_taken_again_only_once_its_lease_runs_out(
    backend: Backend,
) {
    // An API node only: the edit stays where this test puts it.
    let app = spawn_app_on(backend, |c| c.role = Role::Api).await;
    let id = app
        .create_edit(edit("http://127.0.0.1:9/a.mp4", &["video-to-ogg"], None))
        .await;
    let db = app.db().await;
    let set = ChunkSet {
        edit_id: &id,
        org_id: ORG,
        step: "0-0-0",
        plan: "p1",
    };
    let lease = 60_000;
    db.add_chunks(set, &["{}".into(), "{}".into()], 2)
        .await
        .unwrap();
    assert!(
        db.claim_chunk(lease, "a", None, None)
            .await
            .unwrap()
            .is_none(),
        "nothing is claimable while the edit is not running"
    );
    execute(
        &db,
        "UPDATE edits SET status = 'processing' WHERE id = $1",
        &id,
    )
    .await;

    assert_eq!(db.next_chunk_org().await.unwrap().as_deref(), Some(ORG));
    assert!(db
        .claim_chunk(lease, "a", Some("other-org"), None)
        .await
        .unwrap()
        .is_none());
    let first = db
        .claim_chunk(lease, "a", Some(ORG), None)
        .await
        .unwrap()
        .unwrap();
    // The last chunk first: it decodes the most before its cut.
    assert_eq!((first.idx, first.attempts), (1, 1));
    // Another organization's chunk, added later, goes first while this one runs one;
    // once both run one, the chunk waiting longest.
    let token = create_token_in(&app.database_url(), "other-org").await;
    let body = edit("http://127.0.0.1:9/b.mp4", &["video-to-ogg"], None);
    let doc: serde_json::Value = app.post_edit_as(&token, body).await.json().await.unwrap();
    let theirs_id = doc["id"].as_str().unwrap();
    execute(
        &db,
        "UPDATE edits SET status = 'processing' WHERE id = $1",
        theirs_id,
    )
    .await;
    let theirs = ChunkSet {
        edit_id: theirs_id,
        org_id: "other-org",
        ..set
    };
    db.add_chunks(theirs, &["{}".into()], 2).await.unwrap();
    assert_eq!(
        db.next_chunk_org().await.unwrap().as_deref(),
        Some("other-org")
    );
    let theirs = db
        .claim_chunk(lease, "b", Some("other-org"), None)
        .await
        .unwrap();
    assert_eq!(theirs.unwrap().edit_id, theirs_id);
    assert_eq!(db.next_chunk_org().await.unwrap().as_deref(), Some(ORG));
    let second = db
        .claim_chunk(lease, "b", None, Some(set))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((second.idx, second.attempts), (0, 1));
    assert!(
        db.claim_chunk(lease, "c", None, None)
            .await
            .unwrap()
            .is_none(),
        "both held"
    );
    assert!(db.renew_chunk(&first, lease).await.unwrap());

    // Node a's lease runs out; node c takes the chunk, and a's late result is refused.
    execute(
        &db,
        "UPDATE edit_chunks SET lease_until = 0 WHERE idx = 1 AND edit_id = $1",
        &id,
    )
    .await;
    let again = db
        .claim_chunk(lease, "c", None, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((again.idx, again.attempts), (1, 2));
    assert!(!db.finish_chunk(&first, "stale-key").await.unwrap());
    assert!(!db.renew_chunk(&first, lease).await.unwrap());
    assert!(db.finish_chunk(&again, "key-1-2").await.unwrap());
    assert!(db.finish_chunk(&second, "key-0-1").await.unwrap());
    assert!(
        !db.fail_chunk(&second, "late").await.unwrap(),
        "done stays done"
    );

    let states = db.chunk_states(set).await.unwrap();
    let seen: Vec<_> = states
        .iter()
        .map(|s| (s.idx, s.state.as_str(), s.output_key.as_deref(), s.attempts))
        .collect();
    assert_eq!(
        seen,
        [
            (0, "done", Some("key-0-1"), 1),
            (1, "done", Some("key-1-2"), 2)
        ]
    );
    // Added again (the edit's node died and the edit runs again): done chunks stay done.
    db.add_chunks(set, &["{}".into(), "{}".into()], 2)
        .await
        .unwrap();
    assert_eq!(db.chunk_states(set).await.unwrap(), states);
    // Another plan of the same encode replaces them; dropping gives its chunks up.
    let other = ChunkSet { plan: "p2", ..set };
    db.add_chunks(other, &["{}".into()], 2).await.unwrap();
    assert!(db.chunk_states(set).await.unwrap().is_empty());
    db.drop_chunks(other).await.unwrap();
    assert!(db
        .claim_chunk(lease, "a", None, None)
        .await
        .unwrap()
        .is_none());
    assert_eq!(db.chunk_states(other).await.unwrap()[0].state, "dropped");

    // Once the edit ends, the sweep finds its chunks until they are forgotten (their
    // scratch objects deleted); the rows stay as the record.
    assert!(db.ended_edits_with_chunks(10).await.unwrap().is_empty());
    execute(&db, "UPDATE edits SET status = 'done' WHERE id = $1", &id).await;
    execute(
        &db,
        "UPDATE edit_chunks SET output_key = 'k' WHERE edit_id = $1",
        &id,
    )
    .await;
    assert_eq!(
        db.ended_edits_with_chunks(10).await.unwrap(),
        vec![id.clone()]
    );
    db.forget_chunks(&id).await.unwrap();
    assert!(db.ended_edits_with_chunks(10).await.unwrap().is_empty());
    assert_eq!(db.chunk_states(other).await.unwrap()[0].output_key, None);
}

async fn the_cluster_slots_are_those_of_the_nodes_seen_lately(backend: Backend) {
    // An API node only: no chunk worker writes its own row beside the test's.
    let app = spawn_app_on(backend, |c| c.role = Role::Api).await;
    let db = app.db().await;
    let within = 10_000;
    assert_eq!(db.chunk_node_slots(within).await.unwrap(), 0);
    db.chunk_node_seen("a", 16).await.unwrap();
    db.chunk_node_seen("b", 4).await.unwrap();
    db.chunk_node_seen("b", 8).await.unwrap();
    assert_eq!(
        db.chunk_node_slots(within).await.unwrap(),
        24,
        "a node counts once, as last seen"
    );

    let lapsed = "UPDATE chunk_nodes SET seen_at = seen_at - 60000 WHERE node_id = $1";
    execute(&db, lapsed, "a").await;
    assert_eq!(
        db.chunk_node_slots(within).await.unwrap(),
        8,
        "a node not seen lately is gone"
    );
    db.chunk_node_seen("a", 16).await.unwrap();
    db.chunk_node_gone("b").await.unwrap();
    assert_eq!(
        db.chunk_node_slots(within).await.unwrap(),
        16,
        "a node that stopped is gone"
    );

    // An edit run again is planned for the slots its chunks were first planned for.
    let id = app
        .create_edit(edit("http://127.0.0.1:9/a.mp4", &["video-to-ogg"], None))
        .await;
    assert_eq!(db.planned_slots(&id, "0-0-0").await.unwrap(), None);
    let set = ChunkSet {
        edit_id: &id,
        org_id: ORG,
        step: "0-0-0",
        plan: "p1",
    };
    db.add_chunks(set, &["{}".into()], 24).await.unwrap();
    assert_eq!(db.planned_slots(&id, "0-0-0").await.unwrap(), Some(24));
    assert_eq!(db.planned_slots(&id, "0-0-1").await.unwrap(), None);
}
