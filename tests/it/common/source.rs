//! The project's own source, for the tests that read it (the layers, the
//! queue's status words).

use std::path::{Path, PathBuf};

/// Every `.rs` file under `p` (or `p` itself), at any depth.
pub fn rust_files(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(p, &mut out);
    out
}

fn walk(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            walk(&e.unwrap().path(), out);
        }
    } else if p.extension().is_some_and(|x| x == "rs") {
        out.push(p.to_path_buf());
    }
}
