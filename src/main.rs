//! The `ppcert` binary: parse arguments, hand them to the library, exit with its code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = ppcert::cli::Cli::parse();
    std::process::ExitCode::from(ppcert::commands::execute(cli))
}
