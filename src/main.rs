//! The `digestd` binary: parses the command line and hands it to the library.

/// mimalloc, not glibc's malloc, for Rust's allocations and (routed in
/// `main`) SQLite's, returning freed pages soon: under the soak's mixed
/// load glibc's per-thread arenas held most of the server's resident
/// memory, and kept growing (`docs/benchmarks.md`, Soak; `crates/alloc`).
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: digestd_alloc::MiMalloc = digestd_alloc::MiMalloc;

fn main() {
    // Before anything opens SQLite, which keeps the allocator it starts with.
    #[cfg(not(feature = "system-alloc"))]
    digestd_alloc::init();
    std::process::exit(digestd::cli::main());
}
