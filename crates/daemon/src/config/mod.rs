//! The daemon's configuration file (`$XDG_CONFIG_HOME/hookd/config.toml` or
//! `hookd serve --config FILE`): how long decision points wait for clients,
//! the log's rotation and fsync policy, redaction. Rules live in their own
//! file. The daemon reads this one at start and again on SIGHUP and when it
//! changes ([`ConfigFile`]): what can change live does ([`RESTART_ONLY`]
//! lists what cannot), and a file with an error is refused whole.
//!
//! ```toml
//! [decisions]
//! route_undecided = false   # also hold decision points no rule decides for clients
//! timeout = 60              # seconds a pending decision waits, or "never"
//! escalate_after = "never"  # with [team]: seconds before an unanswered ask also goes to the team
//! [decisions.timeouts]      # per event kind
//! PermissionRequest = "never"
//! Stop = 10
//!
//! [log]
//! max_bytes = 67108864      # rotate past this size (0: never rotate)
//! keep = 5                  # rotated files kept: events.jsonl.1 … .5
//! fsync = "rotate"          # "rotate" (at rotation and shutdown) or "always" (every batch)
//! queue_bytes = 67108864    # lines waiting for the disk; past this they are dropped and counted
//!
//! [clients]
//! queue_bytes = 16777216    # pushed frames waiting for one slow client; past this: `lagged`
//!
//! [redact]
//! defaults = true           # the built-in patterns (API keys, tokens, private keys, password=)
//! patterns = ["corp-[0-9]{6}"]
//!
//! [http]                    # the HTTP listener: off unless `listen` is set (crate::http)
//! listen = "127.0.0.1:7878"
//! allow_remote = false      # needed for a non-loopback address (a tailnet's)
//! public_url = "http://box.tailnet.ts.net:7878"  # base of approval links
//!
//! [[notify.ntfy]]           # a push per event that waits for a person (needs [http])
//! url = "https://ntfy.sh/my-topic"
//! token_env = "NTFY_TOKEN"
//! [[notify.webhook]]
//! url = "https://example.com/hookd"
//! slack = false
//!
//! [signals.branch]          # `$signal.branch` in rules: see crate::signals
//! command = ["git", "branch", "--show-current"]
//!
//! [judge]                   # judge rules' model: see crate::judge
//! provider = "work"
//! max_calls_per_day = 1000
//!
//! [providers.work]          # for agent-SDK runs and the judge: see crate::providers
//! kind = "anthropic"
//! api_key_env = "WORK_ANTHROPIC_KEY"
//!
//! [policy]                  # rules shared by a team, under the user's: see crate::policy
//! sources = [
//!   { path = "~/.config/hookd/rules.d" },
//!   { path = "/srv/team-policy", name = "team", enforced = true },
//!   { bundle = "https://policy.example.com/hookd.tar.gz", name = "corp", public_key = "RW…" },
//! ]
//! [otlp]                    # OpenTelemetry export: see crate::otlp
//! endpoint = "http://127.0.0.1:4318"   # https://, or http:// to this machine
//! protocol = "http/protobuf"           # or "http/json"
//! service_name = "hookd"
//! headers = { authorization = { env = "OTLP_AUTH" } }   # or { file = "…" }; never inline
//! resource = { "deployment.environment.name" = "prod" }
//! ```

