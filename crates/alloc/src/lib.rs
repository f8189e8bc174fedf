//! digestd's allocator: mimalloc, for Rust's allocations ([`MiMalloc`],
//! the binary's `#[global_allocator]`) and for SQLite's ([`route_sqlite`]),
//! returning freed memory to the system soon ([`purge_soon`]) and in
//! pages of 4 KiB, not transparent huge pages ([`no_huge_pages`]);
//! [`init`] does all three, first thing in `main`.
//!
//! Without the second, SQLite's page caches and sorters allocate with
//! glibc's malloc, from whichever thread runs the query: the tokio blocking
//! pool's threads each get an arena of their own, and under the soak's
//! load nine arenas of 18–29 MiB held two thirds of the server's resident
//! memory, and kept growing (`docs/benchmarks.md`, Soak). Routed to
//! mimalloc, SQLite's freed pages go back to the one allocator the rest
//! of the process uses, which returns what it does not need to the
//! system.
//!
//! mimalloc keeps a freed page for a second before it gives it back to
//! the system (`purge_delay`, 1,000 ms in mimalloc 3). The server frees in
//! bursts (a feed rendered, a tick composed): in the soak its minute peaks
//! were 240–320 MiB with that delay, 177–221 MiB with 10 ms (mimalloc 2's
//! default, [`PURGE_DELAY_MS`]) and `bench compose` as fast. With 0
//! (`MIMALLOC_PURGE_DELAY=0` in the environment) they were 180–191 MiB,
//! but composing from scratch on two workers took 1.6–2.3 times as long:
//! every page freed goes back with a system call.
//!
//! The unsafe code of digestd is here and nowhere else: each unsafe block
//! is one call into mimalloc's or SQLite's C API (under the contract SQLite
//! states for `sqlite3_mem_methods`), or one `prctl`.

use std::ffi::{c_int, c_void};

use libmimalloc_sys as mi;
use libsqlite3_sys as sqlite;

pub use mimalloc::MiMalloc;

// SQLite asks for sizes above zero and at most `c_int::MAX`; every block
// mimalloc returns is aligned to 16 bytes (SQLite needs 8).

#[allow(unsafe_code)]
unsafe extern "C" fn x_malloc(n: c_int) -> *mut c_void {
    // SAFETY: any size is valid for mi_malloc; it returns null on failure,
    // which SQLite reports as SQLITE_NOMEM.
    unsafe { mi::mi_malloc(n.max(0) as usize) }
}

#[allow(unsafe_code)]
unsafe extern "C" fn x_free(p: *mut c_void) {
    // SAFETY: SQLite frees only what x_malloc or x_realloc returned.
    unsafe { mi::mi_free(p) }
}

#[allow(unsafe_code)]
unsafe extern "C" fn x_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    // SAFETY: `p` came from x_malloc or x_realloc (SQLite's contract).
    unsafe { mi::mi_realloc(p, n.max(0) as usize) }
}

#[allow(unsafe_code)]
unsafe extern "C" fn x_size(p: *mut c_void) -> c_int {
    // SAFETY: `p` is a live block of ours (SQLite's contract).
    let n = unsafe { mi::mi_usable_size(p) };
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

#[allow(unsafe_code)]
unsafe extern "C" fn x_roundup(n: c_int) -> c_int {
    // SAFETY: mi_good_size only computes.
    let good = unsafe { mi::mi_good_size(n.max(0) as usize) };
    c_int::try_from(good).unwrap_or(n)
}

extern "C" fn x_init(_: *mut c_void) -> c_int {
    sqlite::SQLITE_OK
}

extern "C" fn x_shutdown(_: *mut c_void) {}

/// mimalloc's `mi_option_purge_delay` (the same place in the options of
/// mimalloc 2 and 3, `mimalloc.h`); the Rust bindings do not name it.
const MI_OPTION_PURGE_DELAY: mi::mi_option_t = 15;

/// What `main` calls before anything else: SQLite on mimalloc, freed
/// memory returned soon, and no transparent huge pages.
pub fn init() {
    purge_soon();
    no_huge_pages();
    route_sqlite();
}

/// Keeps the process off transparent huge pages (`PR_SET_THP_DISABLE`,
/// which its children inherit), unless the environment sets
/// `MIMALLOC_ALLOW_THP` (which mimalloc reads itself); returns whether
/// the kernel took it.
///
/// A huge page is resident whole as soon as one of its bytes is touched,
/// and stays so while any of them is in use: the 4 KiB pages mimalloc
/// purges inside it go back to no one. In the soak the server had 38–63
/// MiB of anonymous huge pages and minute peaks of 167–208 MiB; without
/// them, 112–142 MiB (`docs/benchmarks-history.md`, Soak).
pub fn no_huge_pages() -> bool {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
        return false;
    }
    // SAFETY: PR_SET_THP_DISABLE takes an integer flag and touches no
    // memory of ours.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    rc == 0
}

/// Whether the process is kept off transparent huge pages.
pub fn huge_pages_disabled() -> bool {
    // SAFETY: PR_GET_THP_DISABLE only reads the process's flag.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
    rc == 1
}

/// How long mimalloc keeps a freed page before it returns it to the
/// system, in milliseconds, unless `MIMALLOC_PURGE_DELAY` says otherwise.
pub const PURGE_DELAY_MS: i64 = 10;

/// Makes mimalloc return freed pages to the system after
/// [`PURGE_DELAY_MS`] instead of its own second, unless the environment
/// sets `MIMALLOC_PURGE_DELAY` (which mimalloc reads itself).
pub fn purge_soon() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: sets one of mimalloc's options; any value is valid for it.
    #[allow(unsafe_code)]
    unsafe {
        mi::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS as std::ffi::c_long)
    }
}

/// Makes SQLite allocate with mimalloc. It must run before SQLite is first
/// used in the process (SQLite refuses it afterwards); returns whether
/// SQLite took it.
pub fn route_sqlite() -> bool {
    let methods = sqlite::sqlite3_mem_methods {
        xMalloc: Some(x_malloc),
        xFree: Some(x_free),
        xRealloc: Some(x_realloc),
        xSize: Some(x_size),
        xRoundup: Some(x_roundup),
        xInit: Some(x_init),
        xShutdown: Some(x_shutdown),
        pAppData: std::ptr::null_mut(),
    };
    // SAFETY: SQLITE_CONFIG_MALLOC takes a pointer to the methods and
    // copies them before it returns; when SQLite is already initialised
    // it changes nothing and returns SQLITE_MISUSE.
    #[allow(unsafe_code)]
    let rc = unsafe {
        sqlite::sqlite3_config(
            sqlite::SQLITE_CONFIG_MALLOC,
            &methods as *const sqlite::sqlite3_mem_methods,
        )
    };
    rc == sqlite::SQLITE_OK
}

/// The memory SQLite holds now, in bytes: its page caches, statements
/// and sorters (SQLite's own count, `sqlite3_memory_used`).
pub fn sqlite_memory_used() -> i64 {
    // SAFETY: reads SQLite's counter, which is valid at any time.
    #[allow(unsafe_code)]
    unsafe {
        sqlite::sqlite3_memory_used()
    }
}

#[cfg(test)]
mod tests;
