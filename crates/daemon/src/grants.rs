//! Session grants: answers a person asked hookd to remember for the rest of
//! a session (`decide` with `remember: "session"`).
//!
//! A grant is a permission rule (`Bash(npm test:*)`) with a verdict, for
//! one session id (its subagents share it). Later decision points of that
//! session that the rule matches get the verdict without asking, logged
//! with `source: "grant:<id>"`. A grant never overrides a deny: the rules
//! judge first, and a grant is only consulted when they did not deny; an
//! allow grant then answers what the rules asked about or left undecided,
//! a deny grant denies.
//!
//! Grants live in memory and in `grants.json` (beside the event log, in
//! the state directory), replaced atomically after every change, read
//! back at start: they survive a rules reload and a restart. They end
//! when their TTL passes (checked when judging, and swept when the earliest
//! one expires so clients see `grant {change:"expired"}`), when their session ends
//! (SessionEnd), or when a client revokes them.
//!
//! `remember: "always"` is not a grant: [`remember_always`] appends the
//! rule to the user rules file and reloads it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use std::sync::atomic::{AtomicUsize, Ordering};

use super::controller::Judgement;
use super::hub::{random_u64, short_id, DecideError};
use super::{RulesSource, Shared};
use crate::decision::{Answer, Decision, Source, Verdict};
use crate::event::Event;
use crate::protocol::{
    ErrorCode, GrantChange, GrantPush, GrantRecord, LastDecision, Remember, Remembered, Reply,
};
use crate::rules::{Action, Query, RuleSet};

/// The file's name in the state directory.
pub const GRANTS_FILE: &str = "grants.json";

/// How late after its expiry a grant may be swept (and announced): the
/// sweep waits for the earliest expiry plus this, so grants that expire
/// close together go in one sweep.
pub const EXPIRY_SLACK: Duration = Duration::from_millis(50);

/// A grant that matched an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantHit {
    /// The grant's id.
    pub id: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its rule.
    pub rule: String,
}

struct Active {
    record: GrantRecord,
    expires: Option<SystemTime>,
    rules: RuleSet,
}

impl Active {
    fn new(record: GrantRecord) -> Result<Active, String> {
        let expires = match &record.expires_at {
            Some(at) => Some(
                crate::time::parse_rfc3339(at)
                    .ok_or_else(|| format!("grant {}: bad expires_at `{at}`", record.id))?,
            ),
            None => None,
        };
        let rules = crate::grant::compile(&record.rule, record.verdict, &record.id)?;
        Ok(Active {
            record,
            expires,
            rules,
        })
    }

    fn live_at(&self, now: SystemTime) -> bool {
        self.expires.is_none_or(|at| now < at)
    }
}

/// `grants.json`.
#[derive(Serialize, Deserialize)]
struct GrantsFile {
    version: u32,
    grants: Vec<GrantRecord>,
}

/// The grants table (see the module doc).
pub struct Grants {
    path: Option<PathBuf>,
    active: Mutex<Vec<Active>>,
    /// `active.len()`, read without the lock: every decision point asks
    /// whether there are grants at all.
    count: AtomicUsize,
    /// Held while the file is written, so writes never interleave and the
    /// last one holds the latest table.
    writing: Mutex<()>,
    /// Held while a rule is appended to the user rules file: two appends
    /// must not both start from the old text.
    appending: Mutex<()>,
    /// Told when a grant is added: the expiry sweep then looks again at
    /// when it must wake (an idle daemon with no grant that expires has
    /// no timer at all).
    added: tokio::sync::Notify,
}

impl std::fmt::Debug for Grants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grants")
            .field("path", &self.path)
            .field("count", &self.count())
            .finish()
    }
}

