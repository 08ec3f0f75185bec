//! The shapes of the API's JSON documents, for the OpenAPI document only: the
//! handlers build these documents with `serde_json` (see `edits::document`,
//! `uploads::render_upload`), and the contract tests hold the two together.
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde_json::Value;
use utoipa::ToSchema;

/// `{"errors": [...]}`: every error the API answers.
#[derive(ToSchema)]
pub struct ErrorDocument {
    pub errors: Vec<ErrorObject>,
}

#[derive(ToSchema)]
pub struct ErrorObject {
    /// The HTTP status, as a string (`"422"`).
    pub status: String,
    /// A stable code (docs/API.md lists them all).
    pub code: String,
    pub title: String,
    /// A sentence a person can act on.
    pub detail: String,
    pub source: Option<ErrorSource>,
}

#[derive(ToSchema)]
pub struct ErrorSource {
    /// JSON pointer to the field at fault.
    pub pointer: Option<String>,
    /// The query parameter at fault.
    pub parameter: Option<String>,
}

/// The body of `POST /v1/edits`.
#[derive(ToSchema)]
pub struct NewEdit {
    /// 1–20 sources.
    pub assets: Vec<AssetIn>,
    /// 1–10 commands, applied in order (or, instead, `preset`).
    pub commands: Option<Vec<String>>,
    /// The name of one of the organization's presets, instead of `commands`: its
    /// commands, and its options under this edit's `options`.
    pub preset: Option<String>,
    /// Options of the commands (the `EditOptions` schema).
    pub options: Option<BTreeMap<String, Value>>,
    /// Seconds the edit and its outputs are kept (60–31 536 000).
    pub retention: Option<u64>,
    pub webhook: Option<WebhookIn>,
}

#[derive(ToSchema)]
pub struct AssetIn {
    /// `image`, `video` or `subtitles` (SRT or WebVTT, at most one, beside a video).
    #[schema(rename = "type")]
    pub kind: String,
    /// An http(s) URL, or an upload's `src`.
    pub src: String,
}

#[derive(ToSchema)]
pub struct WebhookIn {
    pub url: String,
}

