//! A scope's observation: the observers attached to it and its settings (whether the process
//! default observers see it, its slow-extension threshold). See [`observe`](crate::observe)
//! for the events and the rule of who sees what.

use std::sync::Arc;
use std::time::Duration;

use super::{Scope, ScopeBuilder};
use crate::observe::{Event, ObserverId};

impl ScopeBuilder {
    /// Attaches `f` to the scope: it sees every dispatch of this scope (and of no other) from
    /// the first one on. Called on the dispatching thread, synchronously; a panicking observer is
    /// logged, not propagated. Several may be attached; they are told in the order given.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use hookpoint::observe::What;
    ///
    /// #[hookpoint::extension(point = "doc_scope_observer")]
    /// fn bump(n: &mut u32) {
    ///     *n += 1;
    /// }
    ///
    /// let ran = Arc::new(Mutex::new(Vec::new()));
    /// let sink = ran.clone();
    /// let scope = hookpoint::ScopeBuilder::new("watched")
    ///     .observer(move |e| {
    ///         if let What::Extension { name, .. } = e.what {
    ///             sink.lock().unwrap().push(format!("{}: {name}", e.scope));
    ///         }
    ///     })
    ///     .build()
    ///     .unwrap();
    /// scope.enter(|| hookpoint::call_sync("doc_scope_observer", &mut 0u32)).unwrap();
    /// hookpoint::call_sync("doc_scope_observer", &mut 0u32).unwrap(); // the default scope
    /// assert_eq!(ran.lock().unwrap().as_slice(), ["watched: bump"]);
    /// ```
    pub fn observer(mut self, f: impl Fn(&Event<'_>) + Send + Sync + 'static) -> Self {
        self.observation.observers.push(Arc::new(f));
        self
    }

    /// Whether the process default observers ([`observe::observe`](crate::observe::observe))
    /// see this scope's dispatches (default `true`). `false` keeps them out: a scope whose
    /// dispatches are private, or one measured without the application's global observers.
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("private")
    ///     .default_observers(false)
    ///     .build()
    ///     .unwrap();
    /// let id = hookpoint::observe::observe(|_| {});
    /// assert!(!scope.is_observed());
    /// assert!(hookpoint::Scope::default_scope().is_observed());
    /// hookpoint::observe::unobserve(id);
    /// ```
    pub fn default_observers(mut self, see: bool) -> Self {
        self.observation.default_observers = see;
        self
    }

    /// This scope's slow-extension threshold: every extension of this scope that runs longer
    /// than `threshold` is logged at `warn` with its name and time (`None`: never, whatever the
    /// process default). Without it the scope follows the process default
    /// ([`observe::set_slow_threshold`](crate::observe::set_slow_threshold)). While a threshold
    /// applies, dispatch is timed.
    ///
    /// ```
    /// use std::time::Duration;
    /// let scope = hookpoint::ScopeBuilder::new("timed")
    ///     .slow_threshold(Some(Duration::from_millis(50)))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(scope.slow_threshold(), Some(Duration::from_millis(50)));
    /// ```
    pub fn slow_threshold(mut self, threshold: Option<Duration>) -> Self {
        self.observation.slow_threshold = Some(threshold);
        self
    }
}

impl Scope {
    /// Attaches `f` to this scope from now until [`unobserve`](Self::unobserve): it sees this
    /// scope's dispatches that start from now on, and no other scope's (see
    /// [`ScopeBuilder::observer`]).
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("later")
    ///     .default_observers(false)
    ///     .build()
    ///     .unwrap();
    /// assert!(!scope.is_observed());
    /// let id = scope.observe(|_| {});
    /// assert!(scope.is_observed());
    /// assert!(scope.unobserve(id));
    /// assert!(!scope.unobserve(id));
    /// ```
    pub fn observe(&self, f: impl Fn(&Event<'_>) + Send + Sync + 'static) -> ObserverId {
        self.0.observation.observers.add(Arc::new(f))
    }

    /// Removes an observer attached to this scope; returns whether it was attached here.
    pub fn unobserve(&self, id: ObserverId) -> bool {
        self.0.observation.observers.remove(id)
    }

    /// Whether an observer sees this scope's dispatches: one attached to it, or a process
    /// default observer (unless the scope was built with
    /// [`default_observers(false)`](ScopeBuilder::default_observers)).
    pub fn is_observed(&self) -> bool {
        self.0.observation.is_observed()
    }

    /// The slow-extension threshold that applies to this scope now: its own, else the process
    /// default.
    pub fn slow_threshold(&self) -> Option<Duration> {
        self.0.observation.slow_threshold()
    }
}
