//! `hookd`: the daemon and its command line, [`hookd::cli::main`]. What
//! only the binary can say stays here: its allocator and its `pow`.

/// With the `mimalloc` feature, mimalloc is the daemon's allocator: faster
/// under heavy load, for more idle memory (docs/performance.md: the
/// system's allocator is the default because it keeps an idle daemon
/// small). The forwarder always keeps the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `pow`, the one function of the C maths library this binary calls (from
/// tokio's multi-threaded scheduler: `f64::powf` in the moving average of
/// its tasks' poll times), defined here so that `libm.so` is not loaded at
/// all: 0.5 MiB of it was resident in an idle daemon for that one function
/// (idle RSS 9.5–9.7 against 9.7–10.0 MiB, and `hookd --version` starts in
/// 1.50 against 1.59–1.81 ms). The `libm` crate's is musl's (FreeBSD's)
/// `pow`, correct to within an ulp. Only where the C library is glibc,
/// whose `libm.so` is separate from `libc.so`; `tests/cli/cli.rs` checks that
/// the daemon does not map it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

fn main() -> std::process::ExitCode {
    hookd::cli::main()
}