pub mod http;
pub mod models;
pub mod otlp;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use crate::agent::claude::HookEventKind;
use crate::providers::Provider;
use crate::redact::Redactor;

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[decisions]`.
    #[serde(default)]
    pub decisions: Decisions,
    /// `[log]`.
    #[serde(default)]
    pub log: LogConfig,
    /// `[clients]`.
    #[serde(default)]
    pub clients: ClientsConfig,
    /// `[redact]`.
    #[serde(default)]
    pub redact: RedactConfig,
    /// `[http]`.
    #[serde(default)]
    pub http: http::HttpConfig,
    /// `[notify]`.
    #[serde(default)]
    pub notify: http::NotifyConfig,
    /// `[providers.NAME]` as written; validated into [`Config::providers`].
    #[serde(default, rename = "providers")]
    raw_providers: BTreeMap<String, toml::Value>,
    /// `[otlp]`: OpenTelemetry export; off when absent.
    #[serde(default)]
    pub otlp: Option<crate::config::otlp::OtlpConfig>,
    /// The providers agent-SDK runs may name, by name.
    #[serde(skip)]
    pub providers: BTreeMap<String, Provider>,
    /// `[policy]`: the rules' policy sources.
    #[serde(default)]
    pub policy: crate::policy::PolicyConfig,
    /// `[signals.NAME]`: commands whose output rules read as `$signal.NAME`.
    #[serde(default)]
    pub signals: BTreeMap<String, crate::signals::SignalConfig>,
    /// `[judge]`: how judge rules ask their model (see crate::judge).
    #[serde(default)]
    pub judge: models::JudgeConfig,
    /// `[narrator]`: one line of what each agent is doing (see crate::narrator).
    #[serde(default)]
    pub narrator: models::NarratorConfig,
    /// `[team]`: the team plane's database (docs/team.md); off when absent.
    #[serde(default)]
    pub team: Option<hookd_team::TeamConfig>,
}

/// How long a pending decision may wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timeout {
    /// At most this long (and never past the forwarder's deadline).
    After(Duration),
    /// Until decided, bounded only by the forwarder's deadline.
    Never,
}

impl<'de> Deserialize<'de> for Timeout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Timeout, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Secs(f64),
            Word(String),
        }
        match Raw::deserialize(d)? {
            Raw::Secs(s) if s.is_finite() && s >= 0.0 => {
                Ok(Timeout::After(Duration::from_secs_f64(s)))
            }
            Raw::Word(w) if w == "never" => Ok(Timeout::Never),
            _ => Err(serde::de::Error::custom(
                "expected a number of seconds (>= 0) or \"never\"",
            )),
        }
    }
}

/// `[decisions]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decisions {
    /// Hold decision points that no rule decides for clients too (not only `ask`).
    #[serde(default)]
    pub route_undecided: bool,
    /// Default wait for a client's decision.
    #[serde(default = "default_timeout")]
    pub timeout: Timeout,
    /// Per-kind overrides, by `hook_event_name`.
    #[serde(default)]
    pub timeouts: BTreeMap<String, Timeout>,
    /// With a team plane: an ask no local client answered this long after
    /// it began waiting goes to the team's approvers too (`"never"`, the
    /// default: only `escalate = "team"` rules do).
    #[serde(default = "never")]
    pub escalate_after: Timeout,
}

fn never() -> Timeout {
    Timeout::Never
}

fn default_timeout() -> Timeout {
    Timeout::After(Duration::from_secs(60))
}

impl Default for Decisions {
    fn default() -> Decisions {
        Decisions {
            route_undecided: false,
            timeout: default_timeout(),
            timeouts: BTreeMap::new(),
            escalate_after: never(),
        }
    }
}

impl Decisions {
    /// The wait for an event named `kind`.
    pub fn timeout_for(&self, kind: &str) -> Timeout {
        self.timeouts.get(kind).copied().unwrap_or(self.timeout)
    }
}

/// When the log writer calls fsync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fsync {
    /// At rotation and at shutdown; otherwise every batch is flushed to the
    /// OS (survives a daemon crash, not a power loss).
    #[default]
    Rotate,
    /// After every batch of lines (survives a power loss; costs a disk sync
    /// per batch, never on a hook's path).
    Always,
}

/// `[log]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    /// Rotate when the file would grow past this many bytes; 0 never rotates.
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// Rotated files to keep.
    #[serde(default = "default_keep")]
    pub keep: u32,
    /// See [`Fsync`].
    #[serde(default)]
    pub fsync: Fsync,
    /// Bytes of lines that may wait for the writer (a slow or stalled
    /// disk); lines beyond it are dropped and counted (`log_dropped`).
    #[serde(default = "default_log_queue_bytes")]
    pub queue_bytes: usize,
}

fn default_log_queue_bytes() -> usize {
    64 * 1024 * 1024
}

/// `[clients]`: socket clients.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientsConfig {
    /// Bytes of pushed frames that may wait for one client that reads
    /// slowly; frames beyond it are dropped, counted and reported to the
    /// client as `lagged`.
    #[serde(default = "default_client_queue_bytes")]
    pub queue_bytes: usize,
}

fn default_client_queue_bytes() -> usize {
    16 * 1024 * 1024
}

