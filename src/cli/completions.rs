//! `hookd completions`: a shell completion script.

use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `hookd completions SHELL`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    super::docs::completions(args.shell, super::app::command())?;
    Ok(Outcome::Success)
}
