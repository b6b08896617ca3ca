//! `hookd completions SHELL` and `hookd man [--dir DIR]`, generated from
//! the command line's own definition (`app::command`).

use std::io::Write as _;

use anyhow::Context as _;

use super::output::Stdout;

/// `hookd completions SHELL`: the script on stdout.
pub fn completions(shell: clap_complete::Shell, mut command: clap::Command) -> anyhow::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "hookd", &mut script);
    Stdout.write_all(&script)?;
    Ok(())
}

/// `hookd man`: hookd.1 on stdout, or with `--dir` one page per command
/// (`hookd-rules-check.1`), as cargo and git name theirs.
pub fn man(command: clap::Command, dir: Option<&std::path::Path>) -> anyhow::Result<()> {
    let Some(dir) = dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page)?;
        Stdout.write_all(&page)?;
        return Ok(());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    clap_mangen::generate_to(command, dir)
        .with_context(|| format!("writing man pages into {}", dir.display()))?;
    Ok(())
}
