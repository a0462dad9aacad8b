//! Links the `ppcert` binary at a fixed address (not position-independent) on Linux with glibc,
//! unless `PPCERT_PIE=1` is set at build time.
//!
//! Why: a position-independent `ppcert` carries about 42,000 relative relocations that the
//! dynamic loader applies at every start, writing every page of `.data.rel.ro` once: a quarter
//! of a millisecond of CPU and some 200 page faults before `main`, on every command
//! (BENCHMARKS.md, issue 45). The trade-off: the binary's own code and data sit at the same
//! address in every process (the C library, the stack, the heap and mimalloc's arenas are
//! still randomised). ppcert is a short-lived command written in safe Rust; `serve` and
//! `proxy` listen on loopback unless told otherwise. A distribution that wants the binary
//! position-independent builds with `PPCERT_PIE=1`. Only the binary is concerned, never the
//! library, the tests or the examples; static musl builds (the published Linux archives) and
//! other systems are left as the toolchain makes them.

fn main() {
    println!("cargo:rerun-if-env-changed=PPCERT_PIE");
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let glibc_linux = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let static_crt = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|feature| feature == "crt-static");
    let pie_wanted = matches!(var("PPCERT_PIE").as_str(), "1" | "true" | "yes");
    if glibc_linux && !static_crt && !pie_wanted {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
