//! `rust/<lib>-setter-discarded`: a builder setter that returns a new
//! builder is called as a statement, so its setting never takes effect.
//! Which setters return a new builder is each library's fact
//! (`RetryLibrary::by_value_setters`); the statements are found by
//! `sites/discarded.rs`.

use std::collections::HashMap;

use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::analyze::rust::sites::Discarded;
use crate::finding::{Kind, KindDoc};

/// A by-value setter's result is dropped.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "setter-discarded",
    kinds: &[Kind::SettingDiscarded],
    applies: Applies::Builders,
    doc: KindDoc {
        what: "A builder setter that returns a new builder is called as a statement (`builder.with_jitter();`), so the setting never takes effect.",
        why: "The code reads as if the policy jitters (or is bounded) but it does not; reviewers trust what they read.",
        example: "let b = ExponentialBuilder::default(); b.with_jitter();",
        use_instead: "let b = ExponentialBuilder::default().with_jitter();",
    },
};

/// The head's dropped setters that the base did not already have (matched by
/// item, setter and receiver, counting repeats), each with its change.
pub(crate) fn decide<'h>(base: &[Discarded], head: &'h [Discarded]) -> Vec<(&'h Discarded, Change)> {
    let mut seen: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for d in base {
        *seen.entry((&d.item, &d.setter, &d.receiver)).or_default() += 1;
    }
    let mut out = Vec::new();
    for d in head {
        match seen.get_mut(&(d.item.as_str(), d.setter.as_str(), d.receiver.as_str())) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                let mut c = Change::new(
                    Kind::SettingDiscarded,
                    &CHECK,
                    format!(
                        "`{}.{}(..);` drops the builder it returns, so the setting never takes effect; write `let {} = {}.{}(..);` or chain it",
                        d.receiver, d.setter, d.receiver, d.receiver, d.setter
                    ),
                );
                c.head = Some(json!({"setter": d.setter}));
                out.push((d, c));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dropped(setter: &str, line: u32) -> Discarded {
        Discarded { item: "f".into(), setter: setter.into(), receiver: "b".into(), lib: None, line }
    }

    #[test]
    fn only_dropped_setters_new_in_the_head_are_reported() {
        let base = [dropped("with_jitter", 3)];
        let head = [dropped("with_jitter", 4), dropped("with_jitter", 5), dropped("with_max_times", 6)];
        let found = decide(&base, &head);
        let lines: Vec<u32> = found.iter().map(|(d, _)| d.line).collect();
        assert_eq!(lines, [5, 6], "the base's one `with_jitter` is not news, a second one is");
        assert_eq!(
            found[0].1.message,
            "`b.with_jitter(..);` drops the builder it returns, so the setting never takes effect; write `let b = b.with_jitter(..);` or chain it"
        );
        assert!(decide(&head, &base).is_empty());
    }
}
