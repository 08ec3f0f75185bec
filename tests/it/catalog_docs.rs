//! The lists of commands people read are the registry's: docs/API.md's command table and
//! option table, and the README's list, are checked against `Command::ALL` and each
//! command's declared options, so a command or an option added in its file and left
//! out of the docs fails here.

use mediaedit::commands::Command;

const API: &str = include_str!("../../docs/API.md");
const README: &str = include_str!("../../README.md");

/// The cells of every table row of `doc` (a line starting with `|`), trimmed.
fn rows(doc: &str) -> Vec<Vec<&str>> {
    doc.lines()
        .filter(|line| line.starts_with('|'))
        .map(|line| line.trim_matches('|').split('|').map(str::trim).collect())
        .collect()
}

fn code(name: &str) -> String {
    format!("`{name}`")
}

#[test]
fn every_command_has_a_row_of_the_command_table_naming_its_options() {
    let rows = rows(API);
    for command in Command::ALL {
        let row = rows
            .iter()
            .find(|cells| cells.len() == 5 && cells[0] == code(command.name()))
            .unwrap_or_else(|| panic!("docs/API.md's command table has no row for {command}"));
        for option in command.options() {
            assert!(
                row[3].contains(&code(option.name)),
                "docs/API.md's row of {command} does not name its option `{}`",
                option.name
            );
        }
    }
}

#[test]
fn every_option_of_every_command_has_a_row_of_the_option_table_naming_the_command() {
    let rows = rows(API);
    for command in Command::ALL {
        for option in command.options() {
            let named = rows.iter().any(|cells| {
                cells.len() == 5
                    && cells[0].split(", ").any(|name| name == code(option.name))
                    && cells[2].contains(command.name())
            });
            assert!(
                named,
                "docs/API.md's option table has no row for `{}` that names {command}",
                option.name
            );
        }
    }
}

#[test]
fn the_readme_names_every_command() {
    for command in Command::ALL {
        assert!(
            README.contains(&code(command.name())),
            "README.md does not name {command}"
        );
    }
}