impl Grants {
    /// The grants kept in `path` (none yet if it does not exist); `None`
    /// keeps them in memory only. Grants that expired meanwhile, or that
    /// cannot be read, are dropped (the latter with a warning).
    pub fn load(path: Option<PathBuf>, now: SystemTime) -> Grants {
        let mut active = Vec::new();
        if let Some(path) = &path {
            match std::fs::read(path) {
                Ok(bytes) => match serde_json::from_slice::<GrantsFile>(&bytes) {
                    Ok(file) => {
                        for record in file.grants {
                            match Active::new(record) {
                                Ok(grant) if grant.live_at(now) => active.push(grant),
                                Ok(_) => {}
                                Err(e) => {
                                    tracing::warn!(path = %path.display(), error = %e, "dropping a grant hookd cannot read")
                                }
                            }
                        }
                    }
                    Err(e) => {
                        tracing::warn!(path = %path.display(), error = %e, "grants file is not valid; starting without grants (it is replaced at the next change)")
                    }
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot read the grants file; starting without grants")
                }
            }
            if !active.is_empty() {
                tracing::info!(path = %path.display(), count = active.len(), "session grants restored");
            }
        }
        Grants {
            path,
            count: AtomicUsize::new(active.len()),
            active: Mutex::new(active),
            writing: Mutex::new(()),
            appending: Mutex::new(()),
            added: tokio::sync::Notify::new(),
        }
    }

    /// Active grants now.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Active>> {
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// When the first grant that has a TTL expires, if any does.
    pub fn next_expiry(&self) -> Option<SystemTime> {
        self.lock().iter().filter_map(|g| g.expires).min()
    }

    /// Every grant live at `now`, oldest first.
    pub fn list(&self, now: SystemTime) -> Vec<GrantRecord> {
        self.lock()
            .iter()
            .filter(|g| g.live_at(now))
            .map(|g| g.record.clone())
            .collect()
    }

    /// Adds a grant of `verdict` for `rule` (already checked with
    /// [`crate::grant::compile`]) to `session`, for `ttl` or until the
    /// session ends.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &self,
        verdict: Verdict,
        rule: &str,
        session: &str,
        ttl: Option<Duration>,
        from_event: Uuid,
        by: &str,
        now: SystemTime,
    ) -> Result<GrantRecord, String> {
        let mut active = self.lock();
        let id = short_id(random_u64, |id| active.iter().any(|g| g.record.id == id));
        let record = GrantRecord {
            id,
            verdict,
            rule: rule.to_string(),
            session_id: session.to_string(),
            created_at: crate::time::rfc3339(now),
            expires_at: ttl.map(|ttl| crate::time::rfc3339(now + ttl)),
            from_event,
            by: by.to_string(),
        };
        active.push(Active::new(record.clone())?);
        self.count.store(active.len(), Ordering::Relaxed);
        self.added.notify_one();
        Ok(record)
    }

    /// Removes grant `id`.
    pub fn revoke(&self, id: &str) -> Option<GrantRecord> {
        let mut active = self.lock();
        let at = active.iter().position(|g| g.record.id == id)?;
        let record = active.remove(at).record;
        self.count.store(active.len(), Ordering::Relaxed);
        Some(record)
    }

    /// Removes the grants whose TTL has passed at `now`.
    pub fn expire(&self, now: SystemTime) -> Vec<GrantRecord> {
        self.remove_where(|g| !g.live_at(now))
    }

    /// Removes the grants of `session` (it ended).
    pub fn end_session(&self, session: &str) -> Vec<GrantRecord> {
        self.remove_where(|g| g.record.session_id == session)
    }

    fn remove_where(&self, gone: impl Fn(&Active) -> bool) -> Vec<GrantRecord> {
        let mut active = self.lock();
        if !active.iter().any(&gone) {
            return Vec::new();
        }
        let (ended, kept): (Vec<Active>, Vec<Active>) = active.drain(..).partition(gone);
        *active = kept;
        self.count.store(active.len(), Ordering::Relaxed);
        ended.into_iter().map(|g| g.record).collect()
    }

    /// The grant that decides `input` of `session` at `now`, if one does:
    /// a deny grant before an allow grant.
    pub fn judge(
        &self,
        session: &str,
        input: &Value,
        project_dir: Option<&Path>,
        home: Option<&Path>,
        now: SystemTime,
    ) -> Option<GrantHit> {
        let active = self.lock();
        let mut allow = None;
        for grant in active
            .iter()
            .filter(|g| g.record.session_id == session && g.live_at(now))
        {
            let mut query = Query::new(input);
            query.project_dir = project_dir;
            query.home = home;
            let hit = || GrantHit {
                id: grant.record.id.clone(),
                verdict: grant.record.verdict,
                rule: grant.record.rule.clone(),
            };
            match grant.rules.evaluate(&query).action {
                Some(Action::Deny) => return Some(hit()),
                Some(Action::Allow) if allow.is_none() => allow = Some(hit()),
                _ => {}
            }
        }
        allow
    }

    /// Writes the table to the file (atomically). Blocking: call it on a
    /// blocking thread.
    pub fn save(&self) {
        let Some(path) = &self.path else { return };
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let file = GrantsFile {
            version: 1,
            grants: self.lock().iter().map(|g| g.record.clone()).collect(),
        };
        let mut bytes = serde_json::to_vec_pretty(&file).expect("grants serialize");
        bytes.push(b'\n');
        let written = (|| -> anyhow::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            // Private: the rules say what this user lets agents do.
            let like = std::fs::metadata(path).ok();
            crate::atomic::write_atomic_mode(path, &bytes, like.as_ref(), 0o600)?;
            Ok(())
        })();
        if let Err(e) = written {
            tracing::error!(path = %path.display(), error = %format!("{e:#}"), "could not save the session grants; they hold until the daemon stops");
        }
    }
}

