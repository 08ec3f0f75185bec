//! The command line's definition, names and refusals.

use super::*;
use clap::CommandFactory;

#[test]
fn cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn every_flag_reads_mediaedit_and_its_own_name() {
    fn walk(command: &clap::Command, checked: &mut usize) {
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if matches!(long, "help" | "version") {
                continue;
            }
            let expected = format!("MEDIAEDIT_{}", long.to_uppercase().replace('-', "_"));
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            assert_eq!(env.as_deref(), Some(expected.as_str()), "--{long}");
            *checked += 1;
        }
        for sub in command.get_subcommands() {
            walk(sub, checked);
        }
    }
    let mut checked = 0;
    walk(&Cli::command(), &mut checked);
    assert!(checked > 30, "only {checked} flags found");
}

#[test]
fn values_that_would_break_the_service_are_refused() {
    for args in [
        ["--workers", "0"],
        ["--lease-secs", "0"],
        ["--poll-ms", "0"],
        ["--max-attempts", "0"],
        ["--write-rate-limit-per-second", "NaN"],
        ["--write-rate-limit-per-second", "-1"],
        ["--read-rate-limit-per-second", "inf"],
        ["--write-rate-limit-burst", "0"],
        ["--read-rate-limit-burst", "0"],
    ] {
        let flag = format!("{}={}", args[0], args[1]);
        let result = Cli::try_parse_from(["mediaedit", "serve", flag.as_str()]);
        let error = result
            .err()
            .unwrap_or_else(|| panic!("{args:?} was accepted"));
        assert!(error.to_string().contains(args[0]), "{args:?}: {error}");
    }
    assert!(Cli::try_parse_from(["mediaedit", "serve", "--rate-limit-per-second", "0.5"]).is_ok());
    assert!(
        Cli::try_parse_from(["mediaedit", "serve", "--read-rate-limit-per-second", "0"]).is_ok()
    );
}

#[test]
fn allow_private_sources_accepts_a_bare_flag_and_a_value() {
    let parse = |args: &[&str]| match Cli::parse_from(args).command {
        Command::Serve(c) => c.allow_private_sources,
        _ => unreachable!(),
    };
    assert!(!parse(&["mediaedit", "serve"]));
    assert!(parse(&["mediaedit", "serve", "--allow-private-sources"]));
    assert!(parse(&[
        "mediaedit",
        "serve",
        "--allow-private-sources=true"
    ]));
}

#[test]
fn database_url_debug_hides_the_password() {
    let url: DatabaseUrl = "postgres://me:hunter2@db:5432/x".parse().unwrap();
    let shown = format!("{url:?}");
    assert!(
        !shown.contains("hunter2") && shown.contains("me:***@db"),
        "{shown}"
    );
    assert!("mysql://x".parse::<DatabaseUrl>().is_err());
}
