//! `hookd rules init|defaults|bench` (issue #27): the embedded profiles as a
//! file to edit, and a policy scored against corpora of hook inputs.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use super::output::{print_json, Stdout};
use super::Outcome;
use crate::rules::{bench, Corpus, Profile, RuleSet};

/// The corpora shipped with the source: scored when `--corpus` names none.
const SHIPPED: [(&str, &str); 2] = [
    (
        "corpora/attack.toml",
        include_str!("../../corpora/attack.toml"),
    ),
    (
        "corpora/everyday.toml",
        include_str!("../../corpora/everyday.toml"),
    ),
];

/// A profile name on the command line.
pub fn parse_profile(name: &str) -> Result<Profile, String> {
    Profile::parse(name)
}

/// `hookd rules defaults [--profile P]`: a profile's rules file (standard,
/// the embedded defaults, without one).
pub fn defaults(profile: Option<Profile>) -> anyhow::Result<Outcome> {
    write!(Stdout, "{}", profile.unwrap_or(Profile::Standard).text())?;
    Ok(Outcome::Success)
}

/// `hookd rules init [--profile P] [FILE] [--force]`: write a profile's
/// commented rules file (the user rules file by default) for a person to
/// edit; an existing file stays unless `force`.
pub fn init(profile: Profile, file: Option<PathBuf>, force: bool) -> anyhow::Result<Outcome> {
    let path = match file.or_else(crate::paths::default_rules_path) {
        Some(path) => path,
        None => anyhow::bail!("no FILE given and neither XDG_CONFIG_HOME nor HOME is set"),
    };
    if path.exists() && !force {
        anyhow::bail!(
            "{} exists; not overwriting it (--force replaces it; `hookd rules defaults --profile {profile}` prints the profile)",
            path.display()
        );
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(&path, profile.text()).with_context(|| format!("writing {}", path.display()))?;
    let rules = RuleSet::parse(profile.text(), &path).map_err(|e| anyhow::anyhow!("{e}"))?;
    writeln!(
        Stdout,
        "wrote the {profile} profile ({} rules) to {}; a running daemon loads it at once",
        rules.len(),
        path.display()
    )?;
    Ok(Outcome::Success)
}

/// `hookd rules bench`'s options.
#[derive(Args)]
pub struct BenchArgs {
    /// Score an embedded profile [default: standard].
    #[arg(long, value_name = "PROFILE", value_parser = parse_profile, conflicts_with = "rules")]
    pub profile: Option<Profile>,
    /// Score a rules file instead.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// A corpus (a TOML file of `case` tables; repeat for several) [default: the shipped
    /// corpora/attack.toml and corpora/everyday.toml].
    #[arg(long, value_name = "FILE")]
    pub corpus: Vec<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when the score (the lower of the attack catch rate and the
    /// everyday quiet rate, in percent) is below PCT.
    #[arg(long, value_name = "PCT")]
    pub min: Option<f64>,
}

/// `hookd rules bench`: score a policy against corpora.
pub fn run_bench(args: BenchArgs) -> anyhow::Result<Outcome> {
    let (rules, policy) = match (&args.rules, args.profile) {
        (Some(file), _) => (
            RuleSet::load(file).map_err(|e| anyhow::anyhow!("{e}"))?,
            file.display().to_string(),
        ),
        (None, profile) => {
            let profile = profile.unwrap_or(Profile::Standard);
            (profile.rules(), format!("the {profile} profile"))
        }
    };
    let corpora = if args.corpus.is_empty() {
        SHIPPED
            .iter()
            .map(|(name, text)| Corpus::parse(text, name))
            .collect::<Result<Vec<_>, _>>()
            .map_err(anyhow::Error::msg)?
    } else {
        let mut corpora = Vec::new();
        for path in &args.corpus {
            corpora.push(read_corpus(path)?);
        }
        corpora
    };
    if let Some(min) = args.min {
        anyhow::ensure!(
            (0.0..=100.0).contains(&min),
            "--min is a percentage from 0 to 100, not {min}"
        );
    }
    let report = bench(&rules, &policy, &corpora).map_err(anyhow::Error::msg)?;
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["catch_rate"] = report.catch_rate().into();
        value["quiet_rate"] = report.quiet_rate().into();
        value["score"] = report.score().into();
        print_json(&value)?;
    } else {
        writeln!(Stdout, "{report:#}")?;
    }
    Ok(match args.min {
        Some(min) if report.score() < min => {
            if !args.json {
                writeln!(Stdout, "below --min {min}")?;
            }
            Outcome::problems_unless(false)
        }
        _ => Outcome::Success,
    })
}

fn read_corpus(path: &Path) -> anyhow::Result<Corpus> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Corpus::parse(&text, &path.display().to_string()).map_err(anyhow::Error::msg)
}
