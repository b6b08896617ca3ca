//! Giving the allocator's free memory back to the kernel after a burst.
//!
//! Compiling the rules and the redaction patterns is the daemon's largest
//! burst of allocation: the regex compiler's scratch tables (a 320 KiB map
//! for one `RegexSet`, heaptrack) are freed when the compile ends, but
//! glibc's malloc keeps freed pages unless they are at the very top of its
//! heap, which they rarely are, and a reload compiles on a blocking thread,
//! in an arena of its own. `malloc_trim(0)` returns the free pages in the
//! middle of every arena too (`MADV_DONTNEED`). Measured with sixty regex
//! rules (`RssAnon`, this against the same binary with `malloc_trim`
//! preloaded away): 2.9 against 3.7 MiB once started, 5.8 against 8.7 MiB
//! after thirty reloads. It is called once the daemon is up and after each
//! reload: both are rare, and the call took 0.3–0.5 ms with those rules
//! (uprobes on `malloc_trim` and its return).
//!
//! [`release_startup_pages`] does the same for the executable's own code
//! and constants.
//!
//! Other allocators (mimalloc, the `hookd` binary's on Linux; the C
//! libraries of other platforms) return memory their own way: there it
//! does nothing.

/// Returns the allocator's free pages to the kernel (glibc only).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu", not(feature = "mimalloc")))]
    // SAFETY: malloc_trim takes no pointers and only walks the allocator's
    // own arenas, under their locks; any thread may call it at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Drops this process's mappings of its own executable's read-only pages,
/// its code and constants, once start-up is over (Linux only). Start-up
/// runs code an idle daemon never runs again (argument parsing, the rules
/// and TOML compilers, the redaction patterns, the configuration's
/// checks), and the kernel maps the 64 KiB around every page it touches:
/// an idle daemon with the standard profile kept 7.4 MiB of its 11.9 MiB of
/// code and 1.6 MiB of its 3.1 MiB of constants resident. After this, the
/// pages a hook runs are faulted back in from the page cache when first
/// used (minor faults, no disk read while the file stays cached), and the
/// rest stay out of the daemon's resident set (docs/performance-history.md, #28).
///
/// Only a read-only mapping of the executable with no anonymous page is
/// released: `MADV_DONTNEED` on a private file mapping none of whose pages
/// was written only forgets the page-table entries, and the next access
/// reads the same bytes from the file (a running executable cannot be
/// written: `ETXTBSY`). The relocated constants (RELRO: written at load,
/// then made read-only) hold anonymous pages and are kept, as is all
/// writable data; a read-only mapping gains no anonymous page later.
pub fn release_startup_pages() {
    #[cfg(target_os = "linux")]
    {
        let Ok(exe) = std::fs::read_link("/proc/self/exe") else {
            return;
        };
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return;
        };
        for (start, end) in unwritten_mappings(&smaps, &exe) {
            // SAFETY: [start, end) is one whole mapping from the kernel's own
            // list, page aligned, of this executable, read-only and with no
            // page ever written: dropping its pages loses nothing (above).
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
            }
        }
    }
}

/// The read-only mappings of `exe` with no anonymous page, from a
/// `/proc/PID/smaps` text.
#[cfg(target_os = "linux")]
fn unwritten_mappings(smaps: &str, exe: &std::path::Path) -> Vec<(usize, usize)> {
    let exe = exe.as_os_str().as_encoded_bytes();
    let mut found = Vec::new();
    // The mapping being read: its range, if it is one of the executable's
    // read-only ones.
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        if let Some(kb) = line.strip_prefix("Anonymous:") {
            if let Some(range) = current.take() {
                if kb.trim() == "0 kB" {
                    found.push(range);
                }
            }
            continue;
        }
        // A mapping's first line: start-end perms offset dev inode path.
        let mut f = line.splitn(6, ' ');
        let (Some(range), Some(perms)) = (f.next(), f.next()) else {
            continue;
        };
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) else {
            continue;
        };
        let path = f.nth(3).map(str::trim_start).unwrap_or_default();
        current = (perms.len() == 4
            && perms.as_bytes()[1] == b'-'
            && perms.ends_with('p')
            && path.as_bytes() == exe)
            .then_some((a, b));
    }
    found
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn mapping(range: &str, perms: &str, path: &str, anonymous_kb: u32) -> String {
        format!(
            "{range} {perms} 00000000 08:01 42                         {path}\n\
             Size:               1024 kB\nRss:                 512 kB\n\
             Anonymous:        {anonymous_kb} kB\nVmFlags: rd mr mw me\n"
        )
    }

    #[test]
    fn finds_the_executables_unwritten_read_only_mappings() {
        let smaps = [
            mapping("1000-2000", "r--p", "/usr/bin/hookd", 0),
            mapping("2000-8000", "r-xp", "/usr/bin/hookd", 0),
            // RELRO: relocated at load, then made read-only.
            mapping("8000-9000", "r--p", "/usr/bin/hookd", 8),
            mapping("9000-a000", "rw-p", "/usr/bin/hookd", 0),
            mapping("b000-c000", "r-xp", "/usr/lib/libc.so.6", 0),
            mapping("c000-d000", "r-xp", "/usr/bin/hookd two", 0),
            mapping("d000-e000", "r-xs", "/usr/bin/hookd", 0),
            mapping("e000-f000", "r-xp", "[vdso]", 0),
        ]
        .concat();
        let exe = std::path::Path::new("/usr/bin/hookd");
        assert_eq!(
            unwritten_mappings(&smaps, exe),
            [(0x1000, 0x2000), (0x2000, 0x8000)]
        );
        let spaced = std::path::Path::new("/usr/bin/hookd two");
        assert_eq!(unwritten_mappings(&smaps, spaced), [(0xc000, 0xd000)]);
    }

    #[test]
    fn the_daemons_code_is_found_and_released() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let code = unwritten_mappings(&smaps, &exe);
        assert!(!code.is_empty(), "no read-only mapping of {exe:?} found");
        // Released, this test's own code still runs (faulted back in from
        // the file) and no page of it was written.
        release_startup_pages();
        let again = std::fs::read_to_string("/proc/self/smaps").unwrap();
        assert_eq!(unwritten_mappings(&again, &exe), code);
    }
}
