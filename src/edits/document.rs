//! The Edit document of the interface document (part 2).

use serde_json::{json, Map, Value};

use crate::db::{timestamp, EditRow, EditStatus, StoredOutput};

/// Renders an edit with download URLs signed now.
pub fn render_signed(row: &EditRow, storage: &crate::storage::Storage) -> Value {
    let now = std::time::SystemTime::now();
    let urls = row
        .outputs
        .iter()
        .map(|output| storage.download_url(&output.key, now))
        .collect();
    render_edit(row, urls)
}

/// Renders an edit. `download_urls` are the signed URLs of the outputs (in the order
/// of `row.outputs`), used only when the edit is `done`.
pub fn render_edit(row: &EditRow, download_urls: Vec<String>) -> Value {
    let mut attributes = Map::new();
    attributes.insert("createdAt".into(), json!(timestamp(row.created_at)));
    attributes.insert("updatedAt".into(), json!(timestamp(row.updated_at)));
    attributes.insert("expiresAt".into(), json!(timestamp(row.expires_at)));
    attributes.insert("status".into(), json!(row.status.as_str()));
    for key in [
        "commands",
        "preset",
        "options",
        "assets",
        "retention",
        "webhook",
    ] {
        if let Some(v) = row.request.get(key) {
            attributes.insert(key.into(), v.clone());
        }
    }
    match row.status {
        EditStatus::Done => {
            let outputs: Vec<Value> = row
                .outputs
                .iter()
                .zip(&download_urls)
                .map(|(output, url)| render_output(output, url))
                .collect();
            attributes.insert("downloadUrls".into(), json!(download_urls));
            mark_hdr_assets(&mut attributes, &row.outputs);
            attributes.insert("outputs".into(), json!(outputs));
            attributes.insert("cached".into(), json!(row.cached));
        }
        EditStatus::Failed => {
            if let Some((code, detail)) = &row.error {
                attributes.insert("error".into(), json!({ "code": code, "detail": detail }));
            }
        }
        EditStatus::Processing => {
            attributes.insert("progress".into(), json!(row.progress.unwrap_or(0.0)));
            if let Some(step) = &row.step {
                attributes.insert("step".into(), step.clone());
            }
        }
        EditStatus::Queued => {
            // A retry waiting out its backoff: why, and how many attempts so far.
            if let Some((code, detail)) = &row.error {
                attributes.insert(
                    "lastError".into(),
                    json!({ "code": code, "detail": detail }),
                );
                attributes.insert("attempt".into(), json!(row.attempts));
            }
        }
        EditStatus::Canceled => {}
    }
    if row.status == EditStatus::Processing {
        attributes.insert("attempt".into(), json!(row.attempts.max(1)));
    }
    json!({
        "type": "edit",
        "id": row.id,
        "attributes": attributes,
        "relationships": {
            "organization": {
                "links": { "self": format!("/v1/organizations/{}", row.org_id) },
                "data": { "type": "organization", "id": row.org_id },
            }
        }
    })
}

/// `hdr: "hlg"` or `"pq"` on each of `attributes.assets` whose outputs came from HDR
/// video (the probed fact the dry run reports on the same asset).
fn mark_hdr_assets(attributes: &mut Map<String, Value>, outputs: &[StoredOutput]) {
    let Some(Value::Array(assets)) = attributes.get_mut("assets") else {
        return;
    };
    for output in outputs {
        if let (Some(hdr), Some(Value::Object(asset))) =
            (&output.source_hdr, assets.get_mut(output.asset))
        {
            asset.insert("hdr".into(), json!(hdr));
        }
    }
}

/// One element of `attributes.outputs`: the stored output's metadata and its URL.
fn render_output(output: &StoredOutput, url: &str) -> Value {
    let mut fields = json!({
        "asset": output.asset,
        "url": url,
        "format": output.format,
        "bytes": output.bytes,
        "width": output.width,
        "height": output.height,
    });
    if let Some(duration) = output.duration {
        fields["duration"] = json!(duration);
    }
    if let Some(frames) = output.frames {
        fields["frames"] = json!(frames);
    }
    let placeholders = [
        ("blurhash", &output.blurhash),
        ("thumbhash", &output.thumbhash),
        ("dominantColor", &output.dominant_color),
    ];
    for (name, value) in placeholders {
        if let Some(value) = value {
            fields[name] = json!(value);
        }
    }
    if let (Some(quality), Some(score)) = (output.quality, output.score) {
        fields["quality"] = json!(quality);
        fields["score"] = json!(score);
    }
    if let Some(faces) = &output.faces {
        fields["faces"] = json!(faces);
    }
    fields
}
