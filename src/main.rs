//! The `ppcert` binary: parse arguments, hand them to the library, exit with its code.

// glibc's malloc, free and consolidation were a third of a run's CPU; mimalloc takes 40 % off
// the CPU per exchange (BENCHMARKS.md, issue 45).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // First: a Ctrl-C from here on is either handled by the command or ends the process as
    // before anything was sent, never half-way through a run's start.
    ppcert::listen_from_start();
    let cli = ppcert::command_line::parse();
    std::process::ExitCode::from(ppcert::commands::execute(cli))
}

/// mimalloc's settings, given before mimalloc starts: it reads them once, when it reserves its
/// first arena (before `main`, for the runtime's first allocation). Defaults only: a
/// `MIMALLOC_*` variable in the environment still wins. Option numbers are mimalloc 3's
/// `mi_option_e` (the crate's constants are version 2's), so they are set only there.
///
/// - No transparent huge pages: mimalloc asks for them on its whole arena, and each first
///   touch of one zeroes 2 MiB. That was 40 % of a default batch's CPU (9 of 23 ms per run,
///   the largest part of its start), and huge pages count whole in the peak RSS.
/// - Freed pages returned at once, not after mimalloc's 1 s: `--scale 1000` peaked at 97 MiB
///   against 103 (100 ms) and 102–109 (1 s), for about 3 % more CPU. Without huge pages
///   each return is cheap, and a run's end no longer waits for its threads returning theirs.
#[cfg(target_os = "linux")]
extern "C" fn configure_allocator(_: i32, _: *const *const u8, _: *const *const u8) {
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    const ALLOW_THP: libmimalloc_sys::mi_option_t = 43;
    // SAFETY: plain stores into mimalloc's option table, which is a static array needing no
    // initialisation; `mi_version` returns a constant.
    unsafe {
        if libmimalloc_sys::mi_version() >= 300 {
            libmimalloc_sys::mi_option_set_default(ALLOW_THP, 0);
            libmimalloc_sys::mi_option_set_default(PURGE_DELAY, 0);
        }
    }
}

/// Run by the dynamic loader (or the static start code) before every constructor, mimalloc's
/// included: the only point early enough for the settings above.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".preinit_array")]
static CONFIGURE_ALLOCATOR: extern "C" fn(i32, *const *const u8, *const *const u8) =
    configure_allocator;
