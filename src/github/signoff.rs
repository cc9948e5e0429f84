//! Sign-off by comment: a maintainer lifts a block by commenting
//! `/retrygate sign-off <full head SHA>` on the pull request
//! (docs/architecture.md, principle 5).
//!
//! Both steps here are pure: [`parse_command`] reads a comment body **as
//! GitHub renders it** (CommonMark with GitHub's extensions): only a line
//! of a paragraph the reader sees as the commenter's own words is a
//! command; a fenced or indented code block, an HTML comment (which GitHub
//! does not show), a block quote, a list, a table or inline code is not.
//! [`decide`] takes the facts the caller fetched (the commenter's
//! permission from the collaborator-permission endpoint, the PR's *current*
//! head SHA, its author, whether a GitHub App posted the comment) and
//! either accepts a [`SignOff`] bound to that exact head or says why not.
//!
//! A sign-off names the full 40-hex SHA: a 7-hex prefix is 28 bits, and an
//! agent can grind a second commit with the same prefix in under a minute
//! and push it after the review. A shorter form is refused with the full
//! SHA to copy. A push after the sign-off changes the head, so the old
//! sign-off names a stale SHA and no longer applies.

use std::fmt;

use crate::config::Permission;

/// Shortest SHA prefix recognised as an attempt to name a commit (and
/// answered with the full SHA to copy).
pub(crate) const MIN_SHA_CHARS: usize = 7;

/// What a sign-off must name: the full SHA-1 of the head commit.
pub(crate) const FULL_SHA_CHARS: usize = 40;

/// A sign-off that passed every check: `by` vouches for commit `sha` (the
/// full head SHA, not the prefix they typed).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SignOff {
    /// The full 40-hex head SHA it names.
    pub sha: String,
    /// The login of the maintainer who signed off.
    pub by: String,
}

/// The lines a reader of the rendered comment sees as the commenter's own
/// words: the lines of top-level paragraphs, with inline code and inline
/// HTML (never a command) replaced by a character no command starts with.
/// Code blocks, HTML blocks and comments, block quotes, lists, tables and
/// footnotes are left out.
pub(crate) fn spoken_lines(body: &str) -> Vec<String> {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_GFM;
    let mut lines = Vec::new();
    let mut outside = 0usize;
    let mut line: Option<String> = None;
    for event in Parser::new_ext(body, options) {
        match event {
            Event::Start(
                Tag::BlockQuote(_)
                | Tag::CodeBlock(_)
                | Tag::HtmlBlock
                | Tag::List(_)
                | Tag::Table(_)
                | Tag::FootnoteDefinition(_)
                | Tag::MetadataBlock(_),
            ) => outside += 1,
            Event::End(
                TagEnd::BlockQuote(_)
                | TagEnd::CodeBlock
                | TagEnd::HtmlBlock
                | TagEnd::List(_)
                | TagEnd::Table
                | TagEnd::FootnoteDefinition
                | TagEnd::MetadataBlock(_),
            ) => outside = outside.saturating_sub(1),
            Event::Start(Tag::Paragraph) if outside == 0 => line = Some(String::new()),
            Event::End(TagEnd::Paragraph) => lines.extend(line.take()),
            Event::SoftBreak | Event::HardBreak => {
                if let Some(l) = line.as_mut() {
                    lines.push(std::mem::take(l));
                }
            }
            Event::Text(t) => {
                if let Some(l) = line.as_mut() {
                    l.push_str(&t);
                }
            }
            // Quoted or hidden: never the start of a command.
            Event::Code(_) | Event::InlineHtml(_) | Event::Html(_) | Event::InlineMath(_) => {
                if let Some(l) = line.as_mut() {
                    l.push('\u{1}');
                }
            }
            _ => {}
        }
    }
    lines
}

