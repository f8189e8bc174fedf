//! The `digestd` binary: parses the command line and hands it to the library.

fn main() {
    std::process::exit(digestd::cli::main());
}