/// Tells every subscriber about `grants` and saves the table (on a
/// blocking thread).
pub fn announce(shared: &Arc<Shared>, change: GrantChange, grants: Vec<GrantRecord>) {
    if grants.is_empty() {
        return;
    }
    for grant in grants {
        tracing::info!(id = %grant.id, rule = %grant.rule, session = %grant.session_id, ?change, "session grant");
        let mut frame = serde_json::to_vec(&Reply::Grant(GrantPush { change, grant }))
            .expect("frames serialize");
        frame.push(b'\n');
        shared.hub.push_to_all(frame.into());
    }
    let saver = shared.clone();
    tokio::task::spawn_blocking(move || saver.grants.save());
}

/// `judgement` (the rules') with the session's grants applied: when the
/// rules did not deny, a matching deny grant denies, and a matching allow
/// grant answers what the rules asked about or left undecided.
pub fn apply(shared: &Shared, event: &Event, judgement: Judgement) -> Judgement {
    let consulted = matches!(judgement.source, Source::Rule | Source::Default)
        && judgement.answer.verdict != Verdict::Deny
        && shared.grants.count() > 0;
    let Some(session) = event.input.base.session_id.as_deref().filter(|_| consulted) else {
        return judgement;
    };
    let project_dir = event.project_dir();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    // Grants are permission rules: they judge the Claude-shaped inputs the
    // agent's dialect maps its hook onto, as the rules do, and combine the
    // same way: a deny of any input denies, an allow needs every input.
    let now = shared.clock.now();
    let mut allow = None;
    let mut deny = None;
    let mut all_allowed = true;
    for input in event.rule_inputs() {
        match shared.grants.judge(
            session,
            &input,
            project_dir.as_deref(),
            home.as_deref(),
            now,
        ) {
            Some(hit) if hit.verdict == Verdict::Deny => {
                deny = Some(hit);
                break;
            }
            Some(hit) => {
                allow.get_or_insert(hit);
            }
            None => all_allowed = false,
        }
    }
    let Some(hit) = deny.or(allow.filter(|_| all_allowed)) else {
        return judgement;
    };
    if hit.verdict == Verdict::Allow && judgement.answer.verdict == Verdict::Allow {
        return judgement;
    }
    // An enforced policy source's ask is not the session's to loosen.
    if hit.verdict == Verdict::Allow && judgement.enforced_by.is_some() {
        return judgement;
    }
    shared.stats.grant_decisions.fetch_add(1, Ordering::Relaxed);
    let reason = format!(
        "hookd: {} for this session by grant {} ({})",
        match hit.verdict {
            Verdict::Deny => "denied",
            _ => "allowed",
        },
        hit.id,
        hit.rule
    );
    Judgement {
        answer: Answer {
            verdict: hit.verdict,
            reason: Some(reason),
            updated_input: None,
            additional_context: judgement.answer.additional_context,
        },
        source: Source::Grant(hit.id),
        rule_ids: Vec::new(),
        grant_rule: Some(hit.rule),
        ..judgement
    }
}

