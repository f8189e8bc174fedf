//! The `digestd` binary: parses the command line and hands it to the library.

/// mimalloc, not glibc's malloc: under the soak's mixed load glibc's
/// per-thread arenas held about 40% more resident memory, and kept
/// growing (`docs/benchmarks.md`, Soak).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(digestd::cli::main());
}
