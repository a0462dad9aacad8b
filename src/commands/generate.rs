//! Things printed on stdout for other tools: `ppcert generate` (the bookings a run would send,
//! as JSON), `ppcert completions` and `ppcert man` (from the clap definition), `ppcert schema
//! config` (from the config's types).

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::cli::GenerateArgs;
use crate::datagen::{DataProfile, Generator, run_id};
use crate::error::Failure;
use crate::exit_codes;

/// Midnight UTC today, so that `generate --seed N` prints the same bytes all day long.
fn today(now: DateTime<Utc>) -> DateTime<Utc> {
    now.date_naive()
        .and_hms_opt(0, 0, 0)
        .expect("midnight exists")
        .and_utc()
}

pub(crate) fn generate(args: GenerateArgs) -> Result<u8, Failure> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let start = args.start.unwrap_or_else(|| today(Utc::now()));
    let profile = DataProfile {
        flight_plans: args.flight_plans,
        ..DataProfile::default()
    };
    let run = run_id(start, seed);
    let generator = Generator::new(seed, &run, start, profile);
    let bookings: Vec<_> = (0..args.count).map(|i| generator.booking(i)).collect();
    let out =
        json!({ "seed": seed, "start": start.to_rfc3339(), "run_id": run, "bookings": bookings });
    let text = serde_json::to_string_pretty(&out).map_err(|e| Failure::Encode {
        what: "cannot write JSON",
        error: e.into(),
    })?;
    crate::console::say!("{text}");
    Ok(exit_codes::SUCCESS)
}

/// `ppcert completions SHELL`: generated from the clap definition, so it never drifts.
pub(crate) fn completions(shell: clap_complete::Shell) -> Result<u8, Failure> {
    let mut command = <crate::cli::Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "ppcert", &mut out);
    crate::console::say!("{}", String::from_utf8_lossy(&out));
    Ok(exit_codes::SUCCESS)
}

/// `ppcert schema config`: the JSON Schema of `ppcert.toml`.
pub(crate) fn schema_config() -> Result<u8, Failure> {
    let schema = crate::config::config_schema();
    let text = serde_json::to_string_pretty(&schema).map_err(|e| Failure::Encode {
        what: "cannot write JSON",
        error: e.into(),
    })?;
    crate::console::say!("{text}");
    Ok(exit_codes::SUCCESS)
}

/// `ppcert man`: one man page, generated from the clap definition. Its commands are listed
/// with their help here rather than as `ppcert-run(1)` pages, which nothing installs.
pub(crate) fn man() -> Result<u8, Failure> {
    let command = <crate::cli::Cli as clap::CommandFactory>::command();
    let man = clap_mangen::Man::new(command.clone());
    let mut out = Vec::new();
    let rendered = (|| -> std::io::Result<()> {
        man.render_title(&mut out)?;
        man.render_name_section(&mut out)?;
        man.render_synopsis_section(&mut out)?;
        man.render_description_section(&mut out)?;
        man.render_options_section(&mut out)?;
        out.extend_from_slice(commands_section(&command).as_bytes());
        man.render_extra_section(&mut out)?;
        man.render_version_section(&mut out)
    })();
    rendered.map_err(|e| Failure::Encode {
        what: "cannot render the man page",
        error: e.into(),
    })?;
    crate::console::say!("{}", String::from_utf8_lossy(&out));
    Ok(exit_codes::SUCCESS)
}

/// Each command with its help, and where its options are told.
fn commands_section(command: &clap::Command) -> String {
    let mut roff = String::from(".SH COMMANDS\n");
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let about = sub
            .get_long_about()
            .or_else(|| sub.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        roff.push_str(&format!(
            ".TP\n\\fBppcert {}\\fR\n{}\n",
            roff_text(sub.get_name()),
            roff_text(&about)
        ));
    }
    roff.push_str(
        ".PP\nEach command's options: \\fBppcert\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR.\n",
    );
    roff
}

/// Plain text made safe for roff: backslashes and hyphens escaped, no line read as a request.
fn roff_text(text: &str) -> String {
    text.lines()
        .map(|line| {
            let line = line.replace('\\', "\\e").replace('-', "\\-");
            if line.starts_with('.') || line.starts_with('\'') {
                format!("\\&{line}")
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
