//! Parsing this process's command line (`cli.rs` declares it), with a short way for `ppcert run`.

use std::ffi::OsString;

use clap::{Args, FromArgMatches, Parser};

use crate::cli::{Cli, Command, RunArgs};

/// The command line of this process, parsed (exits with clap's message on an error or
/// `--help`, as [`Parser::parse`]).
///
/// `ppcert run …`, the command CI jobs start on every change, is parsed by its own arguments'
/// parser alone: clap otherwise builds every command's, some 0.3 ms of the run's start
/// (BENCHMARKS.md, issue 45). Whatever that parser does not take as it is (`--help`, a
/// mistake) is parsed again by the whole one, so every message is the same.
pub fn parse() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    run_alone(&args).unwrap_or_else(|| Cli::parse_from(args))
}

/// `args` (the binary's name first) parsed as `ppcert run …` by the run command's own parser;
/// `None` when they are not a run or that parser refuses them.
fn run_alone(args: &[OsString]) -> Option<Cli> {
    if args.get(1)? != "run" {
        return None;
    }
    let parser = RunArgs::augment_args(clap::Command::new("run").no_binary_name(true));
    let matches = parser.try_get_matches_from(&args[2..]).ok()?;
    let run = RunArgs::from_arg_matches(&matches).ok()?;
    Some(Cli {
        command: Command::Run(run),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short way gives exactly what the whole parser gives, and leaves to it what it
    /// refuses.
    #[test]
    fn a_run_is_parsed_as_the_whole_parser_parses_it() {
        let lines = [
            "ppcert run",
            "ppcert run --base-url http://127.0.0.1:1 --token-file t --quiet --out b",
            "ppcert run --scale 3 --seed 7 --concurrency 2 --format html --format junit",
            "ppcert run --resume reports/x --config ppcert.toml",
            "ppcert run --scenario smoke --json --baseline old --accept-drift",
        ];
        for line in lines {
            let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
            let short = run_alone(&args).unwrap_or_else(|| panic!("{line}: taken"));
            let whole = Cli::try_parse_from(&args).unwrap();
            assert_eq!(format!("{short:?}"), format!("{whole:?}"), "{line}");
        }
        for refused in [
            "ppcert run --help",
            "ppcert run --no-such-flag",
            "ppcert run --scale",
            "ppcert run --accept-drift",
            "ppcert run --dossier d --resume r",
            "ppcert run --cert c",
            "ppcert run --public",
        ] {
            let args: Vec<OsString> = refused.split(' ').map(OsString::from).collect();
            assert!(run_alone(&args).is_none(), "{refused}");
            assert!(
                Cli::try_parse_from(&args).is_err(),
                "{refused}: the whole parser too"
            );
        }
        let serve: Vec<OsString> = ["ppcert", "serve"].map(OsString::from).to_vec();
        assert!(
            run_alone(&serve).is_none(),
            "another command is the whole parser's"
        );
    }
}
