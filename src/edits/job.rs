//! The typed plan an edit runs: its assets, commands and options as the handler
//! validated them. Stored beside the request as sent (which is echoed back as it
//! came), so a worker runs what was validated and never parses the request again.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::{Asset, NewEdit};
use super::rules::ValidationRules;
use crate::commands::{Command, Options};
use crate::db::Lane;

/// What a worker runs: every asset through `commands`, with `options`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditJob {
    pub assets: Vec<Asset>,
    pub commands: Vec<Command>,
    pub options: Options,
    /// The cues of the subtitles asset, read when the edit was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtitles: Option<crate::media::subtitles::Subtitles>,
}

impl EditJob {
    /// The job as the database stores it.
    pub fn to_stored(&self) -> Value {
        serde_json::to_value(self).expect("a job is plain JSON")
    }

    /// The job a row stores: its `plan`; a row written before plans were stored has
    /// none, and its request (valid when accepted) is parsed once more instead, with
    /// the private-address rules left to the fetcher, which enforces them at connect
    /// time.
    pub fn from_stored(plan: Option<&Value>, request: &Value) -> Result<EditJob, String> {
        match plan {
            Some(plan) => serde_json::from_value(plan.clone()).map_err(|e| e.to_string()),
            None => {
                let rules = ValidationRules {
                    allow_private_sources: true,
                    ..ValidationRules::default()
                };
                let edit = NewEdit::parse(request.clone(), &rules).map_err(|e| e.to_string())?;
                Ok(edit.job())
            }
        }
    }

    /// The queue lane: fast when every command is an in-process image step.
    pub fn lane(&self) -> Lane {
        match self.commands.iter().all(|c| c.in_process()) {
            true => Lane::Fast,
            false => Lane::Slow,
        }
    }
}

impl NewEdit {
    /// What a worker will run of this edit.
    pub fn job(&self) -> EditJob {
        EditJob {
            assets: self.assets.clone(),
            commands: self.commands.clone(),
            options: self.options.clone(),
            subtitles: self.subtitles.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> Value {
        json!({
            "assets": [{"type": "video", "src": "https://example.com/a.mp4"}],
            "commands": ["extract-frames", "resize-image"],
            "options": {"width": 320, "format": "webp"},
            "retention": 3600
        })
    }

    #[test]
    fn a_stored_job_reads_back_as_the_job_that_was_validated() {
        let edit = NewEdit::parse(request(), &ValidationRules::default()).unwrap();
        let stored = edit.job().to_stored();
        assert_eq!(
            stored,
            json!({
                "assets": [{"kind": "video", "src": "https://example.com/a.mp4"}],
                "commands": ["extract-frames", "resize-image"],
                "options": {"format": "webp", "width": 320.0}
            })
        );
        let read = EditJob::from_stored(Some(&stored), &json!(null)).unwrap();
        assert_eq!(read, edit.job());
        assert_eq!(read.lane(), Lane::Slow);
    }

    #[test]
    fn a_row_from_before_stored_jobs_is_read_from_its_request() {
        let edit = NewEdit::parse(request(), &ValidationRules::default()).unwrap();
        assert_eq!(EditJob::from_stored(None, &request()).unwrap(), edit.job());
    }
}
