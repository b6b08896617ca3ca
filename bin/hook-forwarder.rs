//! `hook-forwarder`: see [`hookd::forwarder`].
//!
//! `no_main`: the forwarder's cost is process start-up, and std's runtime
//! set-up (stack guard from /proc/self/maps, sigaltstack, stdio checks,
//! SIGPIPE handler) is measurable at that scale (benches/forwarder.rs).
//! Arguments and environment still come from std (glibc hands them over
//! before `main`). Writes to a closed stdout now end the process with
//! SIGPIPE instead of an error nobody would read.
#![no_main]

/// The C entry point.
#[no_mangle]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    hookd::forwarder::main()
}