/// Finds the sign-off command in a comment body: the first line a reader
/// sees as the commenter's own words ([`spoken_lines`]) that starts with
/// `command`. `None` when the comment is not a sign-off at all;
/// `Some(Err)` when it is one but names no usable SHA.
pub(crate) fn parse_command(body: &str, command: &str) -> Option<Result<String, String>> {
    let line = spoken_lines(body).into_iter().map(|l| l.trim().to_string()).find(|l| {
        l.strip_prefix(command).is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
    })?;
    let rest = line[command.len()..].trim();
    let sha = rest.split_whitespace().next().unwrap_or("");
    if sha.is_empty() {
        return Some(Err(format!(
            "`{command}` needs the commit you reviewed: `{command} <sha>` with the full 40-hex SHA of the PR's head commit"
        )));
    }
    let valid =
        (MIN_SHA_CHARS..=FULL_SHA_CHARS).contains(&sha.len()) && sha.chars().all(|c| c.is_ascii_hexdigit());
    if !valid {
        return Some(Err(format!(
            "`{sha}` is not a commit SHA: name the PR's head commit with its full {FULL_SHA_CHARS} hex characters"
        )));
    }
    Some(Ok(sha.to_ascii_lowercase()))
}

/// The level the collaborator-permission endpoint reports. `role_name` is
/// the finer one (`maintain`, `triage`); `permission` folds those into
/// `write`/`read`, and custom roles only have `permission`. `none` and
/// anything unknown give `None`: no permission at all.
pub(crate) fn permission_from_api(permission: Option<&str>, role_name: Option<&str>) -> Option<Permission> {
    let parse = |s: &str| match s {
        "admin" => Some(Permission::Admin),
        "maintain" => Some(Permission::Maintain),
        "write" => Some(Permission::Write),
        "triage" => Some(Permission::Triage),
        "read" => Some(Permission::Read),
        _ => None,
    };
    role_name.and_then(parse).or_else(|| permission.and_then(parse))
}

/// Everything [`decide`] needs, fetched by the caller.
#[derive(Debug, Clone)]
pub(crate) struct Candidate<'a> {
    pub(crate) commenter: &'a str,
    /// The comment author's account type is `Bot` or the login ends in `[bot]`.
    pub(crate) commenter_is_bot: bool,
    /// The GitHub App that posted the comment on the commenter's behalf
    /// (`performed_via_github_app`), if any.
    pub(crate) via_app: Option<&'a str>,
    /// The sign-off command (`sign_off.command`), for messages.
    pub(crate) command: &'a str,
    pub(crate) pr_author: &'a str,
    /// The commenter's permission on the repository (`None`: none at all).
    pub(crate) permission: Option<Permission>,
    pub(crate) min_permission: Permission,
    /// The SHA (prefix) the comment names, lowercase.
    pub(crate) named_sha: &'a str,
    /// The PR's head SHA fetched just now (payloads of comments carry none).
    pub(crate) head_sha: &'a str,
}

/// Why a sign-off was refused. The `Display` text is shown to people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    Bot { login: String },
    App { login: String, app: String },
    ShortSha { named: String, head: String, command: String },
    Author { login: String },
    Permission { login: String, has: Option<Permission>, needs: Permission },
    StaleSha { named: String, head: String },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Bot { login } => write!(
                f,
                "sign-off by {login} refused: bots cannot sign off; a maintainer has to review the commit and comment"
            ),
            Refusal::App { login, app } => write!(
                f,
                "sign-off by {login} refused: the comment was posted by the GitHub App `{app}` on {login}'s behalf, and an app (an agent acting for its user included) cannot sign off; {login} has to comment themselves"
            ),
            Refusal::ShortSha { named, head, command } => write!(
                f,
                "sign-off for {named} refused: a sign-off names the full commit SHA (a short prefix can be ground to match another commit); if {named} is the commit you reviewed, comment `{command} {head}`"
            ),
            Refusal::Author { login } => write!(
                f,
                "sign-off by {login} refused: the pull request's author cannot sign off their own change; ask another maintainer"
            ),
            Refusal::Permission { login, has, needs } => write!(
                f,
                "sign-off by {login} refused: it needs {} permission on the repository and {login} has {}",
                level(Some(*needs)),
                level(*has)
            ),
            Refusal::StaleSha { named, head } => write!(
                f,
                "sign-off for {named} refused: the pull request's head is now {} (a push voids a sign-off); review the new head and sign off {head}",
                crate::text::short_sha(head),
            ),
        }
    }
}

