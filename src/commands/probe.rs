//! `ppcert probe`: the onboarding command for an unfamiliar staging. One of each call, what was
//! read and from where, what is left; `--write-config` writes what it proved.

use std::path::Path;

use chrono::Utc;

use crate::cli::{ProbeArgs, RunArgs};
use crate::config::{self, Environment, RunConfig};
use crate::console::printable;
use crate::datagen::{DataProfile, Generator, run_id};
use crate::error::{AfterSending, Failure, Judgement, Refusal};
use crate::probe::{Prober, write};

pub(crate) async fn probe(args: ProbeArgs) -> Result<u8, Failure> {
    let config = configure(&args)?;
    if let Some(path) = &args.write_config {
        check_write_target(path, args.force)?;
    }
    let chosen = config.staging.dialect_name().to_string();
    let opened = super::target::open(&config.target, config.staging.embedded_sandbox()).await?;
    // The probe retries once at most, with run's waits: it is finding out how the server behaves.
    let tokens = super::target::tokens(&config.staging, &opened.token).await?;
    let client = super::target::client(
        &config.staging,
        &opened.base_url,
        tokens,
        config.retry_policy().at_most(1),
    )?;
    let start = Utc::now();
    let seed: u64 = rand::random();
    // The probe books twice (a quote to delete, then a booking), in the staging's shape.
    let profile = DataProfile {
        booking_number_pattern: (config.staging.file.data.booking_number_pattern).clone(),
        ..DataProfile::default()
    };
    let generator = Generator::new(seed, run_id(start, seed), start, profile)
        .with_booking_numbers(2)
        .map_err(|why| Failure::Pattern {
            key: "data.booking_number_pattern",
            why,
        })?;
    let mut prober = Prober::new(client, &generator, &config.staging, config.flight_seller);
    crate::console::say!(
        "ppcert probe against {} (dialect {chosen})\n",
        opened.base_url
    );
    let remote = opened.sandbox.is_none().then_some(opened.base_url.as_str());
    let when = start.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let sent = probe_and_report(&args, &mut prober, &generator, remote, &when).await;
    Ok(sent?)
}

/// Everything from the first call on: no failure here can be the "nothing sent" exit 2.
async fn probe_and_report(
    args: &ProbeArgs,
    prober: &mut Prober,
    generator: &Generator,
    remote: Option<&str>,
    when: &str,
) -> Result<u8, AfterSending> {
    prober.run(generator).await.map_err(Failure::from)?;
    print_calls(prober);
    if let Some(path) = &args.write_config {
        let original = original_text(args);
        let flags = write::Flags {
            cacert: args.target.cacert.clone(),
            cert: args.target.cert.clone(),
            key: args.target.key.clone(),
            headers: args.target.headers.clone(),
        };
        let learned = prober.learned();
        let text = write::config_text(original.as_deref(), &learned, &flags, remote, when)
            .map_err(|why| Failure::ConfigNotWritten {
                path: path.clone(),
                why,
            })?;
        write_config(path, &text, prober, &flags, args.force)?;
    }
    Ok(verdict(prober))
}

/// The user's config file as written (`--config`, else `./ppcert.toml` when present): the
/// written config is that text edited, so nothing of it is lost. It was read moments ago.
fn original_text(args: &ProbeArgs) -> Option<String> {
    let path = match &args.target.config {
        Some(path) => path.clone(),
        None => std::path::PathBuf::from(config::DEFAULT_CONFIG),
    };
    std::fs::read_to_string(path).ok()
}

/// Configured as a run of the read-mostly `smoke` scenario would be; never production.
fn configure(args: &ProbeArgs) -> Result<RunConfig, Failure> {
    let run_args = RunArgs {
        target: args.target.clone(),
        scenario: Some("smoke".into()),
        ..RunArgs::default()
    };
    let config = RunConfig::from_args(&run_args, None)?;
    if config.environment() == Environment::Production {
        return Err(Failure::ProductionGuard(
            "refused by the production guard: probe creates quotes, contracts and claims; point it at staging".into(),
        ));
    }
    Ok(config)
}