/// Ends the grants of `session`, which ended.
pub fn end_session(shared: &Arc<Shared>, session: &str) {
    if shared.grants.count() == 0 {
        return;
    }
    let ended = shared.grants.end_session(session);
    announce(shared, GrantChange::Expired, ended);
}

/// Keeps `decision` on `event` as the last one, for `status`.
pub fn note_last_decision(
    shared: &Shared,
    kind: &str,
    tool: Option<&str>,
    summary: String,
    decision: &Decision,
) {
    let last = LastDecision {
        verdict: decision.answer.verdict,
        kind: kind.to_string(),
        tool: tool.map(str::to_owned),
        summary,
        source: decision.source.to_string(),
        rule_ids: decision.rule_ids.clone(),
    };
    *shared
        .last_decision
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(last);
}

/// How long `last_decision.summary` may be.
pub const LAST_DECISION_SUMMARY_CHARS: usize = 60;

/// Sweeps expired grants (and announces them) as they expire, until
/// shutdown: it sleeps until the earliest expiry, and not at all while no
/// grant has a TTL.
pub async fn expire_loop(shared: Arc<Shared>, shutdown: tokio_util::sync::CancellationToken) {
    loop {
        let next = shared.grants.next_expiry();
        let due = async {
            match next {
                Some(at) => {
                    let wait = at.duration_since(shared.clock.now()).unwrap_or_default();
                    tokio::time::sleep(wait + EXPIRY_SLACK).await
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = shared.grants.added.notified() => continue,
            _ = due => {}
        }
        let expired = shared.grants.expire(shared.clock.now());
        announce(&shared, GrantChange::Expired, expired);
    }
}

/// A `decide` from client `client`: decides the pending event and, when
/// asked, remembers the answer (a session grant, or a rule in the user
/// rules file). What is remembered is checked before anything is decided.
pub async fn decide(shared: &Arc<Shared>, d: crate::protocol::Decide, client: &str) -> Reply {
    let req = d.req.clone();
    match decide_inner(shared, d, client).await {
        Ok(result) => Reply::ok(&req, result),
        Err(e) => Reply::request_error(&req, e.code, e.message),
    }
}

fn invalid(message: impl Into<String>) -> DecideError {
    DecideError {
        code: ErrorCode::InvalidRequest,
        message: message.into(),
    }
}

async fn decide_inner(
    shared: &Arc<Shared>,
    d: crate::protocol::Decide,
    client: &str,
) -> Result<Option<Value>, DecideError> {
    if d.remember == Remember::Once {
        if d.rule.is_some() || d.ttl_s.is_some() {
            return Err(invalid(
                "`rule` and `ttl_s` go with `remember: \"session\"` or `\"always\"`",
            ));
        }
        shared.hub.decide(&d.event_id, d.answer, client, None)?;
        return Ok(None);
    }
    if d.ttl_s.is_some() && d.remember != Remember::Session {
        return Err(invalid("`ttl_s` goes with `remember: \"session\"` only"));
    }
    let verdict = d.answer.verdict;
    if !matches!(verdict, Verdict::Allow | Verdict::Deny) {
        return Err(invalid(format!(
            "only allow and deny can be remembered, not {verdict}"
        )));
    }
    let view = shared.hub.view(&d.event_id)?;
    let rule = match &d.rule {
        Some(rule) => rule.clone(),
        None => crate::grant::default_rule(&view.suggestions, d.remember, verdict)
            .ok_or_else(|| match view.suggestions.iter().find(|s| s.every_command) {
                Some(broad) => invalid(format!(
                    "event {}'s only rule to remember is `{}`, which matches every shell command; it is remembered only when named: `rule: \"{}\"`",
                    d.event_id, broad.rule, broad.rule
                )),
                None => invalid(format!(
                    "event {} has no rule to remember; name one with `rule`",
                    d.event_id
                )),
            })?
            .to_string(),
    };
    crate::grant::compile(&rule, verdict, "check").map_err(invalid)?;
    let remembered = Some((d.remember, rule.clone()));
    match d.remember {
        Remember::Session => {
            let session = view.session.clone().ok_or_else(|| {
                invalid(format!(
                    "event {} has no session id: it can be remembered `always`, not for a session",
                    d.event_id
                ))
            })?;
            shared.hub.decide(
                &crate::protocol::EventRef::Id(view.id),
                d.answer,
                client,
                remembered,
            )?;
            let record = shared
                .grants
                .add(
                    verdict,
                    &rule,
                    &session,
                    d.ttl_s.map(Duration::from_secs),
                    view.id,
                    client,
                    shared.clock.now(),
                )
                .map_err(invalid)?;
            announce(shared, GrantChange::Added, vec![record.clone()]);
            Ok(Some(
                serde_json::to_value(record).expect("records serialize"),
            ))
        }
        Remember::Always => {
            let (appending, event, by) = (shared.clone(), view.id, client.to_string());
            let rule_text = rule.clone();
            let done = tokio::task::spawn_blocking(move || {
                remember_always(&appending, &rule_text, verdict, &event, &by)
            })
            .await
            .map_err(|_| DecideError {
                code: ErrorCode::Internal,
                message: "appending the rule failed".into(),
            })?
            .map_err(invalid)?;
            let done = Remembered {
                note: still_not(shared, &view.record, verdict),
                ..done
            };
            shared.hub.decide(
                &crate::protocol::EventRef::Id(view.id),
                d.answer,
                client,
                remembered,
            )?;
            Ok(Some(serde_json::to_value(done).expect("results serialize")))
        }
        Remember::Once => unreachable!("handled above"),
    }
}

/// What to tell the person when the user rules, now holding the
/// remembered rule, still do not give the event (its log `record`)
/// `verdict`: deny beats ask beats allow, so an `allow` can be outvoted.
fn still_not(shared: &Shared, record: &[u8], verdict: Verdict) -> Option<String> {
    let record: Value = serde_json::from_slice(record).ok()?;
    let input = record.get("input")?;
    let rules = shared.controller.rules();
    let evaluation = rules.evaluate(&Query::new(input));
    let now = match evaluation.action {
        Some(Action::Allow) => Verdict::Allow,
        Some(Action::Deny) => Verdict::Deny,
        Some(Action::Ask) => Verdict::Ask,
        _ => Verdict::NoOpinion,
    };
    crate::grant::outvoted(now, &evaluation.rule_ids, verdict)
}

/// Appends `rule` to the user rules file (creating it from the embedded
/// defaults when the daemon runs on them), checked as `hookd rules check`
/// would, and reloads the rules. Blocking.
pub fn remember_always(
    shared: &Shared,
    rule: &str,
    verdict: Verdict,
    event: &Uuid,
    by: &str,
) -> Result<Remembered, String> {
    let _appending = shared
        .grants
        .appending
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let source = shared.rules_source();
    let (path, text, created) = match &source {
        RulesSource::File(path) => {
            let meta = std::fs::metadata(path)
                .map_err(|e| format!("cannot read the rules file {}: {e}", path.display()))?;
            if meta.permissions().readonly() {
                return Err(format!(
                    "the rules file {} is read-only, so hookd will not change it; make it writable (`chmod u+w {}`) and answer again, or add the rule `{rule}` to it yourself",
                    path.display(),
                    path.display()
                ));
            }
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the rules file {}: {e}", path.display()))?;
            (path.clone(), text, false)
        }
        RulesSource::Defaults => {
            let path = shared.user_rules.clone().ok_or_else(|| {
                "the daemon runs on the embedded defaults and knows no user rules file to create (neither XDG_CONFIG_HOME nor HOME is set); start it with --rules FILE".to_string()
            })?;
            (path, crate::rules::DEFAULTS_TOML.to_string(), true)
        }
    };
    // The same remember again (a second identical call, asked again because
    // an `ask` rule outvotes the first): the rule is there; one is enough.
    if let Some(id) = crate::grant::remembered_already(&text, rule, verdict) {
        tracing::info!(path = %path.display(), %rule, %verdict, %id, "rule already remembered; nothing appended");
        return Ok(Remembered {
            rules_file: path.display().to_string(),
            rule: rule.to_string(),
            created_from_defaults: false,
            note: None,
            already_present: true,
        });
    }
    let new_text =
        crate::grant::append_rule(&text, &path, rule, verdict, event, by, shared.clock.now())?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let like = std::fs::metadata(&path).ok();
    crate::atomic::write_atomic(&path, new_text.as_bytes(), like.as_ref())
        .map_err(|e| format!("{e:#}"))?;
    if created {
        tracing::info!(path = %path.display(), "created the user rules file from the embedded defaults to remember a rule");
        shared.set_rules_source(RulesSource::File(path.clone()));
    }
    tracing::info!(path = %path.display(), %rule, %verdict, "rule remembered");
    super::reload(shared);
    Ok(Remembered {
        rules_file: path.display().to_string(),
        rule: rule.to_string(),
        created_from_defaults: created,
        note: None,
        already_present: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bash(command: &str) -> Value {
        json!({"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Bash",
            "tool_input": {"command": command}})
    }

    #[test]
    fn grants_judge_their_session_until_they_expire() {
        let grants = Grants::load(None, SystemTime::now());
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let g = grants
            .add(
                Verdict::Allow,
                "Bash(npm test:*)",
                "s1",
                Some(Duration::from_secs(60)),
                Uuid::nil(),
                "me",
                t0,
            )
            .unwrap();
        let judge = |session: &str, command: &str, at: SystemTime| {
            grants.judge(session, &bash(command), None, None, at)
        };
        assert_eq!(
            judge("s1", "npm test", t0).map(|h| h.id),
            Some(g.id.clone())
        );
        assert_eq!(judge("s2", "npm test", t0), None, "another session");
        assert_eq!(judge("s1", "npm publish", t0), None);
        let later = t0 + Duration::from_secs(59);
        assert!(judge("s1", "npm test", later).is_some());
        let expired_at = t0 + Duration::from_secs(60);
        assert_eq!(judge("s1", "npm test", expired_at), None, "expired");
        assert!(grants.expire(later).is_empty());
        assert_eq!(grants.expire(expired_at), vec![g]);
        assert_eq!(grants.count(), 0);
    }

    #[test]
    fn a_deny_grant_beats_an_allow_grant_and_session_end_clears_both() {
        let grants = Grants::load(None, SystemTime::now());
        let now = SystemTime::now();
        let add = |verdict, rule: &str| {
            grants
                .add(verdict, rule, "s1", None, Uuid::nil(), "me", now)
                .unwrap()
        };
        add(Verdict::Allow, "Bash(git:*)");
        let deny = add(Verdict::Deny, "Bash(git push:*)");
        let hit = grants
            .judge("s1", &bash("git push origin"), None, None, now)
            .unwrap();
        assert_eq!((hit.id, hit.verdict), (deny.id, Verdict::Deny));
        assert_eq!(
            grants
                .judge("s1", &bash("git status"), None, None, now)
                .unwrap()
                .verdict,
            Verdict::Allow
        );
        assert_eq!(grants.end_session("s2").len(), 0);
        assert_eq!(grants.end_session("s1").len(), 2);
        assert_eq!(grants.count(), 0);
    }

    #[test]
    fn grants_survive_a_restart_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state").join(GRANTS_FILE);
        let now = SystemTime::now();
        let grants = Grants::load(Some(path.clone()), now);
        let kept = grants
            .add(
                Verdict::Allow,
                "WebFetch(domain:docs.rs)",
                "s1",
                None,
                Uuid::nil(),
                "me",
                now,
            )
            .unwrap();
        grants
            .add(
                Verdict::Allow,
                "Bash(ls:*)",
                "s1",
                Some(Duration::from_secs(5)),
                Uuid::nil(),
                "me",
                now,
            )
            .unwrap();
        grants.save();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let restored = Grants::load(Some(path.clone()), now + Duration::from_secs(10));
        assert_eq!(restored.list(now), vec![kept], "the expired one is dropped");
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(Grants::load(Some(path), now).count(), 0);
    }
}
