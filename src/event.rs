//! Events: one hook invocation, as hookd records and judges it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::Value;
use uuid::Uuid;

use crate::agent::claude::{HookEventKind, HookInput};
use crate::protocol::Harness;

/// A new time-ordered id (uuid v7). The random bits come from a per-thread
/// generator seeded once from the OS (through std's `RandomState`), not
/// from a `getrandom` system call per id as `Uuid::now_v7` would: two ids
/// are made per hook, on the hot path.
pub fn new_id() -> Uuid {
    use std::cell::Cell;
    use std::hash::{BuildHasher, Hasher};
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            std::collections::hash_map::RandomState::new().build_hasher().finish() | 1,
        );
    }
    // splitmix64: a fast generator with good statistical quality; ids need
    // uniqueness, not secrecy.
    let next = || {
        STATE.with(|state| {
            let mut z = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
            state.set(z);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
    };
    let (a, b) = (next().to_le_bytes(), next().to_le_bytes());
    let mut random = [0u8; 10];
    random[..8].copy_from_slice(&a);
    random[8..].copy_from_slice(&b[..2]);
    let millis = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid()
}

/// One hook invocation. The raw input is kept verbatim: unknown events and
/// fields survive to the log and to subscribers untouched.
#[derive(Debug, Clone)]
pub struct Event {
    /// uuid v7: ids sort by time.
    pub id: Uuid,
    /// When the daemon received it.
    pub received_at: SystemTime,
    /// Where it came from.
    pub harness: Harness,
    /// The typed view of `raw`.
    pub input: HookInput,
    /// The hook input exactly as Claude Code sent it.
    pub raw: Value,
    /// The `CLAUDE*` environment of the hook process.
    pub env: BTreeMap<String, String>,
    /// The agent-SDK run it came from, if any.
    pub run_id: Option<String>,
    /// Set when this hook is a copy of one judged elsewhere, naming where:
    /// `agent-sdk` (a command hook of run `run_id`, whose adapter reports
    /// the same hook) or `canUseTool` (the SDK's PermissionRequest hook,
    /// decided by the run's `canUseTool`). Copies are answered "no opinion"
    /// at once and never judged.
    pub copy_of: Option<&'static str>,
    /// Why the hook input could not be read as JSON, if it could not; `raw`
    /// then holds its text (see [`Event::unreadable`]).
    pub input_error: Option<String>,
}

impl Event {
    /// A new event received now.
    pub fn new(harness: Harness, raw: Value, env: BTreeMap<String, String>) -> Event {
        Event {
            id: new_id(),
            received_at: SystemTime::now(),
            harness,
            input: HookInput::parse(&raw),
            raw,
            env,
            run_id: None,
            copy_of: None,
            input_error: None,
        }
    }

    /// An event whose input could not be read as JSON: `text` is what there
    /// was, `error` what was wrong. Its kind comes from a best-effort look
    /// for `hook_event_name` in the text, so that the fallback blocks where
    /// the hook fails closed.
    pub fn unreadable(
        harness: Harness,
        text: String,
        error: String,
        env: BTreeMap<String, String>,
    ) -> Event {
        let name = crate::protocol::json::find_event_name(text.as_bytes());
        let mut event = Event::new(harness, Value::String(text), env);
        if let Some(name) = name {
            event.input.kind = HookEventKind::from_name(&name);
            event.input.name = name;
        }
        event.input_error = Some(error);
        event
    }

    /// The event kind.
    pub fn kind(&self) -> HookEventKind {
        self.input.kind
    }

    /// `hook_event_name` verbatim, or `unknown` when there is none.
    pub fn name(&self) -> &str {
        if self.input.name.is_empty() {
            "unknown"
        } else {
            &self.input.name
        }
    }

    /// The tool name, for tool events.
    pub fn tool_name(&self) -> Option<&str> {
        self.input.tool.tool_name.as_deref()
    }

    /// The project root: `CLAUDE_PROJECT_DIR`, else the session's cwd.
    pub fn project_dir(&self) -> Option<PathBuf> {
        self.env
            .get("CLAUDE_PROJECT_DIR")
            .map(PathBuf::from)
            .or_else(|| self.input.base.cwd.as_deref().map(PathBuf::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_v7_unique_and_time_ordered() {
        let ids: Vec<Uuid> = (0..10_000).map(|_| new_id()).collect();
        assert!(ids.iter().all(|id| id.get_version_num() == 7));
        let unique: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        let later = {
            std::thread::sleep(std::time::Duration::from_millis(2));
            new_id()
        };
        assert!(ids.iter().all(|id| *id < later));
    }
}
