//! Fail fast on a target that cannot work: when the first requests of a run (warm-ups
//! included) all fail with the same class that no amount of load changes (a refused key, a
//! missing model or path, a connection that cannot be made), the run stops before spending its
//! budget. One success or a different class among them and the rule is off for the run.

use crate::model::{ErrorClass, RequestRecord, StoppedBy};

/// How many of the first requests to finish decide.
pub const FIRST: u32 = 5;

/// The classes that say the target cannot work at any load.
pub fn is_fatal(class: ErrorClass) -> bool {
    matches!(
        class,
        ErrorClass::Http401
            | ErrorClass::Http403
            | ErrorClass::Http404
            | ErrorClass::Connect
            | ErrorClass::Quota
    )
}

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq)]
pub struct Tripped {
    pub class: ErrorClass,
    pub model: String,
    pub requests: u32,
    /// The first failure's message (redacted as in requests.csv).
    pub message: String,
}

impl Tripped {
    /// The stop as `meta.json` keeps it.
    pub fn stopped_by(&self) -> StoppedBy {
        StoppedBy::FailFast {
            class: self.class.as_str().to_string(),
            model: self.model.clone(),
            requests: self.requests,
            message: self.message.clone(),
        }
    }

    pub fn sentence(&self) -> String {
        format!(
            "{}; nothing more was sent (--no-fail-fast sends the whole plan anyway)",
            self.stopped_by().how()
        )
    }
}

/// The rule's state over one run.
#[derive(Debug, Default)]
pub struct FailFast {
    seen: u32,
    first: Option<(ErrorClass, String, String)>,
    off: bool,
    /// Set when the rule stopped the run.
    pub tripped: Option<Tripped>,
}

impl FailFast {
    /// One finished request; `Some` when the run should stop now.
    pub fn observe(&mut self, r: &RequestRecord) -> Option<Tripped> {
        if self.off || r.error_class == Some(ErrorClass::Interrupted) {
            return None;
        }
        let class = match r.error_class {
            Some(c) if is_fatal(c) => c,
            _ => {
                self.off = true;
                return None;
            }
        };
        match &self.first {
            None => {
                let message = r.error_message.clone().unwrap_or_default();
                self.first = Some((class, r.model.clone(), message));
            }
            Some((c, _, _)) if *c != class => {
                self.off = true;
                return None;
            }
            Some(_) => {}
        }
        self.seen += 1;
        if self.seen < FIRST {
            return None;
        }
        self.off = true;
        let (class, model, message) = self.first.clone()?;
        self.tripped = Some(Tripped {
            class,
            model,
            requests: self.seen,
            message,
        });
        self.tripped.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(class: Option<ErrorClass>) -> RequestRecord {
        RequestRecord {
            model: "m".into(),
            error_class: class,
            error_message: class.map(|_| "Incorrect API key".into()),
            ..Default::default()
        }
    }

    #[test]
    fn five_refusals_in_a_row_stop_the_run_once() {
        let mut ff = FailFast::default();
        for _ in 0..FIRST - 1 {
            assert_eq!(ff.observe(&rec(Some(ErrorClass::Http401))), None);
        }
        let t = ff
            .observe(&rec(Some(ErrorClass::Http401)))
            .expect("tripped");
        assert_eq!(t.class, ErrorClass::Http401);
        assert_eq!(t.requests, FIRST);
        assert!(t
            .sentence()
            .contains("all failed with http_401 (Incorrect API key)"));
        assert_eq!(ff.observe(&rec(Some(ErrorClass::Http401))), None, "once");
    }

    #[test]
    fn a_success_a_mix_or_a_load_dependent_class_turns_it_off() {
        for spoiler in [
            None,
            Some(ErrorClass::Http403),
            Some(ErrorClass::Http429),
            Some(ErrorClass::Http5xx),
            Some(ErrorClass::TimeoutFirstToken),
        ] {
            let mut ff = FailFast::default();
            assert_eq!(ff.observe(&rec(Some(ErrorClass::Http401))), None);
            assert_eq!(ff.observe(&rec(spoiler)), None);
            for _ in 0..10 {
                assert_eq!(
                    ff.observe(&rec(Some(ErrorClass::Http401))),
                    None,
                    "{spoiler:?}"
                );
            }
        }
    }

    #[test]
    fn interrupted_requests_do_not_count() {
        let mut ff = FailFast::default();
        for _ in 0..10 {
            assert_eq!(ff.observe(&rec(Some(ErrorClass::Interrupted))), None);
        }
        for _ in 0..FIRST - 1 {
            assert_eq!(ff.observe(&rec(Some(ErrorClass::Connect))), None);
        }
        assert!(ff.observe(&rec(Some(ErrorClass::Connect))).is_some());
    }
}
