//! A worker runs the plan the handler validated and stored beside the request, on
//! both databases: the request as sent is only echoed back, never parsed again.

use std::time::Duration;

use mediaedit::app::App;
use mediaedit::config::Role;
use mediaedit::db::Db;
use serde_json::json;

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(a_worker_runs_the_stored_plan_even_when_the_request_would_no_longer_parse);

async fn a_worker_runs_the_stored_plan_even_when_the_request_would_no_longer_parse(
    backend: Backend,
) {
    // An API node only: the edit waits, queued, until a worker node starts.
    let api = spawn_app_on(backend, |c| c.role = Role::Api).await;
    let src = api.fixtures.add("a.png", fixtures::png(40, 20));
    let id = api
        .create_edit(edit(&src, &["resize-image"], Some(json!({ "scale": 0.5 }))))
        .await;
    // What no worker could parse: a command that does not exist, no assets.
    let unparsable = json!({ "assets": [], "commands": ["no-such-command"] }).to_string();
    let sql = "UPDATE edits SET request = $1 WHERE id = $2";
    match api.db().await {
        Db::Sqlite(pool) => {
            let sql = sql.replace('$', "?");
            let query = sqlx::query(&sql).bind(&unparsable).bind(&id);
            query.execute(&pool).await.unwrap();
        }
        Db::Postgres(pool) => {
            let query = sqlx::query(sql).bind(&unparsable).bind(&id);
            query.execute(&pool).await.unwrap();
        }
    };

    let mut config = test_config(api.data_dir.path());
    use_backend(&mut config, api.cluster.as_ref());
    config.role = Role::Worker;
    let worker = App::start(config).await.unwrap();
    let doc = tokio::time::timeout(Duration::from_secs(60), api.wait_finished(&id))
        .await
        .expect("the worker ends the edit");
    assert_eq!(doc["attributes"]["status"], "done", "{doc}");
    let out = &api.download_all(&doc).await[0];
    assert_eq!(
        image::GenericImageView::dimensions(&fixtures::decode(out)),
        (20, 10),
        "the stored plan's resize ran"
    );
    worker.stop().await.unwrap();
}