fn level(p: Option<Permission>) -> &'static str {
    match p {
        None => "none",
        Some(Permission::Read) => "read",
        Some(Permission::Triage) => "triage",
        Some(Permission::Write) => "write",
        Some(Permission::Maintain) => "maintain",
        Some(Permission::Admin) => "admin",
    }
}

/// The checks that need no API call: a bot or the PR's author can never
/// sign off, whatever their permission (so it is not even fetched).
pub(crate) fn check_person(
    commenter: &str,
    commenter_is_bot: bool,
    via_app: Option<&str>,
    pr_author: &str,
) -> Result<(), Refusal> {
    if commenter_is_bot || commenter.ends_with("[bot]") {
        return Err(Refusal::Bot { login: commenter.to_string() });
    }
    if let Some(app) = via_app {
        return Err(Refusal::App { login: commenter.to_string(), app: app.to_string() });
    }
    if commenter.eq_ignore_ascii_case(pr_author) {
        return Err(Refusal::Author { login: commenter.to_string() });
    }
    Ok(())
}

/// Accepts the sign-off or says why not. Checked in the order a person
/// would want to hear about it: who (bot, author, permission), then what.
pub(crate) fn decide(c: &Candidate<'_>) -> Result<SignOff, Refusal> {
    check_person(c.commenter, c.commenter_is_bot, c.via_app, c.pr_author)?;
    if c.permission.is_none_or(|p| p < c.min_permission) {
        return Err(Refusal::Permission {
            login: c.commenter.to_string(),
            has: c.permission,
            needs: c.min_permission,
        });
    }
    let head = c.head_sha.to_ascii_lowercase();
    if c.named_sha.len() < MIN_SHA_CHARS || !head.starts_with(c.named_sha) {
        return Err(Refusal::StaleSha { named: c.named_sha.to_string(), head });
    }
    if c.named_sha.len() != FULL_SHA_CHARS {
        return Err(Refusal::ShortSha {
            named: c.named_sha.to_string(),
            head,
            command: c.command.to_string(),
        });
    }
    Ok(SignOff { sha: head, by: c.commenter.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";

    fn candidate<'a>(commenter: &'a str, permission: Option<Permission>, named: &'a str) -> Candidate<'a> {
        Candidate {
            commenter,
            commenter_is_bot: false,
            via_app: None,
            command: "/retrygate sign-off",
            pr_author: "Codertocat",
            permission,
            min_permission: Permission::Write,
            named_sha: named,
            head_sha: HEAD,
        }
    }

    #[test]
    fn parses_the_command_on_any_line() {
        let body =
            format!("Reviewed the retry change.\n/retrygate sign-off {} please\n", HEAD.to_uppercase());
        assert_eq!(parse_command(&body, "/retrygate sign-off"), Some(Ok(HEAD.to_string())));
        assert_eq!(parse_command("LGTM", "/retrygate sign-off"), None);
        // A longer word that merely starts like the command is not the command.
        assert_eq!(parse_command("/retrygate sign-offs abcdef1", "/retrygate sign-off"), None);
        // Emphasis is still the commenter's own words; CRLF as GitHub sends it.
        let bold = format!("Done.\r\n\r\n**/retrygate sign-off {HEAD}**\r\n");
        assert_eq!(parse_command(&bold, "/retrygate sign-off"), Some(Ok(HEAD.to_string())));
    }

    #[test]
    fn quoted_hidden_and_code_text_is_not_a_command() {
        let cmd = format!("/retrygate sign-off {HEAD}");
        for body in [
            format!("Not yet! When I'm done I will post:\n\n```\n{cmd}\n```\n"),
            format!("Not yet! When I'm done I will post:\n\n~~~text\n{cmd}\n~~~\n"),
            format!("Not yet. Later:\n\n    {cmd}\n"),
            format!("Looks fine so far.\n<!--\n{cmd}\n-->\n"),
            format!("<!-- {cmd} -->"),
            format!("Looks fine <!--\n{cmd}\n--> so far"),
            format!("> {cmd}\n\nquoting the bot's hint"),
            format!("`{cmd}`"),
            format!("- {cmd}\n"),
            format!("| a |\n|---|\n| {cmd} |\n"),
        ] {
            assert_eq!(parse_command(&body, "/retrygate sign-off"), None, "{body:?}");
        }
    }

    #[test]
    fn malformed_commands_say_what_to_type() {
        let e = parse_command("/retrygate sign-off", "/retrygate sign-off").unwrap().unwrap_err();
        assert!(e.contains("`/retrygate sign-off <sha>` with the full 40-hex SHA"), "{e}");
        let e = parse_command("/retrygate sign-off ec26c3", "/retrygate sign-off").unwrap().unwrap_err();
        assert!(e.contains("`ec26c3` is not a commit SHA"), "{e}");
        let e = parse_command("/retrygate sign-off xyz1234", "/retrygate sign-off").unwrap().unwrap_err();
        assert!(e.contains("its full 40 hex characters"), "{e}");
    }

    #[test]
    fn accepts_a_writer_naming_the_full_head() {
        let s = decide(&candidate("maintainer", Some(Permission::Write), HEAD)).unwrap();
        assert_eq!(s, SignOff { sha: HEAD.to_string(), by: "maintainer".to_string() });
        assert!(decide(&candidate("maintainer", Some(Permission::Admin), HEAD)).is_ok());
    }

    #[test]
    fn a_prefix_is_refused_with_the_full_sha_to_copy() {
        let e = decide(&candidate("maintainer", Some(Permission::Write), "ec26c3e")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("sign-off for ec26c3e refused: a sign-off names the full commit SHA (a short prefix can be ground to match another commit); if ec26c3e is the commit you reviewed, comment `/retrygate sign-off {HEAD}`")
        );
        let e = decide(&candidate("maintainer", Some(Permission::Write), &HEAD[..39])).unwrap_err();
        assert!(matches!(e, Refusal::ShortSha { .. }), "{e}");
    }

    #[test]
    fn refuses_readers_authors_bots_apps_and_stale_shas() {
        let e = decide(&candidate("reader", Some(Permission::Read), HEAD)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "sign-off by reader refused: it needs write permission on the repository and reader has read"
        );
        let e = decide(&candidate("stranger", None, HEAD)).unwrap_err();
        assert!(e.to_string().ends_with("stranger has none"), "{e}");
        let e = decide(&candidate("codertocat", Some(Permission::Admin), HEAD)).unwrap_err();
        assert!(matches!(e, Refusal::Author { .. }), "{e}");
        let e = decide(&candidate("github-actions[bot]", Some(Permission::Write), HEAD)).unwrap_err();
        assert!(matches!(e, Refusal::Bot { .. }), "{e}");
        let mut c = candidate("app", Some(Permission::Write), HEAD);
        c.commenter_is_bot = true;
        assert!(matches!(decide(&c).unwrap_err(), Refusal::Bot { .. }));
        let mut c = candidate("maintainer", Some(Permission::Admin), HEAD);
        c.via_app = Some("copilot-swe-agent");
        assert_eq!(
            decide(&c).unwrap_err().to_string(),
            "sign-off by maintainer refused: the comment was posted by the GitHub App `copilot-swe-agent` on maintainer's behalf, and an app (an agent acting for its user included) cannot sign off; maintainer has to comment themselves"
        );
        let e = decide(&candidate("maintainer", Some(Permission::Write), "f95f852")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("sign-off for f95f852 refused: the pull request's head is now ec26c3e (a push voids a sign-off); review the new head and sign off {HEAD}")
        );
    }

    #[test]
    fn permission_prefers_the_finer_role() {
        assert_eq!(permission_from_api(Some("write"), Some("maintain")), Some(Permission::Maintain));
        assert_eq!(permission_from_api(Some("read"), Some("custom-role")), Some(Permission::Read));
        assert_eq!(permission_from_api(Some("none"), None), None);
        assert_eq!(permission_from_api(None, None), None);
    }
}
