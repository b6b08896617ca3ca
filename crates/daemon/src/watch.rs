//! Watching the rules files: the user's (when rules come from a file),
//! every known project's (`<project>/.claude/hookd.toml`), the policy
//! sources' — and `config.toml`, which names those sources.
//!
//! The daemon learns of a change from the kernel (inotify on Linux, kqueue
//! on the BSDs and macOS, through the `notify` crate) instead of polling:
//! an idle daemon is not woken until there is work. Directories are
//! watched, not files, so an editor that writes a new file and renames it
//! over the old one is seen; a directory that does not exist yet is
//! watched through its nearest existing parent, and the watch moves down
//! when it appears. Where the kernel's watches are unavailable (no inotify,
//! or the per-user limit reached) the watcher falls back to polling every
//! [`POLL_FALLBACK`], and the log and `status` say so; `hookd serve --watch
//! poll` asks for polling (file systems whose changes the kernel does not
//! report: NFS, some FUSE mounts).
//!
//! A change is a hint, not a verdict: the changed file is stat'ed and
//! compared with what was loaded (mtime, size, inode), so a burst of events
//! (truncate, write, close) or a neighbour's change costs at most one
//! reload, and one that did not change the rules costs none.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{reload_off_worker, RulesSource, Shared};
use crate::protocol::WatchMode;

/// How often files are polled where the kernel cannot watch them.
pub const POLL_FALLBACK: Duration = Duration::from_secs(1);

/// After a change, how long to let the burst of events that one save makes
/// arrive before acting on it (once).
const SETTLE: Duration = Duration::from_millis(50);

/// How many levels above a missing rules directory are watched for it to
/// appear (`<project>/.claude/` → `<project>`; `~/.config/hookd/` →
/// `~/.config`, `~`).
pub const ANCESTORS: usize = 3;

pub use crate::policy::store::{fingerprint, Fingerprint};

/// The directory to watch for changes to `file`: its own directory if it
/// exists, else the nearest existing one above it (within [`ANCESTORS`]).
pub fn watch_point(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .take(ANCESTORS)
        .find(|dir| dir.is_dir())
        .map(Path::to_path_buf)
}

/// The paths whose changes matter: the rules files and, for a file whose
/// directory is missing, the directories on the way to it. Shared with the
/// watcher's thread, which passes on only the events that touch one: the
/// neighbours of a rules file (an event log in the same directory, say)
/// wake nobody.
type Relevant = Arc<RwLock<RelevantPaths>>;

/// See [`Relevant`].
#[derive(Debug, Default)]
struct RelevantPaths {
    /// Paths whose own changes matter.
    paths: HashSet<PathBuf>,
    /// Directories any of whose entries matter (a policy source's
    /// directory: a file added to it is a change).
    dirs: HashSet<PathBuf>,
}

impl RelevantPaths {
    fn contains(&self, path: &Path) -> bool {
        self.paths.contains(path) || path.parent().is_some_and(|dir| self.dirs.contains(dir))
    }
}

/// The kernel's watches of the rules directories; `kernel: None` means
/// polling: the files are looked at every [`POLL_FALLBACK`] instead.
///
/// Polling is hookd's own, not `notify`'s `PollWatcher`: that one compares
/// whole-second mtimes, so an editor's rename within the second the file
/// was last written went unseen. Each tick runs the same check a kernel
/// event does (mtime to the nanosecond, size, inode).
struct FileWatcher {
    kernel: Option<notify::RecommendedWatcher>,
    watched: BTreeSet<PathBuf>,
}

impl FileWatcher {
    fn new(mode: WatchMode, relevant: Relevant, events: mpsc::UnboundedSender<()>) -> FileWatcher {
        let kernel = match mode {
            WatchMode::Poll => {
                tracing::info!(
                    "polling the rules files every {}s (--watch poll)",
                    POLL_FALLBACK.as_secs()
                );
                None
            }
            WatchMode::Kernel => {
                match notify::RecommendedWatcher::new(
                    handler(relevant, events),
                    notify::Config::default(),
                ) {
                    Ok(watcher) => Some(watcher),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot watch the rules files through the kernel; polling them every {}s instead", POLL_FALLBACK.as_secs());
                        None
                    }
                }
            }
        };
        FileWatcher {
            kernel,
            watched: BTreeSet::new(),
        }
    }

    fn polling(&self) -> bool {
        self.kernel.is_none()
    }

    /// Watches exactly the directories in `wanted`; true if one was not
    /// watched before. A kernel watch that cannot be added (the inotify
    /// limit, say) turns this into polling, for all of them.
    fn sync(&mut self, wanted: BTreeSet<PathBuf>) -> bool {
        let new: Vec<PathBuf> = wanted.difference(&self.watched).cloned().collect();
        if let Some(kernel) = &mut self.kernel {
            for gone in self.watched.difference(&wanted) {
                let _ = kernel.unwatch(gone);
            }
            for dir in &new {
                if let Err(e) = kernel.watch(dir, RecursiveMode::NonRecursive) {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot watch a rules directory through the kernel; polling the rules files every {}s instead", POLL_FALLBACK.as_secs());
                    self.kernel = None;
                    break;
                }
            }
        }
        self.watched = wanted;
        !new.is_empty()
    }
}

/// Passes on (as a bare wake-up) the events that touch a `relevant` path
/// and may change it: a reader opening a file changes nothing.
fn handler(
    relevant: Relevant,
    events: mpsc::UnboundedSender<()>,
) -> impl Fn(notify::Result<notify::Event>) + Send + 'static {
    move |event| {
        let touches = match &event {
            // An error (a queue overflow, say): something may have changed.
            Err(_) => true,
            Ok(event) if event.kind.is_access() => false,
            Ok(event) => {
                let relevant = relevant.read().unwrap_or_else(|e| e.into_inner());
                event.need_rescan() || event.paths.iter().any(|p| relevant.contains(p))
            }
        };
        if touches {
            let _ = events.send(());
        }
    }
}

