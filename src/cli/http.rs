//! `hookd http …`: the HTTP listener's commands.

use std::path::{Path, PathBuf};

use std::io::Write as _;

use anyhow::Context;
use serde::Serialize;

use super::output::{print_json, Stdout};
use clap::Subcommand;

use super::Outcome;

/// `hookd http token --json`.
#[derive(Debug, Serialize)]
pub struct TokenReport {
    /// The bearer token.
    pub token: String,
    /// Its file.
    pub file: PathBuf,
    /// Whether this command wrote a new one.
    pub rotated: bool,
}

/// `[http]` of `config` (or of the default config file, if there is one).
pub fn section(config: Option<&Path>) -> anyhow::Result<crate::config::http::HttpConfig> {
    Ok(match config {
        Some(path) => crate::config::Config::load(path)?.http,
        None => match crate::paths::default_config_path().filter(|p| p.exists()) {
            Some(path) => crate::config::Config::load(&path)?.http,
            None => Default::default(),
        },
    })
}

/// The token file `hookd serve` uses with `config` (`[http] token_file`,
/// else `http-token` beside config.toml).
pub fn token_file(config: Option<&Path>) -> anyhow::Result<PathBuf> {
    match section(config)?.token_file {
        Some(path) => Ok(path),
        None => crate::http::token::default_path()
            .context("no config directory for the token file: set HOME or XDG_CONFIG_HOME"),
    }
}

/// Prints the bearer token (creating it on first use); `rotate` replaces it
/// first, which a running daemon uses from its next request on.
pub fn token(config: Option<&Path>, rotate: bool, json: bool) -> anyhow::Result<()> {
    let file = token_file(config)?;
    let token = if rotate {
        crate::http::token::rotate(&file)
    } else {
        crate::http::token::ensure(&file)
    }?;
    if json {
        return print_json(&TokenReport {
            token,
            file,
            rotated: rotate,
        });
    }
    writeln!(Stdout, "{token}")?;
    Ok(())
}

#[derive(Subcommand)]
pub enum Command {
    /// Print the bearer token HTTP requests need (`Authorization: Bearer
    /// …`), creating it on first use in a 0600 file (`http-token` beside
    /// config.toml, or `[http] token_file`).
    Token {
        /// Replace it with a new one first; a running daemon takes the new
        /// one from its next request on.
        #[arg(long)]
        rotate: bool,
        /// The configuration file whose `[http] token_file` to use
        /// [default: $XDG_CONFIG_HOME/hookd/config.toml if it exists].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print JSON: {token, file, rotated}.
        #[arg(long)]
        json: bool,
    },
}

/// `hookd http …`.
pub fn run(command: Command) -> anyhow::Result<Outcome> {
    match command {
        Command::Token {
            rotate,
            config,
            json,
        } => token(config.as_deref(), rotate, json)?,
    }
    Ok(Outcome::Success)
}
