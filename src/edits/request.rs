//! A create-edit request parsed into domain types: parse, don't validate. A
//! [`NewEdit`] that exists has known commands, typed options and a type-checked pipeline.

use serde_json::{Map, Value};
use url::Url;

use super::error::ValidationError;
use super::options::escape_pointer;
use super::pipeline::{array, check_outputs, check_pipeline, parse_commands};
use super::rules::{ValidationRules, MAX_ASSETS, MAX_URL_LEN};
use crate::commands::{Command, Options};
use crate::error_code::Code;
use crate::fetch::{self, FetchError};

/// One input asset.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Asset {
    /// `image` or `video`; informational only (a `subtitles` asset is kept apart,
    /// see [`NewEdit::subtitles_src`]).
    pub kind: String,
    #[serde(with = "url_text")]
    pub src: Url,
}

/// An asset's URL as its text.
mod url_text {
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};
    use url::Url;

    pub fn serialize<S: Serializer>(url: &Url, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(url.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Url, D::Error> {
        let text = String::deserialize(deserializer)?;
        Url::parse(&text).map_err(D::Error::custom)
    }
}

/// A valid edit request, plus the request's own JSON to echo back as sent.
#[derive(Debug, Clone)]
pub struct NewEdit {
    pub assets: Vec<Asset>,
    /// The subtitles asset (`type: subtitles`), apart from the assets the commands
    /// run on: its index in the request's `assets` and its `src`.
    pub subtitles_src: Option<(usize, Url)>,
    /// Its cues, once fetched and read (`api::edits` does, before the edit is stored).
    pub subtitles: Option<crate::media::subtitles::Subtitles>,
    pub commands: Vec<Command>,
    pub options: Options,
    /// Seconds the edit and its outputs are kept, when sent (else the server's default).
    pub retention: Option<u64>,
    /// Where the edit's ending is posted, when sent.
    pub webhook: Option<url::Url>,
    /// `{"assets":…, "commands":…, "options":…, "retention":…, "webhook":…}` as sent (the
    /// optional fields only when sent).
    pub echo: Value,
}

/// Fields of an edit request besides the required `assets` and `commands`.
/// `preset` is the name of the preset the edit was made from, echoed as sent (its
/// commands and options are already in the body, see `edits::preset`).
const OPTIONAL_FIELDS: [&str; 4] = ["options", "retention", "webhook", "preset"];

/// Bounds of `retention`, in seconds: a minute to a year.
pub const RETENTION_SECS: std::ops::RangeInclusive<u64> = 60..=31_536_000;

impl NewEdit {
    /// Validates a parsed JSON body.
    pub fn parse(body: Value, rules: &ValidationRules) -> Result<NewEdit, ValidationError> {
        let Value::Object(mut body) = body else {
            return Err(ValidationError::new(
                Code::InvalidType,
                "",
                "The request body must be a JSON object with `assets` and `commands`.",
            ));
        };
        if let Some(extra) = body.keys().find(|k| {
            !["assets", "commands"].contains(&k.as_str()) && !OPTIONAL_FIELDS.contains(&k.as_str())
        }) {
            return Err(ValidationError::new(
                Code::UnknownField,
                format!("/{}", escape_pointer(extra)),
                format!("`{extra}` is not a field of an edit; the fields are assets, commands (or preset), options, retention and webhook."),
            ));
        }
        if let Some(preset) = body.get("preset") {
            super::preset::name_of(preset, "/preset")?;
        }
        let (assets, subtitles_src) = parse_assets(body.get("assets"), rules)?;
        let commands = parse_commands(body.get("commands"))?;
        let options = Options::parse(body.get("options"), &commands)?;
        check_subtitles(subtitles_src.as_ref(), &options)?;
        check_pipeline(&commands, &options)?;
        if let Some(limit) = rules.max_outputs {
            check_outputs(&commands, &options, assets.len() as u64, limit)?;
        }

        let retention = parse_retention(body.get("retention"))?;
        let webhook = super::webhook::parse_webhook(body.get("webhook"), rules)?;

        let mut echo = Map::new();
        for key in ["assets", "commands"].into_iter().chain(OPTIONAL_FIELDS) {
            if let Some(v) = body.remove(key) {
                echo.insert(key.to_string(), v);
            }
        }
        Ok(NewEdit {
            assets,
            subtitles_src,
            subtitles: None,
            commands,
            options,
            retention,
            webhook,
            echo: Value::Object(echo),
        })
    }
}

/// `retention`: whole seconds within [`RETENTION_SECS`].
fn parse_retention(value: Option<&Value>) -> Result<Option<u64>, ValidationError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let (min, max) = (RETENTION_SECS.start(), RETENTION_SECS.end());
    match value.as_u64() {
        Some(secs) if RETENTION_SECS.contains(&secs) => Ok(Some(secs)),
        Some(_) => Err(ValidationError::new(
            Code::ValueOutOfRange,
            "/retention",
            format!("`retention` must be between {min} and {max} seconds."),
        )),
        None if value.is_number() => Err(ValidationError::new(
            Code::ValueOutOfRange,
            "/retention",
            format!("`retention` must be a whole number of seconds between {min} and {max}."),
        )),
        None => Err(ValidationError::new(
            Code::InvalidType,
            "/retention",
            "`retention` must be a number of seconds.",
        )),
    }
}

