//! How log lines are written: text for a terminal, JSON for a log collector.

use clap::ValueEnum;

/// The shape of each log line on stderr (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event, with the fields of its spans inline.
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `message`, the event's
    /// own fields, `span` (the innermost span's fields, such as an edit's `edit_id` and
    /// `org`) and `spans` (every enclosing span, outermost first).
    Json,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::LogFormat;
    use crate::config::Cli;

    #[test]
    fn log_format_is_text_unless_json_is_asked_for_before_or_after_the_subcommand() {
        let format = |args: &[&str]| Cli::try_parse_from(args).unwrap().log_format;
        assert_eq!(format(&["mediaedit", "serve"]), LogFormat::Text);
        assert_eq!(
            format(&["mediaedit", "serve", "--log-format", "json"]),
            LogFormat::Json
        );
        assert_eq!(
            format(&[
                "mediaedit",
                "--log-format=json",
                "token",
                "list",
                "--org",
                "a"
            ]),
            LogFormat::Json
        );
        let refused = Cli::try_parse_from(["mediaedit", "serve", "--log-format", "xml"]);
        assert!(refused.unwrap_err().to_string().contains("--log-format"));
    }
}
