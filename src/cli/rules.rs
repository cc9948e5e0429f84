//! Command line of `retrygate rules`: run the annotated rule tests and list
//! the rules (as text, or as the Markdown table of `docs/rules.md`).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use retrygate::analyze::rules::{docs, list_checks, read_rule_dir, test_dir, RulePackAnalyzer};

use super::Exit;

#[derive(Debug, clap::Args)]
pub(crate) struct RulesArgs {
    #[command(subcommand)]
    pub command: RulesCommand,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum RulesCommand {
    /// Run the rule tests: the rules in DIR/*.yml against the cases in DIR/tests/<case>/{base,head}/.
    Test {
        /// The rules folder (default: ./rules).
        dir: Option<PathBuf>,
    },
    /// List every rule: the bundled packs, the Rust analyzer's checks, plus the rule files in --dir.
    List {
        /// An extra rule folder (e.g. .github/retrygate-rules/).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// `text` (one line per rule) or `markdown` (the table of docs/rules.md).
        #[arg(long, value_enum, default_value = "text")]
        format: ListFormat,
        /// Rewrite the generated table between the markers in this Markdown file.
        #[arg(long, value_name = "FILE")]
        update_docs: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ListFormat {
    Text,
    Markdown,
}

/// Runs `retrygate rules ...`. Load errors are `Err` (exit 2).
pub(crate) fn run(args: RulesArgs) -> anyhow::Result<Exit> {
    match args.command {
        RulesCommand::Test { dir } => {
            let dir = match dir {
                Some(d) => d,
                None if Path::new("rules").is_dir() => PathBuf::from("rules"),
                None => anyhow::bail!(
                    "there is no ./rules folder here; pass the rules folder: retrygate rules test path/to/rules"
                ),
            };
            let report = test_dir(&dir)?;
            print!("{}", report.render());
            Ok(if report.passed() { Exit::Pass } else { Exit::Fail })
        }
        RulesCommand::List { dir, format, update_docs } => {
            let extra = match dir {
                Some(d) => read_rule_dir(&d)?,
                None => Vec::new(),
            };
            let packs = RulePackAnalyzer::with_extra(extra)?;
            if let Some(path) = update_docs {
                let doc = std::fs::read_to_string(&path)
                    .with_context(|| format!("could not read {}", path.display()))?;
                let new =
                    docs::splice(&doc, &docs::rules_and_floor_table(packs.rules())).ok_or_else(|| {
                        anyhow::anyhow!(
                            "{} has no generated-table markers; add the lines {} and {} where the table goes",
                            path.display(),
                            docs::BEGIN,
                            docs::END
                        )
                    })?;
                std::fs::write(&path, new).with_context(|| format!("could not write {}", path.display()))?;
                return Ok(Exit::Pass);
            }
            match format {
                ListFormat::Markdown => print!("{}", docs::rules_and_floor_table(packs.rules())),
                ListFormat::Text => {
                    for c in list_checks(&packs) {
                        println!(
                            "{:<44} {:<22} {:<8} {}",
                            c.id,
                            c.kind.id(),
                            c.severity.to_string(),
                            c.languages.join(",")
                        );
                    }
                    for (id, kind, _) in retrygate::analyze::knobs::CHECKS {
                        println!("{:<44} {:<22} {:<8} all", id, kind.id(), "error");
                    }
                    for (id, kind, _) in retrygate::analyze::trees::CHECKS {
                        println!(
                            "{:<44} {:<22} {:<8} python,javascript,typescript,go,java",
                            id,
                            kind.id(),
                            "error"
                        );
                    }
                    for (id, kind, _) in retrygate::analyze::operations::CHECKS {
                        println!(
                            "{:<44} {:<22} {:<8} python,javascript,typescript,go,java,kotlin,csharp,ruby,php",
                            id,
                            kind.id(),
                            "error"
                        );
                    }
                    for c in retrygate::analyze::rust::checks::all_ids() {
                        println!("{}", c.list_line());
                    }
                }
            }
            Ok(Exit::Pass)
        }
    }
}
