//! A validated pipeline written down and read back: [`Command`]s by their wire
//! names and [`Options`] as the values they were checked as. What an edit stores
//! beside its request, so a worker runs the plan the handler validated instead of
//! parsing the request again (`edits::EditJob`).

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::commands::options::Options;
use crate::commands::registry::Command;

impl Serialize for Command {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Command, D::Error> {
        let name = String::deserialize(deserializer)?;
        Command::from_name(&name)
            .ok_or_else(|| D::Error::custom(format!("no command is named {name:?}")))
    }
}

impl Serialize for Options {
    /// The options given, by name; fetched files are not written (they belong to
    /// one run).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.given())
    }
}

impl<'de> Deserialize<'de> for Options {
    /// Options written by [`Serialize`]: each name must be one some command
    /// declares. The values are taken as they were checked when written.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Options, D::Error> {
        let given = BTreeMap::<String, Value>::deserialize(deserializer)?;
        let mut options = Options::default();
        for (name, value) in given {
            let spec = Command::ALL
                .into_iter()
                .flat_map(|c| c.options().iter())
                .find(|spec| spec.name == name)
                .ok_or_else(|| D::Error::custom(format!("no command reads an option {name:?}")))?;
            options.set(spec.name, value);
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn commands_and_options_read_back_as_they_were_written() {
        let commands = vec![Command::ExtractFrames, Command::ResizeImage];
        let options = Options::of(&[("scale", json!(0.25)), ("format", json!("webp"))]);
        let written = serde_json::to_value((&commands, &options)).unwrap();
        assert_eq!(
            written,
            json!([["extract-frames", "resize-image"], {"format": "webp", "scale": 0.25}])
        );
        let (read, read_options): (Vec<Command>, Options) =
            serde_json::from_value(written).unwrap();
        assert_eq!((read, read_options), (commands, options));
    }

    #[test]
    fn an_unknown_command_or_option_is_refused_not_dropped() {
        assert!(serde_json::from_value::<Command>(json!("image-copy")).is_err());
        assert!(serde_json::from_value::<Options>(json!({"nope": 1})).is_err());
    }
}
