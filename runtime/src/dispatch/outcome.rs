//! What a dispatch did beyond succeeding: whether an extension stopped the chain, and which.

use std::sync::Arc;

/// What a dispatch did, beyond succeeding: whether an extension stopped the chain with
/// [`Flow::Stop`](crate::Flow::Stop) (or a command hook with `"continue": false`), and which.
///
/// Every dispatch returns one: [`SyncPoint::call`](crate::SyncPoint::call),
/// [`AsyncPoint::call`](crate::AsyncPoint::call), [`call_sync`](crate::call_sync),
/// [`call_async`](crate::call_async) and [`call!`](crate::call!). Most callers ignore it
/// (`POINT.call(&mut p)?;`); a dispatch that no extension stopped builds it for free (no
/// allocation; `Result<Outcome, Error>` is two machine words, returned in registers).
///
/// ```
/// use hookpoint::Flow;
/// hookpoint::point! {
///     pub static ANSWER: SyncPoint<Option<u32>> = "doc_outcome_answer";
/// }
/// #[hookpoint::extension(point = ANSWER, order = 1)]
/// fn cached(answer: &mut Option<u32>) -> Flow {
///     *answer = Some(42);
///     Flow::Stop
/// }
/// #[hookpoint::extension(point = ANSWER, order = 2)]
/// fn expensive(answer: &mut Option<u32>) {
///     *answer = Some(0);
/// }
/// let mut answer = None;
/// let outcome = ANSWER.call(&mut answer)?;
/// assert_eq!(answer, Some(42), "`expensive` did not run");
/// assert!(outcome.is_stopped());
/// assert_eq!(outcome.stopped_by(), Some("cached"));
/// # Ok::<(), hookpoint::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Boxed so that the common case is one null word: `Arc<str>` alone is two words, which
    /// would make `Result<Outcome, Error>` three and return it through memory.
    stopped_by: Option<Box<Arc<str>>>,
}

impl Outcome {
    /// Every extension that was to run ran (none stopped the chain).
    pub(crate) const RAN_ALL: Outcome = Outcome { stopped_by: None };

    /// The extension named `name` stopped the chain.
    #[cold]
    #[inline(never)]
    pub(crate) fn stopped(name: &Arc<str>) -> Self {
        Outcome {
            stopped_by: Some(Box::new(name.clone())),
        }
    }

    /// The extension that stopped the chain, if one did (later extensions did not run).
    ///
    /// ```
    /// hookpoint::point! { pub static QUIET: SyncPoint<u8> = "doc_outcome_quiet"; }
    /// #[hookpoint::extension(point = QUIET)]
    /// fn quiet(_: &mut u8) {}
    /// assert_eq!(QUIET.call(&mut 0)?.stopped_by(), None);
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    pub fn stopped_by(&self) -> Option<&str> {
        self.stopped_by.as_deref().map(|name| &**name)
    }

    /// Whether an extension stopped the chain (then [`stopped_by`](Self::stopped_by) names it).
    ///
    /// ```
    /// assert!(!hookpoint::Outcome::default().is_stopped());
    /// ```
    pub fn is_stopped(&self) -> bool {
        self.stopped_by.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn a_dispatch_result_is_two_words() {
        // The fast path returns it in registers; a third word would go through memory.
        assert_eq!(
            std::mem::size_of::<Result<Outcome, Error>>(),
            2 * std::mem::size_of::<usize>()
        );
        assert_eq!(std::mem::size_of::<Outcome>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn a_stopped_outcome_names_the_extension() {
        let name: Arc<str> = Arc::from("gate");
        let outcome = Outcome::stopped(&name);
        assert!(outcome.is_stopped());
        assert_eq!(outcome.stopped_by(), Some("gate"));
        assert_eq!(Outcome::RAN_ALL, Outcome::default());
        assert_eq!(Outcome::RAN_ALL.stopped_by(), None);
    }
}
