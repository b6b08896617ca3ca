//! The command line and its clients as a user meets them: `hookd`'s
//! subcommands, the socket clients, install/uninstall (Claude Code, the
//! other agents, managed settings), doctor, the systemd units and the
//! README's quick start. One crate for the CLI layer (issue #22); every test
//! works in temp dirs of its own, so none depends on running alone.

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod clients;
mod doctor;
mod install;
mod install_agents;
mod install_managed;
mod install_plugins;
mod profiles;
mod quickstart;
mod suggest;
mod systemd;
