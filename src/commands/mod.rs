//! Command implementations: the only place that wires modules together.

pub(crate) mod attest;
pub(crate) mod baseline;
pub(crate) mod bundle;
pub(crate) mod check_token;
pub(crate) mod dialects;
pub(crate) mod diff;
pub(crate) mod dossier;
pub(crate) mod dossier_run;
pub(crate) mod ending;
pub(crate) mod export;
pub(crate) mod generate;
pub(crate) mod guard;
pub(crate) mod listening;
pub(crate) mod probe;
pub(crate) mod proxy;
mod proxy_faults;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod run_webhooks;
pub(crate) mod serve;
mod serve_transport;
pub(crate) mod target;
pub(crate) mod validate;
pub(crate) mod webhook;

use crate::cli::{Cli, Command, WebhookCommand};
use crate::error::Failure;

/// Runs one command to completion and returns the process exit code.
pub fn execute(cli: Cli) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return said(Failure::Runtime(e)),
    };
    let run = matches!(cli.command, Command::Run(_));
    let code = runtime.block_on(dispatch(cli)).unwrap_or_else(said);
    if run {
        // A run ends once its bundle is written and its journal closed: its threads are not
        // waited for. Joining them (each returning its memory) was most of the time from the
        // bundle written to the exit. Other commands may still drop what flushes a file.
        runtime.shutdown_background();
    }
    code
}

/// Tells the failure on stderr, in one line (its words already say its cause), and ends with
/// the exit code its variant chooses.
fn said(failure: Failure) -> u8 {
    crate::console::tell!("error: {failure}");
    failure.exit_code()
}

async fn dispatch(cli: Cli) -> Result<u8, Failure> {
    match cli.command {
        Command::Serve(args) => serve::serve(args).await,
        Command::Proxy(args) => proxy::proxy(args).await,
        Command::Generate(args) => generate::generate(args),
        Command::Run(args) => run::run(args).await,
        Command::CheckToken(args) => check_token::check_token(args).await,
        Command::Validate(args) => validate::validate(args),
        Command::Scenarios => validate::scenarios(),
        Command::Dialects => dialects::dialects(),
        Command::Probe(args) => probe::probe(args).await,
        Command::Completions { shell } => generate::completions(shell),
        Command::Man => generate::man(),
        Command::Schema(crate::cli::SchemaCommand::Config) => generate::schema_config(),
        Command::Webhook(WebhookCommand::Listen(args)) => webhook::listen(args).await,
        Command::Webhook(WebhookCommand::Send(args)) => webhook::send(args).await,
        Command::Report(args) => report::report(args),
        Command::Verify(args) => attest::verify(args),
        Command::Keygen(args) => attest::keygen(args),
        Command::Sign(args) => attest::sign(args),
        Command::Package(args) => attest::package(args),
        Command::Dossier(args) => dossier::dossier(args),
        Command::Diff(args) => diff::diff(args),
        Command::Export(args) => export::export(args),
    }
}
