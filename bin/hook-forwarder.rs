//! `hook-forwarder`: see [`hookd_forwarder`]. It names that crate, not `hookd`:
//! the binary then links the forwarder's crates alone (std, the protocol
//! crate, libc), and its whole-program optimisation reads nothing else.
//!
//! `no_main`: the forwarder's cost is process start-up, and std's runtime
//! set-up (stack guard from /proc/self/maps, sigaltstack, stdio checks,
//! SIGPIPE handler) is measurable at that scale (benches/forwarder.rs).
//! So the arguments are read from the `argv` given to this C `main`, not
//! from `std::env::args_os()`, which only glibc fills in without std's
//! `main` (on musl it is empty). The environment still comes from std.
//! Writes to a closed stdout end the process with SIGPIPE instead of an
//! error nobody would read.
//!
//! The test harness of this file (`cargo test` builds one for every binary)
//! keeps std's `main`: with this one it would run the forwarder itself,
//! which waits on stdin, and `cargo test` in a terminal would hang.
#![cfg_attr(not(test), no_main)]

/// The C entry point.
#[cfg(not(test))]
#[no_mangle]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: the C runtime passes `main` argc valid argument strings.
    let args = unsafe { hookd_forwarder::args_from_main(argc, argv) };
    hookd_forwarder::run(&args)
}
