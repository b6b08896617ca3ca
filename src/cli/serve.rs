//! `hookd serve`: runs the daemon in the foreground.

use std::path::PathBuf;

use super::args::{fail_closed, log_path, rules_source, FailScope};
use super::Outcome;
use crate::daemon;

// The doc comments below are clap help text, printed as written:
// brackets and <placeholders> in them are not links or HTML.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(clap::Args)]
pub struct Args {
    /// Socket path [default: $HOOKD_SOCKET, then $XDG_RUNTIME_DIR/hookd/hookd.sock,
    /// then /tmp/hookd-$UID/hookd.sock].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Rules file [default: $XDG_CONFIG_HOME/hookd/rules.toml if it exists,
    /// else the embedded defaults].
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Event log [default: $XDG_STATE_HOME/hookd/events.jsonl].
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// When nobody can decide in time, block instead of answering no
    /// opinion: tool calls (PreToolUse, PermissionRequest, the SDK's
    /// canUseTool; bare --fail-closed), or every guarded event, prompts
    /// included (=all). A hook's own --fail-closed may widen it.
    #[arg(long, value_name = "SCOPE", num_args = 0..=1, require_equals = true, default_missing_value = "tools")]
    pub fail_closed: Option<FailScope>,
    /// Evaluate rules and log the would-be decisions, but answer no opinion.
    #[arg(long)]
    pub permissive: bool,
    /// Daemon configuration (pending timeouts, log rotation, redaction),
    /// read again on SIGHUP and when it changes
    /// [default: $XDG_CONFIG_HOME/hookd/config.toml if it exists].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Serve HTTP on this address (`[http] listen`, which it overrides):
    /// approval links, the approval page, the authenticated routes.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Largest frame accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::protocol::DEFAULT_MAX_FRAME)]
    pub max_frame_bytes: usize,
    /// Where session grants are kept [default: grants.json beside the event log].
    #[arg(long, value_name = "FILE")]
    pub grants: Option<PathBuf>,
    /// The agent-SDK adapter: the directory holding adapter.mjs and its
    /// node_modules [default: the embedded adapter, as `hookd adapter
    /// install` installs it in $XDG_DATA_HOME/hookd/adapter/<version>/].
    #[arg(long, value_name = "DIR", env = "HOOKD_ADAPTER_DIR")]
    pub adapter_dir: Option<PathBuf>,
    /// How changes to the rules files are seen: the kernel's notifications
    /// (falling back to polling where they cannot be had), or a look every
    /// second, for file systems whose changes the kernel does not report
    /// (NFS, some FUSE mounts).
    #[arg(long, value_name = "HOW", value_enum, env = "HOOKD_WATCH", default_value_t = WatchArg::Kernel)]
    pub watch: WatchArg,
}

/// `hookd serve --watch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchArg {
    Kernel,
    Poll,
}

/// `hookd serve`: the daemon, with every face hookd has ([`crate::serve::faces`]).
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let rules = rules_source(args.rules);
    let log = log_path(args.log)?;
    // The state directory is the log's (`$XDG_STATE_HOME/hookd/`).
    let grants_file = args.grants.or_else(|| {
        log.parent()
            .map(|dir| dir.join(daemon::grants::GRANTS_FILE))
    });
    // Read again on SIGHUP and when it changes: the default path may be
    // created after start.
    let config_file = match args.config {
        Some(path) => Some(crate::config::ConfigFile {
            path,
            required: true,
            http_listen: args.http,
        }),
        None => crate::paths::default_config_path().map(|path| crate::config::ConfigFile {
            path,
            required: false,
            http_listen: args.http,
        }),
    };
    // Taken before the read: a change made meanwhile is a change.
    let config_seen = config_file
        .as_ref()
        .and_then(|file| daemon::watch::fingerprint(&file.path));
    let config = match &config_file {
        Some(file) => file.read()?,
        None => {
            let mut config = crate::config::Config::default();
            config.http.listen = args.http;
            config
        }
    };
    daemon::run(
        daemon::ServeOptions {
            socket: args.socket.unwrap_or_else(crate::paths::socket_path),
            rules,
            log,
            fail_closed: fail_closed(args.fail_closed),
            permissive: args.permissive,
            max_frame: args.max_frame_bytes,
            config,
            config_file,
            config_seen,
            adapter_dir: match args.adapter_dir {
                Some(dir) => dir,
                None => crate::adapter::default_dir()?,
            },
            grants_file,
            user_rules: crate::paths::default_rules_path(),
            watch: match args.watch {
                WatchArg::Kernel => crate::protocol::WatchMode::Kernel,
                WatchArg::Poll => crate::protocol::WatchMode::Poll,
            },
            clock: Default::default(),
        },
        crate::serve::faces(),
    )?;
    Ok(Outcome::Success)
}