/// An edit.
#[derive(ToSchema)]
pub struct Edit {
    /// `edit`.
    #[schema(rename = "type")]
    pub kind: String,
    pub id: String,
    pub attributes: EditAttributes,
    pub relationships: BTreeMap<String, Value>,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct EditAttributes {
    /// `queued`, `processing`, `done`, `failed` or `canceled`.
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
    pub expires_at: String,
    /// The commands run: as sent, or the preset's.
    pub commands: Vec<String>,
    /// The preset the edit was made from, when it named one.
    pub preset: Option<String>,
    pub assets: Vec<AssetIn>,
    /// As sent, or the preset's with the edit's own over them.
    pub options: Option<BTreeMap<String, Value>>,
    pub retention: Option<u64>,
    pub webhook: Option<WebhookIn>,
    /// When `done`.
    pub download_urls: Option<Vec<String>>,
    /// When `done`.
    pub outputs: Option<Vec<Output>>,
    pub cached: Option<bool>,
    /// When `failed`.
    pub error: Option<EditError>,
    /// 0–1, while `processing`.
    pub progress: Option<f64>,
    pub step: Option<BTreeMap<String, Value>>,
    /// While a retry waits.
    pub last_error: Option<EditError>,
    pub attempt: Option<u32>,
}

#[derive(ToSchema)]
pub struct EditError {
    pub code: String,
    pub detail: String,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Output {
    pub asset: u32,
    pub url: String,
    pub format: String,
    pub bytes: u64,
    pub width: u32,
    pub height: u32,
    pub duration: Option<f64>,
    pub frames: Option<u64>,
    /// Image outputs: a BlurHash of 4×3 components.
    pub blurhash: Option<String>,
    /// Image outputs: the ThumbHash bytes in standard base64.
    pub thumbhash: Option<String>,
    /// Image outputs: `#rrggbb`, the most common colour.
    pub dominant_color: Option<String>,
    /// `quality: auto`: the quality chosen.
    pub quality: Option<u8>,
    /// `quality: auto`: the output's SSIMULACRA2 score against the picture at quality 100.
    pub score: Option<f64>,
    /// Image outputs of an edit with `faces: true`: the faces found in the output, in
    /// its pixels, most confident first.
    pub faces: Option<Vec<FaceBox>>,
}

/// A face found in an image output.
#[derive(ToSchema)]
pub struct FaceBox {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    /// The detector's confidence, 0–1.
    pub score: f64,
}

/// A page of edits.
#[derive(ToSchema)]
pub struct EditList {
    pub data: Vec<Edit>,
    pub links: Links,
}

#[derive(ToSchema)]
pub struct Links {
    /// The next page, or null.
    pub next: Option<String>,
}

/// An upload.
#[derive(ToSchema)]
pub struct Upload {
    /// `upload`.
    #[schema(rename = "type")]
    pub kind: String,
    pub id: String,
    pub attributes: UploadAttributes,
    pub relationships: BTreeMap<String, Value>,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct UploadAttributes {
    pub created_at: String,
    pub expires_at: String,
    /// Null until known (tus `Upload-Defer-Length`).
    pub size: Option<u64>,
    pub offset: u64,
    /// `uploading` or `complete`.
    pub status: String,
    pub sha256: Option<String>,
    /// The URL to use as an asset's `src`.
    pub src: String,
}

/// An organization.
#[derive(ToSchema)]
pub struct Organization {
    /// `organization`.
    #[schema(rename = "type")]
    pub kind: String,
    pub id: String,
    pub attributes: BTreeMap<String, Value>,
}

/// What a dry run predicts.
#[derive(ToSchema)]
pub struct EditPlan {
    /// `edit-plan`.
    #[schema(rename = "type")]
    pub kind: String,
    pub attributes: BTreeMap<String, Value>,
}

/// Every attempt at an edit's webhook.
#[derive(ToSchema)]
pub struct Deliveries {
    pub data: Vec<Delivery>,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Delivery {
    pub event_id: String,
    #[schema(rename = "type")]
    pub kind: String,
    pub attempt: u32,
    pub at: String,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// `/healthz`, `/readyz`.
#[derive(ToSchema)]
pub struct Health {
    pub status: String,
    pub reason: Option<String>,
}

/// The command library (`GET /v1/commands`).
#[derive(ToSchema)]
pub struct CommandList {
    pub data: Vec<CommandEntry>,
}

#[derive(ToSchema)]
pub struct CommandEntry {
    /// `command`.
    #[schema(rename = "type")]
    pub kind: String,
    /// The command's name (`resize-image`).
    pub id: String,
    pub attributes: CommandAttributes,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct CommandAttributes {
    pub summary: String,
    /// The formats it takes (`jpeg`, `png`, `mp4`, …).
    pub inputs: Vec<String>,
    /// What it makes of each input format, with default options.
    pub outputs: BTreeMap<String, String>,
    /// `one`, `one per frame`, or `two` (a storyboard: its sheet and its VTT).
    pub files: String,
    pub options: Vec<CommandOption>,
    /// The option that names the output format instead, when there is one.
    pub format_option: Option<String>,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct CommandOption {
    pub name: String,
    /// What it does.
    pub description: String,
    /// `number`, `integer`, `boolean` or `string`.
    #[schema(rename = "type")]
    pub kind: String,
    pub minimum: Option<f64>,
    /// Whether `minimum` itself is refused.
    pub exclusive_minimum: Option<bool>,
    pub maximum: Option<f64>,
    /// The value when none is sent (`null`: none, or the input's format).
    pub default: Option<Value>,
    /// The strings it takes.
    #[schema(rename = "enum")]
    pub values: Option<Vec<String>>,
    /// For a number: the words it takes instead (`quality`: `auto`).
    pub words: Option<Vec<String>>,
    /// For a colour: the form it takes.
    pub pattern: Option<String>,
    /// For a text: its shortest and longest length, in characters.
    pub min_length: Option<u32>,
    pub max_length: Option<u32>,
}

/// The body of `PUT /v1/presets/{name}`.
#[derive(ToSchema)]
pub struct PresetIn {
    /// 1–10 commands, applied in order.
    pub commands: Vec<String>,
    /// Options of the commands (the `EditOptions` schema).
    pub options: Option<BTreeMap<String, Value>>,
}

/// A preset of the organization.
#[derive(ToSchema)]
pub struct Preset {
    pub data: PresetResource,
}

/// A page of presets: all of the organization's, by name.
#[derive(ToSchema)]
pub struct PresetList {
    pub data: Vec<PresetResource>,
}

#[derive(ToSchema)]
pub struct PresetResource {
    /// `preset`.
    #[schema(rename = "type")]
    pub kind: String,
    /// Its name.
    pub id: String,
    pub attributes: PresetAttributes,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct PresetAttributes {
    pub commands: Vec<String>,
    pub options: BTreeMap<String, Value>,
    pub created_at: String,
    pub updated_at: String,
}
