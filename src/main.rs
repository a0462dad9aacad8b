//! The `ppcert` binary: parse arguments, hand them to the library, exit with its code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    // First: a Ctrl-C from here on is either handled by the command or ends the process as
    // before anything was sent, never half-way through a run's start.
    ppcert::listen_from_start();
    let cli = ppcert::cli::Cli::parse();
    std::process::ExitCode::from(ppcert::commands::execute(cli))
}