/// Refuses, before anything is sent, a `--write-config` path that is a symbolic link or an
/// existing file without `--force`, or whose folder does not exist (exit 2: nothing sent).
fn check_write_target(path: &Path, force: bool) -> Result<(), Failure> {
    let existing = std::fs::symlink_metadata(path).ok();
    if existing
        .as_ref()
        .is_some_and(|m| m.file_type().is_symlink())
    {
        return Err(Refusal::WriteConfigLink {
            path: path.to_path_buf(),
        }
        .into());
    }
    if existing.is_some() && !force {
        return Err(Refusal::WriteConfigExists {
            path: path.to_path_buf(),
        }
        .into());
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(Refusal::WriteConfigNoFolder {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
        }
        .into());
    }
    Ok(())
}

/// Writes what the probe proved, and says how to use it. The text is loaded back first: a
/// file `run` could not read is never written. Requests were sent by now, so a failure here
/// is exit 6, never the usage error's 2.
fn write_config(
    path: &Path,
    text: &str,
    prober: &Prober,
    flags: &write::Flags,
    force: bool,
) -> Result<(), Failure> {
    let shown = path.display();
    let not_written = |why: String| Failure::ConfigNotWritten {
        path: path.to_path_buf(),
        why,
    };
    config::parse_file(&shown.to_string(), text).map_err(|e| {
        not_written(format!(
            "the proven configuration does not load ({e}); this is a ppcert bug, please report it"
        ))
    })?;
    // Checked before sending, and again now: the file may have appeared meanwhile.
    check_write_target(path, force).map_err(|f| not_written(f.to_string()))?;
    write::write_new(path, text, force).map_err(|e| not_written(e.to_string()))?;
    let run = match path.as_os_str() == config::DEFAULT_CONFIG {
        true => "ppcert run".to_string(),
        false => format!("ppcert run --config {}", path.display()),
    };
    let captures =
        crate::console::counted(prober.proven.len(), "proven capture", "proven captures");
    let wrote = format!(
        "wrote {} (dialect {}, {captures})",
        path.display(),
        prober.dialect
    );
    for given in &flags.headers {
        let name = given.split_once(':').map_or("", |(n, _)| n.trim());
        let value = given.split_once(':').map_or("", |(_, v)| v.trim());
        if crate::secret::names_a_credential(name) && !value.contains("{{") {
            crate::console::say!(
                "the --header {name} you gave is a credential: {} reads it from {} (set it before `ppcert run`)",
                path.display(),
                write::header_env(name)
            );
        }
    }
    match prober.bundle_left_to_choose() {
        // The next step is the partner's choice, then the run: said in that order.
        Some(offered) => crate::console::say!(
            "{wrote}; next: uncomment `[partner] bundle` for the bundle this partner sells (the quote answer offers {}), then {run} (without it the run stops, listing them)",
            offered.join(", ")
        ),
        None => crate::console::say!("{wrote}; next: {run}"),
    }
    Ok(())
}

/// Ready when every call worked and every value was read; else what is left, exit 1.
fn verdict(prober: &Prober) -> u8 {
    if prober.left.is_empty() && prober.calls.iter().all(|c| c.ok) {
        crate::console::say!(
            "every call worked and every value was read: this configuration is ready"
        );
        Judgement::Met.exit_code()
    } else {
        crate::console::say!("left for you:");
        for line in &prober.left {
            crate::console::say!("  - {}", printable(line));
        }
        Judgement::NotMet.exit_code()
    }
}

fn print_calls(prober: &Prober) {
    for call in &prober.calls {
        let status = call
            .status
            .map_or_else(|| "no answer".to_string(), |s| s.to_string());
        let mark = if call.ok { "ok" } else { "FAILED" };
        if call.request.is_empty() {
            // Nothing went out (the value it needed was never read): no arrow, no answer.
            crate::console::say!("{mark:6} {}: not sent", call.label);
        } else {
            crate::console::say!("{mark:6} {}: {} → {status}", call.label, call.request);
        }
        // The answer's shape and what was read from it are the staging's text: escaped.
        if !call.shape.is_empty() && call.shape != "null" {
            crate::console::say!("       answer: {}", printable(&call.shape));
        }
        for line in &call.lines {
            crate::console::say!("       {}", printable(line));
        }
    }
    crate::console::say!("");
    if let Some(why) = &prober.dialect_reason {
        crate::console::say!("dialect: {} ({why})", prober.dialect);
    }
    for ((op, name), proven) in &prober.proven {
        crate::console::say!(
            "capture: [endpoints.{op}.capture] {name} = {}",
            proven.path.to_toml()
        );
    }
}
