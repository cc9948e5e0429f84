//! Who wrote the pull request: agent detection from facts (author login,
//! head branch, labels, `Co-authored-by` trailers), as a pure function.
//!
//! Branch names and trailers are chosen by whoever pushes, so detection is a
//! policy input, not a security boundary (docs/architecture.md, "Trust model"; "Who
//! is an agent"); the `[bot]` logins of GitHub Apps are the hard-to-fake fact.

use serde::{Deserialize, Serialize};

use crate::config::Agents;

/// The facts about a pull request that can make it an agent's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PrFacts {
    /// The pull request author's login.
    pub(crate) author: Option<String>,
    /// The head branch name (`codex/fix-retry`), without `refs/heads/`.
    pub(crate) head_branch: Option<String>,
    pub(crate) labels: Vec<String>,
    /// `(commit, trailer value)` for every `Co-authored-by` trailer of the
    /// commits in the range, e.g. `("3f2a…", "Claude <noreply@anthropic.com>")`.
    pub(crate) co_authors: Vec<(String, String)>,
    /// `Some(true)` for `--agent`, `Some(false)` for `--human`.
    pub(crate) forced: Option<bool>,
}

/// Whether the pull request is an agent's, and every fact that said so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentDecision {
    /// The pull request is treated as an agent's.
    pub is_agent: bool,
    /// One sentence per fact that decided it; empty for a person's PR that
    /// matched nothing.
    pub because: Vec<String>,
}

/// Decides whether a pull request is agent-authored under `agents`.
///
/// `--agent`/`--human` win over every fact; otherwise any one matching fact
/// makes it an agent PR, and all matching facts are listed.
pub(crate) fn detect(agents: &Agents, facts: &PrFacts) -> AgentDecision {
    match facts.forced {
        Some(true) => return AgentDecision { is_agent: true, because: vec!["--agent was given".into()] },
        Some(false) => return AgentDecision { is_agent: false, because: vec!["--human was given".into()] },
        None => {}
    }
    let mut because = Vec::new();
    if let Some(login) = &facts.author {
        if let Some(p) = agents.logins.iter().find(|p| wildcard_match(p, login)) {
            because.push(format!("author `{login}` matches agents.logins `{p}`"));
        }
    }
    if let Some(branch) = &facts.head_branch {
        if let Some(p) =
            agents.branch_prefixes.iter().find(|p| !p.is_empty() && branch.starts_with(p.as_str()))
        {
            because.push(format!("head branch `{branch}` starts with agents.branch_prefixes `{p}`"));
        }
    }
    for label in &facts.labels {
        if let Some(p) = agents.labels.iter().find(|p| p.eq_ignore_ascii_case(label)) {
            because.push(format!("label `{label}` is in agents.labels (`{p}`)"));
        }
    }
    for (commit, value) in &facts.co_authors {
        let addr = trailer_address(value);
        if let Some(p) = agents.trailers.iter().find(|p| wildcard_match(p, addr)) {
            let short = commit.get(..7).unwrap_or(commit);
            because.push(format!("commit {short} has `Co-authored-by: {value}` (agents.trailers `{p}`)"));
            // One commit is enough to say so; more would only repeat it.
            break;
        }
    }
    AgentDecision { is_agent: !because.is_empty(), because }
}

/// The address inside `Name <addr>`, or the whole value when there are no
/// angle brackets.
pub(crate) fn trailer_address(value: &str) -> &str {
    let v = value.trim();
    match (v.rfind('<'), v.rfind('>')) {
        (Some(a), Some(b)) if a < b => v[a + 1..b].trim(),
        _ => v,
    }
}

/// Case-insensitive match where `*` stands for any run of characters and
/// every other character (including `[` and `]`, as in `*[bot]`) is literal.
pub(crate) fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    // Greedy with backtracking to the last star: linear in practice, and
    // never exponential (one remembered star position).
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> PrFacts {
        PrFacts::default()
    }

    #[test]
    fn wildcards_are_literal_except_the_star() {
        assert!(wildcard_match("*[bot]", "claude[bot]"));
        assert!(wildcard_match("*[bot]", "Devin-AI-Integration[bot]"));
        assert!(!wildcard_match("*[bot]", "bot"), "[bot] is not a character class");
        assert!(!wildcard_match("*[bot]", "robot"));
        assert!(wildcard_match("Copilot", "copilot"), "logins are case-insensitive");
        assert!(!wildcard_match("Copilot", "Copilot2"));
        assert!(wildcard_match("a*b*c", "axxbyyc") && !wildcard_match("a*b*c", "axxbyy"));
        assert!(wildcard_match("*", "") && !wildcard_match("", "x"));
    }

    #[test]
    fn each_fact_alone_makes_an_agent_pr_and_says_so() {
        let a = Agents::default();
        let by_login = detect(&a, &PrFacts { author: Some("claude[bot]".into()), ..facts() });
        assert!(by_login.is_agent);
        assert_eq!(by_login.because, ["author `claude[bot]` matches agents.logins `*[bot]`"]);
        let by_branch = detect(&a, &PrFacts { head_branch: Some("codex/retry".into()), ..facts() });
        assert!(by_branch.is_agent && by_branch.because[0].contains("`codex/`"), "{by_branch:?}");
        let by_label = detect(&a, &PrFacts { labels: vec!["Agent".into()], ..facts() });
        assert!(by_label.is_agent && by_label.because[0].contains("label `Agent`"), "{by_label:?}");
        let by_trailer = detect(
            &a,
            &PrFacts {
                co_authors: vec![("0123456789abcdef".into(), "Claude <noreply@anthropic.com>".into())],
                ..facts()
            },
        );
        assert!(by_trailer.is_agent);
        assert!(
            by_trailer.because[0].starts_with("commit 0123456 has `Co-authored-by: Claude"),
            "{by_trailer:?}"
        );
    }

    #[test]
    fn a_person_matching_nothing_is_not_an_agent() {
        let a = Agents::default();
        let d = detect(
            &a,
            &PrFacts {
                author: Some("alice".into()),
                head_branch: Some("feature/claude-notes".into()),
                labels: vec!["bug".into()],
                co_authors: vec![("abc".into(), "Bob <bob@example.com>".into())],
                forced: None,
            },
        );
        assert_eq!(d, AgentDecision { is_agent: false, because: vec![] });
    }

    #[test]
    fn forcing_wins_over_facts() {
        let a = Agents::default();
        let bot = PrFacts { author: Some("claude[bot]".into()), forced: Some(false), ..facts() };
        assert!(!detect(&a, &bot).is_agent);
        let person = PrFacts { author: Some("alice".into()), forced: Some(true), ..facts() };
        assert_eq!(detect(&a, &person).because, ["--agent was given"]);
    }

    #[test]
    fn empty_config_lists_detect_nothing() {
        let a = Agents { logins: vec![], branch_prefixes: vec!["".into()], labels: vec![], trailers: vec![] };
        let d = detect(&a, &PrFacts { head_branch: Some("codex/x".into()), ..facts() });
        assert!(!d.is_agent, "an empty prefix must not match every branch");
    }

    #[test]
    fn trailer_addresses() {
        assert_eq!(trailer_address("Claude <noreply@anthropic.com>"), "noreply@anthropic.com");
        assert_eq!(trailer_address(" cursoragent@cursor.com "), "cursoragent@cursor.com");
    }
}
