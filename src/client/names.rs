//! The names of the files `create --wait` writes, built only from values checked
//! here: a server's answer (malicious, or rewritten on the way) chooses nothing of a
//! path. An edit id is a UUID, written back in its canonical form; a format is one of
//! the extensions the service writes, written as our own constant; an asset index and
//! a count are numbers. Anything else refuses the whole answer before a file is made.

use serde_json::Value;
use uuid::Uuid;

use crate::media::MediaFormat;

/// A value of a server's answer that cannot name a file.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("the service answered an edit id that is not a UUID ({0}); nothing was written")]
    EditId(String),
    #[error("the service answered an output format this client does not know ({0}); nothing was written")]
    Format(String),
    #[error("the service answered an output without a URL; nothing was written")]
    NoUrl,
}

/// The edit id of `doc`, checked: its canonical hyphenated form.
pub fn edit_id(doc: &Value) -> Result<String, Refused> {
    let raw = &doc["id"];
    raw.as_str()
        .and_then(|id| Uuid::try_parse(id).ok())
        .map(|id| id.hyphenated().to_string())
        .ok_or_else(|| Refused::EditId(shown(raw)))
}

/// One output to download: where it comes from and the file name it gets.
#[derive(Debug, PartialEq, Eq)]
pub struct Planned {
    pub url: String,
    pub name: String,
}

/// Every output of `doc`, named `<edit>-<asset>-<n>.<ext>` as the service's
/// `Content-Disposition` names them, with `id` already checked.
pub fn plan(id: &str, doc: &Value) -> Result<Vec<Planned>, Refused> {
    let mut per_asset = std::collections::HashMap::<u64, u64>::new();
    let mut planned = Vec::new();
    for output in doc["attributes"]["outputs"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let asset = output["asset"].as_u64().unwrap_or(0);
        let format = output["format"]
            .as_str()
            .and_then(MediaFormat::from_extension)
            .ok_or_else(|| Refused::Format(shown(&output["format"])))?;
        let url = output["url"].as_str().ok_or(Refused::NoUrl)?;
        let n = per_asset.entry(asset).or_default();
        planned.push(Planned {
            url: url.to_string(),
            name: format!("{id}-{asset}-{n}.{}", format.extension()),
        });
        *n += 1;
    }
    Ok(planned)
}

/// A value as the message shows it: JSON, quoted and escaped, cut to a readable length.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ID: &str = "0b5d2c1e-6f3a-4e8b-9c7d-1a2b3c4d5e6f";

    #[test]
    fn only_a_uuid_is_an_edit_id() {
        assert_eq!(edit_id(&json!({"id": ID})).unwrap(), ID);
        let upper = json!({"id": ID.to_uppercase()});
        assert_eq!(edit_id(&upper).unwrap(), ID, "written back canonical");
        for bad in [
            json!("../../x"),
            json!("/tmp/x"),
            json!("not-a-uuid"),
            json!(format!("{ID}/../x")),
            json!(42),
            Value::Null,
        ] {
            let refused = edit_id(&json!({ "id": bad })).unwrap_err();
            assert!(refused.to_string().contains("not a UUID"), "{refused}");
        }
    }

    #[test]
    fn names_come_from_the_checked_id_and_a_known_extension() {
        let doc = json!({"attributes": {"outputs": [
            {"asset": 0, "format": "webp", "url": "http://s/a"},
            {"asset": 0, "format": "jpg", "url": "http://s/b"},
            {"asset": 1, "format": "mp4", "url": "http://s/c"},
        ]}});
        let names: Vec<String> = plan(ID, &doc)
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(
            names,
            [
                format!("{ID}-0-0.webp"),
                format!("{ID}-0-1.jpeg"),
                format!("{ID}-1-0.mp4")
            ]
        );
    }

    #[test]
    fn an_unknown_format_refuses_every_output() {
        for format in [
            json!("../../x"),
            json!("webp/../../x"),
            json!("exe"),
            Value::Null,
        ] {
            let doc = json!({"attributes": {"outputs": [
                {"asset": 0, "format": "webp", "url": "http://s/a"},
                {"asset": 0, "format": format, "url": "http://s/b"},
            ]}});
            assert!(
                matches!(plan(ID, &doc), Err(Refused::Format(_))),
                "{format}"
            );
        }
    }
}