impl Default for ClientsConfig {
    fn default() -> ClientsConfig {
        ClientsConfig {
            queue_bytes: default_client_queue_bytes(),
        }
    }
}

fn default_max_bytes() -> u64 {
    64 * 1024 * 1024
}

fn default_keep() -> u32 {
    5
}

impl Default for LogConfig {
    fn default() -> LogConfig {
        LogConfig {
            max_bytes: default_max_bytes(),
            keep: default_keep(),
            fsync: Fsync::default(),
            queue_bytes: default_log_queue_bytes(),
        }
    }
}

/// `[redact]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactConfig {
    /// Use the built-in patterns.
    #[serde(default = "yes")]
    pub defaults: bool,
    /// Extra regexes; a named group `secret` limits what is replaced.
    #[serde(default)]
    pub patterns: Vec<String>,
}

fn yes() -> bool {
    true
}

impl Default for RedactConfig {
    fn default() -> RedactConfig {
        RedactConfig {
            defaults: true,
            patterns: Vec::new(),
        }
    }
}

impl Config {
    /// Parses `text`; `origin` names the file in errors.
    ///
    /// An error names the file, line, column and key, and says what was
    /// expected, but never prints the value found there (nor the line it is
    /// on): a mistyped `api_key = "sk-…"` must not end up in the journal.
    pub fn parse(text: &str, origin: &Path) -> anyhow::Result<Config> {
        let fail = |key: &[&str], message: &str| {
            let (line, column) = location(text, key);
            let key = if key.is_empty() {
                String::new()
            } else {
                format!("`{}`: ", key.join("."))
            };
            anyhow::anyhow!("{}:{line}:{column}: {key}{message}", origin.display())
        };
        let mut config: Config = match toml::de::DeTable::parse(text) {
            Err(e) => {
                let (line, column) = line_column(text, e.span().map_or(0, |s| s.start));
                anyhow::bail!(
                    "{}:{line}:{column}: TOML syntax error: {}",
                    origin.display(),
                    crate::redact::without_value(e.message())
                );
            }
            Ok(table) => serde_path_to_error::deserialize(toml::Deserializer::from(table))
                .map_err(|e| {
                    use serde_path_to_error::Segment;
                    let key: Vec<String> = e
                        .path()
                        .iter()
                        .filter_map(|segment| match segment {
                            Segment::Seq { index } => Some(index.to_string()),
                            Segment::Map { key } => Some(key.clone()),
                            Segment::Enum { variant } => Some(variant.clone()),
                            _ => None,
                        })
                        .collect();
                    let key: Vec<&str> = key.iter().map(String::as_str).collect();
                    fail(&key, &crate::redact::without_value(e.inner().message()))
                })?,
        };
        for kind in config.decisions.timeouts.keys() {
            if HookEventKind::from_name(kind) == HookEventKind::Unknown {
                return Err(fail(
                    &["decisions", "timeouts", kind],
                    &format!("`{kind}` is not a Claude Code hook event"),
                ));
            }
        }
        for (i, pattern) in config.redact.patterns.iter().enumerate() {
            // The regex's own message quotes the pattern, which may well be
            // a literal secret the user wants hidden: say only what is wrong.
            if let Err(e) = regex::Regex::new(pattern) {
                let index = i.to_string();
                return Err(fail(
                    &["redact", "patterns", &index],
                    &format!("not a valid regex: {}", regex_problem(&e)),
                ));
            }
        }
        config
            .redactor()
            .map_err(|e| fail(&["redact"], &e.to_string()))?;
        for (name, signal) in &config.signals {
            signal
                .validate()
                .map_err(|e| fail(&["signals", name.as_str()], &e))?;
        }
        let mut providers = BTreeMap::new();
        for (name, table) in &config.raw_providers {
            let provider = crate::providers::Provider::parse(name, table).map_err(|e| {
                // `[providers.NAME].field: why` or `[providers.NAME]: why`.
                let rest = e.strip_prefix(&format!("[providers.{name}]")).unwrap_or(&e);
                let field = rest
                    .strip_prefix('.')
                    .and_then(|rest| rest.split_once(": "))
                    .map_or("", |(field, _)| field);
                let mut key = vec!["providers", name.as_str()];
                key.extend((!field.is_empty()).then_some(field));
                let (line, column) = location(text, &key);
                anyhow::anyhow!(
                    "{}:{line}:{column}: {}",
                    origin.display(),
                    redact_quoted(&e)
                )
            })?;
            providers.insert(provider.name.clone(), provider);
        }
        config.providers = providers;
        if let Err((key, why)) = config.judge.validate(&config.providers) {
            return Err(fail(&["judge", key], &why));
        }
        if let Err((key, why)) = config.narrator.validate(&config.providers) {
            return Err(fail(&["narrator", key], &why));
        }
        if let Some(team) = &config.team {
            if let Err((key, why)) = team.validate() {
                return Err(fail(&["team", key], &why));
            }
        }
        Ok(config)
    }

