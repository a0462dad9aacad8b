//! ppcert: the staging certification runner for the Partner Protection API.
//!
//! Data flows one way: cli → config + scenario → datagen → engine → journal → evidence →
//! report. The sandbox is the default target and shares only the API models.

pub mod attest;
pub mod bounds;
pub mod cli;
mod commands;
pub mod config;
pub mod console;
pub mod datagen;
pub mod dialect;
pub mod digest;
pub mod endpoints;
pub mod engine;
pub mod env;
pub mod environment;
pub mod error;
pub mod evidence;
pub mod exit_codes;
pub mod journal;
/// The API models, shared with the sandbox crate.
pub use ppcert_models as models;
pub mod output;
pub mod probe;
pub mod problem;
pub mod proxy;
pub mod record;
pub mod report;
/// The embedded staging simulator, a crate of its own.
pub use ppcert_sandbox as sandbox;
pub mod scenario;
pub mod secret;
pub mod webhook;

use cli::{Cli, Command, WebhookCommand};
pub use error::Failure;

/// Runs one command to completion and returns the process exit code.
pub fn run(cli: Cli) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            crate::console::tell!("error: cannot start the async runtime: {e}");
            return exit_codes::USAGE;
        }
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(code) => code,
        Err(failure) => {
            crate::console::tell!("error: {:#}", failure.error);
            failure.exit_code()
        }
    }
}

async fn dispatch(cli: Cli) -> Result<u8, Failure> {
    match cli.command {
        Command::Serve(args) => commands::serve::serve(args).await,
        Command::Proxy(args) => commands::proxy::proxy(args).await,
        Command::Generate(args) => commands::generate::generate(args),
        Command::Run(args) => commands::run::run(args).await,
        Command::CheckToken(args) => commands::check_token::check_token(args).await,
        Command::Validate(args) => commands::validate::validate(args),
        Command::Scenarios => commands::validate::scenarios(),
        Command::Dialects => commands::dialects::dialects(),
        Command::Probe(args) => commands::probe::probe(args).await,
        Command::Completions { shell } => commands::generate::completions(shell),
        Command::Man => commands::generate::man(),
        Command::Webhook(WebhookCommand::Listen(args)) => commands::webhook::listen(args).await,
        Command::Webhook(WebhookCommand::Send(args)) => commands::webhook::send(args).await,
        Command::Report(args) => commands::report::report(args),
        Command::Verify(args) => commands::attest::verify(args),
        Command::Keygen(args) => commands::attest::keygen(args),
        Command::Sign(args) => commands::attest::sign(args),
        Command::Package(args) => commands::attest::package(args),
    }
}
