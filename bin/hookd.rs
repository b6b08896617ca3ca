//! `hookd`: the daemon and its command line, [`hookd::cli::main`]. What
//! only the binary can say stays here: its allocator and its `pow`.

/// On Linux mimalloc is the daemon's allocator: 1.07-1.66 times glibc's
/// decisions a second over 4 connections (runs hours apart), with an idle
/// daemon and 10 000 pending decisions within their memory targets once
/// its options below are set (docs/performance.md, #28). Elsewhere the
/// system's. The forwarder always keeps the C library's.
#[cfg(target_os = "linux")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's options for a small daemon, set before the first allocation
/// (a constructor: `main` is too late, the first arena is reserved by then).
/// By default mimalloc commits its 1 GiB arena eagerly and purges freed
/// pages after a delay: an idle daemon held 23.9 MiB against 7.9 with
/// arenas committed as used and freed pages purged at once, and 10 000
/// pending decisions 101 against 58 MiB (docs/performance-history.md,
/// #28). An option given in the environment (`MIMALLOC_PURGE_DELAY=10`, as
/// mimalloc reads it) wins over the daemon's value.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static MIMALLOC_OPTIONS: extern "C" fn() = {
    extern "C" fn set() {
        extern "C" {
            fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
        }
        // mimalloc.h (v3): `mi_option_arena_eager_commit`, `mi_option_purge_delay`.
        const OPTIONS: [(&std::ffi::CStr, std::ffi::c_int, std::ffi::c_long); 2] = [
            (c"MIMALLOC_ARENA_EAGER_COMMIT", 4, 0),
            (c"MIMALLOC_PURGE_DELAY", 15, 0),
        ];
        for (name, option, value) in OPTIONS {
            // SAFETY: `getenv` reads the environment, which nothing writes
            // yet (no other thread exists); `mi_option_set` is a plain store
            // into mimalloc's option table. Neither allocates.
            unsafe {
                if libc::getenv(name.as_ptr()).is_null() {
                    mi_option_set(option, value);
                }
            }
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
