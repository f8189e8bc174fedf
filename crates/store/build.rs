//! Rebuilds the store when a migration is added or changed:
//! `embed_migrations!` reads the migrations' folders at compile time, and
//! cargo does not see a new folder by itself.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
