//! Link options that depend on the C library hookd is built against.
//!
//! One: packed relative relocations (`-z pack-relative-relocs`, DT_RELR).
//! A position-independent binary carries a relocation for every pointer in
//! its read-only data (vtables, string tables, panic locations), and the
//! dynamic loader reads all of them at start: 588 KiB of 24-byte `RELA`
//! entries in `hookd`, resident for the daemon's whole life. As `RELR` they
//! take 7 KiB, and the idle daemon's RSS falls by about 1 MiB (README,
//! Performance).
//!
//! The loader must know `DT_RELR`: glibc has since 2.36, and the linker
//! then marks the binary as needing it (`GLIBC_ABI_DT_RELR`), so a binary
//! built here does not start on an older glibc. The option is therefore
//! only given when building for the machine that builds (not when cross
//! compiling) and when that machine's glibc is 2.36 or later; otherwise the
//! binaries are linked as before.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if packed_relocations_supported() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

fn packed_relocations_supported() -> bool {
    let var = |name: &str| env::var(name).unwrap_or_default();
    let native = var("TARGET") == var("HOST");
    native
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && glibc_version().is_some_and(|version| version >= (2, 36))
}

/// The running glibc's version, `(major, minor)`: the build script runs on
/// the machine that builds, whose C library the binaries link against.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn glibc_version() -> Option<(u32, u32)> {
    // SAFETY: gnu_get_libc_version takes nothing and returns a pointer to a
    // static NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    let mut parts = version.to_str().ok()?.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn glibc_version() -> Option<(u32, u32)> {
    None
}