/// For `files`: the directories to watch, and the paths whose changes
/// matter (each file, the directories between it and its watch point, and,
/// for a symlink, its target: dotfiles often live in a repository). Stats:
/// blocking.
fn watch_plan(files: &[PathBuf]) -> (BTreeSet<PathBuf>, RelevantPaths) {
    let mut dirs = BTreeSet::new();
    let mut relevant = RelevantPaths::default();
    for file in files {
        let target = std::fs::canonicalize(file).ok().filter(|t| t != file);
        for file in std::iter::once(file).chain(target.as_ref()) {
            dirs.extend(watch_point(file));
            relevant
                .paths
                .extend(file.ancestors().take(ANCESTORS).map(Path::to_path_buf));
            // A directory of rules (a policy source): every entry counts.
            if file.is_dir() {
                dirs.insert(file.clone());
                relevant.dirs.insert(file.clone());
            }
        }
    }
    (dirs, relevant)
}

/// Reloads `config.toml` and the user's rules when either (or a policy
/// source) changes and refreshes a project's rules when its file does,
/// until `shutdown`.
pub async fn watch_rules(shared: Arc<Shared>, shutdown: CancellationToken) {
    // Absolute: a watch's events name absolute paths. Read again when the
    // source changes (`remember: "always"` makes the defaults a file).
    let user_file_of = |shared: &Shared| match shared.rules_source() {
        RulesSource::File(path) => Some(std::path::absolute(&path).unwrap_or(path)),
        RulesSource::Defaults => None,
    };
    let mut user_file = user_file_of(&shared);
    let config_file = shared
        .config_file
        .as_ref()
        .map(|file| std::path::absolute(&file.path).unwrap_or_else(|_| file.path.clone()));
    let projects = shared.controller.projects().clone();
    let mut known_projects = projects.subscribe();
    let (tx, mut events) = mpsc::unbounded_channel();
    let relevant = Relevant::default();
    let stat = |path: PathBuf| async move {
        tokio::task::spawn_blocking(move || fingerprint(&path))
            .await
            .ok()
            .flatten()
    };
    let mut watcher: Option<FileWatcher> = None;
    let mut check = false;
    let mut poll = tokio::time::interval(POLL_FALLBACK);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        // The files to watch: the user's and the projects' known now. A
        // directory watched for the first time may have changed before its
        // watch existed: look at the files then too.
        let mut files: Vec<PathBuf> = projects.files();
        files.extend(user_file.clone());
        files.extend(config_file.clone());
        files.extend(
            shared
                .config()
                .policy
                .sources
                .iter()
                .filter_map(|source| source.root(shared.state_dir.as_deref()))
                .map(|root| std::path::absolute(&root).unwrap_or(root)),
        );
        let (wanted, paths) = tokio::task::spawn_blocking(move || watch_plan(&files))
            .await
            .unwrap_or_default();
        *relevant.write().unwrap_or_else(|e| e.into_inner()) = paths;
        let watcher = watcher.get_or_insert_with(|| {
            FileWatcher::new(shared.watch_mode(), relevant.clone(), tx.clone())
        });
        let added = watcher.sync(wanted);
        let polling = watcher.polling();
        shared
            .watch_polling
            .store(polling, std::sync::atomic::Ordering::Relaxed);
        if !(check || added) {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                changed = known_projects.changed() => if changed.is_err() { return },
                _ = shared.rules_source_changed.notified() => {
                    user_file = user_file_of(&shared);
                }
                _ = poll.tick(), if polling => {}
                event = events.recv() => {
                    if event.is_none() {
                        return;
                    }
                    // One look for the whole burst a save makes.
                    tokio::time::sleep(SETTLE).await;
                    while events.try_recv().is_ok() {}
                }
            }
            check = true;
            continue;
        }
        check = false;
        let user_changed = match &user_file {
            Some(path) => {
                let now = stat(path.clone()).await;
                let seen = *shared.rules_seen.lock().unwrap_or_else(|e| e.into_inner());
                now != seen
            }
            None => false,
        };
        let config_changed = match &config_file {
            Some(path) => {
                let now = stat(path.clone()).await;
                now != *shared.config_seen.lock().unwrap_or_else(|e| e.into_inner())
            }
            None => false,
        };
        let policy_changed = !shared.config().policy.is_empty() && {
            let policy = shared.clone();
            let now = tokio::task::spawn_blocking(move || {
                super::policy_fingerprint(&policy.config().policy, policy.state_dir.as_deref())
            })
            .await
            .unwrap_or_default();
            now != *shared.policy_seen.lock().unwrap_or_else(|e| e.into_inner())
        };
        if user_changed || policy_changed || config_changed {
            tracing::info!(
                user_changed,
                policy_changed,
                config_changed,
                "rules files changed"
            );
            reload_off_worker(&shared).await;
        }
        if !projects.is_empty() {
            let projects = projects.clone();
            let _ = tokio::task::spawn_blocking(move || projects.refresh()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_is_watched_through_its_nearest_parent() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("project/.claude/hookd.toml");
        assert_eq!(watch_point(&file), Some(dir.path().to_path_buf()));
        std::fs::create_dir_all(dir.path().join("project/.claude")).unwrap();
        assert_eq!(watch_point(&file), Some(dir.path().join("project/.claude")));
        assert_eq!(watch_point(Path::new("/nonexistent/a/b/c/d")), None);
    }
}
