//! The `ppcert` binary: parse arguments, hand them to the library, exit with its code.

use clap::Parser;

// glibc's malloc, free and consolidation were a third of a run's CPU; mimalloc takes 40 % off
// the CPU per exchange, for a higher peak RSS (BENCHMARKS.md, issue 45).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // First: a Ctrl-C from here on is either handled by the command or ends the process as
    // before anything was sent, never half-way through a run's start.
    ppcert::listen_from_start();
    return_memory_early();
    let cli = ppcert::cli::Cli::parse();
    std::process::ExitCode::from(ppcert::commands::execute(cli))
}

/// mimalloc returns freed pages to the system 1 s after they are freed by default; at once
/// keeps a long run's peak lower for no measurable CPU. The option's number is that of
/// mimalloc 3's `mi_option_e` (the crate's constants are version 2's), so it is set only there.
fn return_memory_early() {
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: a plain call into mimalloc's option table, which takes any value at any time.
    unsafe {
        if libmimalloc_sys::mi_version() >= 300 {
            libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
        }
    }
}
