//! Builder setters whose result is dropped: `b.with_jitter();` as a
//! statement returns a new builder that nobody keeps, so the setting never
//! takes effect. Only by-value setters count (in-place `set_*` setters
//! change the binding and are applied to its policy instead).

use syn::ExprMethodCall;

use super::super::libs;
use super::super::syntax::ident_of;
use super::{Discarded, FnWalker};

impl<'w, 'i, 'a> FnWalker<'w, 'i, 'a> {
    /// A by-value setter whose result is dropped: `b.with_jitter();`.
    pub(super) fn discarded_setter(&mut self, m: &'a ExprMethodCall, line: u32) {
        let name = m.method.to_string();
        let receiver = ident_of(&m.receiver);
        let lib = self.resolve(&m.receiver, 0).map(|r| r.policy.lib);
        let hit = match lib {
            Some(l) => libs::by_value_setters(l).contains(&name.as_str()),
            None => {
                let looks_like_builder = receiver.as_deref().is_some_and(|r| {
                    let r = r.to_ascii_lowercase();
                    ["builder", "backoff", "policy", "strategy", "retry", "backon"]
                        .iter()
                        .any(|w| r.contains(w))
                });
                looks_like_builder && libs::any_by_value_setter(&name)
            }
        };
        if hit {
            self.w.out.discarded.push(Discarded {
                item: self.item.clone(),
                setter: name,
                receiver: receiver.unwrap_or_else(|| "builder".into()),
                lib,
                line,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::model_of;

    #[test]
    fn a_dropped_by_value_setter_of_a_known_builder_is_recorded() {
        let m = model_of("fn a() {\n    let b = ExponentialBuilder::default();\n    b.with_jitter();\n    (|| get()).retry(b);\n}\n");
        assert_eq!(m.discarded.len(), 1, "{:?}", m.discarded);
        let d = &m.discarded[0];
        assert_eq!(
            (d.setter.as_str(), d.receiver.as_str(), d.lib.map(|l| l.id())),
            ("with_jitter", "b", Some("backon"))
        );
        assert_eq!(d.line, 3);
    }

    #[test]
    fn an_unresolved_receiver_counts_only_when_named_like_a_builder() {
        let named = model_of("fn a(backoff_builder: B) { backoff_builder.with_max_times(3); }\n");
        assert_eq!(named.discarded.len(), 1);
        assert_eq!(named.discarded[0].lib, None);
        let other = model_of("fn a(config: C) { config.with_max_times(3); }\n");
        assert!(other.discarded.is_empty(), "{:?}", other.discarded);
    }

    #[test]
    fn kept_results_and_in_place_setters_are_not_dropped() {
        let kept = model_of("fn a() {\n    let b = ExponentialBuilder::default();\n    let b = b.with_jitter();\n    (|| get()).retry(b);\n}\n");
        assert!(kept.discarded.is_empty());
        let in_place = model_of("fn a() {\n    let mut b = Backoff::new(3, MIN, MAX);\n    b.set_jitter(0.0);\n    retry(b, op);\n}\n");
        assert!(in_place.discarded.is_empty(), "set_* changes the binding in place");
        let not_a_setter =
            model_of("fn a() {\n    let b = ExponentialBuilder::default();\n    b.build();\n}\n");
        assert!(not_a_setter.discarded.is_empty());
    }
}
