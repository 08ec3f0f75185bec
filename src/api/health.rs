//! `GET /healthz` (liveness: the process answers) and `GET /readyz` (readiness: the
//! database answers and, on a node that runs workers, the temp directory is writable).

use std::path::PathBuf;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::db::Db;

/// What readiness depends on.
#[derive(Debug, Clone)]
pub struct Readiness {
    pub db: Db,
    /// The workers' temp directory, on a node that runs workers.
    pub tmp_root: Option<PathBuf>,
}

#[utoipa::path(get, path = "/healthz", operation_id = "healthz", tag = "operations", security(()),
    responses((status = 200, description = "The process answers", body = crate::api::schemas::Health)))]
pub async fn healthz() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// 200 when ready; 503 with the reason otherwise.
#[utoipa::path(get, path = "/readyz", operation_id = "readyz", tag = "operations", security(()),
    responses((status = 200, description = "Ready", body = crate::api::schemas::Health), (status = 503, description = "Not ready, with the reason", body = crate::api::schemas::Health)))]
pub async fn readyz(State(readiness): State<Readiness>) -> Response {
    match readiness.check().await {
        Ok(()) => Json(json!({ "status": "ready" })).into_response(),
        Err(reason) => {
            tracing::warn!(reason, "not ready");
            let body = json!({ "status": "unavailable", "reason": reason });
            (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
        }
    }
}

impl Readiness {
    async fn check(&self) -> Result<(), String> {
        let answered =
            tokio::time::timeout(std::time::Duration::from_secs(2), self.db.ping()).await;
        match answered {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err("the database does not answer".into()),
            Err(_) => return Err("the database did not answer within 2 s".into()),
        }
        if let Some(dir) = &self.tmp_root {
            let probe = dir.join(format!(".ready-{}", uuid::Uuid::new_v4().simple()));
            tokio::fs::write(&probe, b"ready")
                .await
                .map_err(|_| "the temp directory is not writable".to_string())?;
            let _ = tokio::fs::remove_file(&probe).await;
        }
        Ok(())
    }
}
