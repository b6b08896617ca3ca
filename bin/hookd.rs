//! `hookd`: the daemon and its command line, [`hookd::cli::main`]. What
//! only the binary can say stays here: its allocator and its `pow`.

/// With the `mimalloc` feature, mimalloc is the daemon's allocator: faster
/// under heavy load, for more idle memory (docs/performance.md: the
/// system's allocator is the default because it keeps an idle daemon
/// small). The forwarder always keeps the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's options for a small daemon, set before the first allocation
/// (a constructor: `main` is too late, the first arena is reserved by then).
/// By default mimalloc commits its 1 GiB arena eagerly and purges freed
/// pages after a delay: an idle daemon held 23.9 MiB against 7.9 with
/// arenas committed as used and freed pages purged at once, and 10 000
/// pending decisions 101 against 58 MiB (docs/performance-history.md, #28).
#[cfg(all(feature = "mimalloc", target_os = "linux"))]
#[used]
#[link_section = ".init_array"]
static MIMALLOC_OPTIONS: extern "C" fn() = {
    extern "C" fn set() {
        extern "C" {
            fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
        }
        // mimalloc.h (v3): `mi_option_arena_eager_commit`, `mi_option_purge_delay`.
        const ARENA_EAGER_COMMIT: std::ffi::c_int = 4;
        const PURGE_DELAY: std::ffi::c_int = 15;
        // SAFETY: plain stores into mimalloc's option table; no pointer is
        // passed, and nothing else runs yet.
        unsafe {
            mi_option_set(ARENA_EAGER_COMMIT, 0);
            mi_option_set(PURGE_DELAY, 0);
        }
    }
    set
};

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