/// The subtitles asset's index in the request's `assets`, and its `src`.
type SubtitlesSrc = (usize, Url);

/// The assets the commands run on, and the subtitles asset apart (one at most, with
/// at least one other asset to go with).
fn parse_assets(
    value: Option<&Value>,
    rules: &ValidationRules,
) -> Result<(Vec<Asset>, Option<SubtitlesSrc>), ValidationError> {
    let (mut assets, mut subtitles) = (Vec::new(), None);
    for (i, item) in array(value, "assets", MAX_ASSETS)?.iter().enumerate() {
        let asset = parse_asset(i, item, rules)?;
        if asset.kind != "subtitles" {
            assets.push(asset);
        } else if subtitles.is_some() {
            return Err(ValidationError::new(
                Code::TooManyItems,
                format!("/assets/{i}"),
                "An edit takes one subtitles asset at most.",
            ));
        } else {
            subtitles = Some((i, asset.src));
        }
    }
    if assets.is_empty() {
        return Err(ValidationError::new(
            Code::InvalidAssetType,
            "/assets",
            "A subtitles asset goes with a video: the edit needs an image or video asset too.",
        ));
    }
    Ok((assets, subtitles))
}

/// `burnSubtitles` needs a subtitles asset to draw.
fn check_subtitles(
    subtitles: Option<&(usize, Url)>,
    options: &Options,
) -> Result<(), ValidationError> {
    if subtitles.is_none() && options.flag(&crate::commands::BURN_SUBTITLES) {
        return Err(ValidationError::new(
            Code::InvalidOptionCombination,
            "/options/burnSubtitles",
            "`burnSubtitles` draws the edit's subtitles asset, and the edit has none.",
        ));
    }
    Ok(())
}

fn parse_asset(i: usize, item: &Value, rules: &ValidationRules) -> Result<Asset, ValidationError> {
    let at = |field: &str| format!("/assets/{i}{field}");
    let Value::Object(asset) = item else {
        return Err(ValidationError::new(
            Code::InvalidType,
            at(""),
            "Each asset must be an object with `type` and `src`.",
        ));
    };
    if let Some(extra) = asset
        .keys()
        .find(|k| !["type", "src"].contains(&k.as_str()))
    {
        return Err(ValidationError::new(
            Code::UnknownField,
            at(&format!("/{}", escape_pointer(extra))),
            format!("`{extra}` is not a field of an asset; the fields are type and src."),
        ));
    }
    let kind = match asset.get("type") {
        None => {
            return Err(ValidationError::new(
                Code::MissingField,
                at("/type"),
                "`type` is required.",
            ))
        }
        Some(Value::String(t)) if ["image", "video", "subtitles"].contains(&t.as_str()) => {
            t.clone()
        }
        Some(Value::String(t)) => {
            return Err(ValidationError::new(
                Code::InvalidAssetType,
                at("/type"),
                format!(
                    "Asset type \"{t}\" is not known; use \"image\", \"video\" or \"subtitles\"."
                ),
            ))
        }
        Some(_) => {
            return Err(ValidationError::new(
                Code::InvalidType,
                at("/type"),
                "`type` must be a string.",
            ))
        }
    };
    let src = match asset.get("src") {
        None => {
            return Err(ValidationError::new(
                Code::MissingField,
                at("/src"),
                "`src` is required.",
            ))
        }
        Some(Value::String(s)) if s.len() > MAX_URL_LEN => {
            return Err(ValidationError::new(
                Code::InvalidUrl,
                at("/src"),
                format!(
                    "`src` is {} bytes long; at most {MAX_URL_LEN} are allowed.",
                    s.len()
                ),
            ))
        }
        Some(Value::String(s)) => s,
        Some(_) => {
            return Err(ValidationError::new(
                Code::InvalidType,
                at("/src"),
                "`src` must be a string.",
            ))
        }
    };
    let own_upload = rules
        .uploads_prefix
        .as_deref()
        .is_some_and(|prefix| crate::uploads::upload_id_in(src, prefix).is_some());
    let src =
        fetch::check_url(src, rules.allow_private_sources || own_upload).map_err(|e| match e {
            FetchError::ForbiddenAddress(addr) => ValidationError::new(
                Code::SourceAddressForbidden,
                at("/src"),
                format!("`src` points at {addr}, which is not a public address."),
            ),
            _ => ValidationError::new(
                Code::InvalidUrl,
                at("/src"),
                "`src` must be an absolute http or https URL.",
            ),
        })?;
    Ok(Asset { kind, src })
}