    /// Reads and parses a file.
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading config {}: {e}", path.display()))?;
        Config::parse(&text, path)
    }

    /// The redactor this config describes.
    pub fn redactor(&self) -> Result<Redactor, crate::redact::PatternError> {
        Redactor::new(self.redact.defaults, &self.redact.patterns)
    }
}

/// A provider's message names its field and may quote a value in
/// backticks (a URL, a name): hide whatever in those quotes looks like a
/// secret (a key, a URL's password), keep the rest as written.
fn redact_quoted(message: &str) -> String {
    let redactor = Redactor::default();
    message
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                redactor.redact_str(part)
            } else {
                part.into()
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// The line of a regex syntax error that says what is wrong (its Display
/// also draws the pattern).
fn regex_problem(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or("invalid syntax")
        .to_string()
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Where the key at `path` (`["log", "keep"]`, `["redact", "patterns",
/// "2"]`) is written in `text`: the deepest part of the path that exists.
fn location(text: &str, path: &[&str]) -> (usize, usize) {
    let Ok(root) = toml::de::DeTable::parse(text) else {
        return (1, 1);
    };
    let mut offset = 0;
    let mut table = Some(root.get_ref());
    let mut value: Option<&toml::Spanned<toml::de::DeValue<'_>>> = None;
    for part in path {
        let next = match (table, value.map(|v| v.get_ref())) {
            (Some(t), _) => t.iter().find(|(k, _)| k.get_ref() == part),
            (None, Some(toml::de::DeValue::Array(items))) => {
                match part.parse::<usize>().ok().and_then(|i| items.get(i)) {
                    Some(item) => {
                        offset = item.span().start;
                        value = Some(item);
                        table = None;
                        continue;
                    }
                    None => break,
                }
            }
            _ => None,
        };
        let Some((key, v)) = next else { break };
        offset = key.span().start;
        value = Some(v);
        table = match v.get_ref() {
            toml::de::DeValue::Table(t) => Some(t),
            _ => None,
        };
    }
    line_column(text, offset)
}

/// The sections a running daemon cannot change: the event log's writer,
/// the OpenTelemetry exporter and a running HTTP listener (with its
/// pushes) are set up once. `[http]` turned on where it was off is the
/// exception: the listener starts then. Everything else (`[decisions]`,
/// `[clients]`, `[redact]`, `[providers]`, `[policy]`) applies at once.
pub const RESTART_ONLY: &[&str] = &["[log]", "[otlp]", "[http]", "[notify]", "[team]"];

impl Config {
    /// The sections of [`RESTART_ONLY`] in which `self` (the file as read
    /// now) differs from `running` (what the daemon set up), named as in
    /// the file: `[http] listen`, `[log]`, … Empty: nothing waits for a
    /// restart.
    pub fn restart_needed(&self, running: &Config) -> Vec<String> {
        let mut changed = Vec::new();
        if self.log != running.log {
            changed.push("[log]".to_string());
        }
        if self.otlp != running.otlp {
            changed.push("[otlp]".to_string());
        }
        let (new, old) = (&self.http, &running.http);
        let fields = [
            ("listen", new.listen != old.listen),
            ("allow_remote", new.allow_remote != old.allow_remote),
            ("public_url", new.public_url != old.public_url),
            ("max_body_bytes", new.max_body_bytes != old.max_body_bytes),
            (
                "max_connections",
                new.max_connections != old.max_connections,
            ),
            ("token_file", new.token_file != old.token_file),
        ];
        changed.extend(
            fields
                .iter()
                .filter(|(_, differs)| *differs)
                .map(|(field, _)| format!("[http] {field}")),
        );
        if self.notify != running.notify {
            changed.push("[notify]".to_string());
        }
        if self.team != running.team {
            changed.push("[team]".to_string());
        }
        changed
    }
}

/// Where the daemon's `config.toml` is, so that a reload reads it again
/// as start-up did.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigFile {
    /// The file.
    pub path: std::path::PathBuf,
    /// Whether it must exist (`--config FILE`). The default path may be
    /// absent: the defaults apply then, and creating it later is a change.
    pub required: bool,
    /// `hookd serve --http ADDR`, which overrides `[http] listen` on every
    /// read.
    pub http_listen: Option<std::net::SocketAddr>,
}

impl ConfigFile {
    /// Reads and parses the file (blocking): errors name the file, line,
    /// column and key, as [`Config::parse`]'s do.
    pub fn read(&self) -> anyhow::Result<Config> {
        let mut config = match std::fs::read_to_string(&self.path) {
            Ok(text) => Config::parse(&text, &self.path)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !self.required => {
                Config::default()
            }
            Err(e) => anyhow::bail!("reading config {}: {e}", self.path.display()),
        };
        if let Some(listen) = self.http_listen {
            config.http.listen = Some(listen);
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_a_running_daemon_cannot_change_waits_for_a_restart() {
        let parse = |text: &str| Config::parse(text, Path::new("c.toml")).unwrap();
        let running = parse("[http]\nlisten = \"127.0.0.1:7878\"\n");
        let cases = [
            ("[http]\nlisten = \"127.0.0.1:7878\"\n", vec![]),
            (
                "[http]\nlisten = \"127.0.0.1:7878\"\n[decisions]\ntimeout = 5\n[redact]\npatterns = [\"x\"]\n[policy]\nsources = [{ path = \"/p\" }]\n",
                vec![],
            ),
            (
                "[http]\nlisten = \"127.0.0.1:7879\"\npublic_url = \"http://h:1\"\n",
                vec!["[http] listen", "[http] public_url"],
            ),
            (
                "[http]\nlisten = \"127.0.0.1:7878\"\n[log]\nkeep = 9\n[otlp]\nendpoint = \"http://127.0.0.1:4318\"\n",
                vec!["[log]", "[otlp]"],
            ),
            ("", vec!["[http] listen"]),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text).restart_needed(&running), expected, "{text}");
        }
    }

    #[test]
    fn a_config_file_at_the_default_path_may_be_missing_but_not_one_given() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = ConfigFile {
            path: dir.path().join("config.toml"),
            required: false,
            http_listen: "127.0.0.1:1".parse().ok(),
        };
        let config = file.read().unwrap();
        assert_eq!(
            config.http.listen,
            "127.0.0.1:1".parse().ok(),
            "--http applies"
        );
        file.required = true;
        let error = file.read().unwrap_err().to_string();
        assert!(error.contains("config.toml"), "{error}");
        std::fs::write(&file.path, "[decisions]\ntimeout = true\n").unwrap();
        let error = file.read().unwrap_err().to_string();
        assert!(error.contains("config.toml:2:"), "{error}");
    }

    #[test]
    fn parses_the_documented_example_and_defaults() {
        let text = "[decisions]\nroute_undecided = true\ntimeout = 1.5\n[decisions.timeouts]\nPermissionRequest = \"never\"\nStop = 10\n[log]\nmax_bytes = 100\nkeep = 2\nfsync = \"always\"\nqueue_bytes = 4096\n[clients]\nqueue_bytes = 2048\n[redact]\npatterns = [\"x-[0-9]+\"]\n";
        let c = Config::parse(text, Path::new("c.toml")).unwrap();
        assert!(c.decisions.route_undecided);
        assert_eq!(
            c.decisions.timeout_for("PreToolUse"),
            Timeout::After(Duration::from_millis(1500))
        );
        assert_eq!(c.decisions.timeout_for("PermissionRequest"), Timeout::Never);
        assert_eq!(c.log.keep, 2);
        assert_eq!(c.log.fsync, Fsync::Always);
        assert_eq!(c.log.queue_bytes, 4096);
        assert_eq!(c.clients.queue_bytes, 2048);
        let d = Config::default();
        assert_eq!(d.log.queue_bytes, 64 * 1024 * 1024);
        assert_eq!(d.clients.queue_bytes, 16 * 1024 * 1024);
        assert_eq!(d.decisions.timeout, Timeout::After(Duration::from_secs(60)));
        assert_eq!(d.log.max_bytes, 64 * 1024 * 1024);
        assert_eq!(d.decisions.escalate_after, Timeout::Never);
        let c = Config::parse("[decisions]\nescalate_after = 30\n", Path::new("c.toml")).unwrap();
        assert_eq!(
            c.decisions.escalate_after,
            Timeout::After(Duration::from_secs(30))
        );
        let err = Config::parse(
            "[decisions]\nescalate_after = \"soon\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("c.toml:2:") && err.contains("escalate_after"),
            "{err}"
        );
    }

    #[test]
    fn errors_name_the_file_and_place() {
        let err = Config::parse("[log]\nkeep = \"five\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "c.toml:2:1: `log.keep`: invalid type: expected u32, found string"
        );
        let err = Config::parse("[decisions]\ntimeout = \"soon\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("never"), "{err}");
        let err = Config::parse(
            "[decisions.timeouts]\nPreToolUze = 3\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("c.toml:2:1: ") && err.contains("PreToolUze"),
            "{err}"
        );
        let err = Config::parse("[logs]\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("logs"), "{err}");
        let err = Config::parse("[redact]\npatterns = [\"(\"]\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`redact.patterns.0`"), "{err}");
        let err = Config::parse(
            "[providers.gw]\nkind = \"custom\"\napi_key_env = \"K\"\nbase_url = \"gw.example\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("c.toml:4:1: [providers.gw].base_url: `gw.example` is not an http"),
            "{err}"
        );
    }

    /// A config error names the file, line and key, never the value: the
    /// daemon's stderr goes to the journal.
    #[test]
    fn errors_never_print_the_value() {
        const SECRET: &str = "sk-ant-api03-hunter2hunter2hunter2";
        let table: &[(&str, &str, &str)] = &[
            ("api_key = \"SECRET\"\n", "c.toml:1:1: `api_key`", "unknown field"),
            (
                "[decisions]\napi_key = \"SECRET\"\n",
                "c.toml:2:1: `decisions.api_key`",
                "unknown field",
            ),
            ("[log]\nkeep = \"SECRET\"\n", "c.toml:2:1: `log.keep`", "expected u32"),
            ("[log]\nfsync = \"SECRET\"\n", "c.toml:2:1: `log.fsync`", "unknown value"),
            (
                "[decisions]\ntimeout = \"SECRET\"\n",
                "c.toml:2:1: `decisions.timeout`",
                "never",
            ),
            (
                "[redact]\ndefaults = true\npatterns = [\"x\", \"SECRET(\"]\n",
                "c.toml:3:18: `redact.patterns.1`",
                "not a valid regex",
            ),
            ("[log]\nkeep = \"SECRET\n", "c.toml:2:", "TOML syntax error"),
            ("[log]\nkeep = SECRET\n", "c.toml:2:", "TOML syntax error"),
            (
                "[providers.x]\nkind = \"anthropic\"\napi_key = \"SECRET\"\n",
                "c.toml:3:1: [providers.x].api_key",
                "unknown field `api_key`",
            ),
            (
                "[providers.x]\nkind = \"custom\"\napi_key_env = \"K\"\nbase_url = \"ftp://me:SECRET@gw\"\n",
                "c.toml:4:1: [providers.x].base_url",
                "is not an http",
            ),
        ];
        for (text, place, says) in table {
            let text = text.replace("SECRET", SECRET);
            let err = Config::parse(&text, Path::new("c.toml"))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(place) && err.contains(says),
                "{text}\n→ {err}"
            );
            assert!(!err.contains("hunter2"), "{text}\n→ {err}");
        }
    }

    #[test]
    fn providers_are_validated_and_kept_by_name() {
        let c = Config::parse(
            "[providers.max]\nkind = \"claude-max\"\n[providers.or]\nkind = \"openrouter\"\napi_key_env = \"OR\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(c.providers.keys().collect::<Vec<_>>(), ["max", "or"]);
    }
}
